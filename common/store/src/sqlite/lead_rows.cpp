// The rows a lead is written as: its leads row on insert, and on its outcome the decided columns
// and, for a sale, the sales rows and their ledger entries.
#include "sqlite/lead_rows.hpp"

#include "leadflow/base/log.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "performance_rows.hpp"
#include "rollup_tiers.hpp"
#include "rows.hpp"

namespace leadflow::sqlite {

using store_rows::add_outcome;
using store_rows::add_unsold;
using store_rows::kFigures;
using store_rows::performance_additions;
using store_rows::performance_column_list;
using store_rows::sales_of;
using store_rows::surface_name;

void bind_lead(Query& q, const Lead& l, const std::string& custom_fields) {
  q.bind(l.id)
      .bind(l.seller_id)
      .bind(l.campaign_id)
      .bind(l.api_key_id)
      .bind(surface_name(l.surface))
      .bind(l.first_name)
      .bind(l.last_name)
      .bind(l.email)
      .bind(l.phone)
      .bind(l.zip_code)
      .bind(l.zip4)
      .bind(l.state)
      .bind(l.vertical)
      .bind(l.source)
      .bind(l.landing_page)
      .bind(l.ip_address)
      .bind(l.user_agent)
      .bind(l.trustedform_cert_url)
      .bind(l.jornaya_leadid);
  if (l.tcpa_consent)
    q.bind(*l.tcpa_consent);
  else
    q.bind_null();
  q.bind(l.tcpa_consent_text).bind(custom_fields).bind(l.received_at_ms).bind(l.sync_wait_ms);
  q.bind(l.test);
}

int record_outcome(Connection& c, const OutcomeRecord& o, const std::string& attempts,
                   const std::string& ineligible, StoreStatus& result, OutcomeDeltas& deltas,
                   LeadKeys& keys) {
  const Distribution& d = o.distribution;
  if (d.status == DeliveryStatus::kPending) {
    result = StoreStatus::kConflict;  // decides nothing; there is no "invalid" status
    return SQLITE_OK;
  }
  const std::vector<Sale> sales = sales_of(d);
  const bool sale = !sales.empty();
  // The sales rows are written after the lead row; a savepoint undoes the lead row if a sale
  // constraint refuses one, so a lead is never marked delivered without all of its sales.
  if (sale)
    if (int rc = Query(c, "SAVEPOINT outcome").run()) return rc;
  // The keys the rollup counts the lead under come back with the update (and to the caller).
  bool updated = false;
  {
    Query q(c,
            "UPDATE leads SET status = ?2, buyer_id = ?3, price_cents = ?4, payout_cents = ?5,"
            " buyer_lead_id = ?6, reason = ?7, decided_at = ?8, attempts = ?9, ineligible = ?10,"
            " changed_seq = " LF_NEXT_CHANGE_SEQ
            " WHERE id = ?1 AND status = 'pending'"
            " RETURNING received_at, seller_id, campaign_id, vertical, source");
    q.bind(o.lead_id)
        .bind(to_string(d.status))
        .bind(d.buyer_id)
        .bind(d.price)
        .bind(d.payout)
        .bind(d.buyer_lead_id)
        .bind(d.reason)
        .bind(d.decided_at_ms)
        .bind(attempts)
        .bind(ineligible);
    int rc = q.step();
    if (rc == SQLITE_ROW) {
      updated = true;
      keys = {q.int64(0), q.text(1), q.text(2), q.text(3), q.text(4)};
      rc = q.step();
    }
    if (rc != SQLITE_DONE) return rc;
  }
  if (!updated) {
    if (sale)
      if (int rc = Query(c, "RELEASE outcome").run()) return rc;
    Query q(c, "SELECT 1 FROM leads WHERE id = ?1");
    const int rc = q.bind(o.lead_id).step();
    if (rc == SQLITE_ROW) {
      result = StoreStatus::kConflict;
    } else if (rc == SQLITE_DONE) {
      result = StoreStatus::kNotFound;
    } else {
      return rc;
    }
    return SQLITE_OK;
  }
  if (sale) {
    int rc = SQLITE_OK;
    for (std::size_t slot = 0; slot < sales.size() && rc == SQLITE_OK; ++slot) {
      const Sale& s = sales[slot];
      Query q(c,
              "INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
              " email, phone, buyer_lead_id, email_key, phone_key)"
              " SELECT id, ?2, ?3, ?4, ?5, ?6, email, phone, ?7, email_key, phone_key"
              " FROM leads WHERE id = ?1");
      rc = q.bind(o.lead_id)
               .bind(static_cast<std::int64_t>(slot))
               .bind(s.buyer_id)
               .bind(s.price)
               .bind(s.payout)
               .bind(d.decided_at_ms)
               .bind(s.buyer_lead_id)
               .run();
    }
    if (is_constraint(rc)) {
      if (int rb = Query(c, "ROLLBACK TO outcome").run()) return rb;
      result = StoreStatus::kConflict;
      return Query(c, "RELEASE outcome").run();
    }
    if (rc != SQLITE_OK) return rc;
    const auto entries =
        money::sale_entries({o.lead_id, keys.seller_id, keys.campaign_id}, sales, d.decided_at_ms);
    if (int rc = write_ledger_entries(c, entries)) return rc;
    if (int rel = Query(c, "RELEASE outcome").run()) return rel;
  }
  if (o.reoffer_at_ms > 0 && d.status == DeliveryStatus::kUnsold) {
    // Its second chance, durable with the outcome that makes it; the live auction's intents
    // were answered, so a re-offer starts with none.
    Query q(c, "INSERT INTO reoffers (lead_id, round, due_at) VALUES (?1, 1, ?2)");
    if (int rc = q.bind(o.lead_id).bind(o.reoffer_at_ms).run()) return rc;
    Query clear(c, "DELETE FROM post_intents WHERE lead_id = ?1");
    if (int rc = clear.bind(o.lead_id).run()) return rc;
  }
  result = StoreStatus::kOk;
  // The performance rollup counts the decided lead and its buyers' pings and posts, the unsold
  // rollup why nobody took it; the caller writes a batch's counts at once.
  add_outcome(deltas.performance, keys, d);
  add_unsold(deltas.unsold, keys, d);
  return SQLITE_OK;
}

int write_ledger_entries(Connection& c, std::span<const money::LedgerEntry> entries) {
  for (const money::LedgerEntry& e : entries) {
    Query q(c,
            "INSERT INTO ledger_entries (kind, lead_id, buyer_id, seller_id, campaign_id,"
            " revenue_cents, payout_cents, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    if (int rc = q.bind(e.kind)
                     .bind(e.lead_id)
                     .bind(e.buyer_id)
                     .bind(e.seller_id)
                     .bind(e.campaign_id)
                     .bind(e.revenue)
                     .bind(e.payout)
                     .bind(e.at_ms)
                     .run())
      return rc;
  }
  return SQLITE_OK;
}

int read_lead_keys(Connection& c, std::string_view lead_id, LeadKeys& keys) {
  Query q(c,
          "SELECT received_at, seller_id, campaign_id, vertical, source FROM leads WHERE id = ?1");
  const int rc = q.bind(lead_id).step();
  if (rc != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_NOTFOUND : rc;
  keys.received_at_ms = q.int64(0);
  keys.seller_id = q.text(1);
  keys.campaign_id = q.text(2);
  keys.vertical = q.text(3);
  keys.source = q.text(4);
  return SQLITE_OK;
}

namespace {

// "INSERT INTO <table> (<keys>, <figures>) VALUES (?1, ...) ON CONFLICT (<keys>) DO UPDATE SET
// <each figure added>": the upsert of one row of a rollup or its tiers.
std::string upsert_sql(const char* table, const std::string& keys, int key_count) {
  std::string s = std::string("INSERT INTO ") + table + " (" + keys + ", " +
                  performance_column_list() + ") VALUES (?1";
  for (int i = 1; i < key_count + kFigures; ++i) s += ", ?" + std::to_string(1 + i);
  return s + ") ON CONFLICT (" + keys + ") DO UPDATE SET " + performance_additions("");
}

template <typename Key>
void bind_key(Query& q, const Key& key) {
  std::apply([&](const auto&... k) { (q.bind(k), ...); }, key);
}

int write_performance(Connection& c, const PerformanceDeltas& deltas) {
  static const std::string sql = upsert_sql(
      "performance_rollup", "bucket, seller_id, campaign_id, buyer_id, vertical, source", 6);
  for (const auto& [key, figures] : deltas) {
    Query q(c, sql);
    bind_key(q, key);
    for (std::int64_t v : figures) q.bind(v);
    if (int rc = q.run()) return rc;
  }
  return SQLITE_OK;
}

int write_performance_tiers(Connection& c, const store_rows::PerformanceTierDeltas& deltas) {
  static const std::string sql = upsert_sql(
      "performance_tiers", "tier, bucket, seller_id, campaign_id, buyer_id, vertical, source", 7);
  for (const auto& [key, figures] : deltas) {
    Query q(c, sql);
    q.bind(static_cast<std::int64_t>(key.first));
    bind_key(q, key.second);
    for (std::int64_t v : figures) q.bind(v);
    if (int rc = q.run()) return rc;
  }
  return SQLITE_OK;
}

int write_unsold(Connection& c, const UnsoldDeltas& deltas) {
  for (const auto& [key, leads] : deltas) {
    Query q(c,
            "INSERT INTO unsold_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source,"
            " reason, leads) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            " ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source, reason)"
            " DO UPDATE SET leads = leads + excluded.leads");
    bind_key(q, key);
    if (int rc = q.bind(leads).run()) return rc;
  }
  return SQLITE_OK;
}

int write_unsold_tiers(Connection& c, const store_rows::UnsoldTierDeltas& deltas) {
  for (const auto& [key, leads] : deltas) {
    Query q(c,
            "INSERT INTO unsold_tiers (tier, bucket, seller_id, campaign_id, buyer_id, vertical,"
            " source, reason, leads) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
            " ON CONFLICT (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source,"
            " reason) DO UPDATE SET leads = leads + excluded.leads");
    q.bind(static_cast<std::int64_t>(key.first));
    bind_key(q, key.second);
    if (int rc = q.bind(leads).run()) return rc;
  }
  return SQLITE_OK;
}

// The rollups' rows only: a migration filling a rollup runs before the tiers exist, and the
// tiers' own migration fills them from the rollups.
int write_rollups(Connection& c, const OutcomeDeltas& deltas) {
  if (int rc = write_performance(c, deltas.performance)) return rc;
  return write_unsold(c, deltas.unsold);
}

}  // namespace

int write_outcome_deltas(Connection& c, const OutcomeDeltas& deltas) {
  if (int rc = write_rollups(c, deltas)) return rc;
  if (int rc = write_performance_tiers(c, store_rows::performance_tiers(deltas.performance)))
    return rc;
  return write_unsold_tiers(c, store_rows::unsold_tiers(deltas.unsold));
}

int backfill_rollups(Connection& c, bool buyers, bool unsold) {
  // Pages in id order, each page's counts written before the next is read: memory stays
  // bounded by a page's keys, whatever the store holds.
  constexpr int kPage = 5000;
  const std::string sql =
      std::string(
          "SELECT id, received_at, seller_id, campaign_id, vertical, source,"
          " status, reason, attempts, ineligible FROM leads WHERE id > ?1 AND ") +
      (buyers ? "status <> 'pending'" : "status IN ('unsold', 'rejected')") +
      " ORDER BY id LIMIT " + std::to_string(kPage);
  std::string after;
  std::int64_t leads = 0;
  for (;;) {
    OutcomeDeltas deltas;
    int n = 0;
    {
      Query q(c, sql);
      q.bind(after);
      int rc;
      while ((rc = q.step()) == SQLITE_ROW) {
        after = q.text(0);
        ++n;
        const LeadKeys keys{q.int64(1), q.text(2), q.text(3), q.text(4), q.text(5)};
        Distribution d;
        d.status = parse_delivery_status(q.text(6)).value_or(DeliveryStatus::kPending);
        d.reason = q.text(7);
        d.attempts = attempts_from_json(store_rows::parse_json(q.text(8)));
        d.ineligible = ineligible_from_json(store_rows::parse_json(q.text(9)));
        store_rows::backfill_lead(deltas, keys, d, buyers, unsold);
      }
      if (rc != SQLITE_DONE) return rc;
    }
    if (int rc = write_rollups(c, deltas)) return rc;
    leads += n;
    if (n < kPage) break;
    if (leads % 100'000 == 0) log(LogLevel::kInfo, "store_backfill", {{"leads", leads}});
  }
  return SQLITE_OK;
}

}  // namespace leadflow::sqlite
