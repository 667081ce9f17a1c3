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
bad=()
for f in "${files[@]}"; do
  [[ -f "$f" ]] || continue
  if ! clang-format --style=file "$f" | cmp -s - "$f"; then bad+=("$f"); fi
done
if ((${#bad[@]})); then
  echo "check_format: ${#bad[@]} file(s) not formatted (scripts/check_format.sh --fix formats them):" >&2
  for f in "${bad[@]}"; do
    echo "  $f" >&2
    clang-format --style=file "$f" | diff -u "$f" - | sed -n '3,12p' >&2 || true
  done
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
