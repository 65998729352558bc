-- Readers as browsers send them (issue 35): each request is one of READERS
-- readers, with its own `wf` cookie, and the headers a browser sends with a
-- page (Accept, Accept-Encoding with gzip and br, Sec-Fetch-*, and Sec-CH-DPR
-- unless DPR is empty, as Firefox and Safari send none).
--
--   ORDER=random      each request a random page of PAGES (a jumping reader)
--   ORDER=sequential  each reader reads page after page, from a page of its own
--   THUMB_LIST=file   thumbnail hits instead: the addresses a page gives, one a line
--   KIND=document (/?page=N, a navigation) | fragment (the client's fetch of the next page)
--   FRAGMENTS=file    with KIND=fragment: line N is the URL the client asks for page N
--                     (`/fragment?page=N&after=CURSOR`, pages_helper.py fragments); without
--                     it, `/fragment?page=N`, which no client sends after page 1
--   DPR=1 | 2.625 | "" (none)     GZIP=0 drops Accept-Encoding (a crawler's request)
local readers = tonumber(os.getenv("READERS") or "200")
local pages = tonumber(os.getenv("WF_PAGES") or os.getenv("PAGES") or "3334")
local order = os.getenv("ORDER") or "random"
local dpr = os.getenv("DPR")
if dpr == nil then dpr = "1" end
local gzip = (os.getenv("GZIP") or "1") ~= "0"
-- COOKIE=0: the same requests from a crawler, which sends no cookie and no Sec-Fetch-*: not tracked.
local cookie = (os.getenv("COOKIE") or "1") ~= "0"
local kind = os.getenv("KIND") or "document"
local list = os.getenv("THUMB_LIST")
local thumbs = {}
if list and list ~= "" then for line in io.lines(list) do table.insert(thumbs, line) end end
local fragments = {}
local fragment_list = os.getenv("FRAGMENTS")
if fragment_list and fragment_list ~= "" then for line in io.lines(fragment_list) do table.insert(fragments, line) end end

-- Each request is written once as three parts at the first request (the request
-- line's start, then the path, then the headers with this reader's cookie in them),
-- and joined per request. wrk.format per request costs wrk a table walk per header,
-- more with the cookie and Sec-Fetch-*: on cores wrk shares with the server, that
-- alone lowered the readers' rate beside the cookie-less one's (2.3 us more of wrk's
-- CPU a request), which measured wrk. Joined from parts, both cost wrk the same.
local seeded = false
local at, tails = {}, {}
local head
local turn = 0

local function headers_for(id)
  local headers = { ["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36" }
  if cookie then headers["Cookie"] = "wf=" .. id end
  if dpr ~= "" then headers["Sec-CH-DPR"] = dpr end
  if #thumbs > 0 then
    headers["Accept"] = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
    if cookie then headers["Sec-Fetch-Dest"] = "image"; headers["Sec-Fetch-Mode"] = "no-cors"; headers["Sec-Fetch-Site"] = "same-origin" end
    return headers
  end
  if gzip then headers["Accept-Encoding"] = "gzip, deflate, br, zstd" end
  -- Without the cookie, no Sec-Fetch-* either (a navigating browser is tracked, cookie or not).
  if kind == "fragment" then
    headers["Accept"] = "*/*"
    if cookie then headers["Sec-Fetch-Dest"] = "empty"; headers["Sec-Fetch-Mode"] = "cors"; headers["Sec-Fetch-Site"] = "same-origin" end
  else
    headers["Accept"] = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
    if cookie then headers["Sec-Fetch-Dest"] = "document"; headers["Sec-Fetch-Mode"] = "navigate"; headers["Sec-Fetch-Site"] = "same-origin" end
  end
  return headers
end

local function setup_readers()
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  local marker = "/@@PATH@@"
  for r = 1, readers do
    local id = string.format("%08x%08x", math.random(0, 0x7fffffff), math.random(0, 0x7fffffff))
    local text = wrk.format("GET", marker, headers_for(id))
    local cut = string.find(text, marker, 1, true)
    head = string.sub(text, 1, cut - 1)
    tails[r] = string.sub(text, cut + #marker)
    at[r] = math.random(1, pages)
  end
  seeded = true
end

local function path_of(page)
  if kind == "fragment" then return fragments[page] or ("/fragment?page=" .. page) end
  if page == 1 then return "/" end
  return "/?page=" .. page
end

request = function()
  if not seeded then setup_readers() end
  turn = turn % readers + 1
  local path
  if #thumbs > 0 then
    path = thumbs[math.random(1, #thumbs)]
  elseif order == "sequential" then
    path = path_of(at[turn])
    at[turn] = at[turn] % pages + 1
  else
    path = path_of(math.random(1, pages))
  end
  return head .. path .. tails[turn]
end

-- One machine-readable line for bench/pages.sh.
-- WF_DELAY_MS=N: the same offered rate for both servers (see bench/random_page.lua).
local delay_ms = tonumber(os.getenv("WF_DELAY_MS") or "0") or 0
if delay_ms > 0 then delay = function() return delay_ms end end

done = dofile("bench/wrkjson.lua")
