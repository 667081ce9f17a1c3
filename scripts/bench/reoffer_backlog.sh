#!/usr/bin/env bash
# Live leads beside a backlog of re-offers (docs/reoffers.md): how fast one embedded worker decides
# live leads while thousands of unsold leads come due for their second chance at once, against
# the same run with no backlog. Runs alone (it builds what it needs) or from scripts/bench.sh.
#
# Buyers are nginx with Debian's echo module, as in scripts/bench/distribution.sh: three that bid
# (9.00, 11.00, 14.50) and accept every post after BENCH_DELAY_MS, and a fourth that takes aged
# leads (accepts_aged, pricing.aged_price 2.00) and never bids live. auto_insurance re-offers its
# unsold leads once, BENCH_REOFFER_DELAY_S after their receipt. Each run:
#   1. with a worker and only the aged buyer configured, BENCH_REOFFER_BACKLOG leads are posted and
#      decided unsold (nobody bids live): each now has its re-offer scheduled; leadflow stops;
#   2. the three live buyers are added and BENCH_DISTRIBUTION_LEADS live leads are queued with no
#      worker (other people than the backlog's: none is a duplicate of an unsold lead); the phase
#      waits until every re-offer is due;
#   3. one worker starts (every setting at its default): it decides the live leads while the due
#      re-offers run beside them. Figures: live leads/s (first to last live decision, as the
#      distribution phase measures it), the process's CPU per live lead over the same span
#      (re-offers and scrapes included), re-offers sold by then and after.
# The same run with BENCH_REOFFER_BACKLOG=0 is the baseline, its rounds alternated with the
# backlog's. Medians of BENCH_ROUNDS, and the ratio of each pair of rounds.
#
# Environment: BENCH_DISTRIBUTION_LEADS (2000), BENCH_REOFFER_BACKLOG (5000), BENCH_ROUNDS (3),
# BENCH_DELAY_MS (100), BENCH_REOFFER_DELAY_S (20), BENCH_BUILD (a build dir with
# leadflow-ingest; default: a Release build in build-release).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
leads=${BENCH_DISTRIBUTION_LEADS:-2000}
backlog=${BENCH_REOFFER_BACKLOG:-5000}
rounds=${BENCH_ROUNDS:-3}
delay_ms=${BENCH_DELAY_MS:-100}
reoffer_delay=${BENCH_REOFFER_DELAY_S:-20}
build=${BENCH_BUILD:-}
if [[ -z "$build" ]]; then
  "$root/scripts/deps.sh" --bench
  build="$root/build-release"
  LEADFLOW_BUILD_DIR="$build" LEADFLOW_BUILD_TYPE=Release LEADFLOW_BUILD_TESTS=OFF LEADFLOW_UNITY_BUILD=OFF \
    "$root/scripts/build.sh" --target leadflow-ingest >/dev/null
fi
echo_module=/usr/lib/nginx/modules/ngx_http_echo_module.so
[[ -f "$echo_module" ]] || { echo "re-offer bench: $echo_module is missing (scripts/deps.sh --bench)" >&2; exit 1; }

work=$(mktemp -d /tmp/leadflow-reoffer-XXXXXX)
pids=()
# shellcheck source=scripts/bench/common.sh
source "$root/scripts/bench/common.sh"
trap cleanup EXIT

start_buyers() {  # -> buyer_ports (three bidders), aged_port
  local conf="$work/nginx" sleep_line="" bid port
  [[ "$delay_ms" -gt 0 ]] && sleep_line="echo_sleep $(awk -v d="$delay_ms" 'BEGIN {printf "%.3f", d / 1000}');"
  mkdir -p "$conf"
  buyer_ports=()
  aged_port=$(free_port)
  {
    echo "load_module $echo_module;"
    echo "worker_processes 1; pid $conf/nginx.pid; error_log $conf/error.log;"
    echo "events { worker_connections 20000; }"
    echo "http { access_log off; keepalive_requests 1000000; keepalive_timeout 60s; default_type application/json;"
    for bid in 9.00 11.00 14.50; do
      port=$(free_port)
      buyer_ports+=("$port")
      echo "  server { listen 127.0.0.1:$port;"
      echo "    location /ping { $sleep_line echo '{\"bid\":$bid}'; }"
      echo "    location /post { $sleep_line echo '{\"accepted\":true,\"buyer_lead_id\":\"b$port\"}'; } }"
    done
    echo "  server { listen 127.0.0.1:$aged_port;"
    echo "    location /ping { $sleep_line echo '{}'; }"
    echo "    location /post { $sleep_line echo '{\"accepted\":true,\"buyer_lead_id\":\"aged\"}'; } }"
    echo "}"
  } > "$conf/nginx.conf"
  nginx -c "$conf/nginx.conf" -g 'daemon off;' &
  pids+=("$!")
  for port in "${buyer_ports[@]}" "$aged_port"; do
    for _ in $(seq 1 50); do
      curl -sf -X POST -d '{}' "http://127.0.0.1:$port/ping" >/dev/null && break
      sleep 0.1
    done
  done
}

operator="lfk_bench_$(openssl rand -hex 20)"
start_leadflow() {  # start_leadflow DIR WORKERS -> lf_pid, lf_port, metrics_port
  lf_port=$(free_port)
  metrics_port=$(free_port)
  LEADFLOW_DATA_DIR="$1" LEADFLOW_LISTEN="127.0.0.1:$lf_port" LEADFLOW_BOOTSTRAP_KEY="$operator" \
  LEADFLOW_METRICS_LISTEN="127.0.0.1:$metrics_port" LEADFLOW_VERTICALS="$work/verticals.json" \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_WORKERS="$2" LEADFLOW_LOG_LEVEL=warn \
    "$build/ingest/leadflow-ingest" >> "$1/out" 2>> "$1/log" &
  lf_pid=$!
  pids+=("$lf_pid")
  for _ in $(seq 1 300); do
    curl -sf --cacert "$1/tls/cert.pem" "https://127.0.0.1:$lf_port/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "re-offer bench: leadflow did not start" >&2; cat "$1/log" >&2; exit 1
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # user + system CPU of a process
metrics() { curl -s "http://127.0.0.1:$metrics_port/metrics"; }
decided() { metrics | awk '/^leadflow_leads_decided_total/ {s += $NF} END {printf "%d", s}'; }
aged_cents() { metrics | awk -v id="$1" '$0 ~ "^leadflow_revenue_cents_total.*" id {s += $NF} END {printf "%d", s}'; }
add_buyer() {  # add_buyer DIR PORT EXTRA_JSON -> buyer id
  api "$1" "$lf_port" POST /v1/buyers "{\"name\":\"b$2\",\"verticals\":[\"auto_insurance\"],\"delivery\":{\"mode\":\"ping_post\",\"ping_url\":\"http://127.0.0.1:$2/ping\",\"post_url\":\"http://127.0.0.1:$2/post\",\"timeout_ms\":2000},\"duplicate_lookback_days\":0$3}" | field buyer_id
}
preload() {  # preload DIR KEY COUNT SALT (leads of different salts are different people)
  BENCH_LUA_DIR="$root/scripts/bench" BENCH_KEY="$2" BENCH_LEADS="$3" BENCH_SALT="$4" \
    wrk -t1 -c32 -d600s --timeout 5s -s "$root/scripts/bench/preload_leads.lua" \
    "https://127.0.0.1:$lf_port" > "$1/preload" 2>&1 &
  local pid=$!
  for _ in $(seq 1 3000); do
    grep -qs BENCH_PRELOAD_DONE "$1/preload" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  grep -q BENCH_PRELOAD_DONE "$1/preload" || { echo "re-offer bench: preload failed" >&2; cat "$1/preload" >&2; exit 1; }
}

run() {  # run BACKLOG ROUND -> result "live_rate reoffers_sold_during reoffers_sold_after"
  local n=$1 dir="$work/b$1-r$2" seller key aged_id t0 t_first="" t_end="" d_first=0 d=0 during=0 after=0
  mkdir -p "$dir"
  start_leadflow "$dir" 1
  aged_id=$(add_buyer "$dir" "$aged_port" ',"accepts_aged":true,"pricing":{"model":"bid","aged_price":2.00}')
  seller=$(api "$dir" "$lf_port" POST /v1/sellers '{"name":"bench"}' | field seller_id)
  key=$(api "$dir" "$lf_port" POST /v1/campaigns "{\"seller_id\":\"$seller\",\"name\":\"bench\",\"vertical\":\"auto_insurance\",\"mode\":\"async\",\"rate_limit_per_minute\":10000000}" | field campaign_key)
  [[ -n "$key" && -n "$aged_id" ]] || { echo "re-offer bench: seeding failed" >&2; exit 1; }
  t0=$(now)
  if [[ "$n" -gt 0 ]]; then
    preload "$dir" "$key" "$n" 1
    for _ in $(seq 1 6000); do [[ "$(decided)" -ge "$n" ]] && break; sleep 0.1; done
    [[ "$(decided)" -ge "$n" ]] || { echo "re-offer bench: the backlog was not decided" >&2; exit 1; }
  fi
  kill -TERM "$lf_pid"; wait "$lf_pid" 2>/dev/null || true
  start_leadflow "$dir" 0
  for port in "${buyer_ports[@]}"; do add_buyer "$dir" "$port" "" >/dev/null; done
  preload "$dir" "$key" "$leads" 2
  kill -TERM "$lf_pid"; wait "$lf_pid" 2>/dev/null || true
  # Every re-offer of the backlog is due before the worker starts.
  sleep "$(awk -v t0="$t0" -v now="$(now)" -v d="$reoffer_delay" 'BEGIN {w = t0 + d + 1 - now; print (w > 0 ? w : 0)}')"

  start_leadflow "$dir" 1
  for _ in $(seq 1 $((leads * 2 + 1200))); do
    d=$(decided)
    if [[ -z "$t_first" && "$d" -gt 0 ]]; then t_first=$(now) d_first=$d cpu_first=$(cpu_ticks "$lf_pid"); fi
    if [[ "$d" -ge "$leads" ]]; then t_end=$(now) cpu_end=$(cpu_ticks "$lf_pid") during=$(( $(aged_cents "$aged_id") / 200 )); break; fi
    sleep 0.1
  done
  [[ -n "$t_end" ]] || { echo "re-offer bench: $d of $leads live leads decided before the time limit" >&2; exit 1; }
  for _ in $(seq 1 1200); do
    after=$(( $(aged_cents "$aged_id") / 200 ))
    [[ "$after" -ge "$n" ]] && break
    sleep 0.1
  done
  result=$(awk -v n="$leads" -v d0="$d_first" -v t1="$t_first" -v t2="$t_end" \
    'BEGIN {span = t2 - t1; if (span < 0.1) span = 0.1; k = n - d0; if (k < 1) k = 1; printf "%.1f", k / span}')
  result="$result $during $after $(awk -v n="$leads" -v d0="$d_first" -v c1="$cpu_first" -v c2="$cpu_end" -v hz="$(getconf CLK_TCK)" \
    'BEGIN {k = n - d0; if (k < 1) k = 1; printf "%.3f", (c2 - c1) / hz * 1000 / k}')"
  kill -TERM "$lf_pid"; wait "$lf_pid" 2>/dev/null || true
  rm -rf "$dir"
}

cat > "$work/verticals.json" <<EOF
{"verticals": [{"name": "auto_insurance", "reoffer": {"delays_seconds": [$reoffer_delay]}}]}
EOF
start_buyers
echo "re-offer backlog: $rounds rounds, $leads live leads queued, buyers answering after $delay_ms ms," >&2
echo "one embedded worker (default settings), with no backlog and with $backlog re-offers due" >&2
declare -A rate during after cpu
# Rounds alternate (none due, then the backlog, and again), so that a drift of the machine over
# the run falls on both sides alike.
for round in $(seq 1 "$rounds"); do
  for n in 0 "$backlog"; do
    run "$n" "$round"
    read -r r a b c <<< "$result"
    echo "  backlog $n, round $round: $r live leads/s, $c ms of CPU per live lead; re-offers sold $a while the live leads ran, $b in all" >&2
    rate[$n]+="$r "; during[$n]+="$a "; after[$n]+="$b "; cpu[$n]+="$c "
  done
done
echo
echo "live leads beside a re-offer backlog (embedded, one worker; medians of $rounds):"
printf '%-18s %14s %18s %26s %16s\n' "re-offers due" "live leads/s" "CPU/live lead, ms" "re-offers sold meanwhile" "re-offers sold"
for n in 0 "$backlog"; do
  printf '%-18s %14.0f %18.3f %26.0f %16.0f\n' "$n" "$(echo "${rate[$n]}" | median)" "$(echo "${cpu[$n]}" | median)" \
    "$(echo "${during[$n]}" | median)" "$(echo "${after[$n]}" | median)"
done
# Each round's backlog run against the run just before it with none due: the paired ratios.
paired=$(paste -d' ' <(echo "${rate[$backlog]}" | tr ' ' '\n' | sed '/^$/d') \
  <(echo "${rate[0]}" | tr ' ' '\n' | sed '/^$/d') | awk '{printf "%.3f ", $1 / $2}')
echo "live leads/s with the backlog over without, paired by round: $paired(median $(echo "$paired" | median | awk '{printf "%.3f", $1}'))"
