#!/usr/bin/env bash
# The sync-path phase of scripts/bench.sh: how long a seller waits beyond the buyers themselves
# for a sync post (Surface B, sync campaign). Runs alone too (it builds what it needs).
#
# Three buyer simulators answer pings and posts after a fixed 20, 40 and 60 ms (no jitter) and
# the 60 ms one bids best, so every lead's floor is exact: the slowest ping (60 ms) plus the
# winner's post (60 ms) = 120 ms. wrk posts unique leads over BENCH_SYNC_CONNECTIONS (8)
# keep-alive TLS connections, every answer must be a 200 "sold" (each round posts people of its
# own, so none is a duplicate of an earlier round's). Two ways of posting:
#   independent  each connection waits a random time before each post (exponential, mean
#                BENCH_SYNC_THINK_MS, 20 ms), like sellers that post on their own schedules
#   lock step    each connection posts again the moment it is answered: with buyers that answer
#                in exactly the same time, the 8 connections fall into step and their leads
#                arrive, and are decided, in bursts of 4-5 in the same millisecond, which then
#                queue for the 2 cores and the one SQLite writer
# Two shapes, each way of posting in turn, BENCH_ROUNDS rounds of BENCH_SYNC_SECONDS each:
#   embedded   one leadflow-ingest with its worker (SQLite, the embedded queue)
#   scale-out  leadflow-ingest and one leadflow-worker as separate processes, the Kafka mock
#              cluster (leadflow-kafka-mock: 3 brokers, replication 3, 8 partitions), or with
#              BENCH_KAFKA=real a real three-node Kafka (scripts/kafka_cluster.sh; bench.sh's own
#              when it gives BENCH_KAFKA_BOOTSTRAP), and a PostgreSQL server (scripts/pg_server.sh,
#              a throwaway one)
# Prints each shape's median p50 and p99 (of the rounds) and the added latency: p50 and p99
# minus the floor. The simulators answer a little after their set latency, so the floor is also
# measured: the 60 ms buyer's ping and post, one after the other on one kept-alive connection as
# a worker asks them (curl, median of 20 pairs); "added p50 (measured)" is p50 minus that. The added latency is leadflow's whole share: HTTP and validation, the durable
# append to the queue, the worker's read of it, the store writes (the lead, its post intent,
# its outcome), the requests to the buyers, and the outcome's way back to the waiting request.
#
# Environment: BENCH_ROUNDS (3), BENCH_SYNC_SECONDS (10), BENCH_SYNC_CONNECTIONS (8),
# BENCH_SYNC_THINK_MS (20), BENCH_KAFKA (mock or real). Set by
# bench.sh: BENCH_BUILD (a release build dir with leadflow-ingest, leadflow-worker,
# leadflow-buyer-sim and leadflow-kafka-mock).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${BENCH_ROUNDS:-3}
seconds=${BENCH_SYNC_SECONDS:-10}
connections=${BENCH_SYNC_CONNECTIONS:-8}
think_ms=${BENCH_SYNC_THINK_MS:-20}
floor=120  # the slowest ping (60 ms) + the winner's post (the 60 ms buyer bids highest)
partitions=8
build=${BENCH_BUILD:-}
kafka_kind=${BENCH_KAFKA:-mock}
case "$kafka_kind" in
  mock) kafka_label="Kafka mock" ;;
  real) kafka_label="three-node Kafka" ;;
  *) echo "sync bench: BENCH_KAFKA is mock or real, not $kafka_kind" >&2; exit 2 ;;
esac
if [[ -z "$build" ]]; then
  if [[ "$kafka_kind" == real ]]; then "$root/scripts/deps.sh" --bench --scale-out; else "$root/scripts/deps.sh" --bench; fi
  build="$root/build-release"
  LEADFLOW_BUILD_DIR="$build" LEADFLOW_BUILD_TYPE=Release LEADFLOW_BUILD_TESTS=OFF LEADFLOW_UNITY_BUILD=OFF \
    "$root/scripts/build.sh" --target leadflow-ingest leadflow-worker leadflow-buyer-sim \
    leadflow-kafka-mock >/dev/null
fi

work=$(mktemp -d /tmp/leadflow-sync-XXXXXX)
chmod 711 "$work"  # as root, PostgreSQL runs as the postgres user and must pass through
pids=()
mock_pid=""
# shellcheck source=scripts/bench/common.sh
source "$root/scripts/bench/common.sh"
trap cleanup EXIT

buyer_ports=()
for spec in "fast:20:9.00" "medium:40:11.00" "slow:60:14.50"; do
  IFS=: read -r name latency bid <<< "$spec"
  port=$(free_port)
  "$build/workers/leadflow-buyer-sim" --name "$name" --port "$port" --bid "$bid" \
    --latency-ms "$latency" --threads 64 >/dev/null 2>&1 &
  pids+=($!)
  buyer_ports+=("$port:$name")
done

# The scale-out pieces: PostgreSQL and the Kafka cluster: the mock (which cannot create topics:
# they are made here), or a real one (leadflow creates its topics).
"$root/scripts/pg_server.sh" start "$work/pg" >/dev/null
pg_admin=$(cat "$work/pg/url")
psql -q -v ON_ERROR_STOP=1 "$pg_admin" -c "CREATE DATABASE lf_bench_sync" >/dev/null
pg_store="${pg_admin%/*}/lf_bench_sync"
prefix=bench-sync
bootstrap=""
if [[ "$kafka_kind" == real && -n "${BENCH_KAFKA_BOOTSTRAP:-}" ]]; then
  bootstrap=$BENCH_KAFKA_BOOTSTRAP  # bench.sh's own cluster
else
  start_kafka "$kafka_kind" --brokers 3 --topic "$prefix.leads:$partitions" \
    --topic "$prefix.results:$partitions" --topic "$prefix.leads.retry:$partitions" \
    --topic "$prefix.leads.dead:1"
fi
scale_out=("LEADFLOW_STORE=$pg_store" "LEADFLOW_QUEUE=kafka://$bootstrap"
           "LEADFLOW_QUEUE_PARTITIONS=$partitions" "LEADFLOW_KAFKA_REPLICATION=3"
           "LEADFLOW_TOPIC_PREFIX=$prefix")
# The mock holds an idle fetch for the whole wait even as records arrive; Kafka does not.
if [[ "$kafka_kind" == mock ]]; then scale_out+=("LEADFLOW_KAFKA_FETCH_WAIT_MS=5"); fi

operator="lfk_bench_$(openssl rand -hex 20)"
start_ingest() {  # start_ingest DIR WORKERS [VAR=VALUE...] -> sets lf_port
  mkdir -p "$1"
  lf_port=$(free_port)
  LEADFLOW_DATA_DIR="$1" LEADFLOW_LISTEN="127.0.0.1:$lf_port" LEADFLOW_BOOTSTRAP_KEY="$operator" \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_WORKERS="$2" LEADFLOW_LOG_LEVEL=warn \
    env "${@:3}" "$build/ingest/leadflow-ingest" > "$1/out" 2> "$1/log" &
  pids+=($!)
  for _ in $(seq 1 300); do
    curl -sf --cacert "$1/tls/cert.pem" "https://127.0.0.1:$lf_port/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "sync bench: leadflow-ingest did not start" >&2; cat "$1/log" >&2; exit 1
}
start_worker() {  # start_worker DIR
  mkdir -p "$1"
  LEADFLOW_DATA_DIR="$1" LEADFLOW_METRICS_LISTEN=127.0.0.1:0 LEADFLOW_LOG_LEVEL=warn \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 env "${scale_out[@]}" "$build/workers/leadflow-worker" \
    > "$1/out" 2> "$1/log" &
  pids+=($!)
  for _ in $(seq 1 600); do
    grep -q '"worker_ready"' "$1/out" && return 0
    sleep 0.1
  done
  echo "sync bench: leadflow-worker did not start" >&2; cat "$1/log" >&2; exit 1
}
seed() {  # seed DIR PORT -> prints the key of a sync campaign
  local seller entry port name
  for entry in "${buyer_ports[@]}"; do
    IFS=: read -r port name <<< "$entry"
    api "$1" "$2" POST /v1/buyers "{\"name\":\"$name\",\"verticals\":[\"auto_insurance\"],\"delivery\":{\"mode\":\"ping_post\",\"ping_url\":\"http://127.0.0.1:$port/ping\",\"post_url\":\"http://127.0.0.1:$port/post\",\"timeout_ms\":1000},\"duplicate_lookback_days\":0}" >/dev/null
  done
  seller=$(api "$1" "$2" POST /v1/sellers '{"name":"bench"}' | field seller_id)
  api "$1" "$2" POST /v1/campaigns "{\"seller_id\":\"$seller\",\"name\":\"bench\",\"vertical\":\"auto_insurance\",\"mode\":\"sync\",\"rate_limit_per_minute\":10000000}" | field campaign_key
}

start_ingest "$work/embedded" 1
embedded_port=$lf_port
embedded_key=$(seed "$work/embedded" "$embedded_port")
start_ingest "$work/scale-out" 0 "${scale_out[@]}"
scale_port=$lf_port
scale_key=$(seed "$work/scale-out" "$scale_port")
start_worker "$work/scale-out-worker"
[[ -n "$embedded_key" && -n "$scale_key" ]] || { echo "sync bench: seeding gave no campaign key" >&2; exit 1; }

# What the slowest buyer takes as a client sees it: its ping then its post on one kept-alive
# connection, the median of 20 pairs (the first pair, which opens the connection, left out), ms.
measured_floor() {  # measured_floor PORT
  local args=() i path body='{"ping_id":"pg_floor","lead_id":"ld_floor"}'
  for i in $(seq 1 21); do
    for path in ping post; do
      ((${#args[@]} > 0)) && args+=(--next)
      args+=(-s -o /dev/null -w '%{time_total}\n' -X POST -H 'Content-Type: application/json'
        -d "$body" "http://127.0.0.1:$1/$path")
    done
  done
  curl "${args[@]}" | awk 'NR > 2 { if (NR % 2) p = $1; else print 1000 * (p + $1) }' | median
}
slow_port=""
for entry in "${buyer_ports[@]}"; do
  IFS=: read -r port name <<< "$entry"
  [[ "$name" == slow ]] && slow_port=$port
done
floor_measured=$(measured_floor "$slow_port")

declare -A p50 p99 rps fails
measure() {  # measure NAME PORT KEY SALT THINK_MS
  local out r a b f
  out=$(BENCH_KEY="$3" BENCH_EXPECT=200 BENCH_EXPECT_BODY='"status":"sold"' BENCH_SALT="$4" \
    BENCH_THINK_MS="$5" wrk -t2 -c"$connections" -d"${seconds}s" --timeout 5s \
    -s "$root/scripts/bench/post_lead.lua" "https://127.0.0.1:$2" 2>&1)
  r=$(echo "$out" | awk '/BENCH_RPS/ {print $2}')
  a=$(echo "$out" | awk '/BENCH_P50_MS/ {print $2}')
  b=$(echo "$out" | awk '/BENCH_P99_MS/ {print $2}')
  f=$(echo "$out" | awk '/BENCH_FAILURES/ {print $2}')
  echo "  round $4 $1: ${r} req/s, p50 ${a} ms, p99 ${b} ms, failures ${f}" >&2
  rps[$1]+="$r "; p50[$1]+="$a "; p99[$1]+="$b "; fails[$1]=$((${fails[$1]:-0} + f))
}
# One short warm-up each (connections to the buyers, the worker's group join, caches).
BENCH_KEY="$embedded_key" BENCH_EXPECT=200 wrk -t1 -c2 -d2s -s "$root/scripts/bench/post_lead.lua" \
  "https://127.0.0.1:$embedded_port" >/dev/null 2>&1
BENCH_KEY="$scale_key" BENCH_EXPECT=200 wrk -t1 -c2 -d2s -s "$root/scripts/bench/post_lead.lua" \
  "https://127.0.0.1:$scale_port" >/dev/null 2>&1
echo "sync path: $rounds rounds x ${seconds}s per shape, $connections connections" >&2
for round in $(seq 1 "$rounds"); do
  if ((round % 2 == 1)); then order="embedded scale-out"; else order="scale-out embedded"; fi
  for shape in $order; do
    # Each round and way of posting posts people of its own (salts 1-49 and 51-99).
    if [[ "$shape" == embedded ]]; then
      measure embedded "$embedded_port" "$embedded_key" "$round" "$think_ms"
      measure embedded-lockstep "$embedded_port" "$embedded_key" "$((round + 50))" 0
    else
      measure scale-out "$scale_port" "$scale_key" "$round" "$think_ms"
      measure scale-out-lockstep "$scale_port" "$scale_key" "$((round + 50))" 0
    fi
  done
done

echo
echo "sync path (Surface B, $connections connections posting independently (mean ${think_ms} ms apart) or in lock step, buyers answering in 20/40/60 ms, best bid from the 60 ms buyer;"
echo "floor $floor ms = the slowest ping + the winner's post, $floor_measured ms as measured; medians of $rounds rounds):"
printf '%-44s %9s %9s %9s %12s %12s %21s %9s\n' "shape" "req/s" "p50 ms" "p99 ms" "added p50" "added p99" "added p50 (measured)" "failures"
for shape in embedded scale-out embedded-lockstep scale-out-lockstep; do
  a=$(echo "${p50[$shape]}" | median)
  b=$(echo "${p99[$shape]}" | median)
  case "$shape" in
    embedded) label="embedded (SQLite, embedded queue)" ;;
    scale-out) label="scale-out ($kafka_label, PostgreSQL, 1 worker)" ;;
    embedded-lockstep) label="embedded, posting in lock step" ;;
    scale-out-lockstep) label="scale-out, posting in lock step" ;;
  esac
  printf '%-44s %9.0f %9.1f %9.1f %12.1f %12.1f %21.1f %9s\n' "$label" "$(echo "${rps[$shape]}" | median)" \
    "$a" "$b" "$(awk -v x="$a" -v f="$floor" 'BEGIN {print x - f}')" \
    "$(awk -v x="$b" -v f="$floor" 'BEGIN {print x - f}')" \
    "$(awk -v x="$a" -v f="$floor_measured" 'BEGIN {print x - f}')" "${fails[$shape]}"
done
