#!/usr/bin/env bash
# The reports phase (scripts/bench.sh reports): how fast GET /v1/reports/revenue and
# /v1/reports/performance, and the search of GET /v1/leads?q=, answer over a large store, on
# SQLite and on PostgreSQL.
#
# For each store: `leadflow-admin generate --leads N --days D --seed S` writes the data (sellers,
# campaigns, buyers, leads with their auctions, sales, returns) through the store's own write
# paths, timed; a store made before with the same N, D and seed is reused (the data lives in
# BENCH_REPORTS_DIR, not in a temporary directory: 10 million leads take the better part of an
# hour to write). Then an embedded leadflow-ingest (no workers) opens the store, and each report
# shape is asked BENCH_REPORT_WARMUP times (not counted), then BENCH_REPORT_REQUESTS times, one
# after another on one keep-alive HTTPS connection (curl), with an operator key; every answer
# must be a 200. Shapes: revenue and performance over the last 30 days of the data grouped by
# day, by buyer, by source and by day,buyer; over all 90 days by hour; the 30 days by day
# with a seller's key; the 30 days by day,buyer in New York's days; the unsold report over the
# 30 days by reason and by buyer,reason; and the search of GET /v1/leads?q= (a lead of the seller
# from before those 30 days, by its e-mail, phone and id, with the operator's and the seller's
# keys). Prints p50 and p95 per shape (curl's time_total: the request on an open
# connection to the last byte of the answer) and the store's size on disk (SQLite: the file and
# its write-ahead log; PostgreSQL: pg_database_size).
#
# Environment: BENCH_REPORT_LEADS (1000000), BENCH_REPORT_DAYS (90), BENCH_REPORT_SEED (1),
# BENCH_REPORT_REQUESTS (50), BENCH_REPORT_WARMUP (5), BENCH_REPORT_STORES ("sqlite postgresql"),
# BENCH_REPORTS_DIR (where the generated stores are kept; default build-release/bench-reports),
# BENCH_BUILD (a release build dir with leadflow-admin and leadflow-ingest; default: build one),
# BENCH_REPORT_SEARCH_LEADS (how many leads the search shapes look for in turn; default the
# warm-ups and the requests), BENCH_REPORT_PG_ROLLUPS ("sqlite": PostgreSQL's database holds the
# rollups, tiers, sellers and leads copied from the SQLite store of the same N, D and seed, made
# first, without the leads' auctions, sales and ledger; for a machine without the disk for both
# stores whole: the reports read nothing but the rollups, and the search nothing but the leads).
# PostgreSQL runs as a server of the bench's own under BENCH_REPORTS_DIR/pg (scripts/pg_server.sh,
# default settings), halted at the end with its data kept for the next run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
leads=${BENCH_REPORT_LEADS:-1000000}
days=${BENCH_REPORT_DAYS:-90}
seed=${BENCH_REPORT_SEED:-1}
requests=${BENCH_REPORT_REQUESTS:-50}
warmup=${BENCH_REPORT_WARMUP:-5}
search_leads=${BENCH_REPORT_SEARCH_LEADS:-$((requests + warmup))}
stores=${BENCH_REPORT_STORES:-"sqlite postgresql"}
pg_rollups=${BENCH_REPORT_PG_ROLLUPS:-}
build=${BENCH_BUILD:-}
if [[ -z "$build" ]]; then
  "$root/scripts/deps.sh" --bench
  build="$root/build-release"
  LEADFLOW_BUILD_DIR="$build" LEADFLOW_BUILD_TYPE=Release LEADFLOW_BUILD_TESTS=OFF LEADFLOW_UNITY_BUILD=OFF \
    "$root/scripts/build.sh" --target leadflow-admin leadflow-ingest >/dev/null
fi
data=${BENCH_REPORTS_DIR:-$root/build-release/bench-reports}
mkdir -p "$data"
data=$(cd "$data" && pwd)
chmod 711 "$data"  # as root, PostgreSQL runs as the postgres user and must pass through
admin="$build/ingest/leadflow-admin"

work=$(mktemp -d /tmp/leadflow-reports-XXXXXX)
pids=()
mock_pid=""
# shellcheck source=scripts/bench/common.sh
source "$root/scripts/bench/common.sh"
pg_dir="$data/pg"
finish() {
  cleanup
  # Halted, not removed: the generated databases are kept for the next run.
  if [[ -f "$pg_dir/data/postgresql.conf" ]]; then "$root/scripts/pg_server.sh" halt "$pg_dir" >/dev/null 2>&1 || true; fi
}
trap finish EXIT
key="$leads-$days-$seed"

# generate STORE_URL DIR: writes the data once; DIR/generate.json is its summary, DIR/generate.log
# its progress and time.
generate() {
  if [[ -s "$2/generate.json" ]]; then
    echo "reports bench: reusing $2 ($(grep -h 'elapsed' "$2/generate.log" || true))" >&2
    return
  fi
  mkdir -p "$2"
  echo "reports bench: generating $leads leads over $days days into $2 ..." >&2
  /usr/bin/time -f '%e s elapsed, %U s user, %S s sys, %M KB peak' \
    env LEADFLOW_STORE="$1" LEADFLOW_LOG_LEVEL=warn "$admin" generate --leads "$leads" --days "$days" \
    --seed "$seed" > "$2/generate.json.part" 2> "$2/generate.log" ||
    { echo "reports bench: generate failed" >&2; tail -n 20 "$2/generate.log" >&2; exit 1; }
  mv "$2/generate.json.part" "$2/generate.json"
}

# copy_rollups SQLITE_DIR PG_URL DIR (BENCH_REPORT_PG_ROLLUPS=sqlite): a PostgreSQL database
# migrated empty, then given the SQLite store's rollups, their tiers, its sellers (the reports
# read nothing else) and its leads (the search reads nothing else), once; DIR/generate.json is
# the SQLite store's summary.
copy_rollups() {
  if [[ -s "$3/generate.json" ]]; then
    echo "reports bench: reusing $3 (rollups copied from $1)" >&2
    return
  fi
  [[ -s "$1/generate.json" ]] || { echo "reports bench: no SQLite store in $1 to copy" >&2; exit 1; }
  echo "reports bench: copying the rollups and leads of $1 into PostgreSQL ..." >&2
  local started=$SECONDS
  LEADFLOW_STORE="$2" LEADFLOW_LOG_LEVEL=warn "$admin" migrate >/dev/null
  local table columns keys
  for table in revenue_rollup performance_rollup unsold_rollup revenue_tiers performance_tiers unsold_tiers; do
    columns=$(psql -tA "$2" -c "SELECT string_agg(column_name, ', ' ORDER BY ordinal_position)
      FROM information_schema.columns WHERE table_name = '$table'")
    keys="seller_id, campaign_id, buyer_id, vertical, source"
    [[ "$table" == unsold_* ]] && keys+=", reason"
    # An empty key is '' in the rollups, not NULL.
    sqlite3 -readonly -csv "$1/leadflow.db" "SELECT $columns FROM $table" |
      psql -q "$2" -c "\\copy $table ($columns) FROM STDIN WITH (FORMAT csv, FORCE_NOT_NULL ($keys))"
  done
  sqlite3 -readonly -csv "$1/leadflow.db" \
    "SELECT id, name, CASE WHEN active THEN 'true' ELSE 'false' END, created_at FROM sellers" |
    psql -q "$2" -c "\\copy sellers (id, name, active, created_at) FROM STDIN WITH (FORMAT csv)"
  # The leads (the search reads them), with the installation secret their search keys were made
  # with. Their indexes are dropped for the copy and made again after it, as the migrations
  # wrote them (pg_indexes), which is much faster than keeping them up row by row.
  psql -q "$2" -c "DELETE FROM shared_secrets"
  sqlite3 -readonly -csv "$1/leadflow.db" "SELECT name, value FROM shared_secrets" |
    psql -q "$2" -c "\\copy shared_secrets (name, value) FROM STDIN WITH (FORMAT csv)"
  local indexes nullable
  indexes=$(psql -tA "$2" -c "SELECT indexdef FROM pg_indexes WHERE tablename = 'leads'
    AND indexname NOT IN (SELECT conname FROM pg_constraint WHERE conrelid = 'leads'::regclass)")
  psql -q "$2" -c "SELECT 'DROP INDEX ' || string_agg(quote_ident(indexname), ', ') FROM pg_indexes
    WHERE tablename = 'leads' AND indexname NOT IN
      (SELECT conname FROM pg_constraint WHERE conrelid = 'leads'::regclass)" -tA | psql -q "$2"
  columns=$(psql -tA "$2" -c "SELECT string_agg(column_name, ', ' ORDER BY ordinal_position)
    FROM information_schema.columns WHERE table_name = 'leads'")
  nullable=$(psql -tA "$2" -c "SELECT string_agg(column_name, ', ' ORDER BY ordinal_position)
    FROM information_schema.columns WHERE table_name = 'leads' AND is_nullable = 'NO'")
  # SQLite's 0 and 1 are PostgreSQL's false and true; an empty text is '' where a column
  # refuses NULL.
  sqlite3 -readonly -csv "$1/leadflow.db" "SELECT $columns FROM leads" |
    psql -q "$2" -c "\\copy leads ($columns) FROM STDIN WITH (FORMAT csv, FORCE_NOT_NULL ($nullable))"
  echo "$indexes" | sed 's/$/;/' | psql -q "$2"
  psql -q "$2" -c "ANALYZE"
  mkdir -p "$3"
  cp "$1/generate.json" "$3/generate.json"
  echo "rollups, tiers, sellers and leads copied from $1 (no auctions, sales or ledger) in $((SECONDS - started)) s elapsed" > "$3/generate.log"
}

json_field() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(v[0] if isinstance(v, list) else v)' "$1" "$2"; }

operator="lfk_bench_$(openssl rand -hex 20)"
results=()
for store in $stores; do
  case "$store" in
    sqlite)
      dir="$data/sqlite-$key"
      url="sqlite:$dir/leadflow.db"
      generate "$url" "$dir"
      ;;
    postgresql)
      if [[ -f "$pg_dir/data/postgresql.conf" ]]; then
        "$root/scripts/pg_server.sh" resume "$pg_dir" >/dev/null
      else
        "$root/scripts/pg_server.sh" start "$pg_dir" >/dev/null
      fi
      pg_admin=$(cat "$pg_dir/url")
      if [[ "$pg_rollups" == sqlite ]]; then
        dir="$data/pg-rollups-$key"
        db="lf_rollups_${leads}_${days}_${seed}"
      else
        dir="$data/pg-$key"
        db="lf_reports_${leads}_${days}_${seed}"
      fi
      url="${pg_admin%/*}/$db"
      if [[ ! -s "$dir/generate.json" ]]; then
        psql -q "$pg_admin" -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
        psql -q "$pg_admin" -c "CREATE DATABASE $db" >/dev/null
      fi
      if [[ "$pg_rollups" == sqlite ]]; then
        copy_rollups "$data/sqlite-$key" "$url" "$dir"
      else
        generate "$url" "$dir"
      fi
      ;;
    *) echo "reports bench: unknown store $store" >&2; exit 1 ;;
  esac
  summary="$dir/generate.json"
  from_iso=$(json_field "$summary" from)
  to_iso=$(json_field "$summary" to)
  seller=$(json_field "$summary" seller_ids)
  from30=$(python3 -c 'import datetime,sys; t=datetime.datetime.fromisoformat(sys.argv[1].replace("Z","+00:00")); print((t-datetime.timedelta(days=30)).strftime("%Y-%m-%dT%H:%M:%SZ"))' "$to_iso")
  to_q=$(python3 -c 'import sys; print(sys.argv[1].replace(".000Z","Z"))' "$to_iso")
  from90=$(python3 -c 'import sys; print(sys.argv[1].replace(".000Z","Z"))' "$from_iso")
  # Enterprise (1,000 requests a minute): the seller's shapes ask more than a standard key's 100.
  seller_key=$(LEADFLOW_STORE="$url" LEADFLOW_LOG_LEVEL=warn "$admin" create-api-key --seller-id "$seller" \
    --name reports-bench --plan enterprise 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')
  [[ -n "$seller_key" ]] || { echo "reports bench: no seller key" >&2; exit 1; }

  lf_dir="$work/lf-$store"
  mkdir -p "$lf_dir"
  lf_port=$(free_port)
  LEADFLOW_DATA_DIR="$lf_dir" LEADFLOW_STORE="$url" LEADFLOW_LISTEN="127.0.0.1:$lf_port" \
  LEADFLOW_BOOTSTRAP_KEY="$operator" LEADFLOW_WORKERS=0 LEADFLOW_LOG_LEVEL=warn \
    "$build/ingest/leadflow-ingest" > "$lf_dir/out" 2> "$lf_dir/log" &
  lf_pid=$!
  pids+=("$lf_pid")
  for _ in $(seq 1 600); do
    curl -sf --cacert "$lf_dir/tls/cert.pem" "https://127.0.0.1:$lf_port/readyz" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -sf --cacert "$lf_dir/tls/cert.pem" "https://127.0.0.1:$lf_port/readyz" >/dev/null ||
    { echo "reports bench: leadflow did not start" >&2; cat "$lf_dir/log" >&2; exit 1; }

  size=$(if [[ "$store" == sqlite ]]; then
    du -cb "$dir/leadflow.db" "$dir/leadflow.db-wal" 2>/dev/null | tail -n 1 | cut -f1
  else
    psql -tA "$pg_admin" -c "SELECT pg_database_size('$db')"
  fi)
  gen_line=$(grep -h 'elapsed' "$dir/generate.log" || true)
  gen_leads=$(json_field "$summary" leads)
  gen_rate=$(json_field "$summary" leads_per_second)
  echo "reports bench: $store: $gen_leads leads from $from_iso to $to_iso; generate took $gen_line ($gen_rate leads/s); store size $(awk -v b="$size" 'BEGIN {printf "%.2f GB", b / 1e9}')" >&2

  # shape NAME KEY PATH...: times the report (or the paths in turn) and appends a result line; its
  # rows are those of the first path's answer.
  shape() {
    local name=$1 bearer=$2 args=() i times out
    shift 2
    local paths=("$@") path
    path=${paths[0]}
    for ((i = 0; i < warmup + requests; i++)); do args+=(-o /dev/null "https://127.0.0.1:$lf_port${paths[i % ${#paths[@]}]}"); done
    out=$(curl -s --cacert "$lf_dir/tls/cert.pem" -H "Authorization: Bearer $bearer" \
      -w '%{http_code} %{time_total}\n' "${args[@]}")
    if grep -qv '^200 ' <<< "$out"; then
      echo "reports bench: $store $name answered $(grep -v '^200 ' <<< "$out" | head -n 1)" >&2
      exit 1
    fi
    times=$(tail -n "$requests" <<< "$out" | awk '{print $2 * 1000}' | sort -g)
    local p50 p95 rows
    p50=$(median <<< "$times")
    p95=$(awk -v n="$requests" '{a[NR] = $1} END {i = int(0.95 * n); if (i < 0.95 * n) i++; print a[i]}' <<< "$times")
    # A report's rows, or a list's (a search's) leads.
    rows=$(curl -s --cacert "$lf_dir/tls/cert.pem" -H "Authorization: Bearer $bearer" \
      "https://127.0.0.1:$lf_port$path" | python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; print(len(d["rows"] if isinstance(d, dict) else d))')
    printf '  %-11s %-44s %9.1f %9.1f %6s\n' "$store" "$name" "$p50" "$p95" "$rows" >&2
    results+=("$(printf '%-11s %-44s %9.1f %9.1f %6s' "$store" "$name" "$p50" "$p95" "$rows")")
  }
  r30="from=$from30&to=$to_q"
  for report in revenue performance; do
    for group in day buyer source day,buyer; do
      shape "$report 30 days by $group" "$operator" "/v1/reports/$report?$r30&group_by=$group"
    done
    shape "$report 90 days by hour" "$operator" "/v1/reports/$report?from=$from90&to=$to_q&group_by=hour"
    shape "$report 30 days by day, seller key" "$seller_key" "/v1/reports/$report?$r30&group_by=day"
    # Days of another zone than UTC: each cuts two UTC days, so it is read in hours.
    shape "$report 30 days by day,buyer, New York" "$operator" \
      "/v1/reports/$report?$r30&group_by=day,buyer&tz=America/New_York"
  done
  # Why leads went unsold: by the leads' own reasons, and by buyer and reason.
  shape "unsold 30 days by reason" "$operator" "/v1/reports/unsold?$r30"
  shape "unsold 30 days by buyer,reason" "$operator" "/v1/reports/unsold?$r30&group_by=buyer,reason"
  # Search (GET /v1/leads?q=): BENCH_REPORT_SEARCH_LEADS (the warm-ups and the timed requests:
  # 55) of the seller's leads spread over the data's days (the newest before each of as many
  # instants), each found in turn by its e-mail, its phone and its id, with the operator's key
  # and the seller's: a different lead each request, so no request reads the pages the one
  # before it read.
  targets=()
  for ((i = 0; i < search_leads; i++)); do
    before=$(python3 -c 'import datetime,sys; a=datetime.datetime.fromisoformat(sys.argv[1].replace("Z","+00:00")); b=datetime.datetime.fromisoformat(sys.argv[2].replace("Z","+00:00")); print((a+(b-a)*(int(sys.argv[3])+1)/(int(sys.argv[4])+1)).strftime("%Y-%m-%dT%H:%M:%SZ"))' "$from_iso" "$to_iso" "$i" "$search_leads")
    target=$(curl -s --cacert "$lf_dir/tls/cert.pem" -H "Authorization: Bearer $seller_key" \
      "https://127.0.0.1:$lf_port/v1/leads?limit=1&created_to=$before" |
      python3 -c 'import json,sys,urllib.parse as u; d=json.load(sys.stdin)["data"]; print(" ".join(u.quote(d[0][k], safe="") for k in ("email","phone","lead_id")) if d else "")')
    [[ -n "$target" ]] && targets+=("$target")
  done
  if ((${#targets[@]})); then
    by_email=() by_phone=() by_id=()
    for target in "${targets[@]}"; do
      read -r q_email q_phone q_id <<< "$target"
      by_email+=("/v1/leads?q=$q_email") by_phone+=("/v1/leads?q=$q_phone") by_id+=("/v1/leads?q=$q_id")
    done
    echo "reports bench: $store: searching for ${#targets[@]} leads in turn" >&2
    for who in operator seller; do
      bearer=$operator
      [[ "$who" == seller ]] && bearer=$seller_key
      shape "search by e-mail, $who key" "$bearer" "${by_email[@]}"
      shape "search by phone, $who key" "$bearer" "${by_phone[@]}"
      shape "search by id, $who key" "$bearer" "${by_id[@]}"
    done
  else
    echo "reports bench: $store: no lead to search for" >&2
  fi
  results+=("$(printf '%-11s store size on disk: %.2f GB; %s leads; generate: %s (%s leads/s)' "$store" \
    "$(awk -v b="$size" 'BEGIN {print b / 1e9}')" "$gen_leads" "$gen_line" "$gen_rate")")
  kill -TERM "$lf_pid" 2>/dev/null || true
  wait "$lf_pid" 2>/dev/null || true
done

echo
echo "Reports: $leads leads over $days days (seed $seed), $requests requests per shape after $warmup warm-up, one keep-alive HTTPS connection"
printf '%-11s %-44s %9s %9s %6s\n' store shape "p50 ms" "p95 ms" rows
for line in "${results[@]}"; do echo "$line"; done
