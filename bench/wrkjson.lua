-- The one machine-readable line a wrk script prints at its end (prefixed
-- WRKJSON), which bench/pages_helper.py collects. Scripts run from the
-- repository's root load it: done = dofile("bench/wrkjson.lua"). A script
-- with counts of its own passes them as a fourth argument, a table of names
-- to integers (crawl.lua's `ends`), written at the end of the line.
return function(summary, latency, requests, extra)
  local e = summary.errors
  local more = ""
  for name, value in pairs(extra or {}) do more = more .. string.format(', "%s": %d', name, value) end
  io.write(string.format(
    'WRKJSON {"requests": %d, "duration_us": %d, "bytes": %d, "rps": %.1f, '
      .. '"p50_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d, "mean_us": %.1f, '
      .. '"err_connect": %d, "err_read": %d, "err_write": %d, "err_status": %d, "err_timeout": %d%s}\n',
    summary.requests, summary.duration, summary.bytes,
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout, more))
end
