#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test with CTest.
#   scripts/test.sh            all tests
#   scripts/test.sh -L unit    only the unit tests (seconds, no servers)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh" --test
"$root/scripts/check_format.sh"
"$root/scripts/build.sh"
cd "${LEADFLOW_BUILD_DIR:-$root/build}"
# CTest prints its summary ("100% tests passed, 0 tests failed out of N") at the end.
ctest --output-on-failure --timeout 600 -j 2 "$@"
