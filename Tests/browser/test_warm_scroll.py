"""Issue 3, Tests → Browser: with a 250 ms origin and pre-warm 2, a reader who
scrolls steadily through 10 pages sees a thumbnail in every box: ≥ 99% of
the thumbnails that enter the viewport have painted within 100 ms of
entering, and the server's cache then reports a hit ratio ≥ 95%.

The measurement itself is in warm_scroll.py (bench/scroll.py runs it too, with
pre-warm on and off). The scroll pace is generous (300 px every 350 ms) so that
the outcome does not hinge on a busy machine; no time is asserted, only the
count of thumbnails that were visible but not painted for over 100 ms.

The first screen is not counted: on a fresh server nothing told it about this
reader before the first document, so those thumbnails are cold whatever
pre-warm does. For the same reason the hit ratio asserted is the one over the
scroll (from /admin/cache's counters before and after it); the cumulative
hit_ratio /admin/cache reports is printed beside it.
"""

from __future__ import annotations

import json
import os

import pytest

import warm_scroll


def report(result: dict) -> str:
    return json.dumps(result, indent=1, default=str)


def test_prewarmed_scroll_paints_every_thumbnail_in_time(browser):
    result = warm_scroll.measure(browser, prewarm=2)
    print(report(result))
    assert result["page_errors"] == [], report(result)
    # 10 pages of 10 rows, less the first screen, entered the viewport during the scroll.
    assert result["entered"] >= warm_scroll.PAGES * warm_scroll.PAGE_SIZE - 15, report(result)
    assert result["painted_in_time"] >= 0.99, \
        f"{result['late']} of {result['entered']} thumbnails were blank for over " \
        f"{warm_scroll.LATE_MS} ms after entering the viewport:\n{report(result)}"
    assert result["scroll_hit_ratio"] is not None and result["scroll_hit_ratio"] >= 0.95, \
        f"hit ratio over the scroll {result['scroll_hit_ratio']} (cumulative " \
        f"{result['hit_ratio']}):\n{report(result)}"


@pytest.mark.skipif(os.environ.get("WARMFEED_MEASURE") != "1",
                    reason="the pre-warm-off contrast only records; set WARMFEED_MEASURE=1 (or run bench/scroll.py)")
def test_cold_scroll_for_contrast(browser):
    """Pre-warm off: the same scroll, recorded and not asserted (the contrast
    for issue 3's benchmark (c))."""
    result = warm_scroll.measure(browser, prewarm=0)
    print(report(result))
    assert result["entered"] > 0
