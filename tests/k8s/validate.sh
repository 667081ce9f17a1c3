#!/usr/bin/env bash
# Validates k8s/ (the Kustomize base and overlays) and the Dockerfile: tests/k8s/validate.mjs
# renders every kustomization, checks every object against its JSON Schema and leadflow's
# invariants. No cluster and no Docker are needed; Node and npm are (scripts/deps.sh --test).
#
# Usage: tests/k8s/validate.sh [WORK_DIR]
# WORK_DIR holds node_modules and npm's cache (default: $LEADFLOW_BUILD_DIR or build/, then
# tests/k8s), never the source tree. The npm packages are pinned by package-lock.json and
# installed with `npm ci`, from npm's cache when it has them (offline), else from the registry;
# an unchanged lock file is not installed again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-${LEADFLOW_BUILD_DIR:-$root/build}/tests/k8s}

for tool in node npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "k8s_manifests: $tool is missing (scripts/deps.sh --test installs it)" >&2
    exit 1
  fi
done

mkdir -p "$work"
export npm_config_cache="$work/npm-cache" npm_config_update_notifier=false
stamp="$work/node_modules/.leadflow-package-lock.json"
if ! cmp -s "$here/package-lock.json" "$stamp"; then
  cp "$here/package.json" "$here/package-lock.json" "$work/"
  if ! (cd "$work" && npm ci --offline --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
    echo "k8s_manifests: installing the validator's npm packages from the registry" >&2
    (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  cp "$here/package-lock.json" "$stamp"
fi
# The scripts run from the work directory so that Node finds the packages installed there.
cp "$here/render.mjs" "$here/validate.mjs" "$work/"
exec node "$work/validate.mjs" "$root"
