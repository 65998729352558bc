-- Uniformly random cached thumbnails /thumbs/1..N/1x, asking for WebP as browsers do.
local count = tonumber(os.getenv("THUMBS") or "120")
local seeded = false
request = function()
  if not seeded then math.randomseed(os.time() + math.floor(os.clock() * 1e6)); seeded = true end
  return wrk.format("GET", "/thumbs/" .. math.random(1, count) .. "/1x", { ["Accept"] = "image/webp,*/*" })
end
