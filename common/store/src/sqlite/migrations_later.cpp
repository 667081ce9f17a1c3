// The SQLite schema's later migrations (version 20 on), oldest first: the DDL each version
// adds, after those of migrations.cpp. Append only, as there.
#include "sqlite/schema.hpp"

namespace leadflow::sqlite {
namespace {

using store_schema::Migration;

constexpr Migration kLaterMigrations[] = {
    // A dashboard user's time zone (docs/time-zones.md): the IANA name its pages and whole-day
    // ranges are read in, UTC until the user chooses another.
    {20, R"sql(
ALTER TABLE users ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
)sql"},
    // The change log (docs/security.md): who changed which account record, when, from what to
    // what. Append-only: the triggers refuse any change or removal of an entry. `search` is the
    // lower-cased ids and names the q filter matches, written by the adapter as given.
    {21, R"sql(
CREATE TABLE change_log (
  id           TEXT PRIMARY KEY,
  at_ms        INTEGER NOT NULL,
  actor_id     TEXT NOT NULL,
  actor_name   TEXT NOT NULL,
  surface      TEXT NOT NULL,
  action       TEXT NOT NULL,
  object_kind  TEXT NOT NULL,
  object_id    TEXT NOT NULL,
  object_name  TEXT NOT NULL,
  changes      TEXT NOT NULL,
  search       TEXT NOT NULL
);
CREATE INDEX change_log_by_object ON change_log (object_kind, object_id);
CREATE INDEX change_log_by_actor ON change_log (actor_id, id);
CREATE TRIGGER change_log_no_update BEFORE UPDATE ON change_log
BEGIN SELECT RAISE(ABORT, 'the change log is append-only'); END;
CREATE TRIGGER change_log_no_delete BEFORE DELETE ON change_log
BEGIN SELECT RAISE(ABORT, 'the change log is append-only'); END;
)sql"},
    // Test mode (leadflow/domain/test_mode.hpp): a test lead is stored with the fact, and a
    // seller or campaign may put all of its leads in test mode. The leads' status may now be
    // `test`: SQLite cannot alter a CHECK constraint, so allow_test_status rewrites it after
    // this step.
    {22, R"sql(
ALTER TABLE leads ADD COLUMN test INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sellers ADD COLUMN test_mode INTEGER NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN test_mode INTEGER NOT NULL DEFAULT 0;
)sql"},
    // Suppression lists (docs/suppression.md): the operator's (buyer_id '') and each buyer's,
    // their entries as fingerprints in chunks of fixed-width hex, one set per entries_version.
    {23, R"sql(
CREATE TABLE suppression_lists (
  id               TEXT PRIMARY KEY,
  buyer_id         TEXT NOT NULL,
  name             TEXT NOT NULL,
  entries          INTEGER NOT NULL,
  entries_version  INTEGER NOT NULL,
  created_at_ms    INTEGER NOT NULL,
  updated_at_ms    INTEGER NOT NULL
);
CREATE INDEX suppression_lists_by_buyer ON suppression_lists (buyer_id, id);
CREATE TABLE suppression_chunks (
  list_id          TEXT NOT NULL,
  entries_version  INTEGER NOT NULL,
  n                INTEGER NOT NULL,
  fingerprints     TEXT NOT NULL,
  PRIMARY KEY (list_id, entries_version, n)
);
)sql"},
    // Postbacks (docs/postbacks.md): sellers' endpoints, the outbox of events written by the
    // transaction that records what they report (one row per event and endpoint), and every
    // attempt at delivering one. The partial index holds only what is still to be sent.
    {24, R"sql(
CREATE TABLE postback_endpoints (
  id             TEXT PRIMARY KEY,
  seller_id      TEXT NOT NULL,
  campaign_id    TEXT NOT NULL,
  url            TEXT NOT NULL,
  events         TEXT NOT NULL,
  secret         TEXT NOT NULL,
  active         INTEGER NOT NULL,
  created_at_ms  INTEGER NOT NULL,
  updated_at_ms  INTEGER NOT NULL
);
CREATE INDEX postback_endpoints_by_seller ON postback_endpoints (seller_id, id);
CREATE TABLE postback_outbox (
  event_id      TEXT NOT NULL,
  endpoint_id   TEXT NOT NULL,
  kind          TEXT NOT NULL,
  lead_id       TEXT NOT NULL,
  seller_id     TEXT NOT NULL,
  campaign_id   TEXT NOT NULL,
  status        TEXT NOT NULL,
  sold          INTEGER NOT NULL,
  payout_cents  INTEGER NOT NULL,
  reason        TEXT NOT NULL,
  occurred_at   INTEGER NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'expired')),
  attempts      INTEGER NOT NULL,
  next_at       INTEGER NOT NULL,
  window_from   INTEGER NOT NULL,
  last_status   INTEGER NOT NULL,
  last_error    TEXT NOT NULL,
  delivered_at  INTEGER NOT NULL,
  PRIMARY KEY (endpoint_id, event_id)
);
CREATE INDEX postback_outbox_due ON postback_outbox (next_at) WHERE state = 'pending';
CREATE TABLE postback_attempts (
  event_id     TEXT NOT NULL,
  endpoint_id  TEXT NOT NULL,
  at           INTEGER NOT NULL,
  status       INTEGER NOT NULL,
  latency_us   INTEGER NOT NULL,
  error        TEXT NOT NULL,
  then_state   TEXT NOT NULL,
  next_at      INTEGER NOT NULL
);
CREATE INDEX postback_attempts_by_endpoint ON postback_attempts (endpoint_id, at);
)sql"},
    // Erasure (docs/erasure.md): when a lead's personal fields were replaced by their tombstone;
    // the erased leads by their search keys, so that an erased person's later lead is still a
    // duplicate (find_duplicate); and a sale's copy of the e-mail and phone may now be written
    // over, only with its lead erased, every other column staying immutable.
    {25, R"sql(
ALTER TABLE leads ADD COLUMN erased_at INTEGER NOT NULL DEFAULT 0;
CREATE INDEX leads_erased_by_email_key ON leads (email_key, vertical, received_at)
  WHERE erased_at > 0;
CREATE INDEX leads_erased_by_phone_key ON leads (phone_key, vertical, received_at)
  WHERE erased_at > 0;
DROP TRIGGER sales_are_immutable;
CREATE TRIGGER sales_are_immutable BEFORE UPDATE OF lead_id, slot, buyer_id, price_cents,
  payout_cents, sold_at, buyer_lead_id ON sales BEGIN
  SELECT RAISE(ABORT, 'sales are immutable: a return or a settlement is a new row');
END;
CREATE TRIGGER sales_person_only_erased BEFORE UPDATE OF email, phone ON sales
WHEN NOT EXISTS (SELECT 1 FROM leads WHERE id = NEW.lead_id AND erased_at > 0) BEGIN
  SELECT RAISE(ABORT, 'a sale''s copy of the person changes only when its lead is erased');
END;
)sql"},
    // Second chances (docs/reoffers.md): a lead nobody bought live that its vertical lets be
    // offered again has one row here, its next re-offer (`round`, 1 = the first) due at
    // `due_at`; a worker leases it until `lease_until` (0: not leased) and the re-offer's
    // outcome deletes it, or moves it to the next round, in the transaction that records it.
    {26, R"sql(
CREATE TABLE reoffers (
  lead_id      TEXT PRIMARY KEY,
  round        INTEGER NOT NULL,
  due_at       INTEGER NOT NULL,
  lease_until  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX reoffers_by_due ON reoffers (due_at);
)sql"},
    // Statements and closed periods (docs/statements.md): a close of a period (the ledger's last
    // entry id at the close, by whom, when) and the statement totals it froze, one row per
    // account; both immutable. The ledger read by time, as statements read it.
    {27, R"sql(
CREATE TABLE period_closes (
  period            TEXT PRIMARY KEY,
  through_entry_id  INTEGER NOT NULL,
  closed_by         TEXT NOT NULL,
  closed_at         INTEGER NOT NULL
);
CREATE TABLE period_close_totals (
  period               TEXT NOT NULL REFERENCES period_closes (period),
  party                TEXT NOT NULL CHECK (party IN ('buyer', 'seller')),
  account_id           TEXT NOT NULL,
  zone                 TEXT NOT NULL,
  sales                INTEGER NOT NULL,
  sales_revenue        INTEGER NOT NULL,
  sales_payout         INTEGER NOT NULL,
  returns              INTEGER NOT NULL,
  returns_revenue      INTEGER NOT NULL,
  returns_payout       INTEGER NOT NULL,
  adjustments          INTEGER NOT NULL,
  adjustments_revenue  INTEGER NOT NULL,
  adjustments_payout   INTEGER NOT NULL,
  revenue              INTEGER NOT NULL,
  payout               INTEGER NOT NULL,
  PRIMARY KEY (period, party, account_id)
);
CREATE TRIGGER period_closes_are_final BEFORE UPDATE ON period_closes
BEGIN SELECT RAISE(ABORT, 'a closed period is final'); END;
CREATE TRIGGER period_closes_are_kept BEFORE DELETE ON period_closes
BEGIN SELECT RAISE(ABORT, 'a closed period is final'); END;
CREATE TRIGGER period_close_totals_are_final BEFORE UPDATE ON period_close_totals
BEGIN SELECT RAISE(ABORT, 'a closed period is final'); END;
CREATE TRIGGER period_close_totals_are_kept BEFORE DELETE ON period_close_totals
BEGIN SELECT RAISE(ABORT, 'a closed period is final'); END;
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
ALTER TABLE sales ADD COLUMN email_key TEXT;
ALTER TABLE sales ADD COLUMN phone_key TEXT;
UPDATE sales SET
  email_key = (SELECT email_key FROM leads WHERE leads.id = sales.lead_id),
  phone_key = (SELECT phone_key FROM leads WHERE leads.id = sales.lead_id);
CREATE INDEX sales_by_buyer_email_key ON sales (buyer_id, email_key, sold_at);
CREATE INDEX sales_by_buyer_phone_key ON sales (buyer_id, phone_key, sold_at);
DROP INDEX sales_by_buyer_email;
DROP INDEX sales_by_buyer_phone;
DROP TRIGGER sales_person_only_erased;
CREATE TRIGGER sales_person_only_erased BEFORE UPDATE OF email, phone, email_key, phone_key
ON sales WHEN NOT EXISTS (SELECT 1 FROM leads WHERE id = NEW.lead_id AND erased_at > 0) BEGIN
  SELECT RAISE(ABORT, 'a sale''s copy of the person changes only when its lead is erased');
END;
)sql"},
    // A seller's time zone (docs/statements.md): the IANA name its payout statements are cut
    // in, UTC for every seller until the operator sets another.
    {29, R"sql(
ALTER TABLE sellers ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
)sql"},
    // The live feed's position (docs/operations.md, "The live feed"): one more than the largest
    // so far, given in the write that records or decides a lead. Writers take the database's
    // one write lock, so the order of these numbers is the order their transactions commit in.
    {30, R"sql(
ALTER TABLE leads ADD COLUMN changed_seq INTEGER;
CREATE INDEX leads_by_change ON leads (changed_seq);
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
ALTER TABLE postback_endpoints ADD COLUMN previous_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE postback_endpoints ADD COLUMN previous_secret_expires_at_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE postback_endpoints ADD COLUMN secret_rotated_at_ms INTEGER NOT NULL DEFAULT 0;
)sql"},
    // Whether a sale was made by a re-offer (docs/reoffers.md), so that its return is counted
    // apart in the reports (reports::return_bands). The sales made before say nothing: their
    // returns count as live ones.
    {33, R"sql(
ALTER TABLE sales ADD COLUMN aged INTEGER NOT NULL DEFAULT 0;
)sql"},
    // A vertical's re-offer policy set by the operator (docs/reoffers.md): its JSON as the
    // domain writes it; it replaces the configured one (LEADFLOW_VERTICALS) until deleted.
    {34, R"sql(
CREATE TABLE vertical_reoffers (
  vertical TEXT PRIMARY KEY,
  reoffer TEXT NOT NULL,
  set_at_ms INTEGER NOT NULL
);
)sql"},
    // The ledger's journal filtered by account (docs/money.md, "The ledger's journal"): a
    // buyer's or a seller's entries in the journal's order, time then id, read as a range of its
    // own index rather than by walking the whole ledger. SQLite appends the rowid (the entry's
    // id) to each index, so ledger_by_time (at) already serves the journal unfiltered or by time.
    {35, R"sql(
CREATE INDEX ledger_by_buyer ON ledger_entries (buyer_id, at);
CREATE INDEX ledger_by_seller ON ledger_entries (seller_id, at);
)sql"},
    // PostgreSQL's revenue rollups became one write per rollup row and statement (its
    // migration 36). SQLite has row triggers only, and its per-entry upsert rewrites the row in
    // place (no row versions to pass), so its trigger stays: this version changes nothing here.
    {36, R"sql(
SELECT 1;
)sql"},
    // Postback events written once each (docs/postbacks.md#the-outbox): the transaction that
    // decides, returns or settles a lead appends one row here, not one per endpoint (an append
    // to one table where the rows per endpoint cost each lead four index entries apiece); the
    // sender's claim fans them out into postback_outbox, per the view below, the one place that
    // says which endpoints an event goes to: the seller's active ones, for all its campaigns or
    // the lead's, subscribed to its kind, made no later than the event.
    {37, R"sql(
CREATE TABLE postback_events (
  seq           INTEGER PRIMARY KEY,
  event_id      TEXT NOT NULL,
  kind          TEXT NOT NULL,
  lead_id       TEXT NOT NULL,
  seller_id     TEXT NOT NULL,
  campaign_id   TEXT NOT NULL,
  status        TEXT NOT NULL,
  sold          INTEGER NOT NULL,
  payout_cents  INTEGER NOT NULL,
  reason        TEXT NOT NULL,
  occurred_at   INTEGER NOT NULL
);
CREATE VIEW postback_event_deliveries AS
SELECT ev.seq, ev.event_id, ev.kind, ev.lead_id, ev.seller_id, ev.campaign_id, ev.status,
       ev.sold, ev.payout_cents, ev.reason, ev.occurred_at, e.id AS endpoint_id
FROM postback_events ev JOIN postback_endpoints e ON e.seller_id = ev.seller_id
  AND (e.campaign_id = '' OR e.campaign_id = ev.campaign_id)
WHERE e.active = 1 AND instr(e.events, ',' || ev.kind || ',') > 0
  AND e.created_at_ms <= ev.occurred_at;
)sql"},
    // An endpoint takes the events that happen while it is on (docs/postbacks.md#endpoints):
    // its last spell on, kept by the API (postbacks::switched). Switched off, the events of its
    // spell still waiting to be fanned out are its own and wait with the rest; before this, the
    // view read whether it was on when a claim fanned an event out, so an endpoint switched off
    // in that moment lost the events of its last moments on. An endpoint already off keeps the
    // time of its last change as the end of its spell.
    {38, R"sql(
ALTER TABLE postback_endpoints ADD COLUMN on_since_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE postback_endpoints ADD COLUMN off_since_ms INTEGER NOT NULL DEFAULT 0;
UPDATE postback_endpoints SET on_since_ms = created_at_ms,
  off_since_ms = CASE WHEN active = 0 THEN updated_at_ms ELSE 0 END;
DROP VIEW postback_event_deliveries;
CREATE VIEW postback_event_deliveries AS
SELECT ev.seq, ev.event_id, ev.kind, ev.lead_id, ev.seller_id, ev.campaign_id, ev.status,
       ev.sold, ev.payout_cents, ev.reason, ev.occurred_at, e.id AS endpoint_id
FROM postback_events ev JOIN postback_endpoints e ON e.seller_id = ev.seller_id
  AND (e.campaign_id = '' OR e.campaign_id = ev.campaign_id)
WHERE instr(e.events, ',' || ev.kind || ',') > 0
  AND e.created_at_ms <= ev.occurred_at AND e.on_since_ms <= ev.occurred_at
  AND (e.active = 1 OR ev.occurred_at < e.off_since_ms);
)sql"},
    // Endpoints carry a version, as the other records people edit (docs/versions.md): a change
    // is written only at the version it was made on, so two at once never undo each other.
    {39, R"sql(
ALTER TABLE postback_endpoints ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
)sql"},
    // A vertical's re-offer policy set by the operator carries a version too, and a reset keeps
    // its row (not active) so that the version keeps growing through resets: a change made on
    // a policy read before a reset and a new setting is refused, not written over the new one.
    {40, R"sql(
ALTER TABLE vertical_reoffers ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE vertical_reoffers ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
)sql"},
};

}  // namespace

std::span<const Migration> later_migrations() { return kLaterMigrations; }

}  // namespace leadflow::sqlite
