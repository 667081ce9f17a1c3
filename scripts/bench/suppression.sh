#!/usr/bin/env bash
# The suppression phase (scripts/bench.sh suppression): what a suppression list costs at the sizes
# buyers and operators upload (docs/suppression.md).
#
#   1. Lookups (leadflow-suppression-bench): a list of BENCH_SUPPRESSION_ENTRIES random
#      fingerprints; the time to build its lookup, its memory, and a lead's lookup in it (a
#      million leads, one in a hundred listed, in a shuffled order), medians of 5 rounds.
#   2. Imports: a file of BENCH_SUPPRESSION_ENTRIES e-mail addresses imported into a list with
#      `leadflow-admin import-suppression-list` (read, normalised, fingerprinted, sorted and
#      written in one transaction), per store of BENCH_SUPPRESSION_STORES ("sqlite postgresql");
#      wall time and peak memory (/usr/bin/time), twice: a new list, then the same list replaced.
#
# Environment: BENCH_SUPPRESSION_ENTRIES (10000000), BENCH_SUPPRESSION_STORES,
# BENCH_BUILD (a release build dir with leadflow-admin and leadflow-suppression-bench; default:
# build one). PostgreSQL is a throwaway server (scripts/pg_server.sh) removed at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
entries=${BENCH_SUPPRESSION_ENTRIES:-10000000}
stores=${BENCH_SUPPRESSION_STORES:-"sqlite postgresql"}
build=${BENCH_BUILD:-}
if [[ -z "$build" ]]; then
  build="$root/build-release"
  LEADFLOW_BUILD_DIR="$build" LEADFLOW_BUILD_TYPE=Release LEADFLOW_BUILD_TESTS=OFF \
    "$root/scripts/build.sh" --target leadflow-admin leadflow-suppression-bench >/dev/null
fi
admin="$build/ingest/leadflow-admin"
work=$(mktemp -d /tmp/leadflow-suppression-XXXXXX)
chmod 711 "$work"  # as root, PostgreSQL runs as the postgres user and must pass through
cleanup() {
  if [[ -f "$work/pg/url" ]]; then "$root/scripts/pg_server.sh" stop "$work/pg" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== suppression: lookups in a list of $entries entries"
"$build/tests/leadflow-suppression-bench" --entries "$entries" --lookups 1000000 --rounds 5

echo "== suppression: importing $entries e-mail addresses"
awk -v n="$entries" 'BEGIN { print "email"; for (i = 0; i < n; i++) printf "Person.%d@Example.com\n", i }' \
  > "$work/list.csv"
echo "suppression: the file is $(du -h "$work/list.csv" | cut -f1)"
for store in $stores; do
  case "$store" in
    sqlite) url="sqlite:$work/leadflow.db" ;;
    postgresql) url=$("$root/scripts/pg_server.sh" start "$work/pg") ;;
    *) echo "unknown store $store" >&2; exit 2 ;;
  esac
  list=$(LEADFLOW_STORE="$url" "$admin" create-suppression-list --name bench |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["list_id"])')
  for what in new replaced; do
    /usr/bin/time -f '%e %M' -o "$work/time" env LEADFLOW_STORE="$url" LEADFLOW_LOG_LEVEL=warn \
      "$admin" import-suppression-list --list-id "$list" --file "$work/list.csv" > "$work/out.json"
    read -r wall rss < "$work/time"
    kept=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"])' "$work/out.json")
    echo "suppression: $store, $what list: $kept entries in ${wall} s, peak ${rss} KB"
  done
done
