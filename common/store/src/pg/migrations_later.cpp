// The PostgreSQL schema's later migrations (version 20 on), oldest first: the DDL each version
// adds, after those of migrations.cpp. Append only, as there.
#include "pg/schema.hpp"

namespace leadflow::pg {
namespace {

using store_schema::Migration;

constexpr Migration kLaterMigrations[] = {
    // A dashboard user's time zone (docs/time-zones.md): the IANA name its pages and whole-day
    // ranges are read in, UTC until the user chooses another.
    {20, R"sql(
ALTER TABLE users ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
)sql"},
    // The change log (docs/security.md): who changed which account record, when, from what to
    // what. Append-only: the trigger refuses any change or removal of an entry. `search` is the
    // lower-cased ids and names the q filter matches, written by the adapter as given.
    {21, R"sql(
CREATE TABLE change_log (
  id           TEXT COLLATE "C" PRIMARY KEY,
  at_ms        BIGINT NOT NULL,
  actor_id     TEXT COLLATE "C" NOT NULL,
  actor_name   TEXT NOT NULL,
  surface      TEXT NOT NULL,
  action       TEXT NOT NULL,
  object_kind  TEXT NOT NULL,
  object_id    TEXT COLLATE "C" NOT NULL,
  object_name  TEXT NOT NULL,
  changes      TEXT NOT NULL,
  search       TEXT NOT NULL
);
CREATE INDEX change_log_by_object ON change_log (object_kind, object_id);
CREATE INDEX change_log_by_actor ON change_log (actor_id, id);
CREATE FUNCTION change_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the change log is append-only';
END $$;
CREATE TRIGGER change_log_append_only BEFORE UPDATE OR DELETE ON change_log
  FOR EACH ROW EXECUTE FUNCTION change_log_append_only();
)sql"},
    // Test mode (leadflow/domain/test_mode.hpp): a test lead is stored with the fact, and a
    // seller or campaign may put all of its leads in test mode; the leads' status may be `test`.
    // The wider check is added NOT VALID: every row already met the narrower one, so there is no
    // need to read the whole table under its lock to prove it.
    {22, R"sql(
ALTER TABLE leads ADD COLUMN test BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE sellers ADD COLUMN test_mode BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE campaigns ADD COLUMN test_mode BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE leads DROP CONSTRAINT leads_status_check;
ALTER TABLE leads ADD CONSTRAINT leads_status_check CHECK (status IN
  ('pending', 'delivered', 'unsold', 'duplicate', 'rejected', 'failed', 'returned', 'test'))
  NOT VALID;
)sql"},
    // Suppression lists (docs/suppression.md): the operator's (buyer_id '') and each buyer's,
    // their entries as fingerprints in chunks of fixed-width hex, one set per entries_version.
    {23, R"sql(
CREATE TABLE suppression_lists (
  id               TEXT COLLATE "C" PRIMARY KEY,
  buyer_id         TEXT COLLATE "C" NOT NULL,
  name             TEXT NOT NULL,
  entries          BIGINT NOT NULL,
  entries_version  BIGINT NOT NULL,
  created_at_ms    BIGINT NOT NULL,
  updated_at_ms    BIGINT NOT NULL
);
CREATE INDEX suppression_lists_by_buyer ON suppression_lists (buyer_id, id);
CREATE TABLE suppression_chunks (
  list_id          TEXT COLLATE "C" NOT NULL,
  entries_version  BIGINT NOT NULL,
  n                BIGINT NOT NULL,
  fingerprints     TEXT NOT NULL,
  PRIMARY KEY (list_id, entries_version, n)
);
)sql"},
    // Postbacks (docs/postbacks.md): sellers' endpoints, the outbox of events written by the
    // transaction that records what they report (one row per event and endpoint), and every
    // attempt at delivering one. The partial index holds only what is still to be sent.
    {24, R"sql(
CREATE TABLE postback_endpoints (
  id             TEXT COLLATE "C" PRIMARY KEY,
  seller_id      TEXT COLLATE "C" NOT NULL,
  campaign_id    TEXT NOT NULL,
  url            TEXT NOT NULL,
  events         TEXT NOT NULL,
  secret         TEXT NOT NULL,
  active         BOOLEAN NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  updated_at_ms  BIGINT NOT NULL
);
CREATE INDEX postback_endpoints_by_seller ON postback_endpoints (seller_id, id);
CREATE TABLE postback_outbox (
  event_id      TEXT COLLATE "C" NOT NULL,
  endpoint_id   TEXT COLLATE "C" NOT NULL,
  kind          TEXT NOT NULL,
  lead_id       TEXT NOT NULL,
  seller_id     TEXT NOT NULL,
  campaign_id   TEXT NOT NULL,
  status        TEXT NOT NULL,
  sold          BOOLEAN NOT NULL,
  payout_cents  BIGINT NOT NULL,
  reason        TEXT NOT NULL,
  occurred_at   BIGINT NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'expired')),
  attempts      BIGINT NOT NULL,
  next_at       BIGINT NOT NULL,
  window_from   BIGINT NOT NULL,
  last_status   BIGINT NOT NULL,
  last_error    TEXT NOT NULL,
  delivered_at  BIGINT NOT NULL,
  PRIMARY KEY (endpoint_id, event_id)
);
CREATE INDEX postback_outbox_due ON postback_outbox (next_at) WHERE state = 'pending';
CREATE TABLE postback_attempts (
  event_id     TEXT NOT NULL,
  endpoint_id  TEXT NOT NULL,
  at           BIGINT NOT NULL,
  status       BIGINT NOT NULL,
  latency_us   BIGINT NOT NULL,
  error        TEXT NOT NULL,
  then_state   TEXT NOT NULL,
  next_at      BIGINT NOT NULL
);
CREATE INDEX postback_attempts_by_endpoint ON postback_attempts (endpoint_id, at);
)sql"},
    // Erasure (docs/erasure.md): when a lead's personal fields were replaced by their tombstone;
    // the erased leads by their search keys, so that an erased person's later lead is still a
    // duplicate (find_duplicate); and a sale's copy of the e-mail and phone may now be written
    // over, only with its lead erased, every other column staying immutable.
    {25, R"sql(
ALTER TABLE leads ADD COLUMN erased_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX leads_erased_by_email_key ON leads (email_key, vertical, received_at)
  WHERE erased_at > 0;
CREATE INDEX leads_erased_by_phone_key ON leads (phone_key, vertical, received_at)
  WHERE erased_at > 0;
CREATE FUNCTION sales_person_only_erased() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM leads WHERE id = NEW.lead_id AND erased_at > 0) THEN
    RAISE EXCEPTION 'a sale''s copy of the person changes only when its lead is erased';
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER sales_are_immutable ON sales;
CREATE TRIGGER sales_are_immutable BEFORE UPDATE OF lead_id, slot, buyer_id, price_cents,
  payout_cents, sold_at, buyer_lead_id OR DELETE ON sales
  FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER sales_person_only_erased BEFORE UPDATE OF email, phone ON sales
  FOR EACH ROW EXECUTE FUNCTION sales_person_only_erased();
)sql"},
    // Second chances (docs/reoffers.md): a lead nobody bought live that its vertical lets be
    // offered again has one row here, its next re-offer (`round`, 1 = the first) due at
    // `due_at`; a worker leases it until `lease_until` (0: not leased) and the re-offer's
    // outcome deletes it, or moves it to the next round, in the transaction that records it.
    {26, R"sql(
CREATE TABLE reoffers (
  lead_id      TEXT COLLATE "C" PRIMARY KEY,
  round        BIGINT NOT NULL,
  due_at       BIGINT NOT NULL,
  lease_until  BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX reoffers_by_due ON reoffers (due_at);
)sql"},
    // Statements and closed periods (docs/statements.md): a close of a period (the ledger's last
    // entry id at the close, by whom, when) and the statement totals it froze, one row per
    // account; both immutable. The ledger read by time, as statements read it.
    {27, R"sql(
CREATE TABLE period_closes (
  period            TEXT COLLATE "C" PRIMARY KEY,
  through_entry_id  BIGINT NOT NULL,
  closed_by         TEXT NOT NULL,
  closed_at         BIGINT NOT NULL
);
CREATE TABLE period_close_totals (
  period               TEXT COLLATE "C" NOT NULL REFERENCES period_closes (period),
  party                TEXT NOT NULL CHECK (party IN ('buyer', 'seller')),
  account_id           TEXT COLLATE "C" NOT NULL,
  zone                 TEXT NOT NULL,
  sales                BIGINT NOT NULL,
  sales_revenue        BIGINT NOT NULL,
  sales_payout         BIGINT NOT NULL,
  returns              BIGINT NOT NULL,
  returns_revenue      BIGINT NOT NULL,
  returns_payout       BIGINT NOT NULL,
  adjustments          BIGINT NOT NULL,
  adjustments_revenue  BIGINT NOT NULL,
  adjustments_payout   BIGINT NOT NULL,
  revenue              BIGINT NOT NULL,
  payout               BIGINT NOT NULL,
  PRIMARY KEY (period, party, account_id)
);
CREATE FUNCTION period_closes_are_final() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a closed period is final';
END $$;
CREATE TRIGGER period_closes_are_final BEFORE UPDATE OR DELETE ON period_closes
  FOR EACH ROW EXECUTE FUNCTION period_closes_are_final();
CREATE TRIGGER period_close_totals_are_final BEFORE UPDATE OR DELETE ON period_close_totals
  FOR EACH ROW EXECUTE FUNCTION period_closes_are_final();
CREATE TRIGGER period_closes_not_truncated BEFORE TRUNCATE ON period_closes
  FOR EACH STATEMENT EXECUTE FUNCTION period_closes_are_final();
CREATE TRIGGER period_close_totals_not_truncated BEFORE TRUNCATE ON period_close_totals
  FOR EACH STATEMENT EXECUTE FUNCTION period_closes_are_final();
CREATE INDEX ledger_by_time ON ledger_entries (at);
)sql"},
    // Pruning the postbacks' outbox (docs/postbacks.md#retention): delivered and expired rows
    // found by state and age (never a pending one: the claims keep to postback_outbox_due),
    // and an event's attempts by its key, so that each small batch of deletions reads only what
    // it deletes. And a buyer's "already bought this person" check
    // (docs/erasure.md) by search keys: each sale keeps its lead's, filled here for the sales
    // already made, indexed per buyer in place of the clear e-mail and phone (which erasure
    // blanks, and nothing reads any more); they may change only once the lead is erased.
    {28, R"sql(
CREATE INDEX postback_outbox_by_state ON postback_outbox (state, window_from)
  WHERE state <> 'pending';
CREATE INDEX postback_attempts_by_event ON postback_attempts (endpoint_id, event_id);
ALTER TABLE sales ADD COLUMN email_key TEXT, ADD COLUMN phone_key TEXT;
UPDATE sales SET email_key = leads.email_key, phone_key = leads.phone_key
  FROM leads WHERE leads.id = sales.lead_id;
CREATE INDEX sales_by_buyer_email_key ON sales (buyer_id, email_key, sold_at);
CREATE INDEX sales_by_buyer_phone_key ON sales (buyer_id, phone_key, sold_at);
DROP INDEX sales_by_buyer_email;
DROP INDEX sales_by_buyer_phone;
DROP TRIGGER sales_person_only_erased ON sales;
CREATE TRIGGER sales_person_only_erased BEFORE UPDATE OF email, phone, email_key, phone_key
  ON sales FOR EACH ROW EXECUTE FUNCTION sales_person_only_erased();
)sql"},
    // A seller's time zone (docs/statements.md): the IANA name its payout statements are cut
    // in, UTC for every seller until the operator sets another.
    {29, R"sql(
ALTER TABLE sellers ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
)sql"},
    // The live feed's position (docs/operations.md, "The live feed"): the transaction that last
    // recorded or decided a lead, so a reader finds every change committed since a snapshot,
    // whatever the writers' clocks or the order they committed in. Added without a default, then
    // given one: no rewrite of the table (the leads already there have none, and are older than
    // any position).
    {30, R"sql(
ALTER TABLE leads ADD COLUMN changed_xid xid8;
ALTER TABLE leads ALTER COLUMN changed_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX leads_by_change ON leads (changed_xid);
)sql"},
    // A campaign's own re-offer policy (docs/reoffers.md): its JSON as the domain writes it, NULL
    // for its vertical's (every campaign until the operator gives it one).
    {31, R"sql(
ALTER TABLE campaigns ADD COLUMN reoffer TEXT;
)sql"},
    // Rotating a postback endpoint's secret (docs/postbacks.md#rotating-the-secret): the secret
    // it replaced, kept as the endpoint's own is (in clear: leadflow signs with it), and until
    // when it signs too; when it was last rotated. Every endpoint already made has none.
    {32, R"sql(
ALTER TABLE postback_endpoints ADD COLUMN previous_secret TEXT NOT NULL DEFAULT '',
  ADD COLUMN previous_secret_expires_at_ms BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN secret_rotated_at_ms BIGINT NOT NULL DEFAULT 0;
)sql"},
    // Whether a sale was made by a re-offer (docs/reoffers.md), so that its return is counted
    // apart in the reports (reports::return_bands). The sales made before say nothing: their
    // returns count as live ones.
    {33, R"sql(
ALTER TABLE sales ADD COLUMN aged BOOLEAN NOT NULL DEFAULT FALSE;
)sql"},
    // A vertical's re-offer policy set by the operator (docs/reoffers.md): its JSON as the
    // domain writes it; it replaces the configured one (LEADFLOW_VERTICALS) until deleted.
    {34, R"sql(
CREATE TABLE vertical_reoffers (
  vertical TEXT PRIMARY KEY,
  reoffer TEXT NOT NULL,
  set_at_ms BIGINT NOT NULL
);
)sql"},
    // The ledger's journal filtered (docs/money.md, "The ledger's journal"): a buyer's or a
    // seller's entries in the journal's order, time then id, read as a range of its own index
    // rather than by walking the whole ledger; and the whole journal, or a time range of it, in
    // that order by (at, id), which serves every reader of ledger_by_time (at) and replaces it.
    {35, R"sql(
CREATE INDEX ledger_by_buyer ON ledger_entries (buyer_id, at, id);
CREATE INDEX ledger_by_seller ON ledger_entries (seller_id, at, id);
CREATE INDEX ledger_by_time_id ON ledger_entries (at, id);
DROP INDEX ledger_by_time;
)sql"},
    // The revenue rollups kept per statement, not per ledger entry: a batch of outcomes writes
    // its sales' entries in one statement, and each rollup row it touches is now written once,
    // with the batch's sums, where every entry used to update it again (on a busy bucket, one
    // row version per sale, each found past the ones before: about 3 ms a sale on a two-core
    // machine, docs/benchmarks.md#the-revenue-rollup-per-statement). The same turn (the
    // advisory lock), the same sums and the same key order as the per-entry trigger.
    {36, R"sql(
DROP TRIGGER revenue_rollup_of_entry ON ledger_entries;
DROP FUNCTION revenue_rollup_of_entry();
CREATE FUNCTION revenue_rollup_of_entries() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM added) THEN RETURN NULL; END IF;
  PERFORM pg_advisory_xact_lock(7810778542233040243);  -- the revenue tiers' turn
  -- Each entry's figures, read once; the quarter hours and the tiers sum them.
  WITH entries AS MATERIALIZED (
    SELECT e.at, e.seller_id, e.campaign_id, e.buyer_id, l.vertical, l.source,
           (e.kind = 'sale')::INT AS sales,
           CASE WHEN e.kind = 'sale' THEN e.revenue_cents ELSE 0 END AS revenue,
           CASE WHEN e.kind = 'sale' THEN e.payout_cents ELSE 0 END AS payout,
           (e.kind = 'return')::INT AS returns,
           CASE WHEN e.kind = 'return' THEN -e.revenue_cents ELSE 0 END AS returned_revenue,
           CASE WHEN e.kind = 'return' THEN -e.payout_cents ELSE 0 END AS returned_payout
    FROM added AS e JOIN leads AS l ON l.id = e.lead_id),
  quarters AS (
    INSERT INTO revenue_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, sales,
                                revenue, payout, returns, returned_revenue, returned_payout)
    SELECT at - at % 900000, seller_id, campaign_id, buyer_id, vertical, source, SUM(sales),
           SUM(revenue), SUM(payout), SUM(returns), SUM(returned_revenue), SUM(returned_payout)
    FROM entries GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE SET
      sales = revenue_rollup.sales + excluded.sales,
      revenue = revenue_rollup.revenue + excluded.revenue,
      payout = revenue_rollup.payout + excluded.payout,
      returns = revenue_rollup.returns + excluded.returns,
      returned_revenue = revenue_rollup.returned_revenue + excluded.returned_revenue,
      returned_payout = revenue_rollup.returned_payout + excluded.returned_payout)
  INSERT INTO revenue_tiers (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source,
                             sales, revenue, payout, returns, returned_revenue, returned_payout)
  SELECT t.tier, e.at - e.at % t.grain_ms,
         CASE WHEN t.seller = 1 THEN e.seller_id ELSE '' END,
         CASE WHEN t.campaign = 1 THEN e.campaign_id ELSE '' END,
         CASE WHEN t.buyer = 1 THEN e.buyer_id ELSE '' END,
         CASE WHEN t.vertical = 1 THEN e.vertical ELSE '' END,
         CASE WHEN t.source = 1 THEN e.source ELSE '' END,
         SUM(e.sales), SUM(e.revenue), SUM(e.payout), SUM(e.returns), SUM(e.returned_revenue),
         SUM(e.returned_payout)
  FROM entries AS e CROSS JOIN rollup_tiers AS t
  GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE SET
    sales = revenue_tiers.sales + excluded.sales,
    revenue = revenue_tiers.revenue + excluded.revenue,
    payout = revenue_tiers.payout + excluded.payout,
    returns = revenue_tiers.returns + excluded.returns,
    returned_revenue = revenue_tiers.returned_revenue + excluded.returned_revenue,
    returned_payout = revenue_tiers.returned_payout + excluded.returned_payout;
  RETURN NULL;
END $$;
CREATE TRIGGER revenue_rollup_of_entries AFTER INSERT ON ledger_entries
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION revenue_rollup_of_entries();
)sql"},
    // Postback events written once each (docs/postbacks.md#the-outbox): the transaction that
    // decides, returns or settles a lead appends one row here, not one per endpoint; the
    // senders' claims fan them out into postback_outbox (SKIP LOCKED: each event by one sender),
    // per the view below, the one place that says which endpoints an event goes to: the
    // seller's active ones, for all its campaigns or the lead's, subscribed to its kind, made no
    // later than the event.
    {37, R"sql(
CREATE TABLE postback_events (
  seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id      TEXT NOT NULL,
  kind          TEXT NOT NULL,
  lead_id       TEXT NOT NULL,
  seller_id     TEXT NOT NULL,
  campaign_id   TEXT NOT NULL,
  status        TEXT NOT NULL,
  sold          BOOLEAN NOT NULL,
  payout_cents  BIGINT NOT NULL,
  reason        TEXT NOT NULL,
  occurred_at   BIGINT NOT NULL
);
CREATE VIEW postback_event_deliveries AS
SELECT ev.seq, ev.event_id, ev.kind, ev.lead_id, ev.seller_id, ev.campaign_id, ev.status,
       ev.sold, ev.payout_cents, ev.reason, ev.occurred_at, e.id AS endpoint_id
FROM postback_events ev JOIN postback_endpoints e ON e.seller_id = ev.seller_id
  AND (e.campaign_id = '' OR e.campaign_id = ev.campaign_id)
WHERE e.active AND strpos(e.events, ',' || ev.kind || ',') > 0
  AND e.created_at_ms <= ev.occurred_at;
)sql"},
    // An endpoint takes the events that happen while it is on (docs/postbacks.md#endpoints):
    // its last spell on, kept by the API (postbacks::switched). Switched off, the events of its
    // spell still waiting to be fanned out are its own and wait with the rest; before this, the
    // view read whether it was on when a claim fanned an event out, so an endpoint switched off
    // in that moment lost the events of its last moments on. An endpoint already off keeps the
    // time of its last change as the end of its spell.
    {38, R"sql(
ALTER TABLE postback_endpoints ADD COLUMN on_since_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE postback_endpoints ADD COLUMN off_since_ms BIGINT NOT NULL DEFAULT 0;
UPDATE postback_endpoints SET on_since_ms = created_at_ms,
  off_since_ms = CASE WHEN NOT active THEN updated_at_ms ELSE 0 END;
DROP VIEW postback_event_deliveries;
CREATE VIEW postback_event_deliveries AS
SELECT ev.seq, ev.event_id, ev.kind, ev.lead_id, ev.seller_id, ev.campaign_id, ev.status,
       ev.sold, ev.payout_cents, ev.reason, ev.occurred_at, e.id AS endpoint_id
FROM postback_events ev JOIN postback_endpoints e ON e.seller_id = ev.seller_id
  AND (e.campaign_id = '' OR e.campaign_id = ev.campaign_id)
WHERE strpos(e.events, ',' || ev.kind || ',') > 0
  AND e.created_at_ms <= ev.occurred_at AND e.on_since_ms <= ev.occurred_at
  AND (e.active OR ev.occurred_at < e.off_since_ms);
)sql"},
    // Endpoints carry a version, as the other records people edit (docs/versions.md): a change
    // is written only at the version it was made on, so two at once never undo each other.
    {39, R"sql(
ALTER TABLE postback_endpoints ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
)sql"},
    // A vertical's re-offer policy set by the operator carries a version too, and a reset keeps
    // its row (not active) so that the version keeps growing through resets: a change made on
    // a policy read before a reset and a new setting is refused, not written over the new one.
    {40, R"sql(
ALTER TABLE vertical_reoffers ADD COLUMN version BIGINT NOT NULL DEFAULT 1,
  ADD COLUMN active BOOLEAN NOT NULL DEFAULT TRUE;
)sql"},
};

}  // namespace

std::span<const Migration> later_migrations() { return kLaterMigrations; }

}  // namespace leadflow::pg
