#!/usr/bin/env bash
# Installs the pinned npm packages of tests/k8s (package-lock.json) into WORK_DIR with `npm ci`,
# from npm's cache there when it has them (offline), else from the registry; an unchanged lock
# file is not installed again. Shared by the manifest validator and the alert rules test, which
# read k8s/ with the same YAML package.
#
# Usage: tests/k8s/npm_install.sh WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$1

for tool in node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "$tool is missing (scripts/deps.sh --test installs it)" >&2
    exit 1
  fi
done

mkdir -p "$work"
export npm_config_cache="$work/npm-cache" npm_config_update_notifier=false
stamp="$work/node_modules/.leadflow-package-lock.json"
if ! cmp -s "$here/package-lock.json" "$stamp"; then
  cp "$here/package.json" "$here/package-lock.json" "$work/"
  if ! (cd "$work" && npm ci --offline --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
    echo "installing the npm packages of tests/k8s from the registry" >&2
    (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  cp "$here/package-lock.json" "$stamp"
fi
