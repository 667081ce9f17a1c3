#!/usr/bin/env bash
# LeadflowVerticalWithoutBuyers against a real outage: leadflow-ingest in the embedded default
# (its workers inside) sells leads of two verticals while a real Prometheus (Debian's
# /usr/bin/prometheus) scrapes its metrics every second and evaluates k8s/base/monitoring.yaml's
# rules as they are. Both buyers of the solar vertical answer every ping with a 500 (so each is
# paused for failing, tried again after its pause with a clean record, and fails again: the
# flapping that a rule on the paused gauge alone never saw); the one buyer of auto_insurance
# answers. The alert must fire for solar within its `for` (2 minutes) and a margin, and never
# be pending or firing for auto_insurance. Prints how long it took to fire.
#
# Usage: tests/ops/buyer_outage_alert_test.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: buyer_outage_alert_test.sh BUILD_DIR}
prometheus_bin=${PROMETHEUS:-/usr/bin/prometheus}
[[ -x $prometheus_bin ]] || { echo "buyer_outage_alert: $prometheus_bin is missing (scripts/deps.sh --test)" >&2; exit 1; }
# leadflow refuses LEADFLOW_* names it does not know; these belong to the build scripts.
unset LEADFLOW_BUILD_DIR LEADFLOW_BUILD_TYPE LEADFLOW_BUILD_TESTS LEADFLOW_JOBS LEADFLOW_WERROR LEADFLOW_SANITIZE LEADFLOW_SYSTEM_TESTS_ONLY

work=$(mktemp -d /tmp/leadflow-outage-alert-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/answers.*; do [[ -f $f ]] && echo "--- answers to ${f##*.}: $(sort "$f" | uniq -c | tr '\n' ' ')" >&2; done
  for log in "$work"/*.log; do echo "--- $log (tail)" >&2; tail -n 20 "$log" >&2; done
  exit 1
}
# shellcheck source=tests/ops/lib.sh
source "$here/lib.sh"

start_buyer acme --bid 14.50 --latency-ms 5 --seed 1
start_buyer sunfail1 --bid 20 --error-rate 1 --seed 2
start_buyer sunfail2 --bid 18 --error-rate 1 --seed 3
for name in acme sunfail1 sunfail2; do wait_for "buyer $name did not start" buyer_ready "$name"; done

port=$(free_port)
metrics_port=$(free_port)
operator_key="lfk_test_$(openssl rand -hex 20)"
LEADFLOW_DATA_DIR="$work/data" LEADFLOW_LISTEN="127.0.0.1:$port" \
  LEADFLOW_METRICS_LISTEN="127.0.0.1:$metrics_port" LEADFLOW_BOOTSTRAP_KEY="$operator_key" \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_LOG_LEVEL=warn "$build/ingest/leadflow-ingest" > "$work/ingest.out" 2> "$work/ingest.log" &
pids+=($!)
wait_for "leadflow-ingest did not become ready" curl -sf "http://127.0.0.1:$metrics_port/readyz"

base="https://127.0.0.1:$port"
api() {  # api METHOD PATH JSON
  curl -sS --cacert "$work/data/tls/cert.pem" -X "$1" "$base$2" -H "Authorization: Bearer $operator_key" \
    -H 'Content-Type: application/json' -d "$3"
}
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
for spec in "acme:auto_insurance" "sunfail1:solar" "sunfail2:solar"; do
  IFS=: read -r name vertical <<< "$spec"
  p=$(buyer_port "$name")
  api POST /v1/buyers "{\"name\":\"$name\",\"verticals\":[\"$vertical\"],\"delivery\":{\"mode\":\"ping_post\",\"ping_url\":\"http://127.0.0.1:$p/ping\",\"post_url\":\"http://127.0.0.1:$p/post\",\"timeout_ms\":300},\"pricing\":{\"model\":\"bid\",\"min_bid\":5},\"duplicate_lookback_days\":0}" \
    | grep -q '"buyer_id"' || fail "cannot create buyer $name"
done
seller=$(api POST /v1/sellers '{"name":"Outage Seller"}' | field seller_id)
auto=$(api POST /v1/campaigns "{\"seller_id\":\"$seller\",\"name\":\"Auto\",\"vertical\":\"auto_insurance\",\"payout\":{\"model\":\"revshare\",\"value\":70}}" | field campaign_key)
solar=$(api POST /v1/campaigns "{\"seller_id\":\"$seller\",\"name\":\"Solar\",\"vertical\":\"solar\",\"payout\":{\"model\":\"revshare\",\"value\":70}}" | field campaign_key)
[[ -n $seller && -n $auto && -n $solar ]] || fail "cannot seed a seller and its campaigns"

start_prometheus "$metrics_port"

# The traffic, for as long as the test runs: a solar lead every 0.2 s, an auto lead every 0.5 s
# (Surface B, sync: each answered once its auction is decided). Distinct people, so none is a
# duplicate.
post() {  # post CAMPAIGN_KEY N
  curl -s -o /dev/null -w '%{http_code}\n' --max-time 10 --cacert "$work/data/tls/cert.pem" -X POST "$base/api/v1/lead" \
    -H 'Content-Type: application/json' \
    -d "{\"SELLER_CAMPAIGN_KEY\":\"$1\",\"first_name\":\"Grace\",\"last_name\":\"Hopper\",\"email_address\":\"p$2@example.com\",\"phone_home\":\"212$(printf '%07d' "$2")\",\"zip_code\":\"10001\"}" \
    >> "$work/answers.$1" || true
}
( n=0; while :; do n=$((n + 1)); post "$solar" "$((3000000 + n))"; sleep 0.2; done ) &
pids+=($!)
( n=0; while :; do n=$((n + 1)); post "$auto" "$((2000000 + n))"; sleep 0.5; done ) &
pids+=($!)

alerts() { curl -sf "$prom/api/v1/alerts"; }
# One alert of the rule for VERTICAL in STATE (pending or firing), read from the alerts API.
in_state() {  # in_state VERTICAL STATE
  alerts | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const [vertical, state] = process.argv.slice(1);
      const hit = JSON.parse(s).data.alerts.some((a) => a.labels.alertname === "LeadflowVerticalWithoutBuyers"
        && a.labels.vertical === vertical && a.state === state);
      process.exit(hit ? 0 : 1);
    });' "$1" "$2"
}
# The buyers were tried and failed: every solar request an error or a pause, auto's sold.
query() { curl -sf "$prom/api/v1/query" --data-urlencode "query=$1"; }
has_series() { query "$1" | grep -q '"result":\[{'; }
wait_for "no failed solar request was scraped" has_series 'sum(leadflow_buyer_requests_total{result!="ok"}) > 0'
wait_for "no sale was scraped" has_series 'sum(leadflow_revenue_cents_total) > 0'

started=$(date +%s)
fired=""
# The rule's `for` is 2 minutes; it must fire well within 4 whatever the machine's load.
while (( $(date +%s) - started < 240 )); do
  if in_state solar firing; then fired=$(( $(date +%s) - started )); break; fi
  if in_state auto_insurance pending || in_state auto_insurance firing; then
    fail "LeadflowVerticalWithoutBuyers is raised for auto_insurance, whose buyer answers"
  fi
  sleep 2
done
[[ -n $fired ]] || { alerts >&2 || true; fail "LeadflowVerticalWithoutBuyers did not fire for solar within 240 s"; }
if in_state auto_insurance pending || in_state auto_insurance firing; then
  fail "LeadflowVerticalWithoutBuyers is raised for auto_insurance, whose buyer answers"
fi
paused_max=$(query 'max_over_time(max(leadflow_buyer_paused{vertical="solar"})[10m:1s])' | sed -n 's/.*"value":\[[^,]*,"\([^"]*\)".*/\1/p')
echo "buyer_outage_alert: LeadflowVerticalWithoutBuyers fired for solar ${fired} s after its buyers' first failures were scraped (paused gauge seen at ${paused_max:-?}); auto_insurance stayed quiet"
