#!/usr/bin/env bash
# The workers' backlog on the embedded default, read by leadflow-ingest from the queue's side: with
# no worker loop (LEADFLOW_WORKERS=0) the leads posted wait, `leadflow_queue_backlog` counts them
# and `leadflow_queue_backlog_oldest_age_seconds` ages from their post (the time each embedded
# record carries), across a restart; once a worker loop runs they are decided and both read 0.
#
# Usage: tests/ops/embedded_backlog_test.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: embedded_backlog_test.sh BUILD_DIR}
# leadflow refuses LEADFLOW_* names it does not know; these belong to the build scripts.
unset LEADFLOW_BUILD_DIR LEADFLOW_BUILD_TYPE LEADFLOW_BUILD_TESTS LEADFLOW_JOBS LEADFLOW_WERROR LEADFLOW_SANITIZE LEADFLOW_SYSTEM_TESTS_ONLY

work=$(mktemp -d /tmp/leadflow-embedded-backlog-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for log in "$work"/*.log; do echo "--- $log (tail)" >&2; tail -n 20 "$log" >&2; done
  exit 1
}
# shellcheck source=tests/ops/lib.sh
source "$here/lib.sh"

port=$(free_port)
metrics_port=$(free_port)
operator_key="lfk_test_$(openssl rand -hex 20)"
ingest=""
start_ingest() {  # start_ingest WORKERS
  LEADFLOW_DATA_DIR="$work/data" LEADFLOW_LISTEN="127.0.0.1:$port" \
    LEADFLOW_METRICS_LISTEN="127.0.0.1:$metrics_port" LEADFLOW_BOOTSTRAP_KEY="$operator_key" \
    LEADFLOW_WORKERS="$1" LEADFLOW_BACKLOG_INTERVAL_MS=200 \
    "$build/ingest/leadflow-ingest" >> "$work/ingest.out" 2>> "$work/ingest.log" &
  ingest=$!
  pids+=("$ingest")
  wait_for "leadflow-ingest did not become ready" curl -sf "http://127.0.0.1:$metrics_port/readyz"
}
stop_ingest() {
  kill -TERM "$ingest"
  wait "$ingest" || fail "leadflow-ingest did not stop cleanly"
}
# The value of one of the backlog's series, empty when it has no sample.
series() {
  curl -sf "http://127.0.0.1:$metrics_port/metrics" \
    | sed -n "s/^$1{source=\"embedded\",group=\"[^\"]*\"} \(.*\)$/\1/p"
}
at_least() { awk -v v="$(series "$1")" -v min="$2" 'BEGIN { exit !(v != "" && v + 0 >= min) }'; }
equals() { [[ $(series "$1") == "$2" ]]; }
now() { date +%s.%N; }

start_ingest 0
post() {
  curl -sf -o /dev/null --cacert "$work/data/tls/cert.pem" -X POST "https://127.0.0.1:$port/v1/leads" \
    -H "Authorization: Bearer $operator_key" -H 'Content-Type: application/json' \
    -H 'Prefer: respond-async' \
    -d "{\"first_name\":\"Ada\",\"last_name\":\"Lovelace\",\"email\":\"ada.$1@example.com\",\"phone\":\"202555$((1000 + $1))\",\"zip_code\":\"90210\",\"vertical\":\"auto_insurance\",\"source\":\"test\"}"
}
first_post=$(now)
for n in 1 2 3 4 5; do post "$n" || fail "lead $n was not accepted"; done

wait_for "the backlog did not count the 5 leads waiting" equals leadflow_queue_backlog 5
sleep 3
age=$(series leadflow_queue_backlog_oldest_age_seconds)
elapsed=$(awk -v a="$first_post" -v b="$(now)" 'BEGIN { print b - a }')
awk -v age="$age" -v elapsed="$elapsed" 'BEGIN { exit !(age != "" && age >= 2.5 && age <= elapsed + 1) }' \
  || fail "oldest lead's age $age, expected from 2.5 s to the $elapsed s since the first post"

# A restart reads the records' own time from the segments: the age goes on, not from 0.
stop_ingest
start_ingest 0
wait_for "the backlog did not come back after the restart" equals leadflow_queue_backlog 5
at_least leadflow_queue_backlog_oldest_age_seconds "$age" \
  || fail "after the restart the oldest lead's age read $(series leadflow_queue_backlog_oldest_age_seconds), below $age"

# A worker loop decides them (no buyers: unsold): the backlog and its age go to 0.
stop_ingest
start_ingest 1
wait_for "the backlog did not drain" equals leadflow_queue_backlog 0
wait_for "the oldest lead's age did not go to 0" equals leadflow_queue_backlog_oldest_age_seconds 0
echo "embedded_backlog: ok (age $age s after ${elapsed} s)"
