#!/usr/bin/env bash
# The consumer lag workers read while they keep up (alone, not yet a phase of bench.sh): what
# KEDA's lagThreshold (k8s/base/worker.yaml) must stay above, so that workers which keep up are
# not taken for workers that fall behind.
#
# The scale-out shape: one leadflow-ingest (workers off) and BENCH_KEEPUP_WORKERS (2)
# leadflow-worker processes on a real three-node Kafka (BENCH_KAFKA=mock: the mock cluster) and a
# PostgreSQL server, three buyer simulators answering every ping and post after
# BENCH_KEEPUP_BUYER_MS (500) so that an auction takes two of that. wrk posts async Surface B
# leads for BENCH_KEEPUP_SECONDS (40) over BENCH_KEEPUP_CONNECTIONS (32) connections, each
# waiting a random time (exponential, mean BENCH_KEEPUP_THINK_MS, 50) before each post: a paced
# load the workers keep up with. Every second it reads each worker's leadflow_queue_consumer_lag
# on the leads topic and the leads decided; after the first third of the run (the group joined,
# the rate steady) it prints the posted and decided rates and each worker's lag, median and
# highest, and their sum (what KEDA reads from the brokers: the same committed offsets).
#
# Environment as above, and BENCH_BUILD (a release build dir; by default build-release, built
# here).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
workers=${BENCH_KEEPUP_WORKERS:-2}
buyer_ms=${BENCH_KEEPUP_BUYER_MS:-500}
seconds=${BENCH_KEEPUP_SECONDS:-40}
connections=${BENCH_KEEPUP_CONNECTIONS:-32}
think_ms=${BENCH_KEEPUP_THINK_MS:-50}
partitions=8
build=${BENCH_BUILD:-}
kafka_kind=${BENCH_KAFKA:-real}
if [[ -z "$build" ]]; then
  "$root/scripts/deps.sh" --bench --scale-out
  build="$root/build-release"
  LEADFLOW_BUILD_DIR="$build" LEADFLOW_BUILD_TYPE=Release LEADFLOW_BUILD_TESTS=OFF LEADFLOW_UNITY_BUILD=OFF \
    "$root/scripts/build.sh" --target leadflow-ingest leadflow-worker leadflow-buyer-sim \
    leadflow-kafka-mock >/dev/null
fi

work=$(mktemp -d /tmp/leadflow-keepup-XXXXXX)
chmod 711 "$work"  # as root, PostgreSQL runs as the postgres user and must pass through
pids=()
mock_pid=""
operator="lfk_bench_$(openssl rand -hex 20)"
# shellcheck source=scripts/bench/common.sh
source "$root/scripts/bench/common.sh"
trap cleanup EXIT

buyer_ports=()
for spec in "fast:9.00" "medium:11.00" "slow:14.50"; do
  IFS=: read -r name bid <<< "$spec"
  port=$(free_port)
  "$build/workers/leadflow-buyer-sim" --name "$name" --port "$port" --bid "$bid" \
    --latency-ms "$buyer_ms" --threads 8 >/dev/null 2>&1 &
  pids+=($!)
  buyer_ports+=("$port:$name")
done

"$root/scripts/pg_server.sh" start "$work/pg" >/dev/null
pg_admin=$(cat "$work/pg/url")
psql -q -v ON_ERROR_STOP=1 "$pg_admin" -c "CREATE DATABASE lf_bench_keepup" >/dev/null
store="${pg_admin%/*}/lf_bench_keepup"
prefix=keepup
start_kafka "$kafka_kind" --brokers 3 --topic "$prefix.leads:$partitions" \
  --topic "$prefix.results:$partitions" --topic "$prefix.leads.retry:$partitions" \
  --topic "$prefix.leads.dead:$partitions"
scale_out=("LEADFLOW_STORE=$store" "LEADFLOW_QUEUE=kafka://$bootstrap" "LEADFLOW_QUEUE_PARTITIONS=$partitions"
           "LEADFLOW_KAFKA_REPLICATION=3" "LEADFLOW_TOPIC_PREFIX=$prefix" "LEADFLOW_WORKER_GROUP=$prefix")
if [[ "$kafka_kind" == mock ]]; then scale_out+=("LEADFLOW_KAFKA_FETCH_WAIT_MS=5"); fi

dir="$work/ingest"
mkdir -p "$dir"
port=$(free_port)
LEADFLOW_DATA_DIR="$dir" LEADFLOW_LISTEN="127.0.0.1:$port" LEADFLOW_BOOTSTRAP_KEY="$operator" \
LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_WORKERS=0 LEADFLOW_LOG_LEVEL=warn LEADFLOW_MAX_CONNECTIONS_PER_ADDRESS=0 \
  env "${scale_out[@]}" "$build/ingest/leadflow-ingest" > "$dir/out" 2> "$dir/log" &
pids+=($!)
for _ in $(seq 1 300); do
  curl -sf --cacert "$dir/tls/cert.pem" "https://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
for entry in "${buyer_ports[@]}"; do
  IFS=: read -r bport name <<< "$entry"
  api "$dir" "$port" POST /v1/buyers "{\"name\":\"$name\",\"verticals\":[\"auto_insurance\"],\"delivery\":{\"mode\":\"ping_post\",\"ping_url\":\"http://127.0.0.1:$bport/ping\",\"post_url\":\"http://127.0.0.1:$bport/post\",\"timeout_ms\":$((buyer_ms * 2 + 500))},\"duplicate_lookback_days\":0}" >/dev/null
done
seller=$(api "$dir" "$port" POST /v1/sellers '{"name":"bench"}' | field seller_id)
key=$(api "$dir" "$port" POST /v1/campaigns "{\"seller_id\":\"$seller\",\"name\":\"bench\",\"vertical\":\"auto_insurance\",\"mode\":\"async\",\"rate_limit_per_minute\":10000000}" | field campaign_key)
[[ -n "$key" ]] || { echo "keepup bench: no campaign key" >&2; cat "$dir/log" >&2; exit 1; }

ports=()
for i in $(seq 1 "$workers"); do
  mkdir -p "$work/worker$i"
  LEADFLOW_DATA_DIR="$work/worker$i" LEADFLOW_METRICS_LISTEN=127.0.0.1:0 LEADFLOW_LOG_LEVEL=warn \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 env "${scale_out[@]}" "$build/workers/leadflow-worker" \
    > "$work/worker$i/out" 2> "$work/worker$i/log" &
  pids+=($!)
  wport=""
  for _ in $(seq 1 600); do
    wport=$(sed -n 's/.*"worker_ready","metrics_port":\([0-9]*\).*/\1/p' "$work/worker$i/out")
    [[ -n "$wport" ]] && break
    sleep 0.1
  done
  [[ -n "$wport" ]] || { echo "keepup bench: worker $i did not start" >&2; cat "$work/worker$i/log" >&2; exit 1; }
  ports+=("$wport")
done

# One reading, one scrape of each worker: each worker's lag on the leads topic, then the leads
# decided by all.
reading() {
  local p lags=() decided=0 lag d
  for p in "${ports[@]}"; do
    read -r lag d < <(curl -s --max-time 2 "http://127.0.0.1:$p/metrics" |
      awk -v t="$prefix.leads\"" '/^leadflow_queue_consumer_lag/ && index($0, "topic=\"" t) {l += $NF}
                                    /^leadflow_leads_decided_total/ {d += $NF} END {printf "%d %d", l, d}')
    lags+=("$lag")
    decided=$((decided + d))
  done
  echo "${lags[*]} $decided"
}

BENCH_KEY="$key" BENCH_EXPECT=202 BENCH_THINK_MS="$think_ms" \
  wrk -t2 -c"$connections" -d"${seconds}s" --timeout 5s -s "$root/scripts/bench/post_lead.lua" \
  "https://127.0.0.1:$port" > "$work/wrk" 2>&1 &
wrk_pid=$!
pids+=("$wrk_pid")
samples="$work/samples"
: > "$samples"
start=$(now)
while kill -0 "$wrk_pid" 2>/dev/null; do
  echo "$(awk -v a="$start" -v b="$(now)" 'BEGIN {printf "%.1f", b - a}') $(reading)" >> "$samples"
  sleep 1
done
wait "$wrk_pid" || true
posted=$(awk '/^Requests\/sec/ {print $2}' "$work/wrk")

# From the first third of the run on: the decided rate, and each worker's lag and their sum.
awk -v from="$((seconds / 3))" -v n="$workers" -v posted="$posted" -v buyer="$buyer_ms" '
  $1 >= from {
    k++; t[k] = $1; d[k] = $(n + 2); total = 0
    for (i = 1; i <= n; i++) { lag[i, k] = $(i + 1); total += $(i + 1) }
    sum[k] = total
  }
  function med_max(get, label,   j, m, a, x, y, tmp) {
    m = 0
    for (j = 1; j <= k; j++) { a[j] = get == 0 ? sum[j] : lag[get, j]; if (a[j] > m) m = a[j] }
    for (x = 1; x <= k; x++) for (y = x + 1; y <= k; y++) if (a[y] < a[x]) { tmp = a[x]; a[x] = a[y]; a[y] = tmp }
    printf "  %-28s median %6d   highest %6d\n", label, a[int((k + 1) / 2)], m
  }
  END {
    printf "keep-up lag: buyers answering in %d ms, %d worker(s), %d readings\n", buyer, n, k
    printf "  posted %.0f leads/s, decided %.0f leads/s while read\n", posted, (d[k] - d[1]) / (t[k] - t[1])
    for (i = 1; i <= n; i++) med_max(i, "worker " i " lag")
    med_max(0, "lag summed (what KEDA reads)")
  }' "$samples"
