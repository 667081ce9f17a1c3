#!/usr/bin/env bash
# Fails when a C++ file differs from what clang-format (.clang-format) makes of it, naming the
# files and showing the first lines of the difference. Run by scripts/test.sh before the build.
#   scripts/check_format.sh          every tracked .cpp/.hpp/.inc, and changed ones not yet committed
#   scripts/check_format.sh --fix    rewrites them in place instead
# The whole tree is held to the layout, so every changed file is too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! command -v clang-format >/dev/null; then
  echo "check_format: clang-format is missing (scripts/deps.sh --test installs it)" >&2
  exit 2
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.inc' | sort -u)
else
  mapfile -t files < <(find common ingest workers tests -name '*.cpp' -o -name '*.hpp' -o -name '*.inc' | sort)
fi
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
# Files in batches, two clang-format processes at once: one process per file took 75 s of the
# test command's start (a clang-format start each time), batches take about 3 s. --dry-run names
# each file that differs; a clang-format that fails (an unreadable .clang-format) fails the check.
existing=()
for f in "${files[@]}"; do [[ -f "$f" ]] && existing+=("$f"); done
if ! report=$(printf '%s\0' "${existing[@]}" |
  xargs -0 -n 40 -P 2 clang-format --style=file --dry-run 2>&1); then
  echo "check_format: clang-format failed:" >&2
  echo "$report" | grep -v 'code should be clang-formatted' | head -n 20 >&2
  exit 2
fi
mapfile -t bad < <(echo "$report" |
  sed -n 's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
if ((${#bad[@]})); then
  echo "check_format: ${#bad[@]} file(s) not formatted (scripts/check_format.sh --fix formats them):" >&2
  for f in "${bad[@]}"; do
    echo "  $f" >&2
    clang-format --style=file "$f" | diff -u "$f" - | sed -n '3,12p' >&2 || true
  done
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
