#!/usr/bin/env bash
# leadflow-admin import-suppression-list with gzip files, on a real SQLite file
# (docs/suppression.md, "With leadflow-admin"): a gzip file, told by its first two bytes whatever
# its name, fills a list with exactly the fingerprints of the same file clear, members one after
# another read as one; a gzip file cut short, one damaged and a bomb (a megabyte that inflates
# past 1 GiB) are refused with exit status 2, a message naming why and "nothing was replaced",
# and the list stays as it was.
set -euo pipefail
admin="${LEADFLOW_BUILD_DIR:?}/ingest/leadflow-admin"
unset LEADFLOW_BUILD_DIR  # leadflow refuses LEADFLOW_ settings it does not know
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$work/leadflow.db"
export LEADFLOW_STORE="sqlite:$db" LEADFLOW_LOG_LEVEL=warn
fail() { echo "admin_suppression_gzip_test: $*" >&2; exit 1; }
field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
new_list() { "$admin" create-suppression-list --name "$1" | field list_id; }
# The list as leadflow-admin shows it (entries, updated_at, uploaded_at), and a digest of the
# fingerprints of its current entries as the store holds them.
list_state() {
  "$admin" list-suppression-lists |
    python3 -c 'import json,sys; print([l for l in json.load(sys.stdin) if l["list_id"] == sys.argv[1]])' "$1"
  sqlite3 "$db" "SELECT group_concat(fingerprints, '') FROM (SELECT c.fingerprints FROM
    suppression_chunks c JOIN suppression_lists l ON l.id = c.list_id
    AND c.entries_version = l.entries_version WHERE l.id = '$1' ORDER BY c.n)" | md5sum
}
# import_refused LIST FILE WORDS: the import exits 2 naming WORDS and replacing nothing.
import_refused() {
  local before out status=0
  before=$(list_state "$1")
  out=$("$admin" import-suppression-list --list-id "$1" --file "$2" 2>&1) || status=$?
  [[ $status == 2 ]] || fail "$2: exit status $status, not 2: $out"
  grep -q "$3" <<< "$out" || fail "$2: the refusal does not say '$3': $out"
  grep -q "nothing was replaced" <<< "$out" || fail "$2: the refusal does not say nothing was replaced: $out"
  [[ $(list_state "$1") == "$before" ]] || fail "$2: the list changed though the import was refused"
}

# 300,000 e-mails (about 10 MB clear, past 1 MiB gzip: several reads of the file) after a header,
# every other one in capitals as people write them.
python3 - "$work/list.csv" <<'EOF'
import sys
with open(sys.argv[1], "w") as f:
    f.write("email,source\r\n")
    for i in range(300_000):
        name = "%08x.%d" % ((i * 2654435761) & 0xFFFFFFFF, i)  # compresses as real names do
        f.write(("Person.%s@Example.com" if i % 2 else "person.%s@example.com") % name + ",crm\r\n")
EOF
clear=$(new_list clear)
"$admin" import-suppression-list --list-id "$clear" --file "$work/list.csv" > "$work/clear.json"
[[ $(field entries < "$work/clear.json") == 300000 ]] || fail "clear import: $(cat "$work/clear.json")"
[[ $(field gzip < "$work/clear.json") == False ]] || fail "a clear file read as gzip"

# The same file gzip, under a name that does not say so: the same entries, the same fingerprints.
gzip -6 -c "$work/list.csv" > "$work/list.export"
(( $(stat -c %s "$work/list.export") > 1048576 )) || fail "the gzip file fits in one read"
gz=$(new_list gzipped)
"$admin" import-suppression-list --list-id "$gz" --file "$work/list.export" > "$work/gz.json"
[[ $(field gzip < "$work/gz.json") == True ]] || fail "a gzip file read as clear: $(cat "$work/gz.json")"
[[ $(field entries < "$work/gz.json") == 300000 ]] || fail "gzip import: $(cat "$work/gz.json")"
[[ $(field read < "$work/gz.json") == 300000 ]] || fail "gzip import read: $(cat "$work/gz.json")"
[[ $(list_state "$gz" | tail -1) == $(list_state "$clear" | tail -1) ]] ||
  fail "the gzip import kept other fingerprints than the clear one"

# Members one after another (cat a.gz b.gz) read as one file; a clear file named .gz is clear.
head -n 1000 "$work/list.csv" | gzip -c > "$work/two.gz"
printf 'last@example.com\n' | gzip -c >> "$work/two.gz"
"$admin" import-suppression-list --list-id "$gz" --file "$work/two.gz" > "$work/two.json"
[[ $(field entries < "$work/two.json") == 1000 ]] || fail "two members: $(cat "$work/two.json")"
head -n 11 "$work/list.csv" > "$work/clear.gz"
"$admin" import-suppression-list --list-id "$gz" --file "$work/clear.gz" > "$work/named.json"
[[ $(field entries < "$work/named.json") == 10 ]] || fail "clear file named .gz: $(cat "$work/named.json")"
[[ $(field gzip < "$work/named.json") == False ]] || fail "a clear file named .gz read as gzip"
"$admin" import-suppression-list --list-id "$gz" --file "$work/list.export" > /dev/null

# Cut short (inside the data, inside the trailer), damaged, and a bomb: refused, list unchanged.
size=$(stat -c %s "$work/list.export")
head -c $((size / 2)) "$work/list.export" > "$work/half.gz"
import_refused "$gz" "$work/half.gz" "the gzip file ends before its stream does"
head -c $((size - 3)) "$work/list.export" > "$work/trailer.gz"
import_refused "$gz" "$work/trailer.gz" "the gzip file ends before its stream does"
cp "$work/list.export" "$work/damaged.gz"
printf '\x55\x55\x55\x55' | dd of="$work/damaged.gz" bs=1 seek=$((size / 3)) conv=notrunc status=none
import_refused "$gz" "$work/damaged.gz" "the gzip file is damaged"
# 17 members of 64 MiB of zeros each: about 1.1 MB that inflates to 1088 MiB.
head -c 67108864 /dev/zero | gzip -c > "$work/zeros.gz"
for _ in $(seq 17); do cat "$work/zeros.gz"; done > "$work/bomb.gz"
(( $(stat -c %s "$work/bomb.gz") < 2097152 )) || fail "the bomb is not small"
started=$SECONDS
import_refused "$gz" "$work/bomb.gz" "the gzip file inflates past 1 GiB"
(( SECONDS - started < 60 )) || fail "the bomb took $((SECONDS - started)) s to refuse"
[[ $("$admin" list-suppression-lists | python3 -c 'import json,sys
print([l["entries"] for l in json.load(sys.stdin) if l["list_id"] == sys.argv[1]][0])' "$gz") == 300000 ]] ||
  fail "the list does not hold its last import's entries"
echo "admin_suppression_gzip_test: ok"
