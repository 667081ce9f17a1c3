#!/usr/bin/env bash
# leadflow's speed and memory figures, measured side by side in one run (medians of alternating
# runs; this machine is shared and noisy, so no figure here is a test).
#
#   1. Ingest: wrk -> POST /api/v1/lead on an async campaign (ceiling raised), 64 keep-alive
#      connections over TLS, every answer must be 202. Two leadflow shapes:
#        front    the HTTP front alone (LEADFLOW_WORKERS=0: leads pile up durably in the queue)
#        full     front and in-process workers auctioning every lead to three loopback buyers
#      against nginx answering a fixed 202 over TLS on the same machine (the ceiling of this box).
#      Prints requests/s, the ratio to nginx, p50/p99 latency and leadflow's peak RSS. nginx and
#      the front alternate; then nginx and the full service alternate, and after each full run the
#      bench waits until every accepted lead is decided, so no auction spills into a measurement.
#   2. Sync path: a sync campaign with three buyers of fixed latency; the added latency is the
#      median answer minus the floor (the slowest ping + the winner's post).
#
# Environment: BENCH_SECONDS (default 10), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (64).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${BENCH_SECONDS:-10}
rounds=${BENCH_ROUNDS:-3}
connections=${BENCH_CONNECTIONS:-64}

"$root/scripts/deps.sh" --bench
build="$root/build-release"
LEADFLOW_BUILD_DIR="$build" LEADFLOW_BUILD_TYPE=Release LEADFLOW_BUILD_TESTS=OFF \
  "$root/scripts/build.sh" --target leadflow-ingest leadflow-buyer-sim >/dev/null

work=$(mktemp -d /tmp/leadflow-bench-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
  || shuf -i 20000-60000 -n 1; }

# Buyers with fixed latencies (no jitter) so the sync floor is exact: the best bidder is slowest.
sim="$build/workers/leadflow-buyer-sim"
buyer_ports=()
for spec in "fast:20:9.00" "medium:40:11.00" "slow:60:14.50"; do
  IFS=: read -r name latency bid <<< "$spec"
  port=$(free_port)
  "$sim" --name "$name" --port "$port" --bid "$bid" --latency-ms "$latency" --threads 128 >/dev/null 2>&1 &
  pids+=($!)
  buyer_ports+=("$port:$name")
done

operator="lfk_bench_$(openssl rand -hex 20)"
start_leadflow() {  # start_leadflow NAME WORKERS -> sets lf_pid, lf_port
  local dir="$work/$1"
  mkdir -p "$dir"
  lf_port=$(free_port)
  LEADFLOW_DATA_DIR="$dir" LEADFLOW_LISTEN="127.0.0.1:$lf_port" LEADFLOW_BOOTSTRAP_KEY="$operator" \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_WORKERS="$2" LEADFLOW_LOG_LEVEL=warn \
    "$build/ingest/leadflow-ingest" > "$dir/out" 2> "$dir/log" &
  lf_pid=$!
  pids+=($lf_pid)
  for _ in $(seq 1 100); do
    curl -sf --cacert "$dir/tls/cert.pem" "https://127.0.0.1:$lf_port/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "bench: leadflow did not start" >&2; cat "$dir/log" >&2; exit 1
}
api() {  # api DIR PORT METHOD PATH JSON
  curl -sS --cacert "$1/tls/cert.pem" -X "$3" "https://127.0.0.1:$2$4" \
    -H "Authorization: Bearer $operator" -H 'Content-Type: application/json' -d "$5"
}
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
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

# nginx: a fixed 202 over TLS with leadflow's own certificate, keep-alive without a request cap.
start_leadflow front 0
front_pid=$lf_pid front_port=$lf_port front_dir="$work/front"
front_key=$(seed "$front_dir" "$front_port" async)
start_leadflow full 1
full_pid=$lf_pid full_port=$lf_port full_dir="$work/full"
full_key=$(seed "$full_dir" "$full_port" async)

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
pids+=($!)
sleep 0.5

run_wrk() {  # run_wrk URL KEY EXPECT CONNECTIONS -> "rps p50 p99 failures"
  local out
  out=$(BENCH_KEY="$2" BENCH_EXPECT="$3" wrk -t2 -c"$4" -d"${seconds}s" --timeout 5s \
    -s "$root/scripts/bench/post_lead.lua" "$1" 2>&1)
  echo "$(echo "$out" | awk '/BENCH_RPS/ {print $2}') $(echo "$out" | awk '/BENCH_P50_MS/ {print $2}') \
$(echo "$out" | awk '/BENCH_P99_MS/ {print $2}') $(echo "$out" | awk '/BENCH_FAILURES/ {print $2}')"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# Waits until the full service has decided every lead it accepted, so its auctions do not run
# into the next measurement.
drain() {  # drain DIR PORT
  local m accepted decided
  for _ in $(seq 1 600); do
    m=$(curl -s --cacert "$1/tls/cert.pem" "https://127.0.0.1:$2/metrics")
    accepted=$(echo "$m" | awk '/^leadflow_leads_received_total/ && /result="accepted"/ {s += $2} END {printf "%d", s}')
    decided=$(echo "$m" | awk '/^leadflow_leads_decided_total/ {s += $2} END {printf "%d", s}')
    [[ "$decided" -ge "$accepted" ]] && return 0
    sleep 0.5
  done
  echo "bench: the backlog did not drain" >&2
}

declare -A rps p50 p99 fails
for name in nginx front nginx2 full; do rps[$name]=""; p50[$name]=""; p99[$name]=""; fails[$name]=0; done
measure() {  # measure NAME URL KEY ROUND
  read -r r a b f <<< "$(run_wrk "$2" "$3" 202 "$connections")"
  echo "  round $4 $1: ${r} req/s, p50 ${a} ms, p99 ${b} ms, failures ${f}" >&2
  rps[$1]+="$r "; p50[$1]+="$a "; p99[$1]+="$b "; fails[$1]=$((fails[$1] + f))
}
echo "ingest: $rounds rounds x ${seconds}s per target, $connections connections, wrk -t2, TLS, keep-alive" >&2
for round in $(seq 1 "$rounds"); do
  measure nginx "https://127.0.0.1:$nginx_port" x "$round"
  measure front "https://127.0.0.1:$front_port" "$front_key" "$round"
done
for round in $(seq 1 "$rounds"); do
  measure nginx2 "https://127.0.0.1:$nginx_port" x "$round"
  measure full "https://127.0.0.1:$full_port" "$full_key" "$round"
  drain "$full_dir" "$full_port"
done
med() { echo "$1" | tr ' ' '\n' | grep -v '^$' | median; }
echo
printf '%-34s %10s %8s %9s %9s %9s %9s\n' "ingest (median of $rounds)" "req/s" "ratio" "p50 ms" "p99 ms" "failures" "RSS MB"
row() {  # row NAME BASELINE LABEL RSS
  local r ratio
  r=$(med "${rps[$1]}")
  ratio=$(awk -v a="$r" -v b="$(med "${rps[$2]}")" 'BEGIN {printf "%.2f", a / b}')
  printf '%-34s %10.0f %8s %9.2f %9.2f %9s %9s\n' "$3" "$r" "$ratio" "$(med "${p50[$1]}")" \
    "$(med "${p99[$1]}")" "${fails[$1]}" "$4"
}
row nginx nginx "nginx fixed 202 (TLS)" -
row front nginx "leadflow front (workers off)" "$(peak_rss_mb "$front_pid")"
row nginx2 nginx2 "nginx fixed 202 (TLS), 2nd phase" -
row full nginx2 "leadflow front + workers" "$(peak_rss_mb "$full_pid")"

# Sync path: a fresh service with only sync traffic, few connections.
kill -TERM "$front_pid" "$full_pid" 2>/dev/null || true
start_leadflow sync 1
sync_key=$(seed "$work/sync" "$lf_port" sync)
read -r r a b f <<< "$(run_wrk "https://127.0.0.1:$lf_port" "$sync_key" 200 8)"
floor=120  # the slowest ping (60 ms) + the winner's post (the slow buyer bids highest: 60 ms)
echo
echo "sync path (Surface B, 8 connections, buyers answering in 20/40/60 ms, best bid from the 60 ms buyer):"
printf '  %.0f req/s, p50 %.1f ms, p99 %.1f ms, failures %s; floor %d ms -> added latency p50 %.1f ms, p99 %.1f ms\n' \
  "$r" "$a" "$b" "$f" "$floor" "$(awk -v x="$a" -v f="$floor" 'BEGIN {print x - f}')" \
  "$(awk -v x="$b" -v f="$floor" 'BEGIN {print x - f}')"
