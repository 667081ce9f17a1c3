#!/usr/bin/env bash
# Fails when a product file is over 800 lines and not listed, with a reason, in
# scripts/file_sizes_allowed.txt; names every such file with its length. Also fails on a listed
# file that is gone or back under the limit (take its line out: the list only shrinks), and on
# a line without a reason. Run by scripts/test.sh before the build and by CTest (file_sizes).
#
# Product files: C++ (.cpp .hpp .h) and TypeScript (.ts .tsx) under common/ ingest/ workers/,
# tracked or new and not ignored, except tests (test/ tests/ folders, *_test.*, *.test.ts),
# third-party, generated and node_modules folders, and type declarations (.d.ts).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
limit=800
allowed_file=scripts/file_sizes_allowed.txt

dirs=(common ingest workers)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- "${dirs[@]}" | sort -u)
else
  mapfile -t files < <(find "${dirs[@]}" -type f | sort)
fi

declare -A reason_of=()
bad_lines=()
if [[ -f "$allowed_file" ]]; then
  n=0
  while IFS= read -r line || [[ -n "$line" ]]; do
    n=$((n + 1))
    [[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
    # "path<spaces>reason": the reason is the rest of the line.
    path=${line%%[[:space:]]*}
    reason=${line#"$path"}
    reason=${reason#"${reason%%[![:space:]]*}"}
    if [[ -z "$reason" ]]; then
      bad_lines+=("$allowed_file:$n: $path has no reason")
      continue
    fi
    reason_of[$path]=$reason
  done <"$allowed_file"
fi

product=()
for f in "${files[@]}"; do
  case "$f" in
    *.cpp | *.hpp | *.h | *.ts | *.tsx) ;;
    *) continue ;;
  esac
  case "/$f" in
    */test/* | */tests/* | */third_party/* | */node_modules/* | */generated/* | *_test.* | \
      *.test.ts | *.d.ts) continue ;;
  esac
  [[ -f "$f" ]] && product+=("$f")
done

# One wc for all of them: "<lines> <path>" per file, and "<sum> total" lines (no product file
# is named "total": it has no extension).
declare -A lines_of=()
if ((${#product[@]})); then
  while read -r n path; do
    [[ "$path" == total ]] || lines_of[$path]=$n
  done < <(printf '%s\0' "${product[@]}" | xargs -0 wc -l)
fi

over=()
listed=0
for f in "${product[@]}"; do
  lines=${lines_of[$f]}
  if ((lines > limit)); then
    if [[ -n "${reason_of[$f]+x}" ]]; then
      listed=$((listed + 1))
    else
      over+=("$f ($lines lines)")
    fi
  fi
done

# Listed files that no longer need to be.
for f in "${!reason_of[@]}"; do
  if [[ ! -f "$f" ]]; then
    bad_lines+=("$allowed_file: $f is listed but does not exist")
  elif (($(wc -l <"$f") <= limit)); then
    bad_lines+=("$allowed_file: $f is listed but has $(wc -l <"$f") lines, within $limit")
  fi
done

if ((${#over[@]})); then
  echo "check_file_sizes: ${#over[@]} product file(s) over $limit lines; split them along their" \
    "responsibilities, or list them with a one-line reason in $allowed_file:" >&2
  for f in "${over[@]}"; do echo "  $f" >&2; done
fi
if ((${#bad_lines[@]})); then
  echo "check_file_sizes: $allowed_file needs updating:" >&2
  for l in "${bad_lines[@]}"; do echo "  $l" >&2; done
fi
if ((${#over[@]} || ${#bad_lines[@]})); then exit 1; fi
echo "check_file_sizes: ${#product[@]} product files, none over $limit lines but the $listed listed"
