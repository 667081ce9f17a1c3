#!/usr/bin/env bash
# The distribution phase of scripts/bench.sh: how fast one worker decides leads when buyers answer
# at real-world speed. Runs alone too (it builds what it needs).
#
# Buyers are nginx with Debian's echo module (libnginx-mod-http-echo): three of them, each on a
# port of its own, answering every ping with a bid (9.00, 11.00, 14.50) and every post with
# "accepted" after the same delay (0, 100 and 500 ms in turn), so they cost almost no CPU and every
# lead can be sold. For each delay, in each round: an embedded leadflow-ingest with no worker
# takes BENCH_DISTRIBUTION_LEADS leads (wrk, scripts/bench/preload_leads.lua) and stops; then the
# same data directory is opened with one worker (LEADFLOW_WORKERS=1, every other setting at its
# default) and the phase polls /metrics until every lead is decided. Figures, medians of rounds:
#   leads/s     decided from the first decided lead to the last
#   CPU ms/lead the process's user+system CPU over that span, per decided lead
#   peak RSS    the process's VmHWM
#   sold        leads decided "delivered" (every buyer bids and accepts: all of them should be)
#
# BENCH_POSTBACK_ENDPOINTS=N (default 0) gives the bench's seller N postback endpoints on an nginx
# of their own, every third of which hangs (answers after an hour) and the others answer at once:
# the rate is then measured while a third of the endpoints hang, and the table adds the outbox's
# pending events and the postbacks delivered when the last lead was decided, then how many more
# the sender delivered in the next BENCH_POSTBACK_DRAIN_SECONDS (10) and what was left pending
# (docs/postbacks.md). With BENCH_POSTBACK_RECOVERY_SECONDS=S (default 0: not measured) the
# hanging endpoints then recover (nginx reloaded to answer them at once, the requests they held
# closed) and the round waits up to S seconds for the outbox to empty: the line adds how many
# events were delivered after the recovery and when the last one went, or how many were left.
# On PostgreSQL the line also has the outbox's rows written and updated by the end of the
# draining (each claim, return to the outbox and attempt updates a row).
# A count written "3ok" gives N endpoints none of which hangs. Several counts ("0 3", or "3ok 3"
# for what the hanging third costs against the same endpoints all answering) are measured side
# by side: each round runs every count, in turn (reversed in even rounds), and the table has a
# row per count and the ratio of each to the first, of the medians and paired round by round.
#
# BENCH_DISTRIBUTION_STORE=postgresql keeps the leads in a throwaway PostgreSQL server
# (scripts/pg_server.sh, fsync on; a new database per run) instead of SQLite; the queue stays the
# embedded one. The CPU per lead is then leadflow's and, apart, the server's (its processes'
# user+system CPU over the same span).
#
# Environment: BENCH_DISTRIBUTION_LEADS (default 2000), BENCH_ROUNDS (3), BENCH_DELAYS_MS
# ("0 100 500"), BENCH_BUYER_PROTOCOLS ("h2 http1", the default: both; "h2": HTTPS buyers that
# offer HTTP/2, with a certificate of the bench's own CA given to leadflow through
# LEADFLOW_BUYER_CA_FILE; "http1": plain HTTP/1.1 buyers). Set by bench.sh: BENCH_BUILD (a release build dir
# with leadflow-ingest). Other LEADFLOW_* variables reach the leadflow processes.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
leads=${BENCH_DISTRIBUTION_LEADS:-2000}
rounds=${BENCH_ROUNDS:-3}
delays=${BENCH_DELAYS_MS:-"0 100 500"}
protocols=${BENCH_BUYER_PROTOCOLS:-"h2 http1"}
build=${BENCH_BUILD:-}
postback_counts=${BENCH_POSTBACK_ENDPOINTS:-0}
postback_endpoints=0  # of the run under way: its count as given ("3", "3ok")
endpoint_count() { echo "${1%ok}"; }  # endpoint_count SPEC: how many endpoints
endpoints_hang() { [[ "$1" != *ok ]]; }  # endpoints_hang SPEC: whether every third hangs
endpoints_label() {  # endpoints_label SPEC: the table's words for it
  if endpoints_hang "$1"; then echo "${1} endpoints"; else echo "${1%ok} endpoints, none hanging"; fi
}
store_kind=${BENCH_DISTRIBUTION_STORE:-sqlite}
case "$store_kind" in
  sqlite|postgresql) ;;
  *) echo "distribution bench: BENCH_DISTRIBUTION_STORE is sqlite or postgresql, not $store_kind" >&2; exit 2 ;;
esac
postback_drain=${BENCH_POSTBACK_DRAIN_SECONDS:-10}
postback_recovery=${BENCH_POSTBACK_RECOVERY_SECONDS:-0}
if [[ -z "$build" ]]; then
  "$root/scripts/deps.sh" --bench
  build="$root/build-release"
  LEADFLOW_BUILD_DIR="$build" LEADFLOW_BUILD_TYPE=Release LEADFLOW_BUILD_TESTS=OFF LEADFLOW_UNITY_BUILD=OFF \
    "$root/scripts/build.sh" --target leadflow-ingest >/dev/null
fi
echo_module=/usr/lib/nginx/modules/ngx_http_echo_module.so
[[ -f "$echo_module" ]] || { echo "distribution bench: $echo_module is missing (scripts/deps.sh --bench)" >&2; exit 1; }

work=$(mktemp -d /tmp/leadflow-dist-XXXXXX)
chmod 711 "$work"  # as root, PostgreSQL runs as the postgres user and must pass through
pids=()
mock_pid=""
# shellcheck source=scripts/bench/common.sh
source "$root/scripts/bench/common.sh"
trap cleanup EXIT
clk_tck=$(getconf CLK_TCK)
cpu_seconds() { awk -v t="$clk_tck" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
# The PostgreSQL server's processes together (postmaster, backends, background workers), 0 on SQLite.
pg_cpu_seconds() {
  [[ "$store_kind" == postgresql ]] || { echo 0; return; }
  local pid=$pg_pid kids
  kids=$(pgrep -P "$pid" | tr '\n' ' ')
  # shellcheck disable=SC2086  # one path per process
  cat "/proc/$pid/stat" $(for k in $kids; do echo "/proc/$k/stat"; done) 2>/dev/null |
    awk -v t="$clk_tck" '{s += $14 + $15} END {print s / t}'
}
store_url=""
if [[ "$store_kind" == postgresql ]]; then
  "$root/scripts/pg_server.sh" start "$work/pg" >/dev/null
  pg_admin=$(cat "$work/pg/url")
  pg_pid=$(head -n 1 "$work/pg/data/postmaster.pid")
fi
new_store() {  # new_store NAME -> sets store_url and store_name: a new, empty database, or "" for SQLite
  store_url="" store_name=$1
  [[ "$store_kind" == postgresql ]] || return 0
  psql -q -v ON_ERROR_STOP=1 "$pg_admin" -c "CREATE DATABASE $1" >/dev/null
  store_url="${pg_admin%/*}/$1?pool_size=16"
}

# The buyers: one nginx, three servers, one per bid.
# The buyers' certificate (for 127.0.0.1), made once; leadflow trusts it as a CA.
buyer_cert() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$work/buyer-key.pem" -out "$work/buyer-cert.pem" 2>/dev/null
}

start_buyers() {  # start_buyers DELAY_MS PROTOCOL -> sets buyer_ports, buyer_scheme, buyers_pid, buyers_conf
  local delay_ms=$1 protocol=$2 conf="$work/nginx-$1-$2" sleep_line="" bid port listen_extra=""
  buyers_conf=$conf
  buyer_scheme=http
  if [[ "$protocol" == h2 ]]; then
    buyer_cert
    buyer_scheme=https
    listen_extra=" ssl http2; ssl_certificate $work/buyer-cert.pem; ssl_certificate_key $work/buyer-key.pem; http2_max_concurrent_streams 100"
  fi
  [[ "$delay_ms" -gt 0 ]] && sleep_line="echo_sleep $(awk -v d="$delay_ms" 'BEGIN {printf "%.3f", d / 1000}');"
  mkdir -p "$conf"
  buyer_ports=()
  {
    echo "load_module $echo_module;"
    echo "worker_processes 1; worker_shutdown_timeout 1s; pid $conf/nginx.pid; error_log $conf/error.log;"
    echo "events { worker_connections 20000; }"
    echo "http { access_log off; keepalive_requests 1000000; keepalive_timeout 60s; default_type application/json;"
    for bid in 9.00 11.00 14.50; do
      port=$(free_port)
      buyer_ports+=("$port")
      echo "  server { listen 127.0.0.1:$port$listen_extra;"
      echo "    location /ping { $sleep_line echo '{\"bid\":$bid}'; }"
      echo "    location /post { $sleep_line echo '{\"accepted\":true,\"buyer_lead_id\":\"b$port\"}'; } }"
    done
    if [[ "$postback_counts" != 0 ]]; then
      postback_port=$(free_port)
      echo "  server { listen 127.0.0.1:$postback_port;"
      echo "    location /ok { echo '{}'; }"
      echo "    location /hang { include $conf/hang.conf; } }"
    fi
    echo "}"
  } > "$conf/nginx.conf"
  hanging
  nginx -c "$conf/nginx.conf" -g 'daemon off;' &
  buyers_pid=$!
  pids+=("$buyers_pid")
  for port in "${buyer_ports[@]}"; do
    for _ in $(seq 1 50); do
      curl -sf --cacert "$work/buyer-cert.pem" -X POST -d '{}' "$buyer_scheme://127.0.0.1:$port/ping" >/dev/null && break
      sleep 0.1
    done
  done
}

# The hanging endpoints' answer, swapped by a reload (SIGHUP): after an hour, or at once. A reload
# closes the requests the old configuration held within a second (worker_shutdown_timeout).
hanging() {
  echo "echo_sleep 3600; echo '{}';" > "$buyers_conf/hang.conf"
  [[ -z "${1:-}" ]] || { kill -HUP "$buyers_pid"; sleep 1.5; }
}
recovered() {
  echo "echo '{}';" > "$buyers_conf/hang.conf"
  kill -HUP "$buyers_pid"
}

operator="lfk_bench_$(openssl rand -hex 20)"
start_leadflow() {  # start_leadflow DIR WORKERS -> sets lf_pid, lf_port
  lf_port=$(free_port)
  metrics_port=$(free_port)
  # The phase polls /metrics ten times a second: on the plain metrics listener, so that a TLS
  # handshake per poll is not counted in the worker's CPU per lead.
  LEADFLOW_DATA_DIR="$1" LEADFLOW_LISTEN="127.0.0.1:$lf_port" LEADFLOW_BOOTSTRAP_KEY="$operator" \
  LEADFLOW_METRICS_LISTEN="127.0.0.1:$metrics_port" \
  LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_WORKERS="$2" LEADFLOW_LOG_LEVEL=warn \
  LEADFLOW_BUYER_CA_FILE="$work/buyer-cert.pem" \
    env ${store_url:+"LEADFLOW_STORE=$store_url"} "$build/ingest/leadflow-ingest" >> "$1/out" 2>> "$1/log" &
  lf_pid=$!
  pids+=("$lf_pid")
  for _ in $(seq 1 300); do
    curl -sf --cacert "$1/tls/cert.pem" "https://127.0.0.1:$lf_port/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "distribution bench: leadflow did not start" >&2; cat "$1/log" >&2; exit 1
}
metrics() { curl -s "http://127.0.0.1:$metrics_port/metrics"; }

run() {  # run DELAY_MS ROUND -> sets result "rate cpu_ms_per_lead rss_mb sold outbox postbacks drained left pg_cpu_ms_per_lead", recovery
  local dir="$work/d$1-r$2" seller key port pid t_first="" t_end="" c_first c_end p_first p_end d_first=0 decided=0 sold=0 m outbox=0 postbacks=0
  mkdir -p "$dir"
  recovery="" outbox_writes=""
  [[ "$postback_counts" == 0 ]] || hanging reload
  new_store "bench_$(echo "d$1_r$2" | tr -c 'a-z0-9_\n' '_')"
  start_leadflow "$dir" 0
  for port in "${buyer_ports[@]}"; do
    api "$dir" "$lf_port" POST /v1/buyers "{\"name\":\"b$port\",\"verticals\":[\"auto_insurance\"],\"delivery\":{\"mode\":\"ping_post\",\"ping_url\":\"$buyer_scheme://127.0.0.1:$port/ping\",\"post_url\":\"$buyer_scheme://127.0.0.1:$port/post\",\"timeout_ms\":2000},\"duplicate_lookback_days\":0}" >/dev/null
  done
  seller=$(api "$dir" "$lf_port" POST /v1/sellers '{"name":"bench"}' | field seller_id)
  key=$(api "$dir" "$lf_port" POST /v1/campaigns "{\"seller_id\":\"$seller\",\"name\":\"bench\",\"vertical\":\"auto_insurance\",\"mode\":\"async\",\"rate_limit_per_minute\":10000000}" | field campaign_key)
  [[ -n "$key" ]] || { echo "distribution bench: seeding gave no campaign key" >&2; exit 1; }
  for i in $(seq 1 "$(endpoint_count "$postback_endpoints")"); do
    local path=ok
    (( i % 3 == 1 )) && endpoints_hang "$postback_endpoints" && path=hang
    api "$dir" "$lf_port" POST /v1/postback-endpoints "{\"seller_id\":\"$seller\",\"url\":\"http://127.0.0.1:$postback_port/$path\",\"events\":[\"lead.sold\",\"lead.unsold\"]}" | grep -q '"secret"' \
      || { echo "distribution bench: the postback endpoint was not made" >&2; exit 1; }
  done
  BENCH_LUA_DIR="$root/scripts/bench" BENCH_KEY="$key" BENCH_LEADS="$leads" \
    wrk -t1 -c32 -d600s --timeout 5s -s "$root/scripts/bench/preload_leads.lua" \
    "https://127.0.0.1:$lf_port" > "$dir/preload" 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    grep -q BENCH_PRELOAD_DONE "$dir/preload" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  grep -q BENCH_PRELOAD_DONE "$dir/preload" || { echo "distribution bench: preload failed" >&2; cat "$dir/preload" >&2; exit 1; }
  kill -TERM "$lf_pid"; wait "$lf_pid" 2>/dev/null || true

  start_leadflow "$dir" 1
  for _ in $(seq 1 $((leads * 2 + 1200))); do
    m=$(metrics "$dir")
    decided=$(echo "$m" | awk '/^leadflow_leads_decided_total/ {s += $NF} END {printf "%d", s}')
    if [[ -z "$t_first" && "$decided" -gt 0 ]]; then t_first=$(now) c_first=$(cpu_seconds "$lf_pid") p_first=$(pg_cpu_seconds) d_first=$decided; fi
    if [[ "$decided" -ge "$leads" ]]; then
      t_end=$(now) c_end=$(cpu_seconds "$lf_pid") p_end=$(pg_cpu_seconds)
      sold=$(echo "$m" | awk '/^leadflow_leads_decided_total/ && /status="delivered"/ {s += $NF} END {printf "%d", s}')
      outbox=$(echo "$m" | awk '/^leadflow_postback_outbox_pending / {printf "%d", $NF}')
      postbacks=$(echo "$m" | awk '/^leadflow_postback_attempts_total/ && /result="delivered"/ {s += $NF} END {printf "%d", s}')
      break
    fi
    sleep 0.1
  done
  [[ -n "$t_end" ]] || { echo "distribution bench: $decided of $leads decided before the time limit" >&2; exit 1; }
  # With postbacks: what the sender delivers in the next BENCH_POSTBACK_DRAIN_SECONDS, the leads
  # all decided (the store's writer its own), and what is still pending after them.
  drained=0 drain_left=0
  if [[ "$(endpoint_count "$postback_endpoints")" -gt 0 ]]; then
    sleep "$postback_drain"
    m=$(metrics "$dir")
    drained=$(( $(echo "$m" | awk '/^leadflow_postback_attempts_total/ && /result="delivered"/ {s += $NF} END {printf "%d", s}') - ${postbacks:-0} ))
    drain_left=$(echo "$m" | awk '/^leadflow_postback_outbox_pending / {printf "%d", $NF}')
    # On PostgreSQL, the outbox's rows written and their updates so far (the server's own
    # counts, settled by now): a claim, a return and an attempt each update a row.
    if [[ "$store_kind" == postgresql ]]; then
      outbox_writes=$(psql -At "${store_url%\?*}" -c "SELECT n_tup_ins || ' rows written, ' ||
        n_tup_upd || ' updates (' || round(n_tup_upd::numeric / greatest(n_tup_ins, 1), 2) ||
        ' a row)' FROM pg_stat_user_tables WHERE relname = 'postback_outbox'")
    fi
  fi
  # The hanging endpoints recover: how long until every event waiting for them is delivered.
  if [[ "$(endpoint_count "$postback_endpoints")" -ge 1 && "$postback_recovery" -gt 0 ]] &&
    endpoints_hang "$postback_endpoints"; then
    local before_recovery t_recovered t_last="" left delivered
    before_recovery=$(metrics | awk '/^leadflow_postback_attempts_total/ && /result="delivered"/ {s += $NF} END {printf "%d", s}')
    recovered
    t_recovered=$(now)
    while :; do
      m=$(metrics)
      left=$(echo "$m" | awk '/^leadflow_postback_outbox_pending / {printf "%d", $NF}')
      delivered=$(( $(echo "$m" | awk '/^leadflow_postback_attempts_total/ && /result="delivered"/ {s += $NF} END {printf "%d", s}') - before_recovery ))
      if [[ "${left:-1}" -eq 0 ]]; then t_last=$(now); break; fi
      awk -v a="$t_recovered" -v b="$(now)" -v s="$postback_recovery" 'BEGIN {exit !(b - a >= s)}' && break
      sleep 0.5
    done
    if [[ -n "$t_last" ]]; then
      recovery="recovered: $delivered delivered, the last $(awk -v a="$t_recovered" -v b="$t_last" 'BEGIN {printf "%.1f", b - a}') s after"
    else
      recovery="recovered: $delivered delivered in ${postback_recovery} s, $left left"
    fi
  fi
  result=$(awk -v n="$leads" -v d0="$d_first" -v t1="$t_first" -v t2="$t_end" -v c1="$c_first" -v c2="$c_end" \
    -v rss="$(awk '/VmHWM/ {print $2 / 1024}' "/proc/$lf_pid/status")" -v sold="$sold" \
    -v outbox="${outbox:-0}" -v postbacks="${postbacks:-0}" \
    'BEGIN {span = t2 - t1; if (span < 0.1) span = 0.1; k = n - d0; if (k < 1) k = 1
            printf "%.1f %.3f %.1f %d %d %d", k / span, 1000 * (c2 - c1) / k, rss, sold, outbox, postbacks}')
  result+=" $drained ${drain_left:-0} $(awk -v a="$p_first" -v b="$p_end" -v n="$leads" -v d0="$d_first" \
    'BEGIN {k = n - d0; if (k < 1) k = 1; printf "%.3f", 1000 * (b - a) / k}')"
  kill -TERM "$lf_pid"; wait "$lf_pid" 2>/dev/null || true
  if [[ -n "$store_url" ]]; then
    psql -q "$pg_admin" -c "DROP DATABASE $store_name" >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

declare -A rate cpu pgcpu rss sold ratio
buyer_cert
echo "distribution: $rounds rounds, $leads leads queued, then one embedded worker (default settings, store: $store_kind);" >&2
echo "three nginx buyers that bid and accept everything after a fixed delay ($protocols)" >&2
[[ "$postback_counts" != 0 ]] && echo "the seller has $postback_counts postback endpoints (side by side), every third hanging (none in a count written Nok)" >&2
read -r -a counts <<< "$postback_counts"
for protocol in $protocols; do
  for delay in $delays; do
    start_buyers "$delay" "$protocol"
    for round in $(seq 1 "$rounds"); do
      order=("${counts[@]}")
      if (( round % 2 == 0 )); then mapfile -t order < <(printf '%s\n' "${counts[@]}" | tac); fi
      declare -A this_round=()
      for postback_endpoints in "${order[@]}"; do
        run "$delay" "$protocol-$round-e$postback_endpoints"
        read -r r c m s o p dr dl pc <<< "$result"
        echo "  buyers at $delay ms ($protocol), round $round$( ((${#counts[@]} > 1)) && echo ", $(endpoints_label "$postback_endpoints")"): $r leads/s, $c ms CPU per lead$( [[ "$store_kind" == postgresql ]] && echo " (PostgreSQL $pc)"), peak RSS $m MB, sold $s of $leads" \
          "$( [[ "$(endpoint_count "$postback_endpoints")" -gt 0 ]] && echo "; postbacks: $o pending in the outbox, $p delivered; in the next ${postback_drain} s $dr more ($((dr / postback_drain))/s), $dl left")$( [[ -n "$outbox_writes" ]] && echo "; outbox $outbox_writes")$( [[ -n "$recovery" ]] && echo "; $recovery")" >&2
        k="$delay ms ($protocol)"
        ((${#counts[@]} > 1)) && k+=", $(endpoints_label "$postback_endpoints")"
        rate[$k]+="$r "; cpu[$k]+="$c "; pgcpu[$k]+="$pc "; rss[$k]+="$m "; sold[$k]+="$s "
        this_round[$postback_endpoints]=$r
      done
      for n in "${counts[@]:1}"; do
        ratio["$delay ms ($protocol), $(endpoints_label "$n")"]+="$(awk -v a="${this_round[$n]}" -v b="${this_round[${counts[0]}]}" 'BEGIN {printf "%.3f", a / b}') "
      done
    done
    kill -TERM "$buyers_pid"; wait "$buyers_pid" 2>/dev/null || true
  done
done
echo
echo "distribution (embedded queue, $store_kind store, one worker, default settings; $leads leads queued first; medians of $rounds):"
printf '%-40s %10s %13s %13s %13s %12s %9s %9s\n' "buyers answer after" "leads/s" "CPU ms/lead" "PG ms/lead" "peak RSS MB" "sold" "of first" "paired"
for protocol in $protocols; do
  for delay in $delays; do
    for n in "${counts[@]}"; do
      k="$delay ms ($protocol)"
      ((${#counts[@]} > 1)) && k+=", $(endpoints_label "$n")"
      of="" paired=""
      if [[ "$n" != "${counts[0]}" ]]; then
        first="$delay ms ($protocol), $(endpoints_label "${counts[0]}")"
        of=$(awk -v a="$(echo "${rate[$k]}" | median)" -v b="$(echo "${rate[$first]}" | median)" 'BEGIN {printf "%.3f", a / b}')
        paired=$(echo "${ratio[$k]}" | median)
      fi
      printf '%-40s %10.0f %13.3f %13.3f %13.1f %7d/%d %9s %9s\n' "$k" "$(echo "${rate[$k]}" | median)" \
        "$(echo "${cpu[$k]}" | median)" "$(echo "${pgcpu[$k]}" | median)" "$(echo "${rss[$k]}" | median)" \
        "$(echo "${sold[$k]}" | median)" "$leads" "$of" "$paired"
    done
  done
done
