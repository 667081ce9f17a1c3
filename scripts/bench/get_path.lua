-- wrk script: GET one path with a bearer key, and count any answer other than 200 as a failure.
-- Set by environment: BENCH_KEY, BENCH_PATH. Prints the same BENCH_* lines as post_lead.lua.
local key = os.getenv("BENCH_KEY") or "none"
local path = os.getenv("BENCH_PATH") or "/healthz"
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  wrk.method = "GET"
  wrk.path = path
  wrk.headers["Authorization"] = "Bearer " .. key
  failures = 0
end

function response(status, headers, body)
  if status ~= 200 then failures = failures + 1 end
end

-- The summary lines the bench scripts read, shared by the wrk scripts (summary.lua).
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "summary.lua")
done = summary_of(threads)
