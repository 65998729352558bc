"""Issue 11: a newcomer's feed is warm from the first second. A fresh data
folder (the demo origin paints its pool before the server answers, nothing is
cached), the browser opened the moment the server answers, a steady scroll
through 10 pages of 30: at 1,500 px/s at most 1% of the thumbnails that enter
the viewport are blank for over 100 ms, the first screen included; at
3,000 px/s at most 2%. A deep link to page 300 of a fresh server: page 300
itself is cold by nature (the reader is on it before anything could warm it;
recorded, not asserted); over the 5 pages after it, at most 1% late.

The measurement is in warm_scroll.py (bench/scroll.py runs it too, with
pre-warm on and off). No time is asserted: only the count of thumbnails that
were in view but not painted for over 100 ms.
"""

from __future__ import annotations

import json
import os

import pytest

import warm_scroll


def report(result: dict) -> str:
    return json.dumps(result, indent=1, default=str)


@pytest.mark.parametrize("pace,allowed", [(1500, 0.01), (3000, 0.02)])
def test_a_newcomer_scrolling_sees_thumbnails_from_the_first_screen(browser, pace, allowed):
    result = warm_scroll.measure(browser, prewarm=2, pace=pace)
    print(report(result))
    assert result["page_errors"] == [], report(result)
    # 10 pages of 30 rows entered the viewport, the first screen among them.
    assert result["entered"] >= warm_scroll.PAGES * warm_scroll.PAGE_SIZE - 5, report(result)
    assert result["first_screen"] >= 4, report(result)
    assert result["late_share"] <= allowed, \
        f"{result['late']} of {result['entered']} thumbnails (first screen: {result['first_screen_late']} of " \
        f"{result['first_screen']}) were blank for over {warm_scroll.LATE_MS} ms at {pace} px/s:\n{report(result)}"


def test_a_deep_link_is_warm_after_its_first_screen(browser):
    result = warm_scroll.measure(browser, prewarm=2, path="/?page=300", pages=6,
                                 first_row=299 * warm_scroll.PAGE_SIZE + 1, demo_items=10_000)
    print(report(result))
    page_300 = result["entered"] - result["later_pages"]
    page_300_late = result["late"] - result["later_pages_late"]
    print(f"page 300 (cold by nature, not asserted): {page_300_late} of {page_300} late, its first screen "
          f"{result['first_screen_late']} of {result['first_screen']}, {result['first_screen_blank_ms']:.0f} ms blank")
    assert result["page_errors"] == [], report(result)
    assert result["later_pages"] >= 5 * warm_scroll.PAGE_SIZE - 5, report(result)
    assert result["later_pages_late"] <= 0.01 * result["later_pages"], \
        f"{result['later_pages_late']} of {result['later_pages']} thumbnails of pages 301-305 were late:\n" \
        f"{report(result)}"


@pytest.mark.skipif(os.environ.get("WARMFEED_MEASURE") != "1",
                    reason="the pre-warm-off contrast only records; set WARMFEED_MEASURE=1 (or run bench/scroll.py)")
def test_cold_scroll_for_contrast(browser):
    """Pre-warm off: the same scroll, recorded and not asserted."""
    result = warm_scroll.measure(browser, prewarm=0)
    print(report(result))
    assert result["entered"] > 0
