-- wrk script for bench/pages.sh's crawl: one connection walks the feed the
-- way a search crawler does, following each fragment's next link (the
-- sentinel's data-fragment URL) from page 1; after the last page (no next
-- link) it starts again at page 1. Warmfeed and nginx serve the same bytes,
-- so the same links are followed on both (nginx picks its file by page=).
--
-- wrk runs for its whole -d whatever the script does, so the crawl is timed
-- over that window; `done` prints how many times it reached the end.

local first = "/fragment?page=1"
local path = first
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  ends = 0
end

request = function()
  return wrk.format("GET", path)
end

response = function(status, headers, body)
  local next_url = body:match('data%-fragment="([^"]+)"')
  if status ~= 200 or next_url == nil then
    if status == 200 then ends = ends + 1 end
    path = first
    return
  end
  path = next_url:gsub("&amp;", "&")
end

local write = dofile("bench/wrkjson.lua")

function done(summary, latency, requests)
  local reached = 0
  for _, thread in ipairs(threads) do reached = reached + (thread:get("ends") or 0) end
  write(summary, latency, requests, { ends = reached })
end
