// The PostgreSQL schema's migrations, oldest first: the DDL each version adds. Applied by
// apply_migrations (pg/schema.cpp).
#include <iterator>
#include <vector>

#include "pg/schema.hpp"

namespace leadflow::pg {
namespace {

using store_schema::Migration;

// ------------------------------------------------------------------------------------------------
// Schema. Versions run 1, 2, 3... and are the same as the SQLite adapter's (a unit test holds the
// two lists to it). Append only: a released migration is never edited, because databases in the
// field have applied it.
//
// Every TEXT column holding an id is COLLATE "C": listings order by id and page with id < / >
// cursors, and ids sort by time only in byte order (the database's own collation may be a
// natural-language one). Times are BIGINT milliseconds, money BIGINT cents, flags BOOLEAN, JSON
// documents TEXT (decoded by the adapter, as in SQLite).
// ------------------------------------------------------------------------------------------------

constexpr Migration kMigrations[] = {
    // the initial schema.
    {1, R"sql(
CREATE TABLE sellers (
  id          TEXT COLLATE "C" PRIMARY KEY,
  name        TEXT NOT NULL,
  active      BOOLEAN NOT NULL,
  created_at  BIGINT NOT NULL
);

CREATE TABLE campaigns (
  id                    TEXT COLLATE "C" PRIMARY KEY,
  seller_id             TEXT COLLATE "C" NOT NULL REFERENCES sellers (id),
  name                  TEXT NOT NULL,
  vertical              TEXT NOT NULL,
  active                BOOLEAN NOT NULL,
  async_mode            BOOLEAN NOT NULL,
  sync_timeout_ms       INTEGER NOT NULL,
  rate_limit_per_minute INTEGER NOT NULL,
  payout_fixed          BOOLEAN NOT NULL,
  payout_value          BIGINT NOT NULL,
  key_hash              TEXT NOT NULL UNIQUE,
  key_hint              TEXT NOT NULL,
  created_at            BIGINT NOT NULL
);
CREATE INDEX campaigns_by_seller ON campaigns (seller_id, id);

-- seller_id NULL: a key of the operator's own account.
CREATE TABLE api_keys (
  id          TEXT COLLATE "C" PRIMARY KEY,
  seller_id   TEXT COLLATE "C" REFERENCES sellers (id),
  name        TEXT NOT NULL,
  plan        TEXT NOT NULL,
  scopes      BIGINT NOT NULL,
  key_hash    TEXT NOT NULL UNIQUE,
  key_hint    TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  revoked_at  BIGINT NOT NULL DEFAULT 0
);

-- doc holds the whole configuration (buyer_to_json); active and verticals (a JSON array) are
-- copied out of it so that listing can filter without decoding every document.
CREATE TABLE buyers (
  id          TEXT COLLATE "C" PRIMARY KEY,
  active      BOOLEAN NOT NULL,
  verticals   TEXT NOT NULL,
  doc         TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);

-- Bumped in the same transaction as every buyer change; workers reload when it moves.
CREATE TABLE buyers_version (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  version  BIGINT NOT NULL
);
INSERT INTO buyers_version (id, version) VALUES (1, 0);

-- Leads reference no account by foreign key: a lead arrives from the queue after it was
-- acknowledged to the seller, and storing it must never fail on a reference.
CREATE TABLE leads (
  id                    TEXT COLLATE "C" PRIMARY KEY,
  seller_id             TEXT COLLATE "C" NOT NULL,
  campaign_id           TEXT COLLATE "C" NOT NULL,
  api_key_id            TEXT COLLATE "C" NOT NULL,
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
  tcpa_consent          BOOLEAN,
  tcpa_consent_text     TEXT NOT NULL,
  custom_fields         TEXT NOT NULL,
  received_at           BIGINT NOT NULL,
  sync_wait_ms          INTEGER NOT NULL,
  status                TEXT NOT NULL DEFAULT 'pending' CHECK (status IN
                          ('pending', 'delivered', 'unsold', 'duplicate', 'rejected', 'failed',
                           'returned')),
  buyer_id              TEXT COLLATE "C" NOT NULL DEFAULT '',
  price_cents           BIGINT NOT NULL DEFAULT 0,
  payout_cents          BIGINT NOT NULL DEFAULT 0,
  buyer_lead_id         TEXT NOT NULL DEFAULT '',
  reason                TEXT NOT NULL DEFAULT '',
  decided_at            BIGINT NOT NULL DEFAULT 0,
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
-- this person" check is one index probe without a join.
CREATE TABLE sales (
  lead_id       TEXT COLLATE "C" NOT NULL REFERENCES leads (id),
  slot          INTEGER NOT NULL DEFAULT 0,
  buyer_id      TEXT COLLATE "C" NOT NULL,
  price_cents   BIGINT NOT NULL,
  payout_cents  BIGINT NOT NULL,
  sold_at       BIGINT NOT NULL,
  email         TEXT NOT NULL,
  phone         TEXT NOT NULL,
  PRIMARY KEY (lead_id, slot),
  UNIQUE (lead_id, buyer_id)
);
CREATE INDEX sales_by_buyer       ON sales (buyer_id, sold_at);
CREATE INDEX sales_by_buyer_email ON sales (buyer_id, email, sold_at);
CREATE INDEX sales_by_buyer_phone ON sales (buyer_id, phone, sold_at);

CREATE TABLE post_intents (
  lead_id      TEXT COLLATE "C" PRIMARY KEY REFERENCES leads (id),
  buyer_id     TEXT COLLATE "C" NOT NULL,
  price_cents  BIGINT NOT NULL,
  ping_id      TEXT NOT NULL,
  at           BIGINT NOT NULL
);

-- Surface B posts that failed validation, counted per campaign per hour (the lead itself is never
-- stored).
CREATE TABLE invalid_counts (
  campaign_id  TEXT COLLATE "C" NOT NULL,
  hour_start   BIGINT NOT NULL,
  count        BIGINT NOT NULL,
  PRIMARY KEY (campaign_id, hour_start)
);
)sql"},
    // Idempotency-Key claims and answers (POST /v1/leads), kept 24 hours.
    {2, R"sql(
CREATE TABLE idempotency_keys (
  scope         TEXT COLLATE "C" NOT NULL,
  key           TEXT COLLATE "C" NOT NULL,
  request_hash  TEXT NOT NULL,
  lead_id       TEXT COLLATE "C" NOT NULL,
  status        INTEGER NOT NULL,
  response      TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
)sql"},
    // cap reservations count a buyer's open post intents; shared rate-limit buckets.
    {3, R"sql(
CREATE INDEX post_intents_by_buyer ON post_intents (buyer_id, at);

CREATE TABLE rate_buckets (
  key          TEXT COLLATE "C" PRIMARY KEY,
  tokens       DOUBLE PRECISION NOT NULL,
  refilled_at  BIGINT NOT NULL,
  day          BIGINT NOT NULL,
  day_count    BIGINT NOT NULL
);
)sql"},
    // Buyer accounts' keys; returns; the ledger. Operator keys that administer get the new
    // returns:write scope (64), as they held every scope there was.
    {4, R"sql(
ALTER TABLE api_keys ADD COLUMN buyer_id TEXT COLLATE "C" REFERENCES buyers (id);
UPDATE api_keys SET scopes = scopes | 64 WHERE seller_id IS NULL AND (scopes & 32) <> 0;

-- One row per returned sale. The sale's price and payout are copied: a return reverses exactly
-- what was sold, and budgets subtract it by the sale's time without a join.
CREATE TABLE returns (
  lead_id       TEXT COLLATE "C" NOT NULL,
  buyer_id      TEXT COLLATE "C" NOT NULL,
  reason        TEXT NOT NULL,
  note          TEXT NOT NULL,
  by_key_id     TEXT COLLATE "C" NOT NULL,
  price_cents   BIGINT NOT NULL,
  payout_cents  BIGINT NOT NULL,
  sold_at       BIGINT NOT NULL,
  returned_at   BIGINT NOT NULL,
  PRIMARY KEY (lead_id, buyer_id),
  FOREIGN KEY (lead_id, buyer_id) REFERENCES sales (lead_id, buyer_id)
);
CREATE INDEX returns_by_buyer ON returns (buyer_id, sold_at);

-- Every movement of money, append only. Written by triggers in the transaction of the sale or
-- return it records, so neither can exist without its entry.
CREATE TABLE ledger_entries (
  id             BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind           TEXT NOT NULL CHECK (kind IN ('sale', 'return')),
  lead_id        TEXT COLLATE "C" NOT NULL,
  buyer_id       TEXT COLLATE "C" NOT NULL,
  seller_id      TEXT COLLATE "C" NOT NULL,
  campaign_id    TEXT COLLATE "C" NOT NULL,
  revenue_cents  BIGINT NOT NULL,
  payout_cents   BIGINT NOT NULL,
  at             BIGINT NOT NULL
);
CREATE INDEX ledger_by_lead ON ledger_entries (lead_id);

CREATE FUNCTION ledger_of_sale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_entries (kind, lead_id, buyer_id, seller_id, campaign_id, revenue_cents,
                              payout_cents, at)
  SELECT 'sale', NEW.lead_id, NEW.buyer_id, leads.seller_id, leads.campaign_id, NEW.price_cents,
         NEW.payout_cents, NEW.sold_at FROM leads WHERE leads.id = NEW.lead_id;
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_of_sale AFTER INSERT ON sales
  FOR EACH ROW EXECUTE FUNCTION ledger_of_sale();

CREATE FUNCTION ledger_of_return() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ledger_entries (kind, lead_id, buyer_id, seller_id, campaign_id, revenue_cents,
                              payout_cents, at)
  SELECT 'return', NEW.lead_id, NEW.buyer_id, leads.seller_id, leads.campaign_id,
         -NEW.price_cents, -NEW.payout_cents, NEW.returned_at FROM leads
  WHERE leads.id = NEW.lead_id;
  RETURN NULL;
END $$;
CREATE TRIGGER ledger_of_return AFTER INSERT ON returns
  FOR EACH ROW EXECUTE FUNCTION ledger_of_return();

CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% rows are immutable: a return or a settlement is a new row', TG_TABLE_NAME;
END $$;
CREATE TRIGGER ledger_entries_are_immutable BEFORE UPDATE OR DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER ledger_entries_are_kept BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
CREATE TRIGGER sales_are_immutable BEFORE UPDATE OR DELETE ON sales
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER returns_are_immutable BEFORE UPDATE OR DELETE ON returns
  FOR EACH ROW EXECUTE FUNCTION refuse_change();

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
  lead_id        TEXT COLLATE "C" PRIMARY KEY REFERENCES leads (id),
  buyer_id       TEXT COLLATE "C" NOT NULL,
  sold           BOOLEAN NOT NULL,
  price_cents    BIGINT NOT NULL,
  payout_cents   BIGINT NOT NULL,
  buyer_lead_id  TEXT NOT NULL,
  note           TEXT NOT NULL,
  by_key_id      TEXT COLLATE "C" NOT NULL,
  at             BIGINT NOT NULL
);
CREATE TRIGGER settlements_are_immutable BEFORE UPDATE OR DELETE ON settlements
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
)sql"},
    // A seller's payout rule for its Surface A leads; sellers made before it get the default a
    // campaign gets, 70% revshare.
    {6, R"sql(
ALTER TABLE sellers ADD COLUMN payout_fixed BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE sellers ADD COLUMN payout_value BIGINT NOT NULL DEFAULT 7000;
)sql"},
    // Shared sales: a lead may be posted to several buyers at once, so post intents and
    // settlements are one per lead and buyer; an intent says whether it is for a share. A sale's
    // slot stays under the largest max_sales a vertical may have (20).
    {7, R"sql(
ALTER TABLE post_intents DROP CONSTRAINT post_intents_pkey;
ALTER TABLE post_intents ADD PRIMARY KEY (lead_id, buyer_id);
ALTER TABLE post_intents ADD COLUMN shared BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE settlements DROP CONSTRAINT settlements_pkey;
ALTER TABLE settlements ADD PRIMARY KEY (lead_id, buyer_id);
ALTER TABLE sales ADD CONSTRAINT sales_slot_in_range CHECK (slot >= 0 AND slot < 20);
-- Each buyer of a shared sale gives its own reference. Sales made before keep theirs on the lead.
ALTER TABLE sales ADD COLUMN buyer_lead_id TEXT NOT NULL DEFAULT '';
)sql"},
    // Reports. The ledger rolled up per quarter hour of the money's movement and per seller,
    // campaign, buyer, vertical and source, kept by a trigger in the transaction of each entry
    // (so it is exact, and survives whatever the entry survives). Quarter hours, because every
    // time zone's midnight falls on one. Returns are kept apart from sales, as amounts.
    // And the outcomes rolled up per quarter hour of the lead's arrival: each lead's status
    // (buyer ""), and each buyer's pings and posts, written with the outcome (record_outcomes).
    // Sales
    // are written in the rollup's key order (record_outcomes), so batches lock its rows in one
    // order and never deadlock on them.
    {8, R"sql(
CREATE TABLE revenue_rollup (
  bucket            BIGINT NOT NULL,
  seller_id         TEXT COLLATE "C" NOT NULL,
  campaign_id       TEXT COLLATE "C" NOT NULL,
  buyer_id          TEXT COLLATE "C" NOT NULL,
  vertical          TEXT COLLATE "C" NOT NULL,
  source            TEXT COLLATE "C" NOT NULL,
  sales             BIGINT NOT NULL,
  revenue           BIGINT NOT NULL,
  payout            BIGINT NOT NULL,
  returns           BIGINT NOT NULL,
  returned_revenue  BIGINT NOT NULL,
  returned_payout   BIGINT NOT NULL,
  PRIMARY KEY (bucket, seller_id, campaign_id, buyer_id, vertical, source)
);
CREATE FUNCTION revenue_rollup_of_entry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO revenue_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, sales,
                              revenue, payout, returns, returned_revenue, returned_payout)
  SELECT NEW.at - NEW.at % 900000, NEW.seller_id, NEW.campaign_id, NEW.buyer_id, leads.vertical,
         leads.source, (NEW.kind = 'sale')::INT,
         CASE WHEN NEW.kind = 'sale' THEN NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'sale' THEN NEW.payout_cents ELSE 0 END,
         (NEW.kind = 'return')::INT,
         CASE WHEN NEW.kind = 'return' THEN -NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'return' THEN -NEW.payout_cents ELSE 0 END
  FROM leads WHERE leads.id = NEW.lead_id
  ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE SET
    sales = revenue_rollup.sales + excluded.sales,
    revenue = revenue_rollup.revenue + excluded.revenue,
    payout = revenue_rollup.payout + excluded.payout,
    returns = revenue_rollup.returns + excluded.returns,
    returned_revenue = revenue_rollup.returned_revenue + excluded.returned_revenue,
    returned_payout = revenue_rollup.returned_payout + excluded.returned_payout;
  RETURN NULL;
END $$;
CREATE TRIGGER revenue_rollup_of_entry AFTER INSERT ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION revenue_rollup_of_entry();
-- What the ledger held before.
INSERT INTO revenue_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, sales,
                            revenue, payout, returns, returned_revenue, returned_payout)
SELECT e.at - e.at % 900000, e.seller_id, e.campaign_id, e.buyer_id, l.vertical, l.source,
       COUNT(*) FILTER (WHERE e.kind = 'sale'),
       COALESCE(SUM(e.revenue_cents) FILTER (WHERE e.kind = 'sale'), 0),
       COALESCE(SUM(e.payout_cents) FILTER (WHERE e.kind = 'sale'), 0),
       COUNT(*) FILTER (WHERE e.kind = 'return'),
       COALESCE(-SUM(e.revenue_cents) FILTER (WHERE e.kind = 'return'), 0),
       COALESCE(-SUM(e.payout_cents) FILTER (WHERE e.kind = 'return'), 0)
FROM ledger_entries AS e JOIN leads AS l ON l.id = e.lead_id
GROUP BY 1, 2, 3, 4, 5, 6;

CREATE TABLE performance_rollup (
  bucket       BIGINT NOT NULL,
  seller_id    TEXT COLLATE "C" NOT NULL,
  campaign_id  TEXT COLLATE "C" NOT NULL,
  buyer_id     TEXT COLLATE "C" NOT NULL,
  vertical     TEXT COLLATE "C" NOT NULL,
  source       TEXT COLLATE "C" NOT NULL,
  leads        BIGINT NOT NULL DEFAULT 0,
  duplicates   BIGINT NOT NULL DEFAULT 0,
  invalid      BIGINT NOT NULL DEFAULT 0,
  sold         BIGINT NOT NULL DEFAULT 0,
  unsold       BIGINT NOT NULL DEFAULT 0,
  failed       BIGINT NOT NULL DEFAULT 0,
  pings        BIGINT NOT NULL DEFAULT 0,
  bids         BIGINT NOT NULL DEFAULT 0,
  posts        BIGINT NOT NULL DEFAULT 0,
  accepted     BIGINT NOT NULL DEFAULT 0,
  rejected     BIGINT NOT NULL DEFAULT 0,
  timeouts     BIGINT NOT NULL DEFAULT 0,
  errors       BIGINT NOT NULL DEFAULT 0,
  responses    BIGINT NOT NULL DEFAULT 0,
  response_ms  BIGINT NOT NULL DEFAULT 0,
  h0           BIGINT NOT NULL DEFAULT 0,
  h1           BIGINT NOT NULL DEFAULT 0,
  h2           BIGINT NOT NULL DEFAULT 0,
  h3           BIGINT NOT NULL DEFAULT 0,
  h4           BIGINT NOT NULL DEFAULT 0,
  h5           BIGINT NOT NULL DEFAULT 0,
  h6           BIGINT NOT NULL DEFAULT 0,
  h7           BIGINT NOT NULL DEFAULT 0,
  h8           BIGINT NOT NULL DEFAULT 0,
  h9           BIGINT NOT NULL DEFAULT 0,
  h10          BIGINT NOT NULL DEFAULT 0,
  h11          BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (bucket, seller_id, campaign_id, buyer_id, vertical, source)
);
-- The leads decided and the invalid posts counted before (buyers' figures start from here).
INSERT INTO performance_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, leads,
                                duplicates, sold, unsold, failed)
SELECT received_at - received_at % 900000, seller_id, campaign_id, '', vertical, source, COUNT(*),
       COUNT(*) FILTER (WHERE status = 'duplicate'),
       COUNT(*) FILTER (WHERE status IN ('delivered', 'returned')),
       COUNT(*) FILTER (WHERE status IN ('unsold', 'rejected')),
       COUNT(*) FILTER (WHERE status = 'failed')
FROM leads WHERE status <> 'pending' GROUP BY 1, 2, 3, 5, 6;
INSERT INTO performance_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, invalid)
SELECT i.hour_start, c.seller_id, i.campaign_id, '', c.vertical, '', SUM(i.count)
FROM invalid_counts AS i JOIN campaigns AS c ON c.id = i.campaign_id GROUP BY 1, 2, 3, 5
ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source)
DO UPDATE SET invalid = performance_rollup.invalid + excluded.invalid;
)sql"},
    // Dashboard users (operator, seller or buyer accounts, as API keys are) and their sessions.
    // A session is found by its token's SHA-256; a user's sessions are ended together.
    {9, R"sql(
CREATE TABLE users (
  id             TEXT COLLATE "C" PRIMARY KEY,
  email          TEXT COLLATE "C" NOT NULL UNIQUE,
  name           TEXT NOT NULL,
  seller_id      TEXT COLLATE "C" REFERENCES sellers (id),
  buyer_id       TEXT COLLATE "C" REFERENCES buyers (id),
  password_hash  TEXT NOT NULL,
  active         BOOLEAN NOT NULL,
  created_at     BIGINT NOT NULL,
  last_login_at  BIGINT NOT NULL DEFAULT 0,
  CHECK (seller_id IS NULL OR buyer_id IS NULL)
);

CREATE TABLE user_sessions (
  token_hash    TEXT COLLATE "C" PRIMARY KEY,
  user_id       TEXT COLLATE "C" NOT NULL REFERENCES users (id),
  csrf_token    TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  expires_at    BIGINT NOT NULL,
  last_seen_at  BIGINT NOT NULL
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
  bucket       BIGINT NOT NULL,
  seller_id    TEXT COLLATE "C" NOT NULL,
  campaign_id  TEXT COLLATE "C" NOT NULL,
  buyer_id     TEXT COLLATE "C" NOT NULL,
  vertical     TEXT COLLATE "C" NOT NULL,
  source       TEXT COLLATE "C" NOT NULL,
  reason       TEXT COLLATE "C" NOT NULL,
  leads        BIGINT NOT NULL,
  PRIMARY KEY (bucket, seller_id, campaign_id, buyer_id, vertical, source, reason)
);
)sql"},
    // When each API key was last used (written at most once a minute), for the dashboard.
    {11, R"sql(
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT NOT NULL DEFAULT 0;
)sql"},
    // The rollups' tiers (rollup_tiers.hpp): the same sums per UTC hour or day, each tier
    // keeping some of the report keys, so that a report reads whole hours and days instead of
    // every quarter hour. rollup_tiers describes them for the SQL that writes them (the revenue
    // trigger, the invalid posts); apply_migrations fills it and the tiers of what the rollups
    // already hold, in this migration's transaction. The performance and unsold tiers are
    // written with the outcomes (rollup_rows.cpp). The revenue trigger writes a ledger entry's
    // tier rows one entry at a time, and the coarse rows are shared by every entry of a day:
    // two transactions could lock two of them in opposite orders, so a transaction writing
    // them first takes an advisory lock (held to its end) and such transactions take turns.
    // Each takes it after its leads' rows and before any rollup row, as every writer of the
    // rollups goes (revenue, performance, unsold; each table before its tiers).
    {12, R"sql(
CREATE TABLE rollup_tiers (
  tier      INTEGER PRIMARY KEY,
  grain_ms  BIGINT NOT NULL,
  seller    INTEGER NOT NULL,
  campaign  INTEGER NOT NULL,
  buyer     INTEGER NOT NULL,
  vertical  INTEGER NOT NULL,
  source    INTEGER NOT NULL
);
CREATE TABLE revenue_tiers (
  tier         INTEGER NOT NULL,
  bucket       BIGINT NOT NULL,
  seller_id    TEXT COLLATE "C" NOT NULL,
  campaign_id  TEXT COLLATE "C" NOT NULL,
  buyer_id     TEXT COLLATE "C" NOT NULL,
  vertical     TEXT COLLATE "C" NOT NULL,
  source       TEXT COLLATE "C" NOT NULL,
  sales             BIGINT NOT NULL DEFAULT 0,
  revenue           BIGINT NOT NULL DEFAULT 0,
  payout            BIGINT NOT NULL DEFAULT 0,
  returns           BIGINT NOT NULL DEFAULT 0,
  returned_revenue  BIGINT NOT NULL DEFAULT 0,
  returned_payout   BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source)
);
CREATE TABLE performance_tiers (
  tier         INTEGER NOT NULL,
  bucket       BIGINT NOT NULL,
  seller_id    TEXT COLLATE "C" NOT NULL,
  campaign_id  TEXT COLLATE "C" NOT NULL,
  buyer_id     TEXT COLLATE "C" NOT NULL,
  vertical     TEXT COLLATE "C" NOT NULL,
  source       TEXT COLLATE "C" NOT NULL,
  leads        BIGINT NOT NULL DEFAULT 0,
  duplicates   BIGINT NOT NULL DEFAULT 0,
  invalid      BIGINT NOT NULL DEFAULT 0,
  sold         BIGINT NOT NULL DEFAULT 0,
  unsold       BIGINT NOT NULL DEFAULT 0,
  failed       BIGINT NOT NULL DEFAULT 0,
  pings        BIGINT NOT NULL DEFAULT 0,
  bids         BIGINT NOT NULL DEFAULT 0,
  posts        BIGINT NOT NULL DEFAULT 0,
  accepted     BIGINT NOT NULL DEFAULT 0,
  rejected     BIGINT NOT NULL DEFAULT 0,
  timeouts     BIGINT NOT NULL DEFAULT 0,
  errors       BIGINT NOT NULL DEFAULT 0,
  responses    BIGINT NOT NULL DEFAULT 0,
  response_ms  BIGINT NOT NULL DEFAULT 0,
  h0           BIGINT NOT NULL DEFAULT 0,
  h1           BIGINT NOT NULL DEFAULT 0,
  h2           BIGINT NOT NULL DEFAULT 0,
  h3           BIGINT NOT NULL DEFAULT 0,
  h4           BIGINT NOT NULL DEFAULT 0,
  h5           BIGINT NOT NULL DEFAULT 0,
  h6           BIGINT NOT NULL DEFAULT 0,
  h7           BIGINT NOT NULL DEFAULT 0,
  h8           BIGINT NOT NULL DEFAULT 0,
  h9           BIGINT NOT NULL DEFAULT 0,
  h10          BIGINT NOT NULL DEFAULT 0,
  h11          BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source)
);
CREATE TABLE unsold_tiers (
  tier         INTEGER NOT NULL,
  bucket       BIGINT NOT NULL,
  seller_id    TEXT COLLATE "C" NOT NULL,
  campaign_id  TEXT COLLATE "C" NOT NULL,
  buyer_id     TEXT COLLATE "C" NOT NULL,
  vertical     TEXT COLLATE "C" NOT NULL,
  source       TEXT COLLATE "C" NOT NULL,
  reason       TEXT COLLATE "C" NOT NULL,
  leads        BIGINT NOT NULL,
  PRIMARY KEY (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source, reason)
);
CREATE OR REPLACE FUNCTION revenue_rollup_of_entry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7810778542233040243);  -- the revenue tiers' turn
  INSERT INTO revenue_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, sales,
                              revenue, payout, returns, returned_revenue, returned_payout)
  SELECT NEW.at - NEW.at % 900000, NEW.seller_id, NEW.campaign_id, NEW.buyer_id, leads.vertical,
         leads.source, (NEW.kind = 'sale')::INT,
         CASE WHEN NEW.kind = 'sale' THEN NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'sale' THEN NEW.payout_cents ELSE 0 END,
         (NEW.kind = 'return')::INT,
         CASE WHEN NEW.kind = 'return' THEN -NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'return' THEN -NEW.payout_cents ELSE 0 END
  FROM leads WHERE leads.id = NEW.lead_id
  ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE SET
    sales = revenue_rollup.sales + excluded.sales,
    revenue = revenue_rollup.revenue + excluded.revenue,
    payout = revenue_rollup.payout + excluded.payout,
    returns = revenue_rollup.returns + excluded.returns,
    returned_revenue = revenue_rollup.returned_revenue + excluded.returned_revenue,
    returned_payout = revenue_rollup.returned_payout + excluded.returned_payout;
  INSERT INTO revenue_tiers (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source,
                             sales, revenue, payout, returns, returned_revenue, returned_payout)
  SELECT t.tier, NEW.at - NEW.at % t.grain_ms,
         CASE WHEN t.seller = 1 THEN NEW.seller_id ELSE '' END,
         CASE WHEN t.campaign = 1 THEN NEW.campaign_id ELSE '' END,
         CASE WHEN t.buyer = 1 THEN NEW.buyer_id ELSE '' END,
         CASE WHEN t.vertical = 1 THEN leads.vertical ELSE '' END,
         CASE WHEN t.source = 1 THEN leads.source ELSE '' END,
         (NEW.kind = 'sale')::INT,
         CASE WHEN NEW.kind = 'sale' THEN NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'sale' THEN NEW.payout_cents ELSE 0 END,
         (NEW.kind = 'return')::INT,
         CASE WHEN NEW.kind = 'return' THEN -NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'return' THEN -NEW.payout_cents ELSE 0 END
  FROM leads, rollup_tiers AS t WHERE leads.id = NEW.lead_id ORDER BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE SET
    sales = revenue_tiers.sales + excluded.sales,
    revenue = revenue_tiers.revenue + excluded.revenue,
    payout = revenue_tiers.payout + excluded.payout,
    returns = revenue_tiers.returns + excluded.returns,
    returned_revenue = revenue_tiers.returned_revenue + excluded.returned_revenue,
    returned_payout = revenue_tiers.returned_payout + excluded.returned_payout;
  RETURN NULL;
END $$;
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
  key        TEXT COLLATE "C" PRIMARY KEY,
  times      TEXT NOT NULL,
  newest_at  BIGINT NOT NULL
);
CREATE INDEX attempt_windows_by_newest ON attempt_windows (newest_at);
)sql"},
    // Versions of the records people edit (docs/versions.md): a write conditional on the version
    // it read never overwrites a change it did not see. Existing rows start at 1.
    {15, R"sql(
ALTER TABLE users ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE buyers ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE campaigns ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE sellers ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
ALTER TABLE api_keys ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
)sql"},
    // Dashboard users' second factor (docs/two-factor.md): one row per user that enrolled, its
    // secret sealed, the last time step accepted (no code twice) and the pending sign-in's
    // challenge; the recovery codes' hashes, each used once.
    {16, R"sql(
CREATE TABLE user_totp (
  user_id               TEXT COLLATE "C" PRIMARY KEY REFERENCES users (id),
  sealed_secret         TEXT NOT NULL,
  enabled               BOOLEAN NOT NULL DEFAULT FALSE,
  last_step             BIGINT NOT NULL DEFAULT 0,
  created_at            BIGINT NOT NULL,
  challenge_hash        TEXT COLLATE "C" NOT NULL DEFAULT '',
  challenge_expires_at  BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX user_totp_by_challenge ON user_totp (challenge_hash) WHERE challenge_hash <> '';
CREATE TABLE user_recovery_codes (
  user_id    TEXT COLLATE "C" NOT NULL REFERENCES users (id),
  code_hash  TEXT COLLATE "C" NOT NULL,
  used_at    BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, code_hash)
);
)sql"},
    // The ledger entries of sales and returns are written by the adapters, as the money
    // component's rules book them (docs/money.md), in the transaction of the sale or return they
    // record; the triggers that wrote them go. The entries already written are kept as they are.
    {17, R"sql(
DROP TRIGGER IF EXISTS ledger_of_sale ON sales;
DROP TRIGGER IF EXISTS ledger_of_return ON returns;
DROP FUNCTION IF EXISTS ledger_of_sale();
DROP FUNCTION IF EXISTS ledger_of_return();
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

}  // namespace leadflow::pg
