-- The summary every wrk script of the bench prints at the end, read by scripts/bench/common.sh:
-- failures (answers the script's response() counted as wrong, plus socket errors and timeouts),
-- requests per second, and the median and 99th percentile latency. Each script keeps a global
-- `failures` counter per thread; `threads` is the script's list of them, from setup().
function summary_of(threads)
  return function(summary, latency, requests)
    local total = 0
    for _, t in ipairs(threads) do total = total + (t:get("failures") or 0) end
    io.write(string.format("BENCH_FAILURES %d\n", total + summary.errors.connect + summary.errors.read +
      summary.errors.write + summary.errors.timeout))
    io.write(string.format("BENCH_RPS %.1f\n", summary.requests / (summary.duration / 1e6)))
    io.write(string.format("BENCH_P50_MS %.3f\n", latency:percentile(50) / 1000))
    io.write(string.format("BENCH_P99_MS %.3f\n", latency:percentile(99) / 1000))
  end
end
