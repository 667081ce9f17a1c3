#!/usr/bin/env bash
# leadflow's speed and memory figures, measured side by side in one run (medians of alternating
# runs; this machine is shared and noisy, so no figure here is a test).
#
#   1. Ingest: wrk -> POST /api/v1/lead on an async campaign (ceiling raised), 64 keep-alive
#      connections over TLS, every answer must be 202. Three leadflow shapes:
#        front    the HTTP front alone (LEADFLOW_WORKERS=0: leads pile up durably in the queue)
#        full     front and in-process workers auctioning every lead to three loopback buyers
#        kafka    the scale-out front: leadflow-ingest with the Kafka mock cluster
#                 (leadflow-kafka-mock, 3 brokers, replication 3, 8 partitions) and a PostgreSQL
#                 store; no worker runs, so leads pile up in Kafka
#      against nginx answering a fixed 202 over TLS on the same machine (the ceiling of this box).
#      Prints requests/s, the ratio to nginx, p50/p99 latency and leadflow's peak RSS (of the
#      leadflow process alone, not of the Kafka mock or PostgreSQL). Each shape has its own phase
#      in which it alternates with nginx round by round (nginx/front, nginx2/full, nginx3/kafka);
#      after each full run the bench waits until every accepted lead is decided, so no auction
#      spills into a measurement.
#   2. Worker throughput (scale-out): leads decided per second by 1 and by 2 leadflow-worker
#      processes (one consumer group, default settings: up to 4,096 auctions in flight each)
#      auctioning to the same three buyers as the sync path (20/40/60 ms, the 60 ms one bids
#      best). Each measurement gets a fresh PostgreSQL database, topic prefix and consumer group:
#      a leadflow-ingest seeded like the others takes exactly BENCH_WORKER_LEADS leads (wrk with
#      scripts/bench/preload_leads.lua, the same leads each time) and is stopped; then the
#      workers start on that backlog and the bench polls the sum of their
#      leadflow_leads_decided_total. "leads/s" is the drain rate
#      from the first decided lead to the last; "start s" is the time from launching the
#      processes to the first decided lead (store connection, group join); "with start" counts
#      it in. 1 and 2 workers alternate (1 first in odd rounds, 2 first in even ones) for
#      BENCH_ROUNDS rounds; medians. Over the same span (first decided lead to last): "CPU
#      ms/lead", the user+system CPU of the worker processes per decided lead; "buyers ms/lead",
#      that of the three buyer simulators (event-driven: they hold thousands of requests at once
#      on one thread each, so they are not the bound; this column shows what they take from the
#      cores); "RSS MB", the largest peak RSS of a worker process. An auction takes at least
#      120 ms (pings in parallel, then the post to the 60 ms buyer): 4,096 at once would allow
#      34,000 leads/s, so the workers are bound by CPU, PostgreSQL or Kafka, which the processes
#      share with everything else on this machine.
#   3. Sync path (scripts/bench/sync.sh): a sync campaign with three buyers of fixed latency, in
#      the embedded shape and in the scale-out shape (Kafka mock + PostgreSQL, a leadflow-worker),
#      rounds alternating, with 8 connections posting like independent sellers and, apart, in
#      lock step; the added latency is the answer's p50 (p99) minus the floor (the slowest ping +
#      the winner's post).
#   (`scripts/bench.sh read COMMIT` runs only scripts/bench/read_path.sh: Surface A's reads,
#   authentication, lead views and reports, of this tree against COMMIT's, side by side;
#   `scripts/bench.sh compare COMMIT` runs scripts/bench/compare.sh: the front, the sync path
#   and distribution of this tree against COMMIT's, side by side.)
#   4. Distribution (scripts/bench/distribution.sh): leads decided per second by one embedded
#      worker with default settings when three nginx buyers (echo module: almost no CPU) answer
#      after 0, 100 and 500 ms; leadflow's CPU per decided lead, peak RSS, and how many sold.
#
# BENCH_KAFKA=real runs the scale-out phases on a real three-node Apache Kafka
# (scripts/kafka_cluster.sh) instead of the mock, and BENCH_WORKER_COUNTS ("1 2") says which
# numbers of worker processes the worker phase measures (e.g. "1 2 3"). Its nodes run with the
# tests' small JVMs unless BENCH_KAFKA_JVM gives other options (e.g. "-Xms1g -Xmx1g -XX:+UseG1GC":
# on two shared cores that measured lower, the server compiler warming up for minutes).
# Each ingest row also says how many requests the server answered per second of its own CPU, and
# that figure's ratio to nginx's: the front's cost apart from what the brokers took of the cores.
# wrk is one client address standing for many sellers, so the per-address connection cap is off
# (LEADFLOW_MAX_CONNECTIONS_PER_ADDRESS=0) and BENCH_CONNECTIONS may go past its 256.
# Environment: BENCH_SECONDS (default 10), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (64),
# BENCH_WORKER_LEADS (the backlog of each worker measurement, default 20000; 0 skips them),
# BENCH_DISTRIBUTION_LEADS (the backlog of each distribution measurement, default 2000; 0 skips
# them), BENCH_FULL (0 skips the "full" phase: on a fast machine its rounds leave a backlog of
# hundreds of thousands of leads that the bench waits to drain), BENCH_SYNC (0 skips the sync
# path), BENCH_WORKER_BASE (a commit: the worker phase measures that commit's release build too,
# in build-base/ as `compare` makes it, each worker count with both builds in every round, the
# base first in even rounds; prints its rows and this build's ratio to it, of the medians and
# paired round by round).
# The Kafka mock and a throwaway PostgreSQL server (scripts/pg_server.sh, as the postgres user
# when run as root) live only as long as the bench.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# `scripts/bench.sh reports`: the reports phase alone (scripts/bench/reports.sh), over a store of
# generated data; it is not part of the default run (writing its data takes long).
if [[ "${1:-}" == reports ]]; then exec "$root/scripts/bench/reports.sh"; fi
# `scripts/bench.sh suppression`: suppression lists' lookups and imports at ten million entries
# (scripts/bench/suppression.sh).
if [[ "${1:-}" == suppression ]]; then exec "$root/scripts/bench/suppression.sh"; fi
# `scripts/bench.sh read COMMIT` and `scripts/bench.sh compare COMMIT`: this tree against COMMIT,
# built side by side (a worktree of COMMIT in build-base/src, its release build in
# build-base/build): Surface A's reads (scripts/bench/read_path.sh), or the front, the sync path
# and distribution (scripts/bench/compare.sh).
release_build() {  # release_build SOURCE_DIR BUILD_DIR: the bench's programs, Release
  LEADFLOW_BUILD_DIR="$2" LEADFLOW_BUILD_TYPE=Release LEADFLOW_BUILD_TESTS=OFF LEADFLOW_UNITY_BUILD=OFF \
    "$1/scripts/build.sh" --target leadflow-ingest leadflow-worker leadflow-buyer-sim \
    leadflow-kafka-mock >/dev/null
}
base_build() {  # base_build COMMIT: COMMIT's release build in build-base/build (its worktree in build-base/src)
  local base_src="$root/build-base/src"
  if [[ ! -d "$base_src" ]]; then git -C "$root" worktree add -q --detach "$base_src" "$1"; fi
  git -C "$base_src" checkout -q --detach "$1"
  release_build "$base_src" "$root/build-base/build"
}
if [[ "${1:-}" == read || "${1:-}" == compare ]]; then
  base_commit=${2:?usage: scripts/bench.sh read|compare COMMIT}
  "$root/scripts/deps.sh" --bench
  base_build "$base_commit"
  release_build "$root" "$root/build-release"
  if [[ "$1" == read ]]; then
    BENCH_READ_BASE="$root/build-base/build" BENCH_BUILD="$root/build-release" \
      exec "$root/scripts/bench/read_path.sh"
  fi
  BENCH_COMPARE_BASE="$root/build-base/build" BENCH_BUILD="$root/build-release" \
    exec "$root/scripts/bench/compare.sh"
fi
seconds=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-3}
connections=${BENCH_CONNECTIONS:-64}
worker_leads=${BENCH_WORKER_LEADS:-20000}
full_phase=${BENCH_FULL:-1}
partitions=8
kafka_kind=${BENCH_KAFKA:-mock}
worker_counts=${BENCH_WORKER_COUNTS:-1 2}
case "$kafka_kind" in
  mock) kafka_label="Kafka mock" ;;
  real) kafka_label="three-node Kafka" ;;
  *) echo "bench: BENCH_KAFKA is mock or real, not $kafka_kind" >&2; exit 2 ;;
esac

if [[ "$kafka_kind" == real ]]; then "$root/scripts/deps.sh" --bench --scale-out; else "$root/scripts/deps.sh" --bench; fi
build="$root/build-release"
release_build "$root" "$build"
# BENCH_WORKER_BASE=COMMIT: the worker phase measures COMMIT's build too, side by side.
worker_base=${BENCH_WORKER_BASE:-}
builds=(new)
declare -A build_dir=([new]="$build")
if [[ -n "$worker_base" && "$worker_leads" -gt 0 ]]; then
  base_build "$worker_base"
  builds=(new base)
  build_dir[base]="$root/build-base/build"
fi

work=$(mktemp -d /tmp/leadflow-bench-XXXXXX)
chmod 711 "$work"  # as root, PostgreSQL runs as the postgres user and must pass through
pids=()
mock_pid=""

# shellcheck source=scripts/bench/common.sh
source "$root/scripts/bench/common.sh"
trap cleanup EXIT

# Buyers with fixed latencies (no jitter) so the sync floor is exact: the best bidder is slowest.
sim="$build/workers/leadflow-buyer-sim"
buyer_ports=()
sim_pids=()
for spec in "fast:20:9.00" "medium:40:11.00" "slow:60:14.50"; do
  IFS=: read -r name latency bid <<< "$spec"
  port=$(free_port)
  "$sim" --name "$name" --port "$port" --bid "$bid" --latency-ms "$latency" >/dev/null 2>&1 &
  pids+=($!)
  sim_pids+=($!)
  buyer_ports+=("$port:$name")
done

# The scale-out pieces: one PostgreSQL server (a database per deployment) and one Kafka mock
# cluster holding the topics of every prefix used below (the mock cannot create topics).
"$root/scripts/pg_server.sh" start "$work/pg" >/dev/null
pg_admin=$(cat "$work/pg/url")
new_database() {  # new_database NAME -> prints the store URL of a new, empty database
  psql -q -v ON_ERROR_STOP=1 "$pg_admin" -c "CREATE DATABASE $1" >/dev/null || return 1
  echo "${pg_admin%/*}/$1?pool_size=16"
}
prefixes=(bench-kafka)
if [[ "$worker_leads" -gt 0 ]]; then
  for round in $(seq 1 "$rounds"); do
    for n in $worker_counts; do
      prefixes+=("bench-r$round-w$n")
      if [[ -n "$worker_base" ]]; then prefixes+=("bench-r$round-w$n-base"); fi
    done
  done
fi
topic_args=()
for prefix in "${prefixes[@]}"; do
  topic_args+=(--topic "$prefix.leads:$partitions" --topic "$prefix.results:$partitions"
               --topic "$prefix.leads.retry:$partitions" --topic "$prefix.leads.dead:1")
done
start_kafka "$kafka_kind" --brokers 3 "${topic_args[@]}"
scale_out=()
scale_out_env() {  # scale_out_env STORE_URL PREFIX -> sets scale_out to a scale-out process's settings
  scale_out=("LEADFLOW_STORE=$1" "LEADFLOW_QUEUE=kafka://$bootstrap" "LEADFLOW_QUEUE_PARTITIONS=$partitions"
             "LEADFLOW_KAFKA_REPLICATION=3" "LEADFLOW_TOPIC_PREFIX=$2")
  # The mock holds an idle fetch for the whole wait even as records arrive; Kafka does not.
  if [[ "$kafka_kind" == mock ]]; then scale_out+=("LEADFLOW_KAFKA_FETCH_WAIT_MS=5"); fi
}

operator="lfk_bench_$(openssl rand -hex 20)"
start_leadflow() {  # start_leadflow NAME WORKERS [VAR=VALUE...] -> sets lf_pid, lf_port
  local dir="$work/$1"
  mkdir -p "$dir"
  lf_port=$(free_port)
  LEADFLOW_DATA_DIR="$dir" LEADFLOW_LISTEN="127.0.0.1:$lf_port" LEADFLOW_BOOTSTRAP_KEY="$operator" \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_WORKERS="$2" LEADFLOW_LOG_LEVEL=warn \
  LEADFLOW_MAX_CONNECTIONS_PER_ADDRESS=0 \
    env "${@:3}" "${lf_build:-$build}/ingest/leadflow-ingest" > "$dir/out" 2> "$dir/log" &
  lf_pid=$!
  pids+=("$lf_pid")
  for _ in $(seq 1 300); do
    curl -sf --cacert "$dir/tls/cert.pem" "https://127.0.0.1:$lf_port/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "bench: leadflow did not start" >&2; cat "$dir/log" >&2; exit 1
}
seed() {  # seed DIR PORT MODE -> prints a campaign key
  local seller
  for entry in "${buyer_ports[@]}"; do
    IFS=: read -r port name <<< "$entry"
    api "$1" "$2" POST /v1/buyers "{\"name\":\"$name\",\"verticals\":[\"auto_insurance\"],\"delivery\":{\"mode\":\"ping_post\",\"ping_url\":\"http://127.0.0.1:$port/ping\",\"post_url\":\"http://127.0.0.1:$port/post\",\"timeout_ms\":1000},\"duplicate_lookback_days\":0}" >/dev/null
  done
  seller=$(api "$1" "$2" POST /v1/sellers '{"name":"bench"}' | field seller_id)
  api "$1" "$2" POST /v1/campaigns "{\"seller_id\":\"$seller\",\"name\":\"bench\",\"vertical\":\"auto_insurance\",\"mode\":\"$3\",\"rate_limit_per_minute\":10000000}" | field campaign_key
}
peak_rss_mb() { awk '/VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
need_key() {  # need_key KEY WHAT: a campaign key, or the bench stops
  [[ -n "$1" ]] || { echo "bench: seeding $2 gave no campaign key" >&2; exit 1; }
}

# nginx: a fixed 202 over TLS with leadflow's own certificate, keep-alive without a request cap.
start_leadflow front 0
front_pid=$lf_pid front_port=$lf_port front_dir="$work/front"
front_key=$(seed "$front_dir" "$front_port" async)
start_leadflow full 1
full_pid=$lf_pid full_port=$lf_port full_dir="$work/full"
full_key=$(seed "$full_dir" "$full_port" async)
kafka_store=$(new_database lf_bench_kafka)
scale_out_env "$kafka_store" bench-kafka
start_leadflow kafka 0 "${scale_out[@]}"
kafka_pid=$lf_pid kafka_port=$lf_port kafka_dir="$work/kafka"
kafka_key=$(seed "$kafka_dir" "$kafka_port" async)
need_key "$front_key" front; need_key "$full_key" full; need_key "$kafka_key" kafka

nginx_port=$(free_port)
mkdir -p "$work/nginx"
cat > "$work/nginx/nginx.conf" <<NGINX
worker_processes auto;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_buffer_size 64k;
  server {
    listen 127.0.0.1:$nginx_port ssl;
    ssl_certificate $front_dir/tls/cert.pem;
    ssl_certificate_key $front_dir/tls/key.pem;
    location / { default_type application/json; return 202 '{"status":"queued","job_id":"ld_01KAP3ZJ6Q8X5E7R9T2W4Y6B8D"}'; }
  }
}
NGINX
nginx -c "$work/nginx/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
pids+=($!)
sleep 0.5

run_wrk() {  # run_wrk URL KEY EXPECT CONNECTIONS -> "rps p50 p99 failures"
  local out
  out=$(BENCH_KEY="$2" BENCH_EXPECT="$3" wrk -t2 -c"$4" -d"${seconds}s" --timeout 5s \
    -s "$root/scripts/bench/post_lead.lua" "$1" 2>&1)
  echo "$(echo "$out" | awk '/BENCH_RPS/ {print $2}') $(echo "$out" | awk '/BENCH_P50_MS/ {print $2}') \
$(echo "$out" | awk '/BENCH_P99_MS/ {print $2}') $(echo "$out" | awk '/BENCH_FAILURES/ {print $2}')"
}

# Waits until the full service has decided every lead it accepted, so its auctions do not run
# into the next measurement.
drain() {  # drain DIR PORT
  local m accepted decided
  for _ in $(seq 1 600); do
    m=$(curl -s --cacert "$1/tls/cert.pem" -H "Authorization: Bearer $operator" "https://127.0.0.1:$2/metrics")
    accepted=$(echo "$m" | awk '/^leadflow_leads_received_total/ && /result="accepted"/ {s += $2} END {printf "%d", s}')
    decided=$(echo "$m" | awk '/^leadflow_leads_decided_total/ {s += $2} END {printf "%d", s}')
    [[ "$decided" -ge "$accepted" ]] && return 0
    sleep 0.5
  done
  echo "bench: the backlog did not drain" >&2
}

# The CPU (user + system, in clock ticks, every thread) of the given processes: the server's own,
# so that "per process" can be read apart from what the machine's other processes took.
cpu_ticks() {  # cpu_ticks PID... -> ticks
  local p t=0
  for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
  echo "$t"
}
declare -A rps p50 p99 fails per_cpu
for name in nginx front nginx2 full nginx3 kafka; do rps[$name]=""; p50[$name]=""; p99[$name]=""; fails[$name]=0; per_cpu[$name]=""; done
declare -A server_pids
measure() {  # measure NAME URL KEY ROUND
  local before after c
  # shellcheck disable=SC2086
  before=$(cpu_ticks ${server_pids[$1]})
  read -r r a b f <<< "$(run_wrk "$2" "$3" 202 "$connections")"
  # shellcheck disable=SC2086
  after=$(cpu_ticks ${server_pids[$1]})
  # Requests answered per second of the server's CPU.
  c=$(awk -v r="$r" -v s="$seconds" -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" \
    'BEGIN {printf "%.0f", (t > 0 ? r * s / (t / hz) : 0)}')
  echo "  round $4 $1: ${r} req/s, p50 ${a} ms, p99 ${b} ms, failures ${f}, ${c} per CPU-second" >&2
  rps[$1]+="$r "; p50[$1]+="$a "; p99[$1]+="$b "; fails[$1]=$((fails[$1] + f)); per_cpu[$1]+="$c "
}
nginx_workers="$nginx_pid $(pgrep -P "$nginx_pid" | tr '\n' ' ')"
server_pids=([nginx]="$nginx_workers" [nginx2]="$nginx_workers" [nginx3]="$nginx_workers"
  [front]="$front_pid" [full]="$full_pid" [kafka]="$kafka_pid")
echo "ingest: $rounds rounds x ${seconds}s per target, $connections connections, wrk -t2, TLS, keep-alive" >&2
for round in $(seq 1 "$rounds"); do
  measure nginx "https://127.0.0.1:$nginx_port" x "$round"
  measure front "https://127.0.0.1:$front_port" "$front_key" "$round"
done
if [[ "$full_phase" == 1 ]]; then
  for round in $(seq 1 "$rounds"); do
    measure nginx2 "https://127.0.0.1:$nginx_port" x "$round"
    measure full "https://127.0.0.1:$full_port" "$full_key" "$round"
    drain "$full_dir" "$full_port"
  done
fi
for round in $(seq 1 "$rounds"); do
  measure nginx3 "https://127.0.0.1:$nginx_port" x "$round"
  measure kafka "https://127.0.0.1:$kafka_port" "$kafka_key" "$round"
done
med() { echo "$1" | tr ' ' '\n' | grep -v '^$' | median; }
ingest_table=$(
  printf '%-34s %10s %8s %9s %9s %9s %9s %9s %6s\n' "ingest (median of $rounds)" "req/s" "ratio" \
    "p50 ms" "p99 ms" "failures" "RSS MB" "per CPU-s" "ratio"
  row() {  # row NAME BASELINE LABEL RSS
    local r ratio c cratio
    r=$(med "${rps[$1]}")
    ratio=$(awk -v a="$r" -v b="$(med "${rps[$2]}")" 'BEGIN {printf "%.2f", a / b}')
    c=$(med "${per_cpu[$1]}")
    cratio=$(awk -v a="$c" -v b="$(med "${per_cpu[$2]}")" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}')
    printf '%-34s %10.0f %8s %9.2f %9.2f %9s %9s %9.0f %6s\n' "$3" "$r" "$ratio" "$(med "${p50[$1]}")" \
      "$(med "${p99[$1]}")" "${fails[$1]}" "$4" "$c" "$cratio"
  }
  row nginx nginx "nginx fixed 202 (TLS)" -
  row front nginx "leadflow front (workers off)" "$(peak_rss_mb "$front_pid")"
  if [[ "$full_phase" == 1 ]]; then
    row nginx2 nginx2 "nginx fixed 202 (TLS), 2nd phase" -
    row full nginx2 "leadflow front + workers" "$(peak_rss_mb "$full_pid")"
  fi
  row nginx3 nginx3 "nginx fixed 202 (TLS), 3rd phase" -
  row kafka nginx3 "leadflow front, $kafka_label + PostgreSQL" "$(peak_rss_mb "$kafka_pid")"
)
echo >&2
echo "$ingest_table" >&2
kill -TERM "$front_pid" "$full_pid" "$kafka_pid" 2>/dev/null || true
wait "$front_pid" "$full_pid" "$kafka_pid" 2>/dev/null || true

# Worker throughput. The decided leads (all statuses, and the delivered ones: sold to a buyer)
# summed over the workers, with one curl for all of them so that polling 2 workers costs what
# polling 1 does.
# The third figure is the most leads one worker holds (leadflow_worker_leads_in_flight: its
# auctions, read-ahead and leads being recorded, none of them committed yet): at full speed, the
# least consumer lag a worker that keeps up reads, which KEDA's lagThreshold must stay above.
worker_counts() {  # worker_counts METRICS_PORT... -> "decided delivered held"
  local urls=() port
  for port in "$@"; do urls+=("http://127.0.0.1:$port/metrics"); done
  curl -s --max-time 2 "${urls[@]}" | awk '
    /^leadflow_leads_decided_total/ {d += $NF; if (/status="delivered"/) s += $NF}
    /^leadflow_worker_leads_in_flight / {if ($NF > h) h = $NF}
    END {printf "%d %d %d", d, s, h}'
}
# What each worker decided, by status, and the records it saw twice (redelivered: already
# stored; stale: dropped after a rebalance): "w1 delivered=1490 redelivered=0 stale=0; w2 ...".
worker_split() {  # worker_split METRICS_PORT...
  local port i=0
  for port in "$@"; do
    i=$((i + 1))
    curl -s --max-time 2 "http://127.0.0.1:$port/metrics" | awk -v w="w$i" '
      /^leadflow_leads_decided_total/ {match($0, /status="[a-z]*"/); s = substr($0, RSTART + 8, RLENGTH - 9)
                                       n[s] += $NF}
      /^leadflow_worker_redeliveries_total/ {r += $NF}
      /^leadflow_worker_stale_records_total/ {st += $NF}
      END {printf "%s", w; for (s in n) printf " %s=%d", s, n[s]; printf " redelivered=%d stale=%d; ", r, st}'
  done
}
clk_tck=$(getconf CLK_TCK)
cpu_seconds() {  # cpu_seconds PID... -> their user+system CPU seconds, summed
  local pid
  for pid in "$@"; do cat "/proc/$pid/stat"; done | awk -v t="$clk_tck" '{s += $14 + $15} END {printf "%.2f", s / t}'
}
max_rss_mb() {  # max_rss_mb PID... -> the largest peak RSS among them
  local pid
  for pid in "$@"; do cat "/proc/$pid/status"; done | awk '/VmHWM/ {if ($2 > m) m = $2} END {printf "%.1f", m / 1024}'
}
# One measurement: a fresh database and prefix, a backlog of exactly $worker_leads leads, then
# WORKERS worker processes until all are decided. Not in a subshell, so that its processes are
# in pids (cleanup) and a failure stops the bench.
# BUILD (new or base) says whose ingest fills the backlog and whose workers drain it.
worker_run() {  # worker_run ROUND WORKERS BUILD -> sets w_result to "drain_rate overall_rate start_s sold cpu_ms buyers_cpu_ms rss_mb held", w_split
  local name="bench-r$1-w$2" dir key pid done_line="" wpids=() ports=() port i
  local lf_build=${build_dir[$3]}
  if [[ "$3" == base ]]; then name+=-base; fi
  local t0 t_first="" t_end="" d_first=0 decided=0 sold=0 accepted store
  local c_first=0 c_end=0 b_first=0 b_end=0 rss held=0 held_max=0
  store=$(new_database "lf_bench_r$1_w$2_$3")
  scale_out_env "$store" "$name"
  start_leadflow "$name" 0 "${scale_out[@]}"
  dir="$work/$name"
  key=$(seed "$dir" "$lf_port" async)
  need_key "$key" "$name"
  BENCH_LUA_DIR="$root/scripts/bench" BENCH_KEY="$key" BENCH_LEADS="$worker_leads" \
    wrk -t1 -c32 -d600s --timeout 5s -s "$root/scripts/bench/preload_leads.lua" \
    "https://127.0.0.1:$lf_port" > "$dir/preload" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 $(((60 + worker_leads / 200) * 5))); do  # at least 200 leads/s, or it failed
    grep -q BENCH_PRELOAD_DONE "$dir/preload" && done_line=1 && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  accepted=$(curl -s --cacert "$dir/tls/cert.pem" -H "Authorization: Bearer $operator" "https://127.0.0.1:$lf_port/metrics" |
    awk '/^leadflow_leads_received_total/ && /result="accepted"/ {s += $2} END {printf "%d", s}')
  if [[ -z "$done_line" || "$accepted" -ne "$worker_leads" ]]; then
    echo "bench: $name: the ingest accepted $accepted of $worker_leads leads" >&2
    cat "$dir/preload" >&2; exit 1
  fi
  kill -TERM "$lf_pid"; wait "$lf_pid" 2>/dev/null || true  # flushes its producer

  t0=$(now)
  for i in $(seq 1 "$2"); do
    mkdir -p "$dir/worker$i"
    LEADFLOW_DATA_DIR="$dir/worker$i" LEADFLOW_METRICS_LISTEN=127.0.0.1:0 LEADFLOW_LOG_LEVEL=warn \
    LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_WORKER_GROUP="$name" \
      env "${scale_out[@]}" "$lf_build/workers/leadflow-worker" > "$dir/worker$i/out" 2> "$dir/worker$i/log" &
    wpids+=("$!")
    pids+=("$!")
  done
  for i in $(seq 1 "$2"); do
    port=""
    for _ in $(seq 1 600); do
      port=$(sed -n 's/.*"worker_ready","metrics_port":\([0-9]*\).*/\1/p' "$dir/worker$i/out")
      [[ -n "$port" ]] && break
      kill -0 "${wpids[$((i - 1))]}" 2>/dev/null || break
      sleep 0.1
    done
    [[ -n "$port" ]] || { echo "bench: worker $i of $name did not start" >&2; cat "$dir/worker$i/log" >&2; exit 1; }
    ports+=("$port")
  done
  # Polls every 0.1 s: the timing error is about that, against runs of many seconds. Gives up
  # below about 50 leads/s.
  for _ in $(seq 1 $((worker_leads / 5 + 1200))); do
    read -r decided sold held <<< "$(worker_counts "${ports[@]}")"
    if [[ "${held:-0}" -gt "$held_max" ]]; then held_max=$held; fi
    if [[ -z "$t_first" && "$decided" -gt 0 ]]; then
      t_first=$(now) d_first=$decided c_first=$(cpu_seconds "${wpids[@]}") b_first=$(cpu_seconds "${sim_pids[@]}")
    fi
    if [[ "$decided" -ge "$worker_leads" ]]; then
      t_end=$(now) c_end=$(cpu_seconds "${wpids[@]}") b_end=$(cpu_seconds "${sim_pids[@]}")
      break
    fi
    sleep 0.1
  done
  rss=$(max_rss_mb "${wpids[@]}")
  w_split=$(worker_split "${ports[@]}")
  for i in "${wpids[@]}"; do kill -TERM "$i" 2>/dev/null || true; done
  for i in "${wpids[@]}"; do wait "$i" 2>/dev/null || true; done
  if [[ -z "$t_end" ]]; then
    echo "bench: $name: $decided of $worker_leads leads decided before the time limit" >&2; exit 1
  fi
  # A backlog drained in one poll leaves no interval to time: count it as one poll long.
  w_result=$(awk -v n="$worker_leads" -v d0="$d_first" -v t0="$t0" -v t1="$t_first" -v t2="$t_end" -v sold="$sold" \
    -v c1="$c_first" -v c2="$c_end" -v b1="$b_first" -v b2="$b_end" -v rss="$rss" -v held="$held_max" \
    'BEGIN {span = t2 - t1; if (span < 0.1) span = 0.1; k = n - d0; if (k < 1) k = 1
            printf "%.1f %.1f %.2f %d %.3f %.3f %.1f %d", k / span, n / (t2 - t0), t1 - t0, sold,
                   1000 * (c2 - c1) / k, 1000 * (b2 - b1) / k, rss, held}')
}

declare -A wrate wall wstart wsold wcpu wbuyers wrss wheld wpaired
if [[ "$worker_leads" -gt 0 ]]; then
  echo >&2
  echo "worker throughput: $rounds rounds, backlog $worker_leads leads, worker processes: $worker_counts," \
    "builds: ${builds[*]}${worker_base:+ (base $worker_base)}" >&2
  for round in $(seq 1 "$rounds"); do
    order="$worker_counts" build_order="${builds[*]}"
    # neither goes first every time
    if ((round % 2 == 0)); then
      order=$(tr ' ' '\n' <<< "$worker_counts" | grep -v '^$' | tac | tr '\n' ' ')
      build_order=$(tr ' ' '\n' <<< "$build_order" | tac | tr '\n' ' ')
    fi
    for workers in $order; do
      declare -A this_round=()
      for b_name in $build_order; do
        worker_run "$round" "$workers" "$b_name"
        read -r r a s sold c b m hd <<< "$w_result"
        key=$workers
        if [[ "$b_name" == base ]]; then key+=-base; fi
        echo "  round $round, $workers worker(s)$([[ $b_name == base ]] && echo ", base"): $r leads/s (with start $a)," \
          "start $s s, delivered $sold of $worker_leads, CPU $c ms/lead (buyers $b), peak RSS $m MB," \
          "at most $hd leads held by one worker ($w_split)" >&2
        wrate[$key]+="$r "; wall[$key]+="$a "; wstart[$key]+="$s "; wsold[$key]+="$sold "
        wcpu[$key]+="$c "; wbuyers[$key]+="$b "; wrss[$key]+="$m "; wheld[$key]+="$hd "
        this_round[$b_name]=$r
      done
      if [[ -v "this_round[base]" ]]; then
        wpaired[$workers]+="$(awk -v a="${this_round[new]}" -v b="${this_round[base]}" 'BEGIN {print a / b}') "
      fi
    done
  done
  worker_table=$(
    printf '%-34s %10s %8s %11s %9s %9s %12s %15s %8s %9s\n' "workers (median of $rounds)" "leads/s" "scaling" \
      "with start" "start s" "sold %" "CPU ms/lead" "buyers ms/lead" "RSS MB" "held max"
    for b_name in "${builds[@]}"; do
      suffix="" first=${worker_counts%% *}
      if [[ "$b_name" == base ]]; then suffix=-base first+=-base; fi
      for workers in $worker_counts; do
        key=$workers$suffix
        printf '%-34s %10.0f %8.2f %11.0f %9.2f %9.1f %12.3f %15.3f %8.1f %9.0f\n' \
          "$workers leadflow-worker process$([[ $workers -gt 1 ]] && echo es)${suffix:+, base}" "$(med "${wrate[$key]}")" \
          "$(awk -v a="$(med "${wrate[$key]}")" -v b="$(med "${wrate[$first]}")" 'BEGIN {print a / b}')" \
          "$(med "${wall[$key]}")" "$(med "${wstart[$key]}")" \
          "$(awk -v s="$(med "${wsold[$key]}")" -v n="$worker_leads" 'BEGIN {print 100 * s / n}')" \
          "$(med "${wcpu[$key]}")" "$(med "${wbuyers[$key]}")" "$(med "${wrss[$key]}")" "$(med "${wheld[$key]}")"
      done
    done
    if [[ -n "$worker_base" ]]; then
      echo
      printf '%-34s %14s %14s\n' "this build against $worker_base" "medians' ratio" "paired ratio"
      for workers in $worker_counts; do
        printf '%-34s %14.2f %14.2f\n' "$workers leadflow-worker process$([[ $workers -gt 1 ]] && echo es)" \
          "$(awk -v a="$(med "${wrate[$workers]}")" -v b="$(med "${wrate[$workers-base]}")" 'BEGIN {print a / b}')" \
          "$(med "${wpaired[$workers]}")"
      done
    fi
  )
fi

# Sync path: fresh services of both shapes with only sync traffic, few connections.
sync_table=""
if [[ "${BENCH_SYNC:-1}" != 0 ]]; then
  sync_table=$(BENCH_BUILD="$build" BENCH_ROUNDS="$rounds" BENCH_KAFKA_BOOTSTRAP="$bootstrap" \
    "$root/scripts/bench/sync.sh")
fi

echo
echo "$ingest_table"
if [[ "$worker_leads" -gt 0 ]]; then
  echo
  echo "worker throughput (scale-out: $kafka_label + PostgreSQL; backlog of $worker_leads leads, default settings,"
  echo "buyers answering in 20/40/60 ms; leads/s and CPU from the first decided lead to the last):"
  echo "$worker_table"
fi
echo "$sync_table"

# Distribution: one worker against cheap buyers answering after 0, 100 and 500 ms.
if [[ "${BENCH_DISTRIBUTION_LEADS:-2000}" -gt 0 ]]; then
  echo
  BENCH_BUILD="$build" BENCH_ROUNDS="$rounds" "$root/scripts/bench/distribution.sh"
fi
