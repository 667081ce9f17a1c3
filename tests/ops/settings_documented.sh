#!/usr/bin/env bash
# Every LEADFLOW_* name the sources read is documented in docs/configuration.md, and every name
# documented there is read. The page has three sections, each compared with its own reads:
#
#   "Service settings"  the names load_config accepts (the `names = {...}` list in
#                       common/base/src/config.cpp), plus any getenv("LEADFLOW_...") in the C++ of
#                       common/, ingest/ and workers/. A name in the list must also be read
#                       somewhere (a second "LEADFLOW_X" literal in that C++), or it is accepted
#                       and ignored. The names k8s/ sets must be documented here too.
#   "Script settings"   the names scripts/**/*.sh expand ($LEADFLOW_X, ${LEADFLOW_X...}), less
#                       the service settings (run.sh reads LEADFLOW_DATA_DIR as the service does).
#   "Build options"     the CMake cache variables of CMakeLists.txt and the *.cmake and
#                       CMakeLists.txt files of common/, ingest/, workers/ and scripts/:
#                       option(LEADFLOW_X, set(LEADFLOW_X ... CACHE, find_program(LEADFLOW_X, and
#                       if(NOT LEADFLOW_X) (a value the command line may give, as LEADFLOW_COMMIT).
#
# Not counted: tests/ (their own variables are not settings of the product) and names a script
# only sets for a process it starts (VAR=value cmd), which are the service's settings.
# A documented name is one in the first cell of a table row under the section's "## " heading.
#
# Usage: tests/ops/settings_documented.sh [SOURCE_DIR]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
doc="$root/docs/configuration.md"
config_cpp="$root/common/base/src/config.cpp"
[[ -f "$doc" ]] || { echo "settings_documented: $doc is missing" >&2; exit 1; }
[[ -f "$config_cpp" ]] || { echo "settings_documented: $config_cpp is missing" >&2; exit 1; }

work=$(mktemp -d /tmp/leadflow-settings-XXXXXX)
trap 'rm -rf "$work"' EXIT
names() { grep -oE 'LEADFLOW_[A-Z0-9_]+' | sort -u; }

# ---- what the sources read ------------------------------------------------------------------
cpp_files() {
  find "$root/common" "$root/ingest" "$root/workers" -name node_modules -prune -o \
    -type f \( -name '*.cpp' -o -name '*.hpp' \) -print
}
# The list load_config accepts: from "names = {" to the first "};" after it.
awk '/names = \{/ {on = 1} on {print} on && /\};/ {exit}' "$config_cpp" | names > "$work/accepted"
if (($(wc -l < "$work/accepted") < 20)); then
  echo "settings_documented: could not read the settings list of $config_cpp" >&2
  exit 1
fi
# A name is read when its literal appears beyond the list, anywhere in the product's C++.
cpp_files | xargs grep -ohE '"LEADFLOW_[A-Z0-9_]+"' | sort | uniq -c |
  awk '$1 >= 2 {gsub(/"/, "", $2); print $2}' | sort -u > "$work/read_twice"
comm -23 "$work/accepted" "$work/read_twice" > "$work/accepted_unread"
cpp_files | xargs grep -ohE 'getenv\("LEADFLOW_[A-Z0-9_]+"\)' | names > "$work/getenv" || true
sort -u "$work/accepted" "$work/getenv" > "$work/service_code"

grep -rhoE '\$\{?LEADFLOW_[A-Z0-9_]+' --include='*.sh' "$root/scripts" | names |
  comm -23 - "$work/service_code" > "$work/script_code" || true

{
  find "$root/CMakeLists.txt" "$root/common" "$root/ingest" "$root/workers" "$root/scripts" \
    -name node_modules -prune -o -type f \( -name CMakeLists.txt -o -name '*.cmake' \) -print |
    xargs cat |
    grep -oE '(option|find_program)\(\s*LEADFLOW_[A-Z0-9_]+|set\(\s*LEADFLOW_[A-Z0-9_]+\s[^)]*\bCACHE\b|if\(NOT LEADFLOW_[A-Z0-9_]+\)' |
    grep -oE '^[a-z_]+\(\s*(NOT )?LEADFLOW_[A-Z0-9_]+' | names
} > "$work/build_code" || true

grep -rhoE '^\s*(- name: |)LEADFLOW_[A-Z0-9_]+' --include='*.yaml' "$root/k8s" | names \
  > "$work/k8s_set" || true

# ---- what the page documents ----------------------------------------------------------------
section() {
  awk -v want="$1" '
    /^## / {cur = substr($0, 4)}
    cur == want && /^\| *`LEADFLOW_/ {split($0, cells, "|"); print cells[2]}' "$doc" | names
}
section "Service settings" > "$work/service_doc"
section "Script settings" > "$work/script_doc"
section "Build options" > "$work/build_doc"

# ---- compare --------------------------------------------------------------------------------
failed=0
report() {  # TITLE FILE
  if [[ -s "$2" ]]; then
    echo "$1:" >&2
    sed 's/^/  /' "$2" >&2
    failed=1
  fi
}
compare() {  # SECTION CODE_FILE DOC_FILE WHERE
  comm -23 "$2" "$3" > "$work/missing"
  comm -13 "$2" "$3" > "$work/extra"
  report "read by $4 but not documented under \"$1\" in docs/configuration.md" "$work/missing"
  report "documented under \"$1\" in docs/configuration.md but not read by $4" "$work/extra"
}
for s in service script build; do
  [[ -s "$work/${s}_doc" ]] || { echo "settings_documented: a section of $doc lists no setting" >&2; failed=1; }
done
compare "Service settings" "$work/service_code" "$work/service_doc" \
  "the service (config.cpp's list, getenv)"
compare "Script settings" "$work/script_code" "$work/script_doc" "scripts/"
compare "Build options" "$work/build_code" "$work/build_doc" "CMake"
report "accepted by config.cpp's list but never read (no other literal in the C++)" \
  "$work/accepted_unread"
comm -23 "$work/k8s_set" "$work/service_doc" > "$work/k8s_undocumented"
report "set in k8s/ but not documented under \"Service settings\"" "$work/k8s_undocumented"

if ((failed)); then exit 1; fi
echo "settings_documented: $(wc -l < "$work/service_doc") service settings," \
  "$(wc -l < "$work/script_doc") script settings, $(wc -l < "$work/build_doc") build options:" \
  "each read and documented"
