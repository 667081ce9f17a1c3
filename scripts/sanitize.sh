#!/usr/bin/env bash
# Builds the tests with sanitizers in a build directory of their own and runs them.
#   scripts/sanitize.sh address [CTEST ARGS]   AddressSanitizer + UndefinedBehaviorSanitizer over
#                                              the unit and integration tests (the test command
#                                              runs this); build dir build-asan/
#   scripts/sanitize.sh thread [CTEST ARGS]    ThreadSanitizer over the tests of the threaded parts:
#                                              the worker, the embedded queue, the HTTP server and
#                                              client, the front's surfaces (not Kafka: see below);
#                                              build dir build-tsan/
# Any report fails the test it came from (halt_on_error / exitcode), so CTest's summary says so.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kind=${1:?usage: scripts/sanitize.sh address|thread [ctest args]}
shift
suppressions="$root/scripts/sanitizers"
case "$kind" in
  address)
    build=${LEADFLOW_ASAN_BUILD_DIR:-$root/build-asan}
    flags=address,undefined
    # Unit and integration tests; the e2e demo runs the release build already.
    selection=(-L "unit|integration")
    # Five slots: every test takes two of them and the few that mostly wait take one (their
    # PROCESSORS in tests/CMakeLists.txt), so two tests compute at once and one waits beside them.
    jobs=5
    export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0"
    export LSAN_OPTIONS="suppressions=$suppressions/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$suppressions/ubsan.supp"
    ;;
  thread)
    build=${LEADFLOW_TSAN_BUILD_DIR:-$root/build-tsan}
    flags=thread
    # librdkafka starts its threads with C11 thrd_create, which g++ 12's ThreadSanitizer does not
    # intercept: a process with Kafka in it dies at its first broker thread. Those tests are left
    # to the ASan run.
    selection=(-R "Worker|Distributor|Queue|Embedded|HttpServer|HttpClient|Http2|Pipeline|Limiter|Surface"
      -E "Kafka|kafka|ScaleOut")
    jobs=2
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$suppressions/tsan.supp"
    ;;
  *) echo "sanitize.sh: unknown kind $kind (address or thread)" >&2; exit 2 ;;
esac
LEADFLOW_BUILD_DIR="$build" LEADFLOW_BUILD_TYPE=Sanitize LEADFLOW_SANITIZE="$flags" \
  "$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure --timeout 900 -j "$jobs" "${selection[@]}" "$@"
