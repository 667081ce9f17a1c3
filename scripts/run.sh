#!/usr/bin/env bash
# The README's first command. Installs what is missing, builds, and runs leadflow's embedded
# default (SQLite + the durable embedded queue, no external service) on https://127.0.0.1:8443.
#
#   scripts/run.sh             the service alone, configured by LEADFLOW_* variables (docs/configuration.md)
#   scripts/run.sh --demo      also three simulated buyers on loopback, seeded buyers, a seller,
#                              an API key and campaign keys, a demo operator and a demo seller
#                              user for the dashboard, and curl commands to paste
#   scripts/run.sh --scale-out the scale-out shape on this machine, with the same demo: a real
#                              three-node Apache Kafka and a PostgreSQL (both throwaway, made anew
#                              at each start under $LEADFLOW_DATA_DIR/scale-out), two
#                              leadflow-ingest processes (https://127.0.0.1:8443 and :8444) and
#                              two leadflow-worker processes (metrics on 127.0.0.1:9201, :9202;
#                              LEADFLOW_DEMO_WORKER_METRICS_PORT moves them)
#
# Stops cleanly on Ctrl-C / SIGTERM (the scale-out shape also stops its Kafka and PostgreSQL).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
demo=0
scale_out=0
for arg in "$@"; do
  case "$arg" in
    --demo) demo=1 ;;
    --scale-out) demo=1 scale_out=1 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

if ((scale_out)); then "$root/scripts/deps.sh" --scale-out; else "$root/scripts/deps.sh"; fi
build=${LEADFLOW_BUILD_DIR:-$root/build}
# A build directory that already builds the tests keeps them (turning them off would drop them
# from the next ctest run); a new one leaves them out, which makes the first start faster.
tests=${LEADFLOW_BUILD_TESTS:-$(sed -n 's/^LEADFLOW_BUILD_TESTS:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)}
LEADFLOW_BUILD_TESTS=${tests:-OFF} "$root/scripts/build.sh" \
  --target leadflow-ingest leadflow-admin leadflow-worker leadflow-buyer-sim >/dev/null
base_port=${LEADFLOW_DEMO_BUYER_PORT:-9101}
worker_metrics_port=${LEADFLOW_DEMO_WORKER_METRICS_PORT:-9201}
# The service refuses LEADFLOW_* names it does not know; these belong to the scripts alone.
unset LEADFLOW_BUILD_DIR LEADFLOW_BUILD_TYPE LEADFLOW_BUILD_TESTS LEADFLOW_JOBS LEADFLOW_DEMO_BUYER_PORT \
  LEADFLOW_DEMO_WORKER_METRICS_PORT LEADFLOW_BUILD_COMMIT LEADFLOW_WERROR LEADFLOW_SANITIZE \
  LEADFLOW_SYSTEM_TESTS_ONLY LEADFLOW_FUZZ_SECONDS LEADFLOW_FUZZ_BUILD_DIR LEADFLOW_FUZZ_FLAGS
export LEADFLOW_DATA_DIR=${LEADFLOW_DATA_DIR:-$root/leadflow-data}
mkdir -p "$LEADFLOW_DATA_DIR"

if [[ $demo -eq 0 ]]; then
  exec "$build/ingest/leadflow-ingest"
fi

# ---- demo -----------------------------------------------------------------------------------
state="$LEADFLOW_DATA_DIR/demo.env"
shape_dir="$LEADFLOW_DATA_DIR/scale-out"
# PostgreSQL runs as the `postgres` system user when this runs as root (it refuses root), and that
# user may not enter the data directory's parents (a home directory, a private temporary one).
pg_dir="$shape_dir/pg"
if ((scale_out)) && [[ $(id -u) -eq 0 ]]; then pg_dir=$(mktemp -d /tmp/leadflow-scale-out-pg-XXXXXX); fi
pids=()
cleanup() {
  # A second Ctrl-C (or a signal sent to the whole group as well as to this script) must not cut
  # the cleanup short: that would leave the scale-out shape's Kafka and PostgreSQL running.
  trap - EXIT
  trap '' INT TERM
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if ((scale_out)); then
    "$root/scripts/kafka_cluster.sh" stop "$shape_dir/kafka" >/dev/null 2>&1 || true
    "$root/scripts/pg_server.sh" stop "$pg_dir" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
trap 'exit 0' INT TERM

sim="$build/workers/leadflow-buyer-sim"
"$sim" --name acme-auto   --port "$base_port"         --bid 14.50     --latency-ms 40  --jitter-ms 10 --seed 1 >/dev/null &
pids+=($!)
"$sim" --name bluesky     --port $((base_port + 1))   --bid-range 8:16 --latency-ms 80  --jitter-ms 20 --seed 2 >/dev/null &
pids+=($!)
"$sim" --name cornerstone --port $((base_port + 2))   --bid 11.00     --latency-ms 150 --jitter-ms 30 --reject-rate 0.1 --seed 3 >/dev/null &
pids+=($!)

if [[ -f "$state" ]]; then
  # shellcheck disable=SC1090
  source "$state"
else
  OPERATOR_KEY="lfk_demo_$(openssl rand -hex 20)"
fi
export LEADFLOW_BOOTSTRAP_KEY="$OPERATOR_KEY"
export LEADFLOW_ALLOW_PRIVATE_BUYERS=1  # the demo buyers live on loopback
listen=${LEADFLOW_LISTEN:-127.0.0.1:8443}
export LEADFLOW_LISTEN="$listen"
logs="$LEADFLOW_DATA_DIR"

# waits until the ingest listening on $1 answers /readyz with the certificate $2; $3 is its log
wait_ready() {
  for _ in $(seq 1 600); do
    if [[ -f "$2" ]] && curl -sf --cacert "$2" "https://$1/readyz" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "${pids[-1]}" 2>/dev/null; then
      echo "run.sh: leadflow-ingest did not start:" >&2
      cat "$3" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "run.sh: leadflow-ingest on $1 was not ready within a minute; see $3" >&2
  exit 1
}

if ((scale_out)); then
  # The shape is made anew at each start: its Kafka and PostgreSQL are throwaway, so the demo's
  # keys are too (docs/kafka.md, "The scale-out shape on one machine").
  rm -rf "$shape_dir"
  mkdir -p "$shape_dir"
  state="$shape_dir/demo.env"
  logs="$shape_dir"
  echo "run.sh: starting a three-node Kafka and a PostgreSQL (about half a minute)" >&2
  bootstrap=$("$root/scripts/kafka_cluster.sh" start "$shape_dir/kafka" | tail -n 1)
  admin_url=$("$root/scripts/pg_server.sh" start "$pg_dir" | tail -n 1)
  psql -q -v ON_ERROR_STOP=1 "$admin_url" -c "CREATE DATABASE leadflow" >/dev/null
  export LEADFLOW_STORE="${admin_url%/postgres}/leadflow?pool_size=4"
  export LEADFLOW_QUEUE="kafka://$bootstrap"
  export LEADFLOW_KAFKA_REPLICATION=3
  # The first ingest migrates the store, creates the topics and makes the certificate the
  # second one reuses.
  LEADFLOW_DATA_DIR="$shape_dir/ingest1" "$build/ingest/leadflow-ingest" \
    > "$shape_dir/ingest1.out" 2> "$shape_dir/ingest1.log" &
  pids+=($!)
  ingest_pid=$!
  cacert="$shape_dir/ingest1/tls/cert.pem"
  wait_ready "$listen" "$cacert" "$shape_dir/ingest1.log"
  second="${listen%:*}:$((${listen##*:} + 1))"
  LEADFLOW_DATA_DIR="$shape_dir/ingest2" LEADFLOW_LISTEN="$second" \
    LEADFLOW_TLS_CERT="$cacert" LEADFLOW_TLS_KEY="$shape_dir/ingest1/tls/key.pem" \
    "$build/ingest/leadflow-ingest" > "$shape_dir/ingest2.out" 2> "$shape_dir/ingest2.log" &
  pids+=($!)
  wait_ready "$second" "$cacert" "$shape_dir/ingest2.log"
  for n in 1 2; do
    LEADFLOW_DATA_DIR="$shape_dir/worker$n" LEADFLOW_METRICS_LISTEN="127.0.0.1:$((worker_metrics_port + n - 1))" \
      "$build/workers/leadflow-worker" > "$shape_dir/worker$n.out" 2> "$shape_dir/worker$n.log" &
    pids+=($!)
  done
else
  "$build/ingest/leadflow-ingest" > "$LEADFLOW_DATA_DIR/ingest.out" 2> "$LEADFLOW_DATA_DIR/ingest.log" &
  pids+=($!)
  ingest_pid=${pids[-1]}
  cacert="$LEADFLOW_DATA_DIR/tls/cert.pem"
  wait_ready "$listen" "$cacert" "$LEADFLOW_DATA_DIR/ingest.log"
fi
base="https://$listen"

api() {  # api METHOD PATH [JSON]
  curl -sS --cacert "$cacert" -X "$1" "$base$2" -H "Authorization: Bearer $OPERATOR_KEY" \
    -H 'Content-Type: application/json' ${3:+-d "$3"}
}
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }

if [[ ! -f "$state" ]]; then
  for spec in "acme-auto:$base_port:auto_insurance\",\"home_insurance" \
              "bluesky:$((base_port + 1)):auto_insurance\",\"solar" \
              "cornerstone:$((base_port + 2)):auto_insurance\",\"mortgage"; do
    IFS=: read -r name port verticals <<< "$spec"
    made=$(api POST /v1/buyers "{\"name\":\"$name\",\"verticals\":[\"$verticals\"],\"delivery\":{\"mode\":\"ping_post\",\"ping_url\":\"http://127.0.0.1:$port/ping\",\"post_url\":\"http://127.0.0.1:$port/post\",\"timeout_ms\":500},\"pricing\":{\"model\":\"bid\",\"min_bid\":5}}" | field buyer_id)
    [[ "$name" == acme-auto ]] && BUYER_ID=$made
  done
  SELLER_ID=$(api POST /v1/sellers '{"name":"Demo Seller"}' | field seller_id)
  SELLER_KEY=$(api POST /v1/api-keys "{\"name\":\"demo seller key\",\"seller_id\":\"$SELLER_ID\",\"plan\":\"standard\"}" | field key)
  CAMPAIGN_KEY=$(api POST /v1/campaigns "{\"seller_id\":\"$SELLER_ID\",\"name\":\"Demo auto (sync)\",\"vertical\":\"auto_insurance\",\"payout\":{\"model\":\"revshare\",\"value\":70}}" | field campaign_key)
  ASYNC_CAMPAIGN_KEY=$(api POST /v1/campaigns "{\"seller_id\":\"$SELLER_ID\",\"name\":\"Demo auto (async)\",\"vertical\":\"auto_insurance\",\"mode\":\"async\",\"payout\":{\"model\":\"revshare\",\"value\":70}}" | field campaign_key)
  if [[ -z "$SELLER_KEY" || -z "$CAMPAIGN_KEY" || -z "$ASYNC_CAMPAIGN_KEY" ]]; then
    echo "run.sh: seeding the demo failed; see the logs in $logs" >&2
    exit 1
  fi
  umask 077
  printf 'OPERATOR_KEY=%q\nSELLER_ID=%q\nSELLER_KEY=%q\nCAMPAIGN_KEY=%q\nASYNC_CAMPAIGN_KEY=%q\nBUYER_ID=%q\n' \
    "$OPERATOR_KEY" "$SELLER_ID" "$SELLER_KEY" "$CAMPAIGN_KEY" "$ASYNC_CAMPAIGN_KEY" "$BUYER_ID" > "$state"
fi

# The dashboard's demo users, made once like the keys (a demo.env from before they existed gets
# them added): an operator, and a user of the demo seller. Random passwords, kept in demo.env.
if [[ -z "${DEMO_OPERATOR_PASSWORD:-}" ]]; then
  password() { openssl rand -base64 24 | tr -dc 'A-Za-z0-9' | head -c 20; }
  DEMO_OPERATOR_EMAIL=demo-operator@example.com
  DEMO_OPERATOR_PASSWORD=$(password)
  DEMO_SELLER_EMAIL=demo-seller@example.com
  DEMO_SELLER_PASSWORD=$(password)
  made_operator=$(api POST /v1/users "{\"email\":\"$DEMO_OPERATOR_EMAIL\",\"name\":\"Demo Operator\",\"password\":\"$DEMO_OPERATOR_PASSWORD\",\"account\":\"operator\"}" | field id)
  made_seller=$(api POST /v1/users "{\"email\":\"$DEMO_SELLER_EMAIL\",\"name\":\"Demo Seller\",\"password\":\"$DEMO_SELLER_PASSWORD\",\"account\":\"seller\",\"seller_id\":\"$SELLER_ID\"}" | field id)
  if [[ -z "$made_operator" || -z "$made_seller" ]]; then
    echo "run.sh: making the demo's dashboard users failed; see the logs in $logs" >&2
    exit 1
  fi
  umask 077
  printf 'DEMO_OPERATOR_EMAIL=%q\nDEMO_OPERATOR_PASSWORD=%q\nDEMO_SELLER_EMAIL=%q\nDEMO_SELLER_PASSWORD=%q\n' \
    "$DEMO_OPERATOR_EMAIL" "$DEMO_OPERATOR_PASSWORD" "$DEMO_SELLER_EMAIL" "$DEMO_SELLER_PASSWORD" >> "$state"
fi

# A user of the demo buyer acme-auto, for the buyer's portal (a demo.env made before it knew the
# buyer's id has none).
if [[ -z "${DEMO_BUYER_PASSWORD:-}" && -n "${BUYER_ID:-}" ]]; then
  DEMO_BUYER_EMAIL=demo-buyer@example.com
  DEMO_BUYER_PASSWORD=$(openssl rand -base64 24 | tr -dc 'A-Za-z0-9' | head -c 20)
  made_buyer=$(api POST /v1/users "{\"email\":\"$DEMO_BUYER_EMAIL\",\"name\":\"Demo Buyer\",\"password\":\"$DEMO_BUYER_PASSWORD\",\"account\":\"buyer\",\"buyer_id\":\"$BUYER_ID\"}" | field id)
  if [[ -z "$made_buyer" ]]; then
    echo "run.sh: making the demo's buyer user failed; see the logs in $logs" >&2
    exit 1
  fi
  umask 077
  printf 'DEMO_BUYER_EMAIL=%q\nDEMO_BUYER_PASSWORD=%q\n' "$DEMO_BUYER_EMAIL" "$DEMO_BUYER_PASSWORD" >> "$state"
fi
buyer_login=""
[[ -n "${DEMO_BUYER_PASSWORD:-}" ]] &&
  buyer_login=$'\n'"  buyer login:    $DEMO_BUYER_EMAIL  password: $DEMO_BUYER_PASSWORD  (acme-auto)"

if ((scale_out)); then
  shape_text="scale-out: a second ingest at https://$second, workers' metrics on http://127.0.0.1:$worker_metrics_port/metrics and :$((worker_metrics_port + 1)), Kafka at $bootstrap, PostgreSQL at ${LEADFLOW_STORE%%\?*}; logs and data in $shape_dir, thrown away at the next start"
else
  shape_text="embedded default; data in $LEADFLOW_DATA_DIR"
fi
cat <<TXT

leadflow is running at $base ($shape_text)
Demo buyers: acme-auto :$base_port (bids 14.50), bluesky :$((base_port + 1)) (8-16), cornerstone :$((base_port + 2)) (11.00, rejects 10%)

Dashboard: $base/  (the certificate is self-signed: $cacert)
  operator login: $DEMO_OPERATOR_EMAIL  password: $DEMO_OPERATOR_PASSWORD
  seller login:   $DEMO_SELLER_EMAIL  password: $DEMO_SELLER_PASSWORD  (Demo Seller)$buyer_login

# Surface A: post a lead as the demo seller (201 when sold within the wait budget)
resp=\$(curl -s --cacert $cacert -X POST $base/v1/leads \
  -H 'Authorization: Bearer $SELLER_KEY' -H 'Content-Type: application/json' \
  -d '{"first_name":"Ada","last_name":"Lovelace","email":"ada.'\$RANDOM'@example.com","phone":"202555'\$((1000 + RANDOM % 9000))'","zip_code":"90210","vertical":"auto_insurance","source":"google","custom_fields":{"vehicle_year":2019}}'); echo "\$resp"

# ... then see that lead, with every ping and post
curl -s --cacert $cacert $base/v1/leads/\$(echo "\$resp" | sed -n 's/.*"lead_id":"\([^"]*\)".*/\1/p') -H 'Authorization: Bearer $SELLER_KEY'

# Surface B: post to a campaign (200 with status sold/unsold and the seller's payout)
curl -s --cacert $cacert -X POST $base/api/v1/lead -H 'Content-Type: application/json' \\
  -d '{"SELLER_CAMPAIGN_KEY":"$CAMPAIGN_KEY","first_name":"Grace","last_name":"Hopper","email_address":"grace.'\$RANDOM'@example.com","phone_home":"212555'\$((1000 + RANDOM % 9000))'","zip_code":"10001"}'

# Surface B, async campaign (202 with a job_id), and the legacy form post
curl -s --cacert $cacert -X POST $base/api/v1/lead -H 'Content-Type: application/json' \\
  -d '{"SELLER_CAMPAIGN_KEY":"$ASYNC_CAMPAIGN_KEY","first_name":"Alan","last_name":"Turing","email_address":"alan.'\$RANDOM'@example.com","phone_home":"212555'\$((1000 + RANDOM % 9000))'","zip_code":"10001"}'
curl -s --cacert $cacert -X POST $base/$CAMPAIGN_KEY \\
  -d first_name=Edsger -d last_name=Dijkstra -d email_address=edsger.\$RANDOM@example.com -d phone_home=212555\$((1000 + RANDOM % 9000)) -d zip_code=10001

# Campaign statistics; buyers and metrics (operator key: /metrics is for the operator here)
curl -s --cacert $cacert $base/api/v1/stats/$CAMPAIGN_KEY
curl -s --cacert $cacert $base/v1/buyers -H 'Authorization: Bearer $OPERATOR_KEY'
curl -s --cacert $cacert $base/metrics -H 'Authorization: Bearer $OPERATOR_KEY' | grep ^leadflow_leads

Keys are also in $state; the service logs to $logs. Ctrl-C stops everything.
TXT

wait "$ingest_pid"
