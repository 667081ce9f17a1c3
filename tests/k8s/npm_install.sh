#!/usr/bin/env bash
# Installs the pinned npm packages of tests/k8s (package-lock.json) into WORK_DIR
# (scripts/npm_ci.sh: offline from npm's cache there when it can, else from the registry; an
# unchanged lock file is not installed again). Shared by the manifest validator and the alert
# rules test, which read k8s/ with the same YAML package.
#
# Usage: tests/k8s/npm_install.sh WORK_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/../../scripts/npm_ci.sh" "$here" "$1" "the npm packages of tests/k8s"
