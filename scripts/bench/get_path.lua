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

function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + (t:get("failures") or 0) end
  io.write(string.format("BENCH_FAILURES %d\n", total + summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout))
  io.write(string.format("BENCH_RPS %.1f\n", summary.requests / (summary.duration / 1e6)))
  io.write(string.format("BENCH_P50_MS %.3f\n", latency:percentile(50) / 1000))
  io.write(string.format("BENCH_P99_MS %.3f\n", latency:percentile(99) / 1000))
end
