#!/usr/bin/env bash
# The dashboard end to end in a real browser: starts a buyer simulator and leadflow-ingest (the
# embedded default, dashboard built in) on loopback, seeds two sellers, an operator user and a
# seller user through the API, then drives Debian's chromium through the dashboard with
# playwright-core (tests/web/e2e*.mjs). Screenshots go to BUILD_DIR/web-e2e/WALK/.
#
# Usage: LEADFLOW_BUILD_DIR=build tests/web/e2e.sh NPM_DIR [WALK]   (NPM_DIR: where
# npm_install.sh put playwright-core; WALK: the walk's script in tests/web, e2e.mjs by default:
# each walk gets its own ingest and its own folder of screenshots, BUILD_DIR/web-e2e/WALK)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${LEADFLOW_BUILD_DIR:?}
npm_dir=$1
walk=${2:-e2e.mjs}
unset LEADFLOW_BUILD_DIR  # leadflow refuses LEADFLOW_ settings it does not know
chromium=${CHROMIUM:-$(command -v chromium || true)}
if [[ -z "$chromium" ]]; then
  echo "chromium is missing (scripts/deps.sh --test installs it)" >&2
  exit 1
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Free loopback ports, the kernel's choice, released just before use (walks run side by side, so
# a port drawn at random could be one another walk's ingest holds).
free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
port=$(free_port)
buyer_port=$(free_port)
"$build/workers/leadflow-buyer-sim" --name e2e-buyer --port "$buyer_port" --bid 12.50 \
  --latency-ms 20 --seed 7 >/dev/null &
pids+=($!)

operator_key="lfk_e2e_$(openssl rand -hex 20)"
export LEADFLOW_DATA_DIR="$work/data" LEADFLOW_LISTEN="127.0.0.1:$port" \
  LEADFLOW_BOOTSTRAP_KEY="$operator_key" LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_LOG_LEVEL=warn
mkdir -p "$LEADFLOW_DATA_DIR"
# A walk's own settings, if it has any (tests/web/WALK.env, sourced: its NAME=value lines are
# exported to the ingest).
if [[ -f "$here/${walk%.mjs}.env" ]]; then
  set -a
  . "$here/${walk%.mjs}.env"
  set +a
fi
"$build/ingest/leadflow-ingest" > "$work/ingest.out" 2> "$work/ingest.log" &
pids+=($!)
base="https://127.0.0.1:$port"
cacert="$LEADFLOW_DATA_DIR/tls/cert.pem"
for _ in $(seq 1 600); do  # up to 60 s, whatever the machine's load
  if [[ -f "$cacert" ]] && curl -sf --cacert "$cacert" "$base/readyz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "${pids[-1]}" 2>/dev/null; then
    echo "e2e: leadflow-ingest did not start:" >&2
    cat "$work/ingest.log" >&2
    exit 1
  fi
  sleep 0.1
done

export NODE_PATH="$npm_dir/node_modules" NODE_EXTRA_CA_CERTS="$cacert"
export E2E_BASE="$base" E2E_OPERATOR_KEY="$operator_key" E2E_CHROMIUM="$chromium" \
  E2E_BUYER_URL="http://127.0.0.1:$buyer_port" E2E_SHOTS="$build/web-e2e/${walk%.mjs}"
mkdir -p "$E2E_SHOTS"
# NODE_PATH does not reach ES modules: the script runs from a folder of this walk's own that
# links to node_modules (walks run side by side: a copy into one shared folder could be read by
# another walk half written).
mkdir "$work/walk"
ln -s "$npm_dir/node_modules" "$work/walk/node_modules"
cp "$here/e2e_lib.mjs" "$here/$walk" "$work/walk/"
if ! node "$work/walk/$walk"; then
  echo "e2e: the ingest log's last lines:" >&2
  tail -n 30 "$work/ingest.log" >&2
  exit 1
fi
