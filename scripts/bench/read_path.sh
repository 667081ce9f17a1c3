#!/usr/bin/env bash
# The read-path phase: what the key-authenticated reads of Surface A cost, for two builds side by
# side (`scripts/bench.sh read BASE_COMMIT`), so that a change to authentication, the visibility
# model, the lead view or the reports is measured against the code before it in one run.
#
# Each build runs its own leadflow-ingest (embedded default, one worker) seeded the same way: one
# buyer simulator (fixed bid, 5 ms), one seller with an API key, a buyer key, and
# BENCH_READ_LEADS (200) leads posted through Surface A and sold. wrk then GETs, over
# BENCH_READ_CONNECTIONS (16) keep-alive TLS connections for BENCH_READ_SECONDS (5) each:
#   lead/seller     GET /v1/leads/{id} with the seller's key (authentication + the lead view)
#   lead/buyer      the same lead with the buyer's key
#   lead/operator   the same lead with the operator's key
#   list/seller     GET /v1/leads?limit=25 with the seller's key
#   revenue/seller  GET /v1/reports/revenue?group_by=day with the seller's key
#   revenue/buyer   GET /v1/reports/revenue?group_by=day with the buyer's key
# The rate limits are not what is measured, and every answer must be a 200: a key's plan
# (enterprise) allows 1,000 requests a minute, so each role reads with BENCH_READ_KEYS (256) keys,
# each request taking the next. The two builds alternate round by round (base first in odd rounds);
# medians of BENCH_ROUNDS (3) rounds, and the ratio new/base of each shape's requests/s (of the
# medians, and the median of the rounds' own ratios).
#
# Environment: BENCH_READ_BASE (a build dir holding ingest/leadflow-ingest and
# workers/leadflow-buyer-sim of the code before), BENCH_BUILD (the same of the code now).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${BENCH_ROUNDS:-3}
seconds=${BENCH_READ_SECONDS:-5}
connections=${BENCH_READ_CONNECTIONS:-16}
leads=${BENCH_READ_LEADS:-200}
keys=${BENCH_READ_KEYS:-256}
base_build=${BENCH_READ_BASE:?the base build dir}
new_build=${BENCH_BUILD:?the build dir}

work=$(mktemp -d /tmp/leadflow-read-XXXXXX)
pids=()
mock_pid=""
# shellcheck source=scripts/bench/common.sh
source "$root/scripts/bench/common.sh"
trap cleanup EXIT

sim_port=$(free_port)
"$new_build/workers/leadflow-buyer-sim" --name reader --port "$sim_port" --bid 12.50 \
  --latency-ms 5 --threads 8 >/dev/null 2>&1 &
pids+=($!)

operator="lfk_bench_$(openssl rand -hex 20)"
declare -A port seller_key buyer_key operator_keys lead_id
start() {  # start NAME BUILD
  local dir="$work/$1" p
  mkdir -p "$dir"
  p=$(free_port)
  LEADFLOW_DATA_DIR="$dir" LEADFLOW_LISTEN="127.0.0.1:$p" LEADFLOW_BOOTSTRAP_KEY="$operator" \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_WORKERS=1 LEADFLOW_LOG_LEVEL=warn \
    "$2/ingest/leadflow-ingest" > "$dir/out" 2> "$dir/log" &
  pids+=($!)
  for _ in $(seq 1 300); do
    curl -sf --cacert "$dir/tls/cert.pem" "https://127.0.0.1:$p/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  port[$1]=$p
  local buyer seller body i id
  buyer=$(api "$dir" "$p" POST /v1/buyers "{\"name\":\"reader\",\"verticals\":[\"auto_insurance\"],\"delivery\":{\"mode\":\"ping_post\",\"ping_url\":\"http://127.0.0.1:$sim_port/ping\",\"post_url\":\"http://127.0.0.1:$sim_port/post\",\"timeout_ms\":1000},\"duplicate_lookback_days\":0}" | field buyer_id)
  seller=$(api "$dir" "$p" POST /v1/sellers '{"name":"reader"}' | field seller_id)
  # Each role's keys, used in turn (see the top).
  local s b o
  for i in $(seq 1 "$keys"); do
    s=$(api "$dir" "$p" POST /v1/api-keys "{\"name\":\"s$i\",\"seller_id\":\"$seller\",\"plan\":\"enterprise\"}" | field key)
    b=$(api "$dir" "$p" POST /v1/api-keys "{\"name\":\"b$i\",\"buyer_id\":\"$buyer\",\"plan\":\"enterprise\"}" | field key)
    o=$(api "$dir" "$p" POST /v1/api-keys "{\"name\":\"o$i\",\"plan\":\"enterprise\"}" | field key)
    [[ -n "$s" && -n "$b" && -n "$o" ]] || { echo "read bench: seeding $1 failed" >&2; cat "$dir/log" >&2; exit 1; }
    seller_key[$1]+="${seller_key[$1]:+,}$s"; buyer_key[$1]+="${buyer_key[$1]:+,}$b"
    operator_keys[$1]+="${operator_keys[$1]:+,}$o"
  done
  for i in $(seq 1 "$leads"); do
    body="{\"first_name\":\"Ada\",\"last_name\":\"Reader\",\"email\":\"ada.$i@example.com\",\"phone\":\"2125550$(printf '%03d' $((i % 1000)))\",\"zip_code\":\"10001\",\"vertical\":\"auto_insurance\",\"source\":\"google\",\"custom_fields\":{\"vehicle_year\":2019}}"
    id=$(curl -sS --cacert "$dir/tls/cert.pem" -X POST "https://127.0.0.1:$p/v1/leads" \
      -H "Authorization: Bearer ${seller_key[$1]%%,*}" -H 'Content-Type: application/json' -d "$body" | field lead_id)
    [[ -n "$id" ]] && lead_id[$1]=$id
  done
}
start base "$base_build"
start new "$new_build"

declare -A rps p50
measure() {  # measure BUILD SHAPE KEY PATH
  local out r a f
  out=$(BENCH_KEYS="$3" BENCH_PATH="$4" wrk -t2 -c"$connections" -d"${seconds}s" --timeout 5s \
    -s "$root/scripts/bench/get_path.lua" "https://127.0.0.1:${port[$1]}" 2>&1)
  r=$(echo "$out" | awk '/BENCH_RPS/ {print $2}')
  a=$(echo "$out" | awk '/BENCH_P50_MS/ {print $2}')
  f=$(echo "$out" | awk '/BENCH_FAILURES/ {print $2}')
  if [[ "$f" != 0 ]]; then echo "read bench: $1 $2 had $f failures" >&2; exit 1; fi
  echo "  $1 $2: $r req/s, p50 $a ms" >&2
  rps[$1/$2]+="$r "; p50[$1/$2]+="$a "
}
shapes=(lead/seller lead/buyer lead/operator list/seller revenue/seller revenue/buyer)
run_shapes() {  # run_shapes BUILD
  local b=$1
  measure "$b" lead/seller "${seller_key[$b]}" "/v1/leads/${lead_id[$b]}"
  measure "$b" lead/buyer "${buyer_key[$b]}" "/v1/leads/${lead_id[$b]}"
  measure "$b" lead/operator "${operator_keys[$b]}" "/v1/leads/${lead_id[$b]}"
  measure "$b" list/seller "${seller_key[$b]}" "/v1/leads?limit=25"
  measure "$b" revenue/seller "${seller_key[$b]}" "/v1/reports/revenue?group_by=day"
  measure "$b" revenue/buyer "${buyer_key[$b]}" "/v1/reports/revenue?group_by=day"
}
echo "read path: $rounds rounds x ${seconds}s per shape, $connections connections" >&2
for round in $(seq 1 "$rounds"); do
  if ((round % 2 == 1)); then order="base new"; else order="new base"; fi
  for b in $order; do run_shapes "$b"; done
done

echo
echo "read path (Surface A GETs over TLS, $connections connections; medians of $rounds rounds):"
# new/base is the ratio of the medians; paired, the median of each round's ratio (the two builds
# of a round measured one after the other), which a noisy round moves less.
printf '%-16s %12s %12s %10s %10s %8s %8s\n' shape "base req/s" "new req/s" "base p50" "new p50" \
  "new/base" "paired"
for s in "${shapes[@]}"; do
  rb=$(echo "${rps[base/$s]}" | median)
  rn=$(echo "${rps[new/$s]}" | median)
  paired=$(paste -d' ' <(echo "${rps[new/$s]}" | tr ' ' '\n' | grep -v '^$') \
    <(echo "${rps[base/$s]}" | tr ' ' '\n' | grep -v '^$') | awk '{printf "%s ", $1 / $2}' | median)
  printf '%-16s %12.0f %12.0f %10.2f %10.2f %8.3f %8.3f\n' "$s" "$rb" "$rn" \
    "$(echo "${p50[base/$s]}" | median)" "$(echo "${p50[new/$s]}" | median)" \
    "$(awk -v a="$rn" -v b="$rb" 'BEGIN {print a / b}')" "$paired"
done
