#!/usr/bin/env bash
# The suppression phase (scripts/bench.sh suppression): what a suppression list costs at the sizes
# buyers and operators upload (docs/suppression.md).
#
#   1. Lookups (leadflow-suppression-bench): a list of BENCH_SUPPRESSION_ENTRIES random
#      fingerprints; the time to build its lookup, its memory, and a lead's lookup in it (a
#      million leads, one in a hundred listed, in a shuffled order), medians of 5 rounds.
#   2. Imports: a file of BENCH_SUPPRESSION_ENTRIES e-mail addresses imported into a list with
#      `leadflow-admin import-suppression-list` (read, normalised, fingerprinted, sorted and
#      written in one transaction), per store of BENCH_SUPPRESSION_STORES ("sqlite postgresql");
#      wall time and peak memory (/usr/bin/time), twice: a new list, then the same list replaced.
#   3. Uploads through the API: the same file sent to a running leadflow-ingest on each store
#      (PUT /v1/suppression-lists/{id}/entries, curl over HTTPS), twice (a new list, then
#      replaced), while a seller posts leads one after another on another connection: the
#      upload's wall time, the ingest's resident memory before and its peak (VmHWM) after, and the
#      lead posts answered during the upload (how many, their slowest, any refused), which shows
#      whether intake paused. Each upload gets a fresh store (database) and a fresh process.
#      With BENCH_SUPPRESSION_ENCODINGS="clear gzip" the file is sent both clear and gzipped
#      (`gzip -6`, Content-Encoding: gzip), side by side in alternating order.
#   With BENCH_SUPPRESSION_ENCODINGS="clear gzip" the imports phase too imports the file both
#   clear and gzipped (leadflow-admin reads a gzip file as it inflates it), each on a fresh store.
#
# Environment: BENCH_SUPPRESSION_ENTRIES (10000000), BENCH_SUPPRESSION_STORES,
# BENCH_BUILD (a release build dir with leadflow-admin, leadflow-ingest and
# leadflow-suppression-bench; default: build one), BENCH_SUPPRESSION_PHASES ("lookups imports
# uploads"), BENCH_SUPPRESSION_INGESTS ("label=path/to/leadflow-ingest ...": the uploads phase
# compares them side by side, in alternating order, default this build's alone) and
# BENCH_SUPPRESSION_ROUNDS (1; medians), BENCH_SUPPRESSION_ENCODINGS ("clear"; "clear gzip" compares). PostgreSQL is a throwaway server (scripts/pg_server.sh)
# removed at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
entries=${BENCH_SUPPRESSION_ENTRIES:-10000000}
stores=${BENCH_SUPPRESSION_STORES:-"sqlite postgresql"}
build=${BENCH_BUILD:-}
if [[ -z "$build" ]]; then
  build="$root/build-release"
  LEADFLOW_BUILD_DIR="$build" LEADFLOW_BUILD_TYPE=Release LEADFLOW_BUILD_TESTS=OFF LEADFLOW_UNITY_BUILD=OFF \
    "$root/scripts/build.sh" --target leadflow-admin leadflow-ingest leadflow-suppression-bench >/dev/null
fi
admin="$build/ingest/leadflow-admin"
work=$(mktemp -d /tmp/leadflow-suppression-XXXXXX)
chmod 711 "$work"  # as root, PostgreSQL runs as the postgres user and must pass through
phases=${BENCH_SUPPRESSION_PHASES:-"lookups imports uploads"}
# shellcheck source=scripts/bench/common.sh
source "$root/scripts/bench/common.sh"  # cleanup (the processes in $pids, PostgreSQL, $work), free_port
pids=()
trap cleanup EXIT

if [[ " $phases " == *" lookups "* ]]; then
  echo "== suppression: lookups in a list of $entries entries"
  "$build/tests/leadflow-suppression-bench" --entries "$entries" --lookups 1000000 --rounds 5
fi

echo "== suppression: a file of $entries e-mail addresses, imported with leadflow-admin and uploaded through the API"
awk -v n="$entries" 'BEGIN { print "email"; for (i = 0; i < n; i++) printf "Person.%d@Example.com\n", i }' \
  > "$work/list.csv"
echo "suppression: the file is $(du -h "$work/list.csv" | cut -f1)"
encodings=${BENCH_SUPPRESSION_ENCODINGS:-clear}
if [[ " $encodings " == *" gzip "* ]]; then
  gzip -6 -c "$work/list.csv" > "$work/list.csv.gz"
  echo "suppression: gzipped, $(du -h "$work/list.csv.gz" | cut -f1)"
fi
store_url() {
  case "$1" in
    sqlite) echo "sqlite:$work/leadflow-$2.db" ;;
    postgresql)
      if [[ ! -f "$work/pg/url" ]]; then "$root/scripts/pg_server.sh" start "$work/pg" >/dev/null; fi
      local admin_url db="lf_supp_$2"
      admin_url=$(cat "$work/pg/url")
      psql -q "$admin_url" -c "CREATE DATABASE $db" >/dev/null
      python3 -c 'import sys,urllib.parse as u; p=u.urlparse(sys.argv[1]); print(p._replace(path="/"+sys.argv[2]).geturl())' "$admin_url" "$db"
      ;;
    *) echo "unknown store $1" >&2; exit 2 ;;
  esac
}

if [[ " $phases " == *" imports "* ]]; then
  for store in $stores; do
    for encoding in $encodings; do
      # A fresh store for each encoding, so that each file is imported into a new list, then
      # replaces it, on a store that holds nothing else.
      url=$(store_url "$store" "imports_$encoding")
      file="$work/list.csv"
      if [[ "$encoding" == gzip ]]; then file="$work/list.csv.gz"; fi
      list=$(LEADFLOW_STORE="$url" "$admin" create-suppression-list --name bench |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["list_id"])')
      for what in new replaced; do
        /usr/bin/time -f '%e %M' -o "$work/time" env LEADFLOW_STORE="$url" LEADFLOW_LOG_LEVEL=warn \
          "$admin" import-suppression-list --list-id "$list" --file "$file" > "$work/out.json"
        read -r wall rss < "$work/time"
        kept=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"])' "$work/out.json")
        echo "suppression: $store, $encoding file, $what list: $kept entries in ${wall} s, peak ${rss} KB"
      done
    done
  done
fi

# kB of the process's resident memory: VmRSS now, or VmHWM (its peak so far).
memory_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

if [[ " $phases " == *" uploads "* ]]; then
  echo "== suppression: uploading $entries e-mail addresses through the API"
  # One upload measurement: a fresh store (database) of `store`, the leadflow-ingest `binary`, a
  # new list filled then replaced. Prints "label store what seconds peak_kb rss_before_kb posts".
  upload_run() {
    local label=$1 binary=$2 store=$3 round=$4 encoding=${5:-clear}
    local body=("--data-binary" "@$work/list.csv")
    if [[ "$encoding" == gzip ]]; then body=(-H 'Content-Encoding: gzip' --data-binary "@$work/list.csv.gz"); fi
    if [[ "$encoding" != clear ]]; then label="$label+$encoding"; fi
    local url seller seller_key lf_dir lf_port lf_pid lf list what
    url=$(store_url "$store" "up_${label//[^a-z0-9]/_}_$round")
    LEADFLOW_STORE="$url" LEADFLOW_LOG_LEVEL=warn "$admin" migrate >/dev/null
    seller=$(LEADFLOW_STORE="$url" LEADFLOW_LOG_LEVEL=warn "$admin" create-seller --name bench |
      python3 -c 'import json,sys; print(json.load(sys.stdin)["seller_id"])')
    seller_key=$(LEADFLOW_STORE="$url" LEADFLOW_LOG_LEVEL=warn "$admin" create-api-key --seller-id "$seller" \
      --name bench --plan enterprise | python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')
    operator="lfk_bench_$(openssl rand -hex 20)"
    lf_dir="$work/lf-$store-$round-${label//[^a-z0-9]/_}"
    mkdir -p "$lf_dir"
    lf_port=$(free_port)
    LEADFLOW_DATA_DIR="$lf_dir" LEADFLOW_STORE="$url" LEADFLOW_LISTEN="127.0.0.1:$lf_port" \
    LEADFLOW_BOOTSTRAP_KEY="$operator" LEADFLOW_LOG_LEVEL=warn \
      "$binary" > "$lf_dir/out" 2> "$lf_dir/log" &
    lf_pid=$!
    pids+=("$lf_pid")
    lf="https://127.0.0.1:$lf_port"
    for _ in $(seq 1 600); do
      curl -sf --cacert "$lf_dir/tls/cert.pem" "$lf/readyz" >/dev/null 2>&1 && break
      sleep 0.1
    done
    curl -sf --cacert "$lf_dir/tls/cert.pem" "$lf/readyz" >/dev/null ||
      { echo "suppression bench: leadflow-ingest did not start" >&2; cat "$lf_dir/log" >&2; exit 1; }
    lf_curl() { curl -s --cacert "$lf_dir/tls/cert.pem" "$@"; }
    list=$(lf_curl -H "Authorization: Bearer $operator" -H 'Content-Type: application/json' \
      -d '{"name":"bench"}' "$lf/v1/suppression-lists" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["list_id"])')
    for what in new replaced; do
      rss_before=$(memory_kb "$lf_pid" VmRSS)
      # A seller posting leads one after another while the upload runs: each answer's status and
      # seconds (one connection, so each waits for the previous answer).
      : > "$work/posts"
      (
        i=0
        while [[ ! -f "$work/upload.done" ]]; do
          i=$((i + 1))
          lf_curl -o /dev/null -w '%{http_code} %{time_total}\n' -H "Authorization: Bearer $seller_key" \
            -H 'Content-Type: application/json' "$lf/v1/leads" \
            -d '{"first_name":"Ada","last_name":"Bench","email":"ada.'"$what$i"'@bench.example","phone":"202555'"$((1000 + i % 9000))"'","zip_code":"90210","vertical":"auto_insurance"}' >> "$work/posts"
        done
      ) &
      poster=$!
      rm -f "$work/upload.done"
      sleep 1
      started=$(date +%s.%N)
      code=$(lf_curl -o "$work/upload.json" -w '%{http_code}' -X PUT -H "Authorization: Bearer $operator" \
        -H 'Content-Type: text/csv' "${body[@]}" "$lf/v1/suppression-lists/$list/entries")
      ended=$(date +%s.%N)
      touch "$work/upload.done"
      wait "$poster"
      [[ "$code" == 200 ]] || { echo "suppression bench: the upload answered $code: $(head -c 300 "$work/upload.json")" >&2; exit 1; }
      kept=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"]["entries"])' "$work/upload.json")
      peak=$(memory_kb "$lf_pid" VmHWM)
      posts=$(awk '{n++; if ($2 > max) max = $2; if ($1 >= 400) bad++} END {printf "%d lead posts answered during it, slowest %.0f ms, %d refused", n, max * 1000, bad}' "$work/posts")
      seconds=$(awk -v a="$started" -v b="$ended" 'BEGIN {printf "%.1f", b - a}')
      echo "suppression: $label, $store, round $round, API upload ($what list): $kept entries in $seconds s; ingest resident ${rss_before} KB before, peak ${peak} KB; $posts" >&2
      echo "$label $store $what $seconds $peak $rss_before" >> "$work/uploads"
      rm -f "$work/upload.done"
    done
    kill -TERM "$lf_pid"
    wait "$lf_pid" 2>/dev/null || true
  }
  # The leadflow-ingest binaries compared, "label=path" each (default: this build's), run in
  # alternating order round by round (BENCH_SUPPRESSION_ROUNDS, default 1): medians per label.
  ingests=${BENCH_SUPPRESSION_INGESTS:-"this=$build/ingest/leadflow-ingest"}
  rounds=${BENCH_SUPPRESSION_ROUNDS:-1}
  read -r -a ingest_list <<< "$ingests"
  # Each binary with each encoding: "label=path=encoding".
  runs=()
  for pair in "${ingest_list[@]}"; do
    for encoding in $encodings; do runs+=("$pair=$encoding"); done
  done
  : > "$work/uploads"
  for store in $stores; do
    for round in $(seq 1 "$rounds"); do
      order=("${runs[@]}")
      if ((round % 2 == 0)); then
        order=()
        for ((k = ${#runs[@]} - 1; k >= 0; k--)); do order+=("${runs[k]}"); done
      fi
      for run in "${order[@]}"; do
        rest=${run#*=}
        upload_run "${run%%=*}" "${rest%=*}" "$store" "$round" "${rest##*=}" 2>&1
      done
    done
  done
  echo "== suppression: API uploads, medians of $rounds round(s) (seconds; ingest peak resident MB; resident before)"
  for store in $stores; do
    for run in "${runs[@]}"; do
      label=${run%%=*}
      encoding=${run##*=}
      if [[ "$encoding" != clear ]]; then label="$label+$encoding"; fi
      for what in new replaced; do
        secs=$(awk -v l="$label" -v s="$store" -v w="$what" '$1 == l && $2 == s && $3 == w {print $4}' "$work/uploads" | median)
        peak=$(awk -v l="$label" -v s="$store" -v w="$what" '$1 == l && $2 == s && $3 == w {print $5 / 1024}' "$work/uploads" | median)
        before=$(awk -v l="$label" -v s="$store" -v w="$what" '$1 == l && $2 == s && $3 == w {print $6 / 1024}' "$work/uploads" | median)
        printf 'suppression: %-10s %-10s %-8s %6.1f s  peak %6.0f MB  (before %4.0f MB)\n' "$label" "$store" "$what" "$secs" "$peak" "$before"
      done
    done
  done
fi
