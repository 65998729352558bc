-- The mixed load of issue 9: 60% random pages, 30% random (so mostly cold)
-- thumbnails, 10% the thin client's static script. Counts, per thread, the
-- answers that were not 2xx, the thumbnails that came back as placeholders
-- (the picture failed) and those that came back as see-through "late" boxes (a
-- wait cut short at its deadline or shed past the cap: the next look gets it).
-- PAGES, ITEMS and STATIC come from the environment.
local pages = tonumber(os.getenv("PAGES") or "5000")
local items = tonumber(os.getenv("ITEMS") or "100000")
local static = os.getenv("STATIC") or "/"
local threads = {}
local seeded = false

setup = function(thread) table.insert(threads, thread) end

init = function()
  non2xx, placeholders, late, thumbs = 0, 0, 0, 0
end

request = function()
  if not seeded then math.randomseed(os.time() + math.floor(os.clock() * 1e6)); seeded = true end
  local roll = math.random(1, 10)
  if roll <= 6 then
    return wrk.format("GET", "/?page=" .. math.random(1, pages))
  elseif roll <= 9 then
    thumbs = thumbs + 1
    return wrk.format("GET", "/thumbs/" .. math.random(1, items) .. "/1x", { ["Accept"] = "image/webp,*/*" })
  end
  return wrk.format("GET", static)
end

response = function(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
  local placeholder = headers["X-Warmfeed-Placeholder"]
  if placeholder == "late" then late = late + 1 elseif placeholder then placeholders = placeholders + 1 end
end

done = function(summary, latency, requests)
  local n, p, l, t = 0, 0, 0, 0
  for _, thread in ipairs(threads) do
    n = n + thread:get("non2xx"); p = p + thread:get("placeholders"); l = l + thread:get("late"); t = t + thread:get("thumbs")
  end
  io.write(string.format("MIXED non2xx=%d placeholders=%d late=%d thumbs=%d timeouts=%d requests=%d p99_ms=%.1f max_ms=%.1f\n",
    n, p, l, t, summary.errors.timeout, summary.requests, latency:percentile(99) / 1000, latency.max / 1000))
end
