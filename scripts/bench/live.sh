#!/usr/bin/env bash
# The front's lead rate with no live stream and with 100 live streams that never read, side by
# side (docs/benchmarks.md, "Live feed"): one leadflow-ingest with its worker auctioning every
# lead to three loopback buyers; wrk posts Surface B leads to an async campaign for SECONDS per
# run, the two arms alternating for ROUNDS rounds; medians. In the second arm 100 TLS
# connections open GET /v1/live (the operator's, which gets every lead) before wrk starts, read
# their answer's head, and then never read again: each is dropped once its stream's 256 KiB is
# full (counted). The service drains its backlog between runs.
#
# Usage: scripts/bench/live.sh BUILD_DIR [ROUNDS] [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: scripts/bench/live.sh BUILD_DIR [ROUNDS] [SECONDS]}
rounds=${2:-3}
seconds=${3:-10}
streams=100
unset LEADFLOW_BUILD_DIR LEADFLOW_BUILD_TYPE LEADFLOW_BUILD_TESTS LEADFLOW_JOBS LEADFLOW_WERROR LEADFLOW_SANITIZE LEADFLOW_SYSTEM_TESTS_ONLY
work=$(mktemp -d /tmp/leadflow-bench-live-XXXXXX)
pids=()
source "$root/scripts/bench/common.sh"
trap cleanup EXIT

for spec in "fast:20:9.00" "medium:40:11.00" "slow:60:14.50"; do
  IFS=: read -r name latency bid <<< "$spec"
  port=$(free_port)
  "$build/workers/leadflow-buyer-sim" --name "$name" --port "$port" --bid "$bid" --latency-ms "$latency" >/dev/null 2>&1 &
  pids+=($!)
  buyer_ports+=("$port:$name")
done
operator="lfk_bench_$(openssl rand -hex 20)"
dir="$work/full"
mkdir -p "$dir"
lf_port=$(free_port)
LEADFLOW_DATA_DIR="$dir" LEADFLOW_LISTEN="127.0.0.1:$lf_port" LEADFLOW_BOOTSTRAP_KEY="$operator" \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_WORKERS=1 LEADFLOW_LOG_LEVEL=warn \
  "$build/ingest/leadflow-ingest" > "$dir/out" 2> "$dir/log" &
lf_pid=$!
pids+=("$lf_pid")
for _ in $(seq 1 300); do
  curl -sf --cacert "$dir/tls/cert.pem" "https://127.0.0.1:$lf_port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
for entry in "${buyer_ports[@]}"; do
  IFS=: read -r port name <<< "$entry"
  api "$dir" "$lf_port" POST /v1/buyers "{\"name\":\"$name\",\"verticals\":[\"auto_insurance\"],\"delivery\":{\"mode\":\"ping_post\",\"ping_url\":\"http://127.0.0.1:$port/ping\",\"post_url\":\"http://127.0.0.1:$port/post\",\"timeout_ms\":1000},\"duplicate_lookback_days\":0}" >/dev/null
done
seller=$(api "$dir" "$lf_port" POST /v1/sellers '{"name":"bench"}' | field seller_id)
key=$(api "$dir" "$lf_port" POST /v1/campaigns "{\"seller_id\":\"$seller\",\"name\":\"bench\",\"vertical\":\"auto_insurance\",\"mode\":\"async\",\"rate_limit_per_minute\":10000000}" | field campaign_key)
[[ -n "$key" ]] || { echo "bench: no campaign key" >&2; exit 1; }

metric() {  # metric NAME: the sum of its samples
  curl -s --cacert "$dir/tls/cert.pem" -H "Authorization: Bearer $operator" "https://127.0.0.1:$lf_port/metrics" |
    awk -v n="$1" '$1 == n || index($1, n "{") == 1 {s += $2} END {printf "%d", s}'
}
drain() {
  for _ in $(seq 1 600); do
    [[ $(metric leadflow_leads_decided_total) -ge $(metric leadflow_leads_received_total) ]] && return 0
    sleep 0.5
  done
}
# Holds N streams open, reading nothing past their head, until killed.
stalled() {
  python3 - "$lf_port" "$operator" "$1" <<'PY' &
import socket, ssl, sys, time
port, key, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
held = []
for _ in range(n):
    raw = socket.socket(); raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.connect(("127.0.0.1", port))
    s = ctx.wrap_socket(raw)
    s.sendall(f"GET /v1/live HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n".encode())
    assert s.recv(4096).startswith(b"HTTP/1.1 200"), "stream refused"
    held.append(s)
print("ready", flush=True)
time.sleep(3600)
PY
  holder=$!
}
run() {  # run STREAMS -> "rps p99_ms dropped"
  local out dropped0
  dropped0=$(metric leadflow_live_dropped_total)
  holder=""
  if [[ $1 -gt 0 ]]; then
    stalled "$1" > "$work/holder.out"
    for _ in $(seq 1 300); do grep -q ready "$work/holder.out" && break; sleep 0.1; done
  fi
  out=$(BENCH_KEY="$key" BENCH_EXPECT=202 BENCH_SALT=$((RANDOM % 100)) wrk -t2 -c64 -d"${seconds}s" --timeout 5s \
    -s "$root/scripts/bench/post_lead.lua" "https://127.0.0.1:$lf_port" 2>&1)
  drain
  echo "$(echo "$out" | awk '/BENCH_RPS/ {print $2}') $(echo "$out" | awk '/BENCH_P99_MS/ {print $2}') $(($(metric leadflow_live_dropped_total) - dropped0))"
  if [[ -n "$holder" ]]; then kill "$holder" 2>/dev/null || true; wait "$holder" 2>/dev/null || true; fi
}
declare -A rps p99 dropped
for round in $(seq 1 "$rounds"); do
  for arm in 0 "$streams"; do
    read -r r p d <<< "$(run "$arm")"
    rps[$arm]+="$r " p99[$arm]+="$p " dropped[$arm]+="$d "
    echo "live: round $round, $arm stalled streams: $r leads/s, p99 $p ms, $d dropped" >&2
  done
done
for arm in 0 "$streams"; do
  echo "$arm stalled streams: $(echo "${rps[$arm]}" | median) leads/s, p99 $(echo "${p99[$arm]}" | median) ms (medians of $rounds), dropped per run: ${dropped[$arm]}"
done
