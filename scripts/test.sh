#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every fuzz harness briefly
# (scripts/fuzz.sh: the seed corpora, then LEADFLOW_FUZZ_SECONDS of fuzzing each, default 20; 0
# replays the corpora only), the unit and integration tests under AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/sanitize.sh address, a build directory of its own), then
# every test with CTest.
#   scripts/test.sh            all of it
#   scripts/test.sh -L unit    only the unit tests (seconds, no servers); CTest's arguments
#                              leave the fuzz harnesses and the sanitizer run out
# LEADFLOW_SANITIZE_TESTS=0 leaves the sanitizer run out of a full run too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/deps.sh" --test
"$root/scripts/check_format.sh"
"$root/scripts/check_file_sizes.sh"
"$root/scripts/build.sh"
# The fuzz harnesses run first so that CTest's summary stays the last thing printed; a failure
# of theirs still fails the command, after the tests have run.
fuzz_failed=0
sanitize_failed=0
if (($# == 0)); then
  "$root/scripts/fuzz.sh" all "${LEADFLOW_FUZZ_SECONDS:-20}" || fuzz_failed=1
  if [[ "${LEADFLOW_SANITIZE_TESTS:-1}" != 0 ]]; then
    echo "test: the unit and integration tests under AddressSanitizer and UBSan" >&2
    "$root/scripts/sanitize.sh" address || sanitize_failed=1
  fi
fi
cd "${LEADFLOW_BUILD_DIR:-$root/build}"
# CTest prints its summary ("100% tests passed, 0 tests failed out of N") at the end.
ctest --output-on-failure --timeout 600 -j 2 "$@"
if ((fuzz_failed)); then
  echo "test: a fuzz harness failed (its report is above, before the tests); in short:" >&2
  cat "${LEADFLOW_FUZZ_BUILD_DIR:-$root/build-fuzz}/fuzz/failures.txt" >&2 || true
fi
if ((sanitize_failed)); then
  echo "test: a test failed under the sanitizers (its report is above, before the tests)" >&2
fi
if ((fuzz_failed || sanitize_failed)); then exit 1; fi
