#!/usr/bin/env bash
# leadflow-admin against a real SQLite file: sellers with a payout rule, buyer accounts' keys,
# and the refusal of an empty flag value (which would have made an operator key).
set -euo pipefail
admin="${LEADFLOW_BUILD_DIR:?}/ingest/leadflow-admin"
unset LEADFLOW_BUILD_DIR  # leadflow refuses LEADFLOW_ settings it does not know
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LEADFLOW_STORE="sqlite:$work/leadflow.db" LEADFLOW_ALLOW_PRIVATE_BUYERS=1 LEADFLOW_LOG_LEVEL=warn
fail() { echo "admin_test: $*" >&2; exit 1; }

seller=$("$admin" create-seller --name Zed --payout-model fixed --payout-value 3.25)
grep -q '"model": "fixed"' <<< "$seller" || fail "seller payout model: $seller"
grep -q '"value": 3.25' <<< "$seller" || fail "seller payout value: $seller"
plain=$("$admin" create-seller --name Plain)
grep -q '"model": "revshare"' <<< "$plain" || fail "default payout: $plain"
grep -q '"value": 70' <<< "$plain" || fail "default payout value: $plain"

echo '[{"name":"B","verticals":["solar"],"delivery":{"mode":"ping_post","ping_url":"http://127.0.0.1:9/p","post_url":"http://127.0.0.1:9/q"}}]' > "$work/buyers.json"
"$admin" import-buyers --file "$work/buyers.json" > /dev/null
buyer=$("$admin" list-buyers | grep -o 'by_[0-9A-Z]*' | head -1)
[[ -n "$buyer" ]] || fail "no buyer imported"
key=$("$admin" create-api-key --buyer-id "$buyer" --name returns)
grep -q '"account": "buyer"' <<< "$key" || fail "buyer key: $key"
grep -q '"returns:write"' <<< "$key" || fail "buyer key scopes: $key"
if "$admin" create-api-key --buyer-id "$buyer" --scopes admin > /dev/null 2>&1; then
  fail "a buyer key was given the admin scope"
fi
if out=$("$admin" create-api-key --buyer-id "" --name oops 2>&1); then
  fail "an empty --buyer-id made a key: $out"
fi
grep -q "empty value for --buyer-id" <<< "$out" || fail "unclear refusal: $out"
echo "admin_test: ok"
