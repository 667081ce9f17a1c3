#!/usr/bin/env bash
# The README's first command, end to end: scripts/run.sh --demo starts the service with its demo
# buyers, and every curl command it prints works when pasted. SIGTERM then stops it all cleanly.
# With --scale-out, the same for scripts/run.sh --scale-out (a real three-node Kafka, a
# PostgreSQL, two ingests and two workers): the second ingest answers too, both workers decide
# leads, and SIGTERM also stops the Kafka and the PostgreSQL it started.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
mode=--demo
[[ "${1:-}" == --scale-out ]] && mode=--scale-out
work=$(mktemp -d /tmp/leadflow-demo-XXXXXX)
# Fixed ports, outside Linux's ephemeral range (32768-60999): a port there can be taken at any
# moment by another test's listener on port 0 or by an outgoing connection (a run once failed
# with the second ingest's port in use). The ingest takes port and port + 1, the buyers three.
port=$(shuf -i 20000-32700 -n 1)
buyer_port=$(shuf -i 10000-19990 -n 1)
metrics_port=$(shuf -i 61000-64990 -n 1)

LEADFLOW_DATA_DIR="$work/data" LEADFLOW_LISTEN="127.0.0.1:$port" LEADFLOW_DEMO_BUYER_PORT="$buyer_port" \
  LEADFLOW_DEMO_WORKER_METRICS_PORT="$metrics_port" LEADFLOW_BUILD_TESTS=ON \
  "$root/scripts/run.sh" "$mode" > "$work/out" 2>&1 &
demo=$!
cleanup() {
  kill -TERM "$demo" 2>/dev/null || true
  wait "$demo" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; echo "--- run.sh output:" >&2; cat "$work/out" >&2; exit 1; }

for _ in $(seq 1 600); do
  grep -q "Ctrl-C stops everything" "$work/out" && break
  kill -0 "$demo" 2>/dev/null || fail "run.sh $mode exited early"
  sleep 0.5
done
grep -q "Ctrl-C stops everything" "$work/out" || fail "the demo did not come up"

# The printed commands, joined across their continuation lines, run in one shell as a user
# pasting them would.
awk '/^(curl|resp=)/ { cmd = $0; while (cmd ~ /\\$/) { getline l; sub(/\\$/, "", cmd); cmd = cmd l } print cmd }' \
  "$work/out" > "$work/commands.sh"
[[ $(wc -l < "$work/commands.sh") -ge 8 ]] || fail "expected at least 8 printed commands"
bash -e "$work/commands.sh" > "$work/answers" 2>&1 || fail "a printed command failed: $(cat "$work/answers")"

expect() { grep -q -- "$1" "$work/answers" || fail "no answer matched $1: $(cat "$work/answers")"; }
expect '"delivery_status":"delivered"'   # Surface A, sold to the best bidder
expect '"offers":{'                      # the seller's lead: how far it went, no buyer named
expect '"status":"sold"'                 # Surface B sync and the legacy form
expect '"status":"queued"'               # Surface B async
expect '"received":'                     # campaign statistics
expect '"buyer_id":"by_'                 # the buyer list
expect 'leadflow_leads_received_total'   # metrics

# The dashboard's demo logins it prints sign in (POST /v1/session).
grep -q "Dashboard: https://127.0.0.1:$port/" "$work/out" || fail "no dashboard URL printed"
cacert="$work/data/tls/cert.pem"
[[ $mode == --scale-out ]] && cacert="$work/data/scale-out/ingest1/tls/cert.pem"
for account in operator seller buyer; do
  line=$(grep "^  $account login: " "$work/out") || fail "no $account login printed"
  email=$(sed -n 's/.*login: *\([^ ]*\) *password: *\([^ ]*\).*/\1/p' <<< "$line")
  password=$(sed -n 's/.*login: *\([^ ]*\) *password: *\([^ ]*\).*/\2/p' <<< "$line")
  [[ -n "$email" && ${#password} -ge 12 ]] || fail "the $account login is incomplete: $line"
  answer=$(curl -s --cacert "$cacert" -o /dev/stderr -w '%{http_code}' -X POST \
    "https://127.0.0.1:$port/v1/session" -H 'Content-Type: application/json' \
    -d "{\"email\":\"$email\",\"password\":\"$password\"}" 2> "$work/session") || true
  [[ "$answer" == 201 ]] || fail "the $account login did not sign in ($answer): $(cat "$work/session")"
  grep -q "\"account\":\"$account\"" "$work/session" || fail "signed in as another account: $(cat "$work/session")"
done

if [[ $mode == --scale-out ]]; then
  # The second ingest takes posts too, and both workers hold partitions of the leads topic: keep
  # posting through the second ingest until each has decided a lead.
  seller_key=$(sed -n 's/^SELLER_KEY=//p' "$work/data/scale-out/demo.env")
  decided() {
    curl -s "http://127.0.0.1:$1/metrics" |
      awk '/^leadflow_leads_decided_total/ { n += $2 } END { print n + 0 }'
  }
  for i in $(seq 1 120); do
    code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$cacert" -X POST \
      "https://127.0.0.1:$((port + 1))/v1/leads" -H "Authorization: Bearer $seller_key" \
      -H 'Content-Type: application/json' -H 'Prefer: respond-async' \
      -d "{\"first_name\":\"Kay\",\"last_name\":\"Scale\",\"email\":\"kay.$i@example.com\",\"phone\":\"20255$((50000 + i))\",\"zip_code\":\"90210\",\"vertical\":\"auto_insurance\"}")
    [[ $code == 202 ]] || fail "the second ingest answered $code to a lead"
    (($(decided "$metrics_port") > 0 && $(decided $((metrics_port + 1))) > 0)) && break
    sleep 0.5
  done
  (($(decided "$metrics_port") > 0)) || fail "the first worker decided no lead"
  (($(decided $((metrics_port + 1))) > 0)) || fail "the second worker decided no lead"
fi

kill -TERM "$demo"
wait "$demo" || fail "run.sh $mode did not exit 0 on SIGTERM"
if [[ $mode == --scale-out ]]; then
  ! pgrep -f "$work/data/scale-out" >/dev/null || fail "a process of the scale-out shape outlived run.sh"
fi
trap 'rm -rf "$work"' EXIT
echo "demo: every printed command worked"
