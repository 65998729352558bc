-- Uniformly random cached thumbnails, asking for WebP as browsers do, by the
-- addresses pages give (/thumbs/<id>-<tag>/1x), one a line in THUMB_LIST.
local list = os.getenv("THUMB_LIST")
local paths = {}
for line in io.lines(list) do table.insert(paths, line) end
local seeded = false
request = function()
  if not seeded then math.randomseed(os.time() + math.floor(os.clock() * 1e6)); seeded = true end
  return wrk.format("GET", paths[math.random(1, #paths)], { ["Accept"] = "image/webp,*/*" })
end
