#!/usr/bin/env bash
# Installs what the dashboard's tests need, once, before them (a CTest fixture: installing from
# several tests at once would race inside one node_modules): playwright-core (pinned by this
# folder's package-lock.json) into WORK_DIR (scripts/npm_ci.sh), and the dashboard's own
# packages with its build (ingest/web/build.sh, into BUILD_DIR/web) for the unit tests.
#
# Usage: tests/web/npm_install.sh WORK_DIR BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/../../scripts/npm_ci.sh" "$here" "$1" "the npm packages of tests/web"
"$here/../../ingest/web/build.sh" "$2/web"
