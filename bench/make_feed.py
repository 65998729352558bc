#!/usr/bin/env python3
"""Writes a large feed for bench/import.sh: N items of RSS 2.0 (with Media RSS,
content:encoded and an RFC 822 date) or JSON Feed 1.1, streamed to a file so
that making it needs no memory to speak of.

Usage: make_feed.py rss|json N PATH
Images point at https://img.bench.example/ unless IMAGE_BASE names another
base URL (bench/mixed.sh points them at a loopback nginx).
"""
import os
import sys
import time

kind, count, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
image_base = os.environ.get("IMAGE_BASE", "https://img.bench.example").rstrip("/")
start = 1_700_000_000
words = ("warm feed thumbnail cache origin reader scroll page sentinel image "
         "pre-warm server browser latency hit ratio").split()


def text(i: int, n: int) -> str:
    return " ".join(words[(i * 7 + k * 3) % len(words)] for k in range(n))


with open(path, "w", encoding="utf-8") as out:
    if kind == "rss":
        out.write('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" '
                  'xmlns:media="http://search.yahoo.com/mrss/" '
                  'xmlns:content="http://purl.org/rss/1.0/modules/content/">\n'
                  '<channel><title>Bench</title><link>https://bench.example/</link><description>d</description>\n')
        for i in range(count):
            date = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(start - i * 60))
            out.write(f"<item><guid isPermaLink=\"false\">bench-{i}</guid><title>{text(i, 8).title()} &amp; {i}</title>"
                      f"<link>https://bench.example/posts/{i}</link>"
                      f"<description>{text(i + 1, 30)}</description>"
                      f"<content:encoded><![CDATA[<p>{text(i + 2, 60)}</p><img src=\"/inline/{i}.jpg\">]]></content:encoded>"
                      f"<media:content url=\"{image_base}/{i}.jpg\" medium=\"image\" width=\"1600\" height=\"1200\"/>"
                      f"<pubDate>{date}</pubDate></item>\n")
        out.write("</channel></rss>\n")
    else:
        out.write('{"version": "https://jsonfeed.org/version/1.1", "title": "Bench", '
                  '"home_page_url": "https://bench.example/", "items": [\n')
        for i in range(count):
            date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start - i * 60))
            sep = ",\n" if i else ""
            out.write(f'{sep}{{"id": "bench-{i}", "title": "{text(i, 8).title()} & {i}", '
                      f'"url": "https://bench.example/posts/{i}", "summary": "{text(i + 1, 30)}", '
                      f'"content_html": "<p>{text(i + 2, 60)}</p><img src=\\"/inline/{i}.jpg\\">", '
                      f'"image": "{image_base}/{i}.jpg", "date_published": "{date}"}}')
        out.write("\n]}\n")
