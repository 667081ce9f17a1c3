#!/usr/bin/env bash
# The dashboard's unit tests (Vitest) and its type check (tsc), in the copy of the app that
# tests/web/npm_install.sh built in BUILD_DIR/web.
#
# Usage: tests/web/unit.sh BUILD_DIR
set -euo pipefail
cd "$1/web"
node node_modules/typescript/bin/tsc --noEmit -p .
node node_modules/vitest/vitest.mjs run
