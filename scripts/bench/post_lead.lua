-- wrk script: POST a realistic Surface B lead, unique per request, and count any answer other
-- than the expected status as a failure. Set by environment: BENCH_KEY, BENCH_EXPECT (202/200),
-- BENCH_SALT (0-99, default 0): runs against one service with different salts post different
-- people, so a later run's leads are not duplicates of an earlier one's; BENCH_EXPECT_BODY
-- (optional): text every answer's body must hold, e.g. '"status":"sold"'; BENCH_THINK_MS (optional,
-- default 0): each connection waits a random time, exponential with this mean, before each post,
-- so that the connections post like independent sellers rather than in lock step (the latency
-- counted is still from each request's send to its answer).
local key = os.getenv("BENCH_KEY") or "none"
local expect = tonumber(os.getenv("BENCH_EXPECT") or "202")
local salt = tonumber(os.getenv("BENCH_SALT") or "0")
local expect_body = os.getenv("BENCH_EXPECT_BODY")
local counter = 0
thread_id = 0
local threads = {}

function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  wrk.method = "POST"
  wrk.path = "/api/v1/lead"
  wrk.headers["Content-Type"] = "application/json"
  failures = 0
end

local template = '{"SELLER_CAMPAIGN_KEY":"%s","first_name":"Grace","last_name":"Hopper",' ..
  '"email_address":"grace.%d.%d.%d@example.com","phone_home":"212%03d%04d","zip_code":"10001",' ..
  '"source":"google","landing_page":"lp-auto-1","ip_address":"203.0.113.9",' ..
  '"user_agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Safari/537.36",' ..
  '"tcpa_consent":true,"vehicle_year":2019,"vehicle_make":"Toyota"}'

function request()
  counter = counter + 1
  local exchange = 200 + (thread_id * 97 + salt * 13 + math.floor(counter / 10000)) % 700
  local body = string.format(template, key, salt, thread_id, counter, exchange, counter % 10000)
  return wrk.format(nil, nil, nil, body)
end

local think = tonumber(os.getenv("BENCH_THINK_MS") or "0")
if think > 0 then
  local seeded = false
  function delay()
    if not seeded then
      math.randomseed(os.time() * 100 + thread_id)
      seeded = true
    end
    return math.floor(-think * math.log(1 - math.random()) + 0.5)
  end
end

function response(status, headers, body)
  if status ~= expect or (expect_body and not string.find(body or "", expect_body, 1, true)) then
    failures = failures + 1
  end
end

-- The summary lines the bench scripts read, shared by the wrk scripts (summary.lua).
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "summary.lua")
done = summary_of(threads)
