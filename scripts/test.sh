#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every fuzz harness briefly
# (scripts/fuzz.sh: the seed corpora, then LEADFLOW_FUZZ_SECONDS of fuzzing each, default 20; 0
# replays the corpora only), the unit and integration tests under AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/sanitize.sh address, a build directory of its own), then
# the system tests (end to end, dashboard, operations, Kubernetes, scale-out, faults) on the
# release build. Each test runs once: the release build of a full run defines only the system
# tests (LEADFLOW_SYSTEM_TESTS_ONLY), since the sanitizer build has run the others.
#   scripts/test.sh            all of it
#   scripts/test.sh -L unit    only the unit tests (seconds, no servers); CTest's arguments
#                              leave the fuzz harnesses and the sanitizer run out, and run the
#                              tests they select on the release build
# LEADFLOW_SANITIZE_TESTS=0 leaves the sanitizer run out of a full run, which then runs every
# test on the release build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
started=$SECONDS
phase_started=$SECONDS
phase() {  # how long the step before took, so that a slow run says where its time went
  echo "test: $1 took $((SECONDS - phase_started)) s" >&2
  phase_started=$SECONDS
}
"$root/scripts/deps.sh" --test
"$root/scripts/check_format.sh"
"$root/scripts/check_file_sizes.sh"
phase "installing and checking"
sanitize=0
if (($# == 0)) && [[ "${LEADFLOW_SANITIZE_TESTS:-1}" != 0 ]]; then sanitize=1; fi
system_only=OFF
if ((sanitize)); then system_only=ON; fi
LEADFLOW_SYSTEM_TESTS_ONLY=$system_only "$root/scripts/build.sh"
phase "the release build"
# The fuzz harnesses and the sanitizer run come first so that CTest's summary stays the last
# thing printed; a failure of theirs still fails the command, after the tests have run.
fuzz_failed=0
sanitize_failed=0
asan_build=${LEADFLOW_ASAN_BUILD_DIR:-$root/build-asan}
if (($# == 0)); then
  "$root/scripts/fuzz.sh" all "${LEADFLOW_FUZZ_SECONDS:-20}" || fuzz_failed=1
  phase "the fuzz harnesses"
fi
if ((sanitize)); then
  echo "test: the unit and integration tests under AddressSanitizer and UBSan" >&2
  rm -f "$asan_build/Testing/Temporary/LastTestsFailed.log"
  "$root/scripts/sanitize.sh" address || sanitize_failed=1
  phase "the sanitizer build and its tests"
  echo "test: the system tests on the release build" >&2
fi
cd "${LEADFLOW_BUILD_DIR:-$root/build}"
# CTest prints its summary ("100% tests passed, 0 tests failed out of N") at the end.
ctest_failed=0
ctest --output-on-failure --timeout 600 -j 2 "$@" || ctest_failed=1
phase "the tests on the release build"
echo "test: $((SECONDS - started)) s in all" >&2
if ((fuzz_failed)); then
  echo "test: a fuzz harness failed (its report is above, before the tests); in short:" >&2
  cat "${LEADFLOW_FUZZ_BUILD_DIR:-$root/build-fuzz}/fuzz/failures.txt" >&2 || true
fi
if ((sanitize_failed)); then
  if [[ -f "$asan_build/Testing/Temporary/LastTestsFailed.log" ]]; then
    echo "test: tests failed under the sanitizers (their reports are above, before the tests):" >&2
    sed 's/^/  /' "$asan_build/Testing/Temporary/LastTestsFailed.log" >&2
  else
    echo "test: the sanitizer build failed, no test ran under it (its errors are above)" >&2
  fi
fi
if ((ctest_failed)); then
  echo "test: tests failed on the release build:" >&2
  sed 's/^/  /' Testing/Temporary/LastTestsFailed.log >&2 || true
fi
if ((fuzz_failed || sanitize_failed || ctest_failed)); then exit 1; fi
