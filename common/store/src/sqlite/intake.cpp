// The SQLite adapter of the intake port (leadflow/store/intake.hpp): leads as received, their
// outcomes, Idempotency-Keys.
#include "insert_refusals.hpp"
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

/// An empty vector (instead of one result per lead) means nothing was written.
///
/// Committed without an fsync of its own (synchronous NORMAL for this transaction): a pending
/// row is worth keeping only once something depends on it, and everything that does (the
/// lead's post intent, its outcome) commits with an fsync of the write-ahead log later, which
/// makes every frame before it durable too. A process crash loses nothing (the frames are in
/// the file); a power loss before that fsync may lose the row, and the lead, not yet committed
/// in the queue, is delivered and inserted again. The worker waits on this insert before every
/// auction, and a sync seller waits on the worker.
namespace {

/// A refusal no retry gets past: a constraint (NOT NULL, CHECK, FOREIGN KEY, a trigger's
/// RAISE(ABORT)), a value too big, a type mismatch. Anything else (BUSY, IOERR, FULL, ...) is
/// an outage of ours.
bool refused_for_good(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_CONSTRAINT || primary == SQLITE_TOOBIG || primary == SQLITE_MISMATCH;
}

}  // namespace

std::vector<LeadInsertResult> SqliteStore::insert_leads(std::span<const Lead> all_leads,
                                                        std::span<const SearchKeys> all_keys) {
  // One transaction per batch; a batch refused for good is split to find the lead refused.
  const auto insert_batch = [&](std::span<const Lead> leads, std::span<const SearchKeys> keys,
                                std::string& refusal) {
    return guarded("insert_leads", std::vector<LeadInsertResult>{}, [&] {
      std::vector<LeadInsertResult> results(leads.size());
      if (leads.empty()) return results;
      const SearchKeys none;
      std::vector<std::string> custom(leads.size());
      for (std::size_t i = 0; i < leads.size(); ++i)
        custom[i] = dump(custom_fields_to_json(leads[i].custom_fields));

      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      const UnsyncedCommit unsynced(c);  // declared first: back to FULL after the transaction
      Transaction tx(c);
      if (int rc = tx.begin()) return failed(c, rc, "insert_leads", results);
      for (std::size_t i = 0; i < leads.size(); ++i) {
        {
          // changed_seq: the live feed's position (lead_changes.cpp), under the write lock.
          Query q(c, "INSERT INTO leads (" LF_LEAD_COLUMNS
                     ", email_key, phone_key, changed_seq) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                     "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, "
                     "?22, ?23, ?24, ?25, ?26, ?27, " LF_NEXT_CHANGE_SEQ
                     ") ON CONFLICT (id) DO NOTHING");
          bind_lead(q, leads[i], custom[i]);
          const SearchKeys& k = i < keys.size() ? keys[i] : none;
          q.bind_or_null(k.email).bind_or_null(k.phone);
          if (int rc = q.run()) {
            if (refused_for_good(rc)) refusal = c.message();
            return failed(c, rc, "insert_leads", results);
          }
        }
        if (c.changes() > 0) {
          results[i].inserted = true;
          continue;
        }
        // A redelivery: report what became of the lead the first time.
        Query q(c, "SELECT status FROM leads WHERE id = ?1");
        const int rc = q.bind(leads[i].id).step();
        if (rc != SQLITE_ROW) return failed(c, rc, "insert_leads", results);
        results[i].existing_status =
            parse_delivery_status(q.text(0)).value_or(DeliveryStatus::kPending);
      }
      if (int rc = tx.commit()) return failed(c, rc, "insert_leads", results);
      return results;
    });
  };
  return store_rows::insert_or_refuse(all_leads, all_keys, insert_batch);
}

/// The lead and its sales in one snapshot: one read lock, and sales that belong to the status read.
/// A lead whose sales could not be read is not answered without them: the read is kUnavailable.
Lookup<LeadRecord> SqliteStore::get_lead(std::string_view id) {
  return read_snapshot("get_lead", Lookup<LeadRecord>{}, [&](Connection& c) -> Lookup<LeadRecord> {
    Query q(c, "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
               ", attempts, ineligible FROM leads WHERE id = ?1");
    q.bind(id);
    const int rc = q.step();
    if (rc == SQLITE_DONE) return {StoreStatus::kNotFound, std::nullopt};
    if (rc != SQLITE_ROW) return (report(c, rc, "get_lead"), Lookup<LeadRecord>{});
    LeadRecord r = read_lead(q, true);
    if (r.distribution.status == DeliveryStatus::kDelivered ||
        r.distribution.status == DeliveryStatus::kReturned) {
      auto sales = rows_on<Sale>(
          c, "get_lead", "SELECT " LF_SALE_COLUMNS " FROM sales WHERE lead_id = ?1 ORDER BY slot",
          [&](Query& sq) { sq.bind(id); }, read_sale<Query>);
      if (!sales) return {};
      attach_sales(r, std::move(*sales));
    }
    return {StoreStatus::kOk, std::move(r)};
  });
}

std::optional<std::vector<LeadRecord>> SqliteStore::list_leads(const LeadQuery& lq) {
  using Page = std::optional<std::vector<LeadRecord>>;
  return guarded("list_leads", Page{}, [&]() -> Page {
    // One statement per combination of filters (each cached once): a fixed
    // "(? = '' OR col = ?)" form would hide the usable index from the planner. A search names
    // its index: without statistics the planner would rather walk a seller's (seller_id, id)
    // index, which is in the list's order, than the search key's, which finds a handful of rows.
    std::string sql = "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS " FROM leads";
    if (!lq.email_key.empty())
      sql += " INDEXED BY leads_by_email_key";
    else if (!lq.phone_key.empty())
      sql += " INDEXED BY leads_by_phone_key";
    sql += " WHERE 1 = 1";
    if (!lq.lead_id.empty()) sql += " AND id = ?";
    if (!lq.email_key.empty()) sql += " AND email_key = ?";
    if (!lq.phone_key.empty()) sql += " AND phone_key = ?";
    if (!lq.seller_id.empty()) sql += " AND seller_id = ?";
    if (lq.status) sql += " AND status = ?";
    if (lq.test) sql += " AND test = ?";
    if (!lq.vertical.empty()) sql += " AND vertical = ?";
    if (!lq.source.empty()) sql += " AND source = ?";
    // Every lead the buyer bought, a share of a shared sale included. A search finds its few
    // leads first and asks of each whether the buyer bought it; the list of every purchase of
    // the buyer (hundreds of thousands on a large store) is for the list alone.
    const bool search = !lq.lead_id.empty() || !lq.email_key.empty() || !lq.phone_key.empty();
    if (!lq.buyer_id.empty())
      sql += search ? " AND EXISTS (SELECT 1 FROM sales WHERE sales.lead_id = leads.id"
                      " AND sales.buyer_id = ?)"
                    : " AND id IN (SELECT lead_id FROM sales WHERE buyer_id = ?)";
    if (lq.created_from_ms != 0) sql += " AND received_at >= ?";
    if (lq.created_to_ms != 0) sql += " AND received_at < ?";
    if (!lq.before_id.empty()) sql += " AND id < ?";
    sql += " ORDER BY id DESC LIMIT ?";

    auto conn = readers_.acquire();
    if (!conn) return std::nullopt;
    Query q(*conn, sql);
    if (!lq.lead_id.empty()) q.bind(lq.lead_id);
    if (!lq.email_key.empty()) q.bind(lq.email_key);
    if (!lq.phone_key.empty()) q.bind(lq.phone_key);
    if (!lq.seller_id.empty()) q.bind(lq.seller_id);
    if (lq.status) q.bind(to_string(*lq.status));
    if (lq.test) q.bind(*lq.test);
    if (!lq.vertical.empty()) q.bind(lq.vertical);
    if (!lq.source.empty()) q.bind(lq.source);
    if (!lq.buyer_id.empty()) q.bind(lq.buyer_id);
    if (lq.created_from_ms != 0) q.bind(lq.created_from_ms);
    if (lq.created_to_ms != 0) q.bind(lq.created_to_ms);
    if (!lq.before_id.empty()) q.bind(lq.before_id);
    q.bind(clamp_limit(lq.limit));
    std::vector<LeadRecord> out;
    int rc;
    while ((rc = q.step()) == SQLITE_ROW) out.push_back(read_lead(q, false));
    if (rc != SQLITE_DONE) return (report(*conn, rc, "list_leads"), Page{});
    return out;
  });
}

StoreStatus SqliteStore::claim_idempotency_key(const IdempotencyRecord& r,
                                               std::int64_t expire_before_ms,
                                               IdempotencyRecord& existing) {
  return guarded("claim_idempotency_key", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    {
      // Claims the key, or takes it over from an expired claim, in one statement.
      Query q(c,
              "INSERT INTO idempotency_keys (scope, key, request_hash, lead_id, status, response,"
              " created_at) VALUES (?1, ?2, ?3, ?4, 0, '', ?5)"
              " ON CONFLICT (scope, key) DO UPDATE SET request_hash = excluded.request_hash,"
              " lead_id = excluded.lead_id, status = 0, response = '',"
              " created_at = excluded.created_at WHERE idempotency_keys.created_at < ?6");
      if (int rc = q.bind(r.scope)
                       .bind(r.key)
                       .bind(r.request_hash)
                       .bind(r.lead_id)
                       .bind(r.created_at_ms)
                       .bind(expire_before_ms)
                       .run())
        return report(c, rc, "claim_idempotency_key");
    }
    if (c.changes() > 0) return StoreStatus::kOk;
    Query q(c,
            "SELECT scope, key, request_hash, lead_id, status, response, created_at"
            " FROM idempotency_keys WHERE scope = ?1 AND key = ?2");
    q.bind(r.scope).bind(r.key);
    const int rc = q.step();
    if (rc != SQLITE_ROW)
      return report(c, rc == SQLITE_DONE ? SQLITE_ERROR : rc, "claim_idempotency_key");
    existing.scope = q.text(0);
    existing.key = q.text(1);
    existing.request_hash = q.text(2);
    existing.lead_id = q.text(3);
    existing.status = static_cast<int>(q.int64(4));
    existing.response = q.text(5);
    existing.created_at_ms = q.int64(6);
    return StoreStatus::kConflict;
  });
}

StoreStatus SqliteStore::complete_idempotency_key(std::string_view scope, std::string_view key,
                                                  int status, std::string_view response) {
  return write_one("complete_idempotency_key",
                   "UPDATE idempotency_keys SET status = ?3, response = ?4"
                   " WHERE scope = ?1 AND key = ?2",
                   [&](Query& q) { q.bind(scope).bind(key).bind(status).bind(response); });
}

StoreStatus SqliteStore::release_idempotency_key(std::string_view scope, std::string_view key) {
  return write_one("release_idempotency_key",
                   "DELETE FROM idempotency_keys WHERE scope = ?1 AND key = ?2 AND status = 0",
                   [&](Query& q) { q.bind(scope).bind(key); });
}

/// Per outcome: kOk (written), kConflict (already decided: the first outcome stays; also for
/// an outcome that decides nothing, i.e. status pending), kNotFound (no such lead). When the
/// transaction itself fails, every result is kUnavailable and nothing was written.
std::vector<StoreStatus> SqliteStore::record_outcomes(std::span<const OutcomeRecord> outcomes) {
  const std::vector<StoreStatus> all_failed(outcomes.size(), StoreStatus::kUnavailable);
  return guarded("record_outcomes", all_failed, [&] {
    std::vector<std::pair<std::string, std::string>> json_text;
    json_text.reserve(outcomes.size());
    for (const auto& o : outcomes)
      json_text.emplace_back(dump(attempts_to_json(o.distribution.attempts)),
                             dump(ineligible_to_json(o.distribution.ineligible)));

    std::vector<StoreStatus> results(outcomes.size(), StoreStatus::kUnavailable);
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return (report(c, rc, "record_outcomes"), all_failed);
    OutcomeDeltas deltas;
    if (int rc = refresh_subscribers(c)) return (report(c, rc, "record_outcomes"), all_failed);
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      LeadKeys keys;
      int rc = record_outcome(c, outcomes[i], json_text[i].first, json_text[i].second, results[i],
                              deltas, keys);
      if (rc != SQLITE_OK) return (report(c, rc, "record_outcomes"), all_failed);
      // The outbox rows of the outcome, in its transaction; none for a seller with no endpoint.
      if (results[i] != StoreStatus::kOk || !subscribers_.has(keys.seller_id)) continue;
      if (auto event = outcome_outbox_event(outcomes[i].lead_id, outcomes[i].distribution))
        if (int rc = write_outbox(c, *event)) return (report(c, rc, "record_outcomes"), all_failed);
    }
    if (int rc = write_outcome_deltas(c, deltas))
      return (report(c, rc, "record_outcomes"), all_failed);
    if (int rc = tx.commit()) return (report(c, rc, "record_outcomes"), all_failed);
    return results;
  });
}

}  // namespace leadflow::sqlite
