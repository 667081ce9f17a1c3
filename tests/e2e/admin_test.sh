#!/usr/bin/env bash
# leadflow-admin against a real SQLite file: sellers with a payout rule, buyer accounts' keys,
# the refusal of an empty flag value (which would have made an operator key), and dashboard
# users with their passwords from stdin or a file.
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

# Dashboard users: the password comes from stdin or a file, never a flag, and is never shown.
op=$(printf 'operator password 1\n' | "$admin" create-user --email Ops@Example.com --name Ops \
  --account operator --password-stdin)
grep -q '"email": "ops@example.com"' <<< "$op" || fail "operator user: $op"
grep -q '"account": "operator"' <<< "$op" || fail "operator user account: $op"
printf 'buyer password 123\n' > "$work/password"
bu=$("$admin" create-user --email b@example.com --name B --account buyer --buyer-id "$buyer" \
  --password-file "$work/password")
grep -q "\"buyer_id\": \"$buyer\"" <<< "$bu" || fail "buyer user: $bu"
if out=$(printf 'short\n' | "$admin" create-user --email s@example.com --name S \
  --account operator --password-stdin 2>&1); then
  fail "a short password made a user: $out"
fi
grep -q '"field": "password"' <<< "$out" || fail "unclear password refusal: $out"
if out=$("$admin" create-user --email t@example.com --name T --account seller \
  --seller-id sl_nobody --password-file "$work/password" 2>&1); then
  fail "a user of no seller was made: $out"
fi
if out=$(printf 'operator password 1\n' | "$admin" create-user --email OPS@example.com --name Again \
  --account operator --password-stdin 2>&1); then
  fail "a second user with the same e-mail was made: $out"
fi
users=$("$admin" list-users)
[[ $(grep -c '"id": "us_' <<< "$users") == 2 ]] || fail "list-users: $users"
if grep -qi 'argon2\|password' <<< "$users$op$bu"; then fail "a password or its hash was shown"; fi
echo "admin_test: ok"
