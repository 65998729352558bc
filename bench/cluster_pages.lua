-- wrk script for bench/cluster.sh: uniformly random page fragments, each
-- from one of WF_READERS readers (a random `wf` cookie per request), so
-- nginx's `hash $cookie_wf` spreads them over the nodes as it would readers.

local pages = tonumber(os.getenv("WF_PAGES") or "34")
local readers = tonumber(os.getenv("WF_READERS") or "300")
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

function init(args)
  math.randomseed(os.time() + (thread_id or 0) * 7919)
  for _ = 1, 10 do math.random() end
end

request = function()
  local cookie = string.format("wf=%016x", math.random(1, readers))
  return wrk.format("GET", "/fragment?page=" .. math.random(1, pages), { Cookie = cookie })
end

function done(summary, latency, requests)
  io.write(string.format("WRKJSON {\"requests\": %d, \"seconds\": %.3f, \"errors\": %d, \"non2xx\": %d, \"p50_us\": %d, \"p99_us\": %d}\n",
    summary.requests, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, latency:percentile(50), latency:percentile(99)))
end
