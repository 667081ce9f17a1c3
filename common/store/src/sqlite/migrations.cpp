// The SQLite schema's migrations, oldest first: the DDL each version adds. Applied by
// apply_migrations (sqlite/schema.cpp).
#include <iterator>
#include <vector>

#include "sqlite/schema.hpp"

namespace leadflow::sqlite {
namespace {

using store_schema::Migration;

// ------------------------------------------------------------------------------------------------
// Schema. Versions run 1, 2, 3... and are the same as the PostgreSQL adapter's (a unit test holds
// the two lists to it). Append only: a released migration is never edited, because databases in
// the field have already applied it.
// ------------------------------------------------------------------------------------------------

constexpr Migration kMigrations[] = {
    // the initial schema.
    {1, R"sql(
CREATE TABLE sellers (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  active      INTEGER NOT NULL,
  created_at  INTEGER NOT NULL
);

CREATE TABLE campaigns (
  id                    TEXT PRIMARY KEY,
  seller_id             TEXT NOT NULL REFERENCES sellers (id),
  name                  TEXT NOT NULL,
  vertical              TEXT NOT NULL,
  active                INTEGER NOT NULL,
  async_mode            INTEGER NOT NULL,
  sync_timeout_ms       INTEGER NOT NULL,
  rate_limit_per_minute INTEGER NOT NULL,
  payout_fixed          INTEGER NOT NULL,
  payout_value          INTEGER NOT NULL,
  key_hash              TEXT NOT NULL UNIQUE,
  key_hint              TEXT NOT NULL,
  created_at            INTEGER NOT NULL
);
CREATE INDEX campaigns_by_seller ON campaigns (seller_id, id);

-- seller_id NULL: a key of the operator's own account.
CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  seller_id   TEXT REFERENCES sellers (id),
  name        TEXT NOT NULL,
  plan        TEXT NOT NULL,
  scopes      INTEGER NOT NULL,
  key_hash    TEXT NOT NULL UNIQUE,
  key_hint    TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  revoked_at  INTEGER NOT NULL DEFAULT 0
);

-- doc holds the whole configuration (buyer_to_json); active and verticals are copied out of it
-- so that listing can filter without decoding every document.
CREATE TABLE buyers (
  id          TEXT PRIMARY KEY,
  active      INTEGER NOT NULL,
  verticals   TEXT NOT NULL,
  doc         TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);

-- Bumped in the same transaction as every buyer change; workers reload when it moves.
CREATE TABLE buyers_version (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  version  INTEGER NOT NULL
);
INSERT INTO buyers_version (id, version) VALUES (1, 0);

-- Leads reference no account by foreign key: a lead arrives from the queue after it was
-- acknowledged to the seller, and storing it must never fail on a reference.
CREATE TABLE leads (
  id                    TEXT PRIMARY KEY,
  seller_id             TEXT NOT NULL,
  campaign_id           TEXT NOT NULL,
  api_key_id            TEXT NOT NULL,
  surface               TEXT NOT NULL CHECK (surface IN ('api', 'campaign')),
  first_name            TEXT NOT NULL,
  last_name             TEXT NOT NULL,
  email                 TEXT NOT NULL,
  phone                 TEXT NOT NULL,
  zip_code              TEXT NOT NULL,
  zip4                  TEXT NOT NULL,
  state                 TEXT NOT NULL,
  vertical              TEXT NOT NULL,
  source                TEXT NOT NULL,
  landing_page          TEXT NOT NULL,
  ip_address            TEXT NOT NULL,
  user_agent            TEXT NOT NULL,
  trustedform_cert_url  TEXT NOT NULL,
  jornaya_leadid        TEXT NOT NULL,
  tcpa_consent          INTEGER,
  tcpa_consent_text     TEXT NOT NULL,
  custom_fields         TEXT NOT NULL,
  received_at           INTEGER NOT NULL,
  sync_wait_ms          INTEGER NOT NULL,
  status                TEXT NOT NULL DEFAULT 'pending' CHECK (status IN
                          ('pending', 'delivered', 'unsold', 'duplicate', 'rejected', 'failed',
                           'returned')),
  buyer_id              TEXT NOT NULL DEFAULT '',
  price_cents           INTEGER NOT NULL DEFAULT 0,
  payout_cents          INTEGER NOT NULL DEFAULT 0,
  buyer_lead_id         TEXT NOT NULL DEFAULT '',
  reason                TEXT NOT NULL DEFAULT '',
  decided_at            INTEGER NOT NULL DEFAULT 0,
  attempts              TEXT NOT NULL DEFAULT '[]',
  ineligible            TEXT NOT NULL DEFAULT '[]'
);
-- Listing is newest first by id (ids sort by time), under one equality filter at a time.
CREATE INDEX leads_by_seller   ON leads (seller_id, id);
CREATE INDEX leads_by_status   ON leads (status, id);
CREATE INDEX leads_by_vertical ON leads (vertical, id);
CREATE INDEX leads_by_source   ON leads (source, id);
CREATE INDEX leads_by_buyer    ON leads (buyer_id, id);
CREATE INDEX leads_by_received ON leads (received_at);
-- Intake dedupe.
CREATE INDEX leads_dup_email   ON leads (vertical, email, received_at);
CREATE INDEX leads_dup_phone   ON leads (vertical, phone, received_at);
-- Campaign stats: covering, so the stats page never reads lead rows.
CREATE INDEX leads_by_campaign ON leads (campaign_id, received_at, status, payout_cents);

-- One row per sale. Exclusive sales always use slot 0, so the primary key alone guarantees a
-- lead is sold once; shared sales (a later change) will use slots 0..N-1, still at most once
-- per buyer. email and phone are copied from the lead so that the per-buyer "already bought
-- this person" check, run for every lead and buyer, is one index probe without a join.
CREATE TABLE sales (
  lead_id       TEXT NOT NULL REFERENCES leads (id),
  slot          INTEGER NOT NULL DEFAULT 0,
  buyer_id      TEXT NOT NULL,
  price_cents   INTEGER NOT NULL,
  payout_cents  INTEGER NOT NULL,
  sold_at       INTEGER NOT NULL,
  email         TEXT NOT NULL,
  phone         TEXT NOT NULL,
  PRIMARY KEY (lead_id, slot),
  UNIQUE (lead_id, buyer_id)
);
CREATE INDEX sales_by_buyer       ON sales (buyer_id, sold_at);
CREATE INDEX sales_by_buyer_email ON sales (buyer_id, email, sold_at);
CREATE INDEX sales_by_buyer_phone ON sales (buyer_id, phone, sold_at);

CREATE TABLE post_intents (
  lead_id      TEXT PRIMARY KEY REFERENCES leads (id),
  buyer_id     TEXT NOT NULL,
  price_cents  INTEGER NOT NULL,
  ping_id      TEXT NOT NULL,
  at           INTEGER NOT NULL
);

-- Surface B posts that failed validation, counted per campaign per hour (the lead itself is never
-- stored). Hourly rather than daily buckets keep "24h" and local-midnight "today" windows exact
-- to the hour.
CREATE TABLE invalid_counts (
  campaign_id  TEXT NOT NULL,
  hour_start   INTEGER NOT NULL,
  count        INTEGER NOT NULL,
  PRIMARY KEY (campaign_id, hour_start)
);
)sql"},
    // Idempotency-Key claims and answers (POST /v1/leads), kept 24 hours.
    {2, R"sql(
CREATE TABLE idempotency_keys (
  scope         TEXT NOT NULL,
  key           TEXT NOT NULL,
  request_hash  TEXT NOT NULL,
  lead_id       TEXT NOT NULL,
  status        INTEGER NOT NULL,
  response      TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
)sql"},
    // cap reservations count a buyer's open post intents; shared rate-limit buckets
    // (scale-out: several ingest processes share one limit per key).
    {3, R"sql(
CREATE INDEX post_intents_by_buyer ON post_intents (buyer_id, at);

CREATE TABLE rate_buckets (
  key          TEXT PRIMARY KEY,
  tokens       REAL NOT NULL,
  refilled_at  INTEGER NOT NULL,
  day          INTEGER NOT NULL,
  day_count    INTEGER NOT NULL
);
)sql"},
    // Buyer accounts' keys; returns; the ledger. Operator keys that administer get the new
    // returns:write scope (64), as they held every scope there was.
    {4, R"sql(
ALTER TABLE api_keys ADD COLUMN buyer_id TEXT REFERENCES buyers (id);
UPDATE api_keys SET scopes = scopes | 64 WHERE seller_id IS NULL AND (scopes & 32) <> 0;

-- One row per returned sale. The sale's price and payout are copied: a return reverses exactly
-- what was sold, and budgets subtract it by the sale's time without a join.
CREATE TABLE returns (
  lead_id       TEXT NOT NULL,
  buyer_id      TEXT NOT NULL,
  reason        TEXT NOT NULL,
  note          TEXT NOT NULL,
  by_key_id     TEXT NOT NULL,
  price_cents   INTEGER NOT NULL,
  payout_cents  INTEGER NOT NULL,
  sold_at       INTEGER NOT NULL,
  returned_at   INTEGER NOT NULL,
  PRIMARY KEY (lead_id, buyer_id),
  FOREIGN KEY (lead_id, buyer_id) REFERENCES sales (lead_id, buyer_id)
);
CREATE INDEX returns_by_buyer ON returns (buyer_id, sold_at);

-- Every movement of money, append only. Written by triggers in the transaction of the sale or
-- return it records, so neither can exist without its entry.
CREATE TABLE ledger_entries (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  kind           TEXT NOT NULL CHECK (kind IN ('sale', 'return')),
  lead_id        TEXT NOT NULL,
  buyer_id       TEXT NOT NULL,
  seller_id      TEXT NOT NULL,
  campaign_id    TEXT NOT NULL,
  revenue_cents  INTEGER NOT NULL,
  payout_cents   INTEGER NOT NULL,
  at             INTEGER NOT NULL
);
CREATE INDEX ledger_by_lead ON ledger_entries (lead_id);

CREATE TRIGGER ledger_of_sale AFTER INSERT ON sales BEGIN
  INSERT INTO ledger_entries (kind, lead_id, buyer_id, seller_id, campaign_id, revenue_cents,
                              payout_cents, at)
  SELECT 'sale', NEW.lead_id, NEW.buyer_id, seller_id, campaign_id, NEW.price_cents,
         NEW.payout_cents, NEW.sold_at FROM leads WHERE id = NEW.lead_id;
END;
CREATE TRIGGER ledger_of_return AFTER INSERT ON returns BEGIN
  INSERT INTO ledger_entries (kind, lead_id, buyer_id, seller_id, campaign_id, revenue_cents,
                              payout_cents, at)
  SELECT 'return', NEW.lead_id, NEW.buyer_id, seller_id, campaign_id, -NEW.price_cents,
         -NEW.payout_cents, NEW.returned_at FROM leads WHERE id = NEW.lead_id;
END;
CREATE TRIGGER ledger_entries_are_immutable BEFORE UPDATE ON ledger_entries BEGIN
  SELECT RAISE(ABORT, 'ledger entries are immutable');
END;
CREATE TRIGGER ledger_entries_are_kept BEFORE DELETE ON ledger_entries BEGIN
  SELECT RAISE(ABORT, 'ledger entries are immutable');
END;
CREATE TRIGGER sales_are_immutable BEFORE UPDATE ON sales BEGIN
  SELECT RAISE(ABORT, 'sales are immutable: a return or a settlement is a new row');
END;
CREATE TRIGGER sales_are_kept BEFORE DELETE ON sales BEGIN
  SELECT RAISE(ABORT, 'sales are immutable: a return or a settlement is a new row');
END;
CREATE TRIGGER returns_are_immutable BEFORE UPDATE ON returns BEGIN
  SELECT RAISE(ABORT, 'returns are immutable');
END;
CREATE TRIGGER returns_are_kept BEFORE DELETE ON returns BEGIN
  SELECT RAISE(ABORT, 'returns are immutable');
END;

-- The sales made before the ledger existed, in the order they were made.
INSERT INTO ledger_entries (kind, lead_id, buyer_id, seller_id, campaign_id, revenue_cents,
                            payout_cents, at)
SELECT 'sale', sales.lead_id, sales.buyer_id, leads.seller_id, leads.campaign_id,
       sales.price_cents, sales.payout_cents, sales.sold_at
FROM sales JOIN leads ON leads.id = sales.lead_id ORDER BY sales.sold_at, sales.lead_id;
)sql"},
    // Operators' settlements of leads whose post outcome stayed unknown.
    {5, R"sql(
CREATE TABLE settlements (
  lead_id        TEXT PRIMARY KEY REFERENCES leads (id),
  buyer_id       TEXT NOT NULL,
  sold           INTEGER NOT NULL,
  price_cents    INTEGER NOT NULL,
  payout_cents   INTEGER NOT NULL,
  buyer_lead_id  TEXT NOT NULL,
  note           TEXT NOT NULL,
  by_key_id      TEXT NOT NULL,
  at             INTEGER NOT NULL
);
CREATE TRIGGER settlements_are_immutable BEFORE UPDATE ON settlements BEGIN
  SELECT RAISE(ABORT, 'settlements are immutable');
END;
CREATE TRIGGER settlements_are_kept BEFORE DELETE ON settlements BEGIN
  SELECT RAISE(ABORT, 'settlements are immutable');
END;
)sql"},
    // A seller's payout rule for its Surface A leads; sellers made before it get the default a
    // campaign gets, 70% revshare.
    {6, R"sql(
ALTER TABLE sellers ADD COLUMN payout_fixed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sellers ADD COLUMN payout_value INTEGER NOT NULL DEFAULT 7000;
)sql"},
    // Shared sales: a lead may be posted to several buyers at once, so post intents and
    // settlements are one per lead and buyer; an intent says whether it is for a share. A sale's
    // slot stays under the largest max_sales a vertical may have (20).
    {7, R"sql(
CREATE TABLE post_intents_v7 (
  lead_id      TEXT NOT NULL REFERENCES leads (id),
  buyer_id     TEXT NOT NULL,
  price_cents  INTEGER NOT NULL,
  ping_id      TEXT NOT NULL,
  at           INTEGER NOT NULL,
  shared       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (lead_id, buyer_id)
);
INSERT INTO post_intents_v7 (lead_id, buyer_id, price_cents, ping_id, at)
SELECT lead_id, buyer_id, price_cents, ping_id, at FROM post_intents;
DROP TABLE post_intents;
ALTER TABLE post_intents_v7 RENAME TO post_intents;
CREATE INDEX post_intents_by_buyer ON post_intents (buyer_id, at);

CREATE TABLE settlements_v7 (
  lead_id        TEXT NOT NULL REFERENCES leads (id),
  buyer_id       TEXT NOT NULL,
  sold           INTEGER NOT NULL,
  price_cents    INTEGER NOT NULL,
  payout_cents   INTEGER NOT NULL,
  buyer_lead_id  TEXT NOT NULL,
  note           TEXT NOT NULL,
  by_key_id      TEXT NOT NULL,
  at             INTEGER NOT NULL,
  PRIMARY KEY (lead_id, buyer_id)
);
INSERT INTO settlements_v7 SELECT * FROM settlements;
DROP TABLE settlements;
ALTER TABLE settlements_v7 RENAME TO settlements;
CREATE TRIGGER settlements_are_immutable BEFORE UPDATE ON settlements BEGIN
  SELECT RAISE(ABORT, 'settlements are immutable');
END;
CREATE TRIGGER settlements_are_kept BEFORE DELETE ON settlements BEGIN
  SELECT RAISE(ABORT, 'settlements are immutable');
END;

-- Each buyer of a shared sale gives its own reference. Sales made before keep theirs on the lead.
ALTER TABLE sales ADD COLUMN buyer_lead_id TEXT NOT NULL DEFAULT '';

CREATE TRIGGER sales_slot_in_range BEFORE INSERT ON sales
WHEN NEW.slot < 0 OR NEW.slot >= 20 BEGIN
  SELECT RAISE(ABORT, 'a sale slot is 0 to 19');
END;
)sql"},
    // Reports. The ledger rolled up per quarter hour of the money's movement and per seller,
    // campaign, buyer, vertical and source, kept by a trigger in the transaction of each entry
    // (so it is exact, and survives whatever the entry survives). Quarter hours, because every
    // time zone's midnight falls on one. Returns are kept apart from sales, as amounts.
    // And the outcomes rolled up per quarter hour of the lead's arrival: each lead's status
    // (buyer ""), and each buyer's pings and posts, written with the outcome (record_outcomes).
    {8, R"sql(
CREATE TABLE revenue_rollup (
  bucket            INTEGER NOT NULL,
  seller_id         TEXT NOT NULL,
  campaign_id       TEXT NOT NULL,
  buyer_id          TEXT NOT NULL,
  vertical          TEXT NOT NULL,
  source            TEXT NOT NULL,
  sales             INTEGER NOT NULL,
  revenue           INTEGER NOT NULL,
  payout            INTEGER NOT NULL,
  returns           INTEGER NOT NULL,
  returned_revenue  INTEGER NOT NULL,
  returned_payout   INTEGER NOT NULL,
  PRIMARY KEY (bucket, seller_id, campaign_id, buyer_id, vertical, source)
) WITHOUT ROWID;
CREATE TRIGGER revenue_rollup_of_entry AFTER INSERT ON ledger_entries BEGIN
  INSERT INTO revenue_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, sales,
                              revenue, payout, returns, returned_revenue, returned_payout)
  SELECT NEW.at - NEW.at % 900000, NEW.seller_id, NEW.campaign_id, NEW.buyer_id, leads.vertical,
         leads.source, NEW.kind = 'sale',
         CASE WHEN NEW.kind = 'sale' THEN NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'sale' THEN NEW.payout_cents ELSE 0 END,
         NEW.kind = 'return',
         CASE WHEN NEW.kind = 'return' THEN -NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'return' THEN -NEW.payout_cents ELSE 0 END
  FROM leads WHERE leads.id = NEW.lead_id
  ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE SET
    sales = sales + excluded.sales, revenue = revenue + excluded.revenue,
    payout = payout + excluded.payout, returns = returns + excluded.returns,
    returned_revenue = returned_revenue + excluded.returned_revenue,
    returned_payout = returned_payout + excluded.returned_payout;
END;
-- What the ledger held before.
INSERT INTO revenue_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, sales,
                            revenue, payout, returns, returned_revenue, returned_payout)
SELECT e.at - e.at % 900000, e.seller_id, e.campaign_id, e.buyer_id, l.vertical, l.source,
       SUM(e.kind = 'sale'), SUM(CASE WHEN e.kind = 'sale' THEN e.revenue_cents ELSE 0 END),
       SUM(CASE WHEN e.kind = 'sale' THEN e.payout_cents ELSE 0 END), SUM(e.kind = 'return'),
       SUM(CASE WHEN e.kind = 'return' THEN -e.revenue_cents ELSE 0 END),
       SUM(CASE WHEN e.kind = 'return' THEN -e.payout_cents ELSE 0 END)
FROM ledger_entries AS e JOIN leads AS l ON l.id = e.lead_id
GROUP BY 1, 2, 3, 4, 5, 6;

CREATE TABLE performance_rollup (
  bucket       INTEGER NOT NULL,
  seller_id    TEXT NOT NULL,
  campaign_id  TEXT NOT NULL,
  buyer_id     TEXT NOT NULL,
  vertical     TEXT NOT NULL,
  source       TEXT NOT NULL,
  leads        INTEGER NOT NULL DEFAULT 0,
  duplicates   INTEGER NOT NULL DEFAULT 0,
  invalid      INTEGER NOT NULL DEFAULT 0,
  sold         INTEGER NOT NULL DEFAULT 0,
  unsold       INTEGER NOT NULL DEFAULT 0,
  failed       INTEGER NOT NULL DEFAULT 0,
  pings        INTEGER NOT NULL DEFAULT 0,
  bids         INTEGER NOT NULL DEFAULT 0,
  posts        INTEGER NOT NULL DEFAULT 0,
  accepted     INTEGER NOT NULL DEFAULT 0,
  rejected     INTEGER NOT NULL DEFAULT 0,
  timeouts     INTEGER NOT NULL DEFAULT 0,
  errors       INTEGER NOT NULL DEFAULT 0,
  responses    INTEGER NOT NULL DEFAULT 0,
  response_ms  INTEGER NOT NULL DEFAULT 0,
  h0           INTEGER NOT NULL DEFAULT 0,
  h1           INTEGER NOT NULL DEFAULT 0,
  h2           INTEGER NOT NULL DEFAULT 0,
  h3           INTEGER NOT NULL DEFAULT 0,
  h4           INTEGER NOT NULL DEFAULT 0,
  h5           INTEGER NOT NULL DEFAULT 0,
  h6           INTEGER NOT NULL DEFAULT 0,
  h7           INTEGER NOT NULL DEFAULT 0,
  h8           INTEGER NOT NULL DEFAULT 0,
  h9           INTEGER NOT NULL DEFAULT 0,
  h10          INTEGER NOT NULL DEFAULT 0,
  h11          INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (bucket, seller_id, campaign_id, buyer_id, vertical, source)
) WITHOUT ROWID;
-- The leads decided and the invalid posts counted before (buyers' figures start from here).
INSERT INTO performance_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, leads,
                                duplicates, sold, unsold, failed)
SELECT received_at - received_at % 900000, seller_id, campaign_id, '', vertical, source, COUNT(*),
       SUM(status = 'duplicate'), SUM(status IN ('delivered', 'returned')),
       SUM(status IN ('unsold', 'rejected')), SUM(status = 'failed')
FROM leads WHERE status <> 'pending' GROUP BY 1, 2, 3, 5, 6;
INSERT INTO performance_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, invalid)
SELECT i.hour_start, c.seller_id, i.campaign_id, '', c.vertical, '', SUM(i.count)
FROM invalid_counts AS i JOIN campaigns AS c ON c.id = i.campaign_id GROUP BY 1, 2, 3, 5
ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source)
DO UPDATE SET invalid = invalid + excluded.invalid;
)sql"},
    // Dashboard users (operator, seller or buyer accounts, as API keys are) and their sessions.
    // A session is found by its token's SHA-256; a user's sessions are ended together.
    {9, R"sql(
CREATE TABLE users (
  id             TEXT PRIMARY KEY,
  email          TEXT NOT NULL UNIQUE,
  name           TEXT NOT NULL,
  seller_id      TEXT REFERENCES sellers (id),
  buyer_id       TEXT REFERENCES buyers (id),
  password_hash  TEXT NOT NULL,
  active         INTEGER NOT NULL,
  created_at     INTEGER NOT NULL,
  last_login_at  INTEGER NOT NULL DEFAULT 0,
  CHECK (seller_id IS NULL OR buyer_id IS NULL)
);

CREATE TABLE user_sessions (
  token_hash    TEXT PRIMARY KEY,
  user_id       TEXT NOT NULL REFERENCES users (id),
  csrf_token    TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  last_seen_at  INTEGER NOT NULL
);
CREATE INDEX user_sessions_by_user ON user_sessions (user_id);
)sql"},
    // Why leads go unsold: per quarter hour of the lead's arrival and the report keys, each lead
    // decided unsold under buyer "" by the furthest its auction got, and under each buyer that
    // could have had it by why that buyer did not (unsold_rows.hpp), written with the outcome.
    // The leads decided before are counted from their rows by apply_migrations, in this
    // migration's transaction.
    {10, R"sql(
CREATE TABLE unsold_rollup (
  bucket       INTEGER NOT NULL,
  seller_id    TEXT NOT NULL,
  campaign_id  TEXT NOT NULL,
  buyer_id     TEXT NOT NULL,
  vertical     TEXT NOT NULL,
  source       TEXT NOT NULL,
  reason       TEXT NOT NULL,
  leads        INTEGER NOT NULL,
  PRIMARY KEY (bucket, seller_id, campaign_id, buyer_id, vertical, source, reason)
) WITHOUT ROWID;
)sql"},
    // When each API key was last used (written at most once a minute), for the dashboard.
    {11, R"sql(
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER NOT NULL DEFAULT 0;
)sql"},
    // The rollups' tiers (rollup_tiers.hpp): the same sums per UTC hour or day, each tier
    // keeping some of the report keys, so that a report reads whole hours and days instead of
    // every quarter hour. rollup_tiers describes them for the SQL that writes them (the revenue
    // trigger, the invalid posts); apply_migrations fills it and the tiers of what the rollups
    // already hold, in this migration's transaction. The performance and unsold tiers are
    // written with the outcomes (lead_rows.cpp).
    {12, R"sql(
CREATE TABLE rollup_tiers (
  tier      INTEGER PRIMARY KEY,
  grain_ms  INTEGER NOT NULL,
  seller    INTEGER NOT NULL,
  campaign  INTEGER NOT NULL,
  buyer     INTEGER NOT NULL,
  vertical  INTEGER NOT NULL,
  source    INTEGER NOT NULL
);
CREATE TABLE revenue_tiers (
  tier              INTEGER NOT NULL,
  bucket            INTEGER NOT NULL,
  seller_id         TEXT NOT NULL,
  campaign_id       TEXT NOT NULL,
  buyer_id          TEXT NOT NULL,
  vertical          TEXT NOT NULL,
  source            TEXT NOT NULL,
  sales             INTEGER NOT NULL DEFAULT 0,
  revenue           INTEGER NOT NULL DEFAULT 0,
  payout            INTEGER NOT NULL DEFAULT 0,
  returns           INTEGER NOT NULL DEFAULT 0,
  returned_revenue  INTEGER NOT NULL DEFAULT 0,
  returned_payout   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source)
) WITHOUT ROWID;
CREATE TABLE performance_tiers (
  tier         INTEGER NOT NULL,
  bucket       INTEGER NOT NULL,
  seller_id    TEXT NOT NULL,
  campaign_id  TEXT NOT NULL,
  buyer_id     TEXT NOT NULL,
  vertical     TEXT NOT NULL,
  source       TEXT NOT NULL,
  leads        INTEGER NOT NULL DEFAULT 0,
  duplicates   INTEGER NOT NULL DEFAULT 0,
  invalid      INTEGER NOT NULL DEFAULT 0,
  sold         INTEGER NOT NULL DEFAULT 0,
  unsold       INTEGER NOT NULL DEFAULT 0,
  failed       INTEGER NOT NULL DEFAULT 0,
  pings        INTEGER NOT NULL DEFAULT 0,
  bids         INTEGER NOT NULL DEFAULT 0,
  posts        INTEGER NOT NULL DEFAULT 0,
  accepted     INTEGER NOT NULL DEFAULT 0,
  rejected     INTEGER NOT NULL DEFAULT 0,
  timeouts     INTEGER NOT NULL DEFAULT 0,
  errors       INTEGER NOT NULL DEFAULT 0,
  responses    INTEGER NOT NULL DEFAULT 0,
  response_ms  INTEGER NOT NULL DEFAULT 0,
  h0           INTEGER NOT NULL DEFAULT 0,
  h1           INTEGER NOT NULL DEFAULT 0,
  h2           INTEGER NOT NULL DEFAULT 0,
  h3           INTEGER NOT NULL DEFAULT 0,
  h4           INTEGER NOT NULL DEFAULT 0,
  h5           INTEGER NOT NULL DEFAULT 0,
  h6           INTEGER NOT NULL DEFAULT 0,
  h7           INTEGER NOT NULL DEFAULT 0,
  h8           INTEGER NOT NULL DEFAULT 0,
  h9           INTEGER NOT NULL DEFAULT 0,
  h10          INTEGER NOT NULL DEFAULT 0,
  h11          INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source)
) WITHOUT ROWID;
CREATE TABLE unsold_tiers (
  tier         INTEGER NOT NULL,
  bucket       INTEGER NOT NULL,
  seller_id    TEXT NOT NULL,
  campaign_id  TEXT NOT NULL,
  buyer_id     TEXT NOT NULL,
  vertical     TEXT NOT NULL,
  source       TEXT NOT NULL,
  reason       TEXT NOT NULL,
  leads        INTEGER NOT NULL,
  PRIMARY KEY (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source, reason)
) WITHOUT ROWID;
DROP TRIGGER revenue_rollup_of_entry;
CREATE TRIGGER revenue_rollup_of_entry AFTER INSERT ON ledger_entries BEGIN
  INSERT INTO revenue_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, sales,
                              revenue, payout, returns, returned_revenue, returned_payout)
  SELECT NEW.at - NEW.at % 900000, NEW.seller_id, NEW.campaign_id, NEW.buyer_id, leads.vertical,
         leads.source, NEW.kind = 'sale',
         CASE WHEN NEW.kind = 'sale' THEN NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'sale' THEN NEW.payout_cents ELSE 0 END,
         NEW.kind = 'return',
         CASE WHEN NEW.kind = 'return' THEN -NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'return' THEN -NEW.payout_cents ELSE 0 END
  FROM leads WHERE leads.id = NEW.lead_id
  ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE SET
    sales = sales + excluded.sales, revenue = revenue + excluded.revenue,
    payout = payout + excluded.payout, returns = returns + excluded.returns,
    returned_revenue = returned_revenue + excluded.returned_revenue,
    returned_payout = returned_payout + excluded.returned_payout;
  INSERT INTO revenue_tiers (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source,
                             sales, revenue, payout, returns, returned_revenue, returned_payout)
  SELECT t.tier, NEW.at - NEW.at % t.grain_ms,
         CASE WHEN t.seller = 1 THEN NEW.seller_id ELSE '' END,
         CASE WHEN t.campaign = 1 THEN NEW.campaign_id ELSE '' END,
         CASE WHEN t.buyer = 1 THEN NEW.buyer_id ELSE '' END,
         CASE WHEN t.vertical = 1 THEN leads.vertical ELSE '' END,
         CASE WHEN t.source = 1 THEN leads.source ELSE '' END,
         NEW.kind = 'sale',
         CASE WHEN NEW.kind = 'sale' THEN NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'sale' THEN NEW.payout_cents ELSE 0 END,
         NEW.kind = 'return',
         CASE WHEN NEW.kind = 'return' THEN -NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'return' THEN -NEW.payout_cents ELSE 0 END
  FROM leads, rollup_tiers AS t WHERE leads.id = NEW.lead_id
  ON CONFLICT (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE SET
    sales = sales + excluded.sales, revenue = revenue + excluded.revenue,
    payout = payout + excluded.payout, returns = returns + excluded.returns,
    returned_revenue = returned_revenue + excluded.returned_revenue,
    returned_payout = returned_payout + excluded.returned_payout;
END;
)sql"},
    // Secrets every process of the installation shares, made once by the first process that
    // asks (Store::shared_secret): the key of buyers' opaque source codes.
    {13, R"sql(
CREATE TABLE shared_secrets (
  name   TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);
)sql"},
    // Attempt windows of the sign-in limits, shared by every process using the store
    // (Store::update_attempt_windows): a key's attempt times, and the newest of them, by which
    // quiet windows are forgotten.
    {14, R"sql(
CREATE TABLE attempt_windows (
  key        TEXT PRIMARY KEY,
  times      TEXT NOT NULL,
  newest_at  INTEGER NOT NULL
);
CREATE INDEX attempt_windows_by_newest ON attempt_windows (newest_at);
)sql"},
    // Versions of the records people edit (docs/versions.md): a write conditional on the version
    // it read never overwrites a change it did not see. Existing rows start at 1.
    {15, R"sql(
ALTER TABLE users ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE buyers ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE campaigns ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE sellers ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE api_keys ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
)sql"},
    // Dashboard users' second factor (docs/two-factor.md): one row per user that enrolled, its
    // secret sealed, the last time step accepted (no code twice) and the pending sign-in's
    // challenge; the recovery codes' hashes, each used once.
    {16, R"sql(
CREATE TABLE user_totp (
  user_id               TEXT PRIMARY KEY REFERENCES users (id),
  sealed_secret         TEXT NOT NULL,
  enabled               INTEGER NOT NULL DEFAULT 0,
  last_step             INTEGER NOT NULL DEFAULT 0,
  created_at            INTEGER NOT NULL,
  challenge_hash        TEXT NOT NULL DEFAULT '',
  challenge_expires_at  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX user_totp_by_challenge ON user_totp (challenge_hash) WHERE challenge_hash <> '';
CREATE TABLE user_recovery_codes (
  user_id    TEXT NOT NULL REFERENCES users (id),
  code_hash  TEXT NOT NULL,
  used_at    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, code_hash)
);
)sql"},
    // The ledger entries of sales and returns are written by the adapters, as the money
    // component's rules book them (docs/money.md), in the transaction of the sale or return they
    // record; the triggers that wrote them go. The entries already written are kept as they are.
    {17, R"sql(
DROP TRIGGER IF EXISTS ledger_of_sale;
DROP TRIGGER IF EXISTS ledger_of_return;
)sql"},  // Search by e-mail or phone (docs/api.md, GET /v1/leads?q=): the keyed hashes of a lead's
    // normalised e-mail and phone (leadflow/domain/lead_search.hpp), never a second plain copy.
    // The leads already held are given theirs after this step (backfill_search_keys), and only
    // then indexed (19), so the fill does not update two indexes row by row.
    {18, R"sql(
ALTER TABLE leads ADD COLUMN email_key TEXT;
ALTER TABLE leads ADD COLUMN phone_key TEXT;
)sql"},
    {19, R"sql(
CREATE INDEX leads_by_email_key ON leads (email_key);
CREATE INDEX leads_by_phone_key ON leads (phone_key);
)sql"},
};

}  // namespace

std::span<const Migration> migrations() {
  // The first steps here, the later ones in migrations_later.cpp: one list, oldest first.
  static const std::vector<Migration> all = [] {
    std::vector<Migration> v(std::begin(kMigrations), std::end(kMigrations));
    const auto later = later_migrations();
    v.insert(v.end(), later.begin(), later.end());
    return v;
  }();
  return all;
}

}  // namespace leadflow::sqlite
