#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz) with clang and runs them with their seed corpora.
#   scripts/fuzz.sh TARGET SECONDS   one harness (http_request, lead_json, lead_form, buyer_config,
#                                    buyer_answer, lead_codec, queue_record) for SECONDS seconds
#   scripts/fuzz.sh all SECONDS      every harness, two at a time, SECONDS each
#   (SECONDS 0: replay the corpora only, no fuzzing)
#   scripts/fuzz.sh list             the harnesses' names
# A run first replays the harness's seed corpus (tests/fuzz/corpus/TARGET) and what earlier runs
# found (<build dir>/fuzz/corpus/TARGET, where new inputs go: the seed corpus is only read),
# then fuzzes. A crash, a leak or a broken property fails the run; its input is written to
# <build dir>/fuzz/crashes/TARGET/ and can be replayed with <build dir>/fuzz/TARGET_fuzz FILE.
# Build directory: $LEADFLOW_FUZZ_BUILD_DIR, default build-fuzz/ (clang, ASan + UBSan, -O1).
# Extra libFuzzer flags: $LEADFLOW_FUZZ_FLAGS (e.g. "-max_len=65536").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LEADFLOW_FUZZ_BUILD_DIR:-$root/build-fuzz}
targets=(http_request lead_json lead_form buyer_config buyer_answer lead_codec queue_record)

usage() {
  echo "usage: scripts/fuzz.sh TARGET|all SECONDS   (targets: ${targets[*]})" >&2
  exit 2
}

if [[ "${1:-}" == "list" ]]; then
  printf '%s\n' "${targets[@]}"
  exit 0
fi
(($# == 2)) || usage
target=$1
seconds=$2
[[ "$seconds" =~ ^[0-9]+$ ]] || usage
if [[ "$target" == all ]]; then
  run=("${targets[@]}")
else
  [[ " ${targets[*]} " == *" $target "* ]] || usage
  run=("$target")
fi

for tool in clang clang++; do
  if ! command -v "$tool" >/dev/null; then
    echo "fuzz: $tool is missing (scripts/deps.sh --test installs clang and libFuzzer)" >&2
    exit 2
  fi
done

# Configure once: -O1 as libFuzzer advises, assertions on (no NDEBUG), and line tables only, which
# is all a report's stack needs and compiles about a tenth faster than full debug information.
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
  # Ninja, as scripts/build.sh: the harnesses' libraries compile side by side rather than one
  # library after another.
  generator=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  CC=clang CXX=clang++ cmake "${generator[@]}" -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Fuzz \
    -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" -DLEADFLOW_FUZZ=ON -DLEADFLOW_BUILD_TESTS=OFF \
    "${launcher[@]}" >/dev/null
fi
build_targets=()
for t in "${run[@]}"; do build_targets+=("${t}_fuzz"); done
cmake --build "$build" -j "${LEADFLOW_JOBS:-2}" --target "${build_targets[@]}"

# Runs one harness for $seconds; its output goes to $build/fuzz/logs/NAME.log.
run_one() {
  local name=$1
  local seeds=$root/tests/fuzz/corpus/$name
  local found=$build/fuzz/corpus/$name
  local crashes=$build/fuzz/crashes/$name
  local log=$build/fuzz/logs/$name.log
  mkdir -p "$found" "$crashes" "$(dirname "$log")"
  local flags=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/")
  # libFuzzer reads -max_total_time=0 as "no limit"; -runs=0 replays the corpus and stops.
  if ((seconds == 0)); then flags+=(-runs=0); else flags+=(-max_total_time="$seconds"); fi
  if [[ -f "$root/tests/fuzz/$name.dict" ]]; then flags+=(-dict="$root/tests/fuzz/$name.dict"); fi
  # shellcheck disable=SC2206
  flags+=(${LEADFLOW_FUZZ_FLAGS:-})
  if "$build/fuzz/${name}_fuzz" "${flags[@]}" "$found" "$seeds" >"$log" 2>&1; then
    echo "fuzz: $name: ok, $(grep -Eo 'stat::number_of_executed_units: [0-9]+' "$log" |
      grep -Eo '[0-9]+$' || echo '?') runs in ${seconds}s, corpus $(find "$found" -type f |
      wc -l) + $(find "$seeds" -type f | wc -l) seeds"
  else
    echo "fuzz: $name FAILED (input in $crashes/, log $log):" >&2
    grep -v -E '^(#[0-9]+|INFO:|MERGE|Dictionary:|"|###|	NEW_FUNC)' "$log" | tail -n 60 >&2
    # A few lines that name the failure, for the end of scripts/test.sh's output (a CI log may
    # keep only its tail): what broke, where, and the input as libFuzzer wrote it.
    {
      echo "fuzz: $name FAILED"
      grep -E 'property failed|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error|SUMMARY|^ *#[0-9]+ 0x' "$log" |
        head -n 12
      grep -E '^(artifact_prefix|Test unit written to|Base64: )' "$log" | head -n 3
    } >>"$build/fuzz/failures.txt"
    return 1
  fi
}

# Two at a time: the machine this is made for has two cores.
mkdir -p "$build/fuzz"
rm -f "$build/fuzz/failures.txt"
failed=0
running=0
for name in "${run[@]}"; do
  if ((running == 2)); then
    wait -n || failed=1
    running=$((running - 1))
  fi
  run_one "$name" &
  running=$((running + 1))
done
while ((running > 0)); do
  wait -n || failed=1
  running=$((running - 1))
done
exit "$failed"
