#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test with CTest, then
# every fuzz harness briefly (scripts/fuzz.sh: the seed corpora, then LEADFLOW_FUZZ_SECONDS of
# fuzzing each, default 20; 0 replays the corpora only).
#   scripts/test.sh            all tests and the fuzz harnesses
#   scripts/test.sh -L unit    only the unit tests (seconds, no servers); CTest's arguments
#                              leave the fuzz harnesses out
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh" --test
"$root/scripts/check_format.sh"
"$root/scripts/build.sh"
# The fuzz harnesses run first so that CTest's summary stays the last thing printed; a failure
# of theirs still fails the command, after the tests have run.
fuzz_failed=0
if (($# == 0)); then
  "$root/scripts/fuzz.sh" all "${LEADFLOW_FUZZ_SECONDS:-20}" || fuzz_failed=1
fi
cd "${LEADFLOW_BUILD_DIR:-$root/build}"
# CTest prints its summary ("100% tests passed, 0 tests failed out of N") at the end.
ctest --output-on-failure --timeout 600 -j 2 "$@"
if ((fuzz_failed)); then
  echo "test: a fuzz harness failed (its report is above, before the tests)" >&2
  exit 1
fi
