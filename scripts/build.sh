#!/usr/bin/env bash
# Configures and builds leadflow into build/ (or $LEADFLOW_BUILD_DIR). Two jobs: the machine
# this is made for has two cores. Extra arguments go to cmake --build (e.g. --target leadflow-ingest).
# With node and npm on the PATH, leadflow-ingest's target also builds the web dashboard (npm ci and
# Vite, ingest/web/dashboard.cmake) and embeds it; without them the dashboard answers 503.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LEADFLOW_BUILD_DIR:-$root/build}
type=${LEADFLOW_BUILD_TYPE:-RelWithDebInfo}
tests=${LEADFLOW_BUILD_TESTS:-ON}
sanitize=${LEADFLOW_SANITIZE:-}  # e.g. address,undefined (scripts/sanitize.sh)
# CI builds treat warnings as errors; elsewhere LEADFLOW_WERROR=ON asks for the same. Unset, a
# build directory keeps what it was configured with: the demo's test runs scripts/run.sh, which
# builds here again, and a changed flag would rebuild the whole tree in the middle of the tests.
werror=${LEADFLOW_WERROR:-}
if [[ -z "$werror" && -f "$build/CMakeCache.txt" ]]; then
  werror=$(sed -n 's/^LEADFLOW_WERROR:[A-Z]*=//p' "$build/CMakeCache.txt")
fi
werror=${werror:-OFF}
if [[ "${CI:-}" == "true" ]]; then werror=ON; fi
# ON in the release build of a full test run (scripts/test.sh): only the system tests are
# defined there. Unset, a build directory keeps what it was configured with, as for werror.
system_only=${LEADFLOW_SYSTEM_TESTS_ONLY:-}
if [[ -z "$system_only" && -f "$build/CMakeCache.txt" ]]; then
  system_only=$(sed -n 's/^LEADFLOW_SYSTEM_TESTS_ONLY:[A-Z]*=//p' "$build/CMakeCache.txt")
fi
system_only=${system_only:-OFF}
# Unity builds (CMakeLists.txt): on unless LEADFLOW_UNITY_BUILD=OFF; unset, a build directory
# keeps what it was configured with, as for werror.
unity=${LEADFLOW_UNITY_BUILD:-}
if [[ -z "$unity" && -f "$build/CMakeCache.txt" ]]; then
  unity=$(sed -n 's/^LEADFLOW_UNITY_BUILD:[A-Z]*=//p' "$build/CMakeCache.txt")
fi
unity=${unity:-ON}
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# The tests compile against precompiled headers, which ccache caches only with this sloppiness.
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}
# Ninja for a new build directory (scripts/deps.sh installs it): it schedules every object of
# the tree at once, where Make builds a library's objects only after those of the libraries it
# links, leaving a core idle behind one long unit. A directory keeps the generator it has.
generator=()
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
# The commit leadflow_build_info reports, where the tree has no .git to read it from (the image).
commit=()
if [[ -n "${LEADFLOW_BUILD_COMMIT:-}" ]]; then commit=(-DLEADFLOW_COMMIT="$LEADFLOW_BUILD_COMMIT"); fi
cmake "${generator[@]}" -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="$type" -DLEADFLOW_BUILD_TESTS="$tests" \
  -DLEADFLOW_WERROR="$werror" -DLEADFLOW_SANITIZE="$sanitize" \
  -DLEADFLOW_SYSTEM_TESTS_ONLY="$system_only" -DLEADFLOW_UNITY_BUILD="$unity" "${launcher[@]}" "${commit[@]}" >/dev/null
cmake --build "$build" -j "${LEADFLOW_JOBS:-2}" "$@"
