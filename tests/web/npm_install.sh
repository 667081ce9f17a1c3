#!/usr/bin/env bash
# Installs what the dashboard's tests need, once, before them (a CTest fixture: installing from
# several tests at once would race inside one node_modules): playwright-core (pinned by this
# folder's package-lock.json) into WORK_DIR, and the dashboard's own packages with its build
# (ingest/web/build.sh, into BUILD_DIR/web) for the unit tests. npm's cache in WORK_DIR is used
# first (offline), then the registry; an unchanged lock file is not installed again.
#
# Usage: tests/web/npm_install.sh WORK_DIR BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$1
build=$2

for tool in node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool is missing (scripts/deps.sh installs it)" >&2
    exit 1
  fi
done

mkdir -p "$work"
export npm_config_cache="$work/npm-cache" npm_config_update_notifier=false
stamp="$work/node_modules/.leadflow-package-lock.json"
if ! cmp -s "$here/package-lock.json" "$stamp"; then
  cp "$here/package.json" "$here/package-lock.json" "$work/"
  if ! (cd "$work" && npm ci --offline --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
    echo "installing the npm packages of tests/web from the registry" >&2
    (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  cp "$here/package-lock.json" "$stamp"
fi
"$here/../../ingest/web/build.sh" "$build/web"
