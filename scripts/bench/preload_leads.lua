-- wrk script: post exactly BENCH_LEADS leads (the same leads as post_lead.lua, unique within the
-- run), then only GET /healthz (which queues nothing) until wrk is stopped with SIGINT. Writes
-- "BENCH_PRELOAD_DONE" once every lead has been answered. The count is per wrk thread: run it
-- with -t1. Set by environment: BENCH_LUA_DIR (this directory), BENCH_KEY, BENCH_LEADS.
-- A lead answered other than 202 is a failure (BENCH_FAILURES at the end); a lead lost to a
-- connection error is never answered, so the done line never comes and the caller times out.
dofile(os.getenv("BENCH_LUA_DIR") .. "/post_lead.lua")
local lead_request = request
local budget = tonumber(os.getenv("BENCH_LEADS") or "0")
local calls, sent, answered = 0, 0, 0
local healthz = nil

function request()
  if not healthz then healthz = wrk.format("GET", "/healthz", {}, nil) end
  calls = calls + 1
  -- wrk 4 calls request() once on the first thread before connecting, to check the request
  -- (script_verify_request), and never sends it: the first call is a /healthz, not a lead.
  if calls > 1 and sent < budget then
    sent = sent + 1
    return lead_request()
  end
  return healthz
end

function response(status, headers, body)
  if status == 200 then return end  -- a /healthz answer (a lead is answered 202 or an error)
  answered = answered + 1
  if status ~= 202 then failures = failures + 1 end
  if answered == budget then
    io.write("BENCH_PRELOAD_DONE\n")
    io.flush()
  end
end
