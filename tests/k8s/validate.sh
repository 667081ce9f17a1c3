#!/usr/bin/env bash
# Validates k8s/ (the Kustomize base and overlays) and the Dockerfile: tests/k8s/validate.mjs
# renders every kustomization, checks every object against its JSON Schema and leadflow's
# invariants. No cluster and no Docker are needed; Node and npm are (scripts/deps.sh --test).
#
# Usage: tests/k8s/validate.sh [WORK_DIR]
# WORK_DIR holds node_modules and npm's cache (default: $LEADFLOW_BUILD_DIR or build/, then
# tests/k8s), never the source tree. The npm packages are pinned by package-lock.json and
# installed by npm_install.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-${LEADFLOW_BUILD_DIR:-$root/build}/tests/k8s}

"$here/npm_install.sh" "$work"
# The scripts run from the work directory so that Node finds the packages installed there.
cp "$here/render.mjs" "$here/validate.mjs" "$work/"
exec node "$work/validate.mjs" "$root"
