#!/usr/bin/env bash
# The write paths of two builds side by side (`scripts/bench.sh compare BASE_COMMIT`), so that a
# change to the front, the auction or the store's writes is measured against the code before it
# in one run. Three measurements, each build in turn in every round (base first in odd rounds,
# new first in even ones), on an otherwise idle machine:
#   front         an embedded leadflow-ingest with no worker (a fresh data directory each
#                 round): wrk POSTs Surface B leads to an async campaign over BENCH_CONNECTIONS
#                 (64) keep-alive TLS connections for BENCH_SECONDS (10); req/s and p50
#   sync          scripts/bench/sync.sh, one round per build and round: a sync campaign, three
#                 buyer simulators at 20/40/60 ms, 8 connections posting independently; the
#                 seller's p50 and the latency leadflow adds to the measured floor, embedded
#                 (SQLite) and scale-out (Kafka mock + PostgreSQL + one leadflow-worker)
#   distribution  scripts/bench/distribution.sh, one round per build and round: one embedded
#                 worker drains BENCH_DISTRIBUTION_LEADS (10000) queued leads to three nginx
#                 buyers answering at once, over HTTP/2 and over HTTP/1.1 (or the protocols in
#                 BENCH_BUYER_PROTOCOLS); leads/s and CPU ms per lead, and the PostgreSQL
#                 server's CPU per lead too with BENCH_DISTRIBUTION_STORE=postgresql
# Prints, per figure, the medians of BENCH_ROUNDS (3) rounds of each build, new/base of the
# medians, and the paired ratio: the median of each round's own new/base (a noisy round moves
# it less). For latencies and CPU per lead a ratio under 1 is the better; for rates, over 1.
#
# Environment: BENCH_COMPARE_BASE (a release build dir of the code before, with leadflow-ingest,
# leadflow-worker, leadflow-buyer-sim and leadflow-kafka-mock), BENCH_BUILD (the same of the
# code now), BENCH_COMPARE_PHASES ("front sync distribution"), BENCH_ROUNDS, BENCH_SECONDS,
# BENCH_CONNECTIONS, BENCH_SYNC_SECONDS (5 here), BENCH_DISTRIBUTION_LEADS, and distribution.sh's
# BENCH_BUYER_PROTOCOLS and BENCH_DISTRIBUTION_STORE.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${BENCH_ROUNDS:-3}
seconds=${BENCH_SECONDS:-10}
connections=${BENCH_CONNECTIONS:-64}
phases=${BENCH_COMPARE_PHASES:-"front sync distribution"}
declare -A build=([base]=${BENCH_COMPARE_BASE:?the base build dir} [new]=${BENCH_BUILD:?the build dir})

work=$(mktemp -d /tmp/leadflow-compare-XXXXXX)
pids=()
mock_pid=""
# shellcheck source=scripts/bench/common.sh
source "$root/scripts/bench/common.sh"
trap cleanup EXIT
operator="lfk_bench_$(openssl rand -hex 20)"

declare -A fig  # fig[NAME/BUILD]: the figure's value in each round, space-separated
names=()
record() {  # record NAME BUILD VALUE
  [[ -n "$3" ]] || { echo "compare bench: no figure for $1 ($2)" >&2; exit 1; }
  [[ -v "fig[$1/base]" || -v "fig[$1/new]" ]] || names+=("$1")
  fig[$1/$2]+="$3 "
}

front_round() {  # front_round BUILD ROUND
  local dir="$work/front-$1-$2" p pid seller key out
  mkdir -p "$dir"
  p=$(free_port)
  LEADFLOW_DATA_DIR="$dir" LEADFLOW_LISTEN="127.0.0.1:$p" LEADFLOW_BOOTSTRAP_KEY="$operator" \
  LEADFLOW_WORKERS=0 LEADFLOW_LOG_LEVEL=warn "${build[$1]}/ingest/leadflow-ingest" \
    > "$dir/out" 2> "$dir/log" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 300); do
    curl -sf --cacert "$dir/tls/cert.pem" "https://127.0.0.1:$p/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  seller=$(api "$dir" "$p" POST /v1/sellers '{"name":"bench"}' | field seller_id)
  key=$(api "$dir" "$p" POST /v1/campaigns "{\"seller_id\":\"$seller\",\"name\":\"bench\",\"vertical\":\"auto_insurance\",\"mode\":\"async\",\"rate_limit_per_minute\":10000000}" | field campaign_key)
  [[ -n "$key" ]] || { echo "compare bench: seeding the $1 front failed" >&2; cat "$dir/log" >&2; exit 1; }
  BENCH_KEY="$key" BENCH_EXPECT=202 BENCH_SALT=99 wrk -t1 -c4 -d2s \
    -s "$root/scripts/bench/post_lead.lua" "https://127.0.0.1:$p" >/dev/null 2>&1
  out=$(BENCH_KEY="$key" BENCH_EXPECT=202 BENCH_SALT="$2" wrk -t2 -c"$connections" -d"${seconds}s" \
    --timeout 5s -s "$root/scripts/bench/post_lead.lua" "https://127.0.0.1:$p" 2>&1)
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
  if [[ "$(echo "$out" | awk '/BENCH_FAILURES/ {print $2}')" != 0 ]]; then
    echo "compare bench: the $1 front failed posts" >&2; echo "$out" >&2; exit 1
  fi
  record "front req/s" "$1" "$(echo "$out" | awk '/BENCH_RPS/ {print $2}')"
  record "front p50 ms" "$1" "$(echo "$out" | awk '/BENCH_P50_MS/ {print $2}')"
}

# A row of a phase's closing table, by the start of its label: the field counted from the end.
row_field() {  # row_field TEXT LABEL FROM_END
  echo "$1" | awk -v l="$2" -v k="$3" 'index($0, l) == 1 {print $(NF - k); exit}'
}

sync_round() {  # sync_round BUILD ROUND
  local out
  out=$(BENCH_BUILD="${build[$1]}" BENCH_ROUNDS=1 BENCH_SYNC_SECONDS="${BENCH_SYNC_SECONDS:-5}" \
    "$root/scripts/bench/sync.sh" 2>"$work/sync.err") \
    || { echo "compare bench: sync ($1) failed:" >&2; tail -20 "$work/sync.err" >&2; exit 1; }
  # Columns from the end: failures 0, added p50 (measured) 1, added p99 2, added p50 3, p99 4,
  # p50 5, req/s 6.
  record "sync embedded p50 ms" "$1" "$(row_field "$out" "embedded (SQLite" 5)"
  record "sync embedded added ms" "$1" "$(row_field "$out" "embedded (SQLite" 1)"
  record "sync scale-out p50 ms" "$1" "$(row_field "$out" "scale-out (Kafka" 5)"
  record "sync scale-out added ms" "$1" "$(row_field "$out" "scale-out (Kafka" 1)"
}

distribution_round() {  # distribution_round BUILD ROUND
  local out protocol
  out=$(BENCH_BUILD="${build[$1]}" BENCH_ROUNDS=1 BENCH_DELAYS_MS=0 \
    BENCH_DISTRIBUTION_LEADS="${BENCH_DISTRIBUTION_LEADS:-10000}" \
    "$root/scripts/bench/distribution.sh" 2>"$work/distribution.err") \
    || { echo "compare bench: distribution ($1) failed:" >&2; tail -20 "$work/distribution.err" >&2; exit 1; }
  # Columns: "0 ms (h2)  leads/s  CPU ms/lead  PG ms/lead  peak RSS MB  sold/leads".
  for protocol in ${BENCH_BUYER_PROTOCOLS:-h2 http1}; do
    record "distribution $protocol leads/s" "$1" \
      "$(echo "$out" | awk -v l="0 ms ($protocol)" 'index($0, l) == 1 {print $4; exit}')"
    record "distribution $protocol CPU ms/lead" "$1" \
      "$(echo "$out" | awk -v l="0 ms ($protocol)" 'index($0, l) == 1 {print $5; exit}')"
    if [[ "${BENCH_DISTRIBUTION_STORE:-sqlite}" == postgresql ]]; then
      record "distribution $protocol PG ms/lead" "$1" \
        "$(echo "$out" | awk -v l="0 ms ($protocol)" 'index($0, l) == 1 {print $6; exit}')"
    fi
  done
}

echo "compare: $rounds rounds of: $phases; base ${build[base]}, new ${build[new]}" >&2
for round in $(seq 1 "$rounds"); do
  if ((round % 2 == 1)); then order="base new"; else order="new base"; fi
  for phase in $phases; do
    for b in $order; do
      "${phase}_round" "$b" "$round"
      echo "  round $round $phase $b done" >&2
    done
  done
done

echo
echo "write paths, base against new (medians of $rounds rounds; paired: the median of each round's new/base):"
printf '%-34s %12s %12s %9s %8s\n' figure base new new/base paired
for n in "${names[@]}"; do
  b=$(echo "${fig[$n/base]}" | median)
  w=$(echo "${fig[$n/new]}" | median)
  paired=$(paste -d' ' <(echo "${fig[$n/new]}" | tr ' ' '\n' | grep -v '^$') \
    <(echo "${fig[$n/base]}" | tr ' ' '\n' | grep -v '^$') | awk '{printf "%s ", ($2 != 0) ? $1 / $2 : 0}' | median)
  printf '%-34s %12.3f %12.3f %9.3f %8.3f\n' "$n" "$b" "$w" \
    "$(awk -v a="$w" -v b="$b" 'BEGIN {print (b != 0) ? a / b : 0}')" "$paired"
done
