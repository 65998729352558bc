-- wrk script for bench/pages.sh: every request asks for a uniformly random
-- page fragment, /fragment?page=1..WF_PAGES, and `done` prints one machine
-- readable line (prefixed WRKJSON) that bench/pages_helper.py collects.

local pages = tonumber(os.getenv("WF_PAGES") or "3334")
local threads = 0

-- Runs in the main Lua state, once per wrk thread: give each thread its own id
-- so that each seeds its own random sequence.
function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

-- Runs in each thread's own Lua state.
function init(args)
  local salt = tonumber(os.getenv("WF_SEED") or "0") or 0
  math.randomseed(os.time() + salt * 1009 + (thread_id or 0) * 7919)
  -- LuaJIT's first few draws after seeding are poorly mixed; discard them.
  for _ = 1, 10 do math.random() end
end

-- WF_GZIP=1: ask for gzip, as browsers do (bench/pages.sh GZIP=1).
if os.getenv("WF_GZIP") == "1" then wrk.headers["Accept-Encoding"] = "gzip" end

request = function()
  return wrk.format("GET", "/fragment?page=" .. math.random(1, pages))
end

-- WF_DELAY_MS=N: each connection waits N ms after each answer, so both
-- servers are offered the same rate (at most connections x 1000 / N a second)
-- and CPU per request is compared at equal load, not each at its own peak.
local delay_ms = tonumber(os.getenv("WF_DELAY_MS") or "0") or 0
if delay_ms > 0 then delay = function() return delay_ms end end

done = dofile("bench/wrkjson.lua")
