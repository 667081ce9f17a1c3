#!/usr/bin/env bash
# Installs the npm packages pinned by PACKAGE_DIR's package-lock.json into WORK_DIR with
# `npm ci`: from npm's cache in WORK_DIR when it has them (offline), else from the registry; an
# unchanged lock file is not installed again. Shared by the dashboard's build
# (ingest/web/build.sh) and the tests' npm fixtures (tests/web, tests/k8s).
#
# Usage: scripts/npm_ci.sh PACKAGE_DIR WORK_DIR WHAT   (WHAT: the packages' name, for messages)
set -euo pipefail
from=$1
work=$2
what=$3

for tool in node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool is missing (scripts/deps.sh installs it)" >&2
    exit 1
  fi
done

mkdir -p "$work"
export npm_config_cache="$work/npm-cache" npm_config_update_notifier=false
stamp="$work/node_modules/.leadflow-package-lock.json"
if ! cmp -s "$from/package-lock.json" "$stamp"; then
  cp "$from/package.json" "$from/package-lock.json" "$work/"
  if ! (cd "$work" && npm ci --offline --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
    echo "installing $what from the registry" >&2
    (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  cp "$from/package-lock.json" "$stamp"
fi
