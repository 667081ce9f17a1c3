-- wrk script: GET one path with bearer keys, and count any answer other than 200 as a failure.
-- Set by environment: BENCH_KEYS (comma-separated; each request takes the next, so that no key's
-- rate limit is what is measured), BENCH_PATH. Prints the same BENCH_* lines as post_lead.lua.
local keys = {}
for k in string.gmatch(os.getenv("BENCH_KEYS") or "none", "[^,]+") do table.insert(keys, k) end
local path = os.getenv("BENCH_PATH") or "/healthz"
local threads = {}
local turn = 0

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  failures = 0
  turn = math.random(#keys)
end

function request()
  turn = turn % #keys + 1
  return wrk.format("GET", path, {["Authorization"] = "Bearer " .. keys[turn]})
end

function response(status, headers, body)
  if status ~= 200 then failures = failures + 1 end
end

-- The summary lines the bench scripts read, shared by the wrk scripts (summary.lua).
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "summary.lua")
done = summary_of(threads)
