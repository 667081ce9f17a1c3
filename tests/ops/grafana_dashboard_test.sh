#!/usr/bin/env bash
# The Grafana dashboard (k8s/grafana/leadflow.json) against the real thing: leadflow-ingest in the
# embedded default (its workers inside) with three simulated buyers, one of them flaky, sells a
# small load of leads while a real Prometheus (Debian's /usr/bin/prometheus) scrapes its metrics
# listener every second and evaluates the alert rules of k8s/base/monitoring.yaml; then every
# panel's query must be valid and answer series, every metric the panels and rules name must be
# exported, and every rule must evaluate without error (tests/ops/dashboard_queries.mjs).
#
# Usage: tests/ops/grafana_dashboard_test.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: grafana_dashboard_test.sh BUILD_DIR}
prometheus_bin=${PROMETHEUS:-/usr/bin/prometheus}
[[ -x $prometheus_bin ]] || { echo "grafana_dashboard: $prometheus_bin is missing (scripts/deps.sh --test)" >&2; exit 1; }
# leadflow refuses LEADFLOW_* names it does not know; these belong to the build scripts.
unset LEADFLOW_BUILD_DIR LEADFLOW_BUILD_TYPE LEADFLOW_BUILD_TESTS LEADFLOW_JOBS LEADFLOW_WERROR LEADFLOW_SANITIZE LEADFLOW_SYSTEM_TESTS_ONLY

work=$(mktemp -d /tmp/leadflow-grafana-XXXXXX)
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

# Buyers: two that bid, one that errors and hangs (error, timeout and pause series exist).
start_buyer acme --bid 14.50 --latency-ms 5 --seed 1
start_buyer bluesky --bid-range 8:16 --latency-ms 10 --no-bid-rate 0.2 --seed 2
start_buyer flaky --bid 20 --error-rate 0.4 --timeout-rate 0.3 --hang-ms 1500 --seed 3
for name in acme bluesky flaky; do wait_for "buyer $name did not start" buyer_ready "$name"; done

port=$(free_port)
metrics_port=$(free_port)
operator_key="lfk_test_$(openssl rand -hex 20)"
LEADFLOW_DATA_DIR="$work/data" LEADFLOW_LISTEN="127.0.0.1:$port" \
  LEADFLOW_METRICS_LISTEN="127.0.0.1:$metrics_port" LEADFLOW_BOOTSTRAP_KEY="$operator_key" \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 "$build/ingest/leadflow-ingest" > "$work/ingest.out" 2> "$work/ingest.log" &
pids+=($!)
wait_for "leadflow-ingest did not become ready" curl -sf "http://127.0.0.1:$metrics_port/readyz"

base="https://127.0.0.1:$port"
api() {  # api METHOD PATH JSON
  curl -sS --cacert "$work/data/tls/cert.pem" -X "$1" "$base$2" -H "Authorization: Bearer $operator_key" \
    -H 'Content-Type: application/json' -d "$3"
}
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
for spec in "acme:auto_insurance" "bluesky:auto_insurance" "flaky:auto_insurance\",\"solar"; do
  IFS=: read -r name verticals <<< "$spec"
  p=$(buyer_port "$name")
  api POST /v1/buyers "{\"name\":\"$name\",\"verticals\":[\"$verticals\"],\"delivery\":{\"mode\":\"ping_post\",\"ping_url\":\"http://127.0.0.1:$p/ping\",\"post_url\":\"http://127.0.0.1:$p/post\",\"timeout_ms\":300},\"pricing\":{\"model\":\"bid\",\"min_bid\":5}}" \
    | grep -q '"buyer_id"' || fail "cannot create buyer $name"
done
seller=$(api POST /v1/sellers '{"name":"Dashboard Seller"}' | field seller_id)
campaign=$(api POST /v1/campaigns "{\"seller_id\":\"$seller\",\"name\":\"Dashboard\",\"vertical\":\"auto_insurance\",\"payout\":{\"model\":\"revshare\",\"value\":70}}" | field campaign_key)
[[ -n $seller && -n $campaign ]] || fail "cannot seed a seller and a campaign"

# Prometheus: scrapes every second, evaluates the rules every second.
start_prometheus "$metrics_port"

# The load: sync Surface B posts (sold or not), a few invalid ones, some Surface A posts.
post_b() {
  curl -s -o /dev/null --cacert "$work/data/tls/cert.pem" -X POST "$base/api/v1/lead" \
    -H 'Content-Type: application/json' \
    -d "{\"SELLER_CAMPAIGN_KEY\":\"$campaign\",\"first_name\":\"Grace\",\"last_name\":\"Hopper\",\"email_address\":\"grace.$1@example.com\",\"phone_home\":\"212555$((1000 + $1))\",\"zip_code\":\"10001\"}"
}
post_a() {
  curl -s -o /dev/null --cacert "$work/data/tls/cert.pem" -X POST "$base/v1/leads" \
    -H "Authorization: Bearer $operator_key" -H 'Content-Type: application/json' \
    -d "{\"first_name\":\"Ada\",\"last_name\":\"Lovelace\",\"email\":\"ada.$1@example.com\",\"phone\":\"202555$((1000 + $1))\",\"zip_code\":\"90210\",\"vertical\":\"auto_insurance\",\"source\":\"test\"}"
}
invalid() {
  curl -s -o /dev/null --cacert "$work/data/tls/cert.pem" -X POST "$base/api/v1/lead" \
    -H 'Content-Type: application/json' -d "{\"SELLER_CAMPAIGN_KEY\":\"$campaign\",\"zip_code\":\"x$1\"}"
}
export -f post_a post_b invalid
export base campaign operator_key work
seq 1 80 | xargs -P 4 -I{} bash -c 'post_b {}'
seq 101 120 | xargs -P 4 -I{} bash -c 'post_a {}'
seq 1 10 | xargs -P 2 -I{} bash -c 'invalid {}'

query() { curl -sf "$prom/api/v1/query" --data-urlencode "query=$1"; }
has_series() { query "$1" | grep -q '"result":\[{'; }
# Sold leads were scraped, and enough scrapes since for rates over them.
wait_for "no revenue was scraped" has_series 'sum(leadflow_revenue_cents_total) > 0'
wait_for "too few scrapes" has_series 'count_over_time(up{job="leadflow"}[1m]) >= 8'

node "$here/dashboard_queries.mjs" "$root" "$prom" "$work/rules.yml"
