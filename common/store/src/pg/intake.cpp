// The PostgreSQL adapter of the intake port (leadflow/store/intake.hpp): leads as received, their
// outcomes, Idempotency-Keys.
#include "insert_refusals.hpp"
#include "pg/adapter.hpp"

namespace leadflow::pg {

namespace {

/// A refusal no retry gets past: SQLSTATE classes 22 (data exception: a value too long, a byte
/// sequence invalid in UTF-8), 23 (integrity: CHECK, NOT NULL, FOREIGN KEY) and 54 (a program
/// limit, e.g. an index row too large). Anything else (a lost connection, a serialization
/// failure, an unknown column while a migration is under way) is an outage of ours.
bool refused_for_good(const PgError& e) {
  return e.sqlstate.starts_with("22") || e.sqlstate.starts_with("23") ||
         e.sqlstate.starts_with("54");
}

std::vector<LeadInsertResult> insert_lead_batch(Connection& c, std::span<const Lead> leads,
                                                std::span<const SearchKeys> keys);

}  // namespace

std::vector<LeadInsertResult> PgStore::insert_leads(std::span<const Lead> all_leads,
                                                    std::span<const SearchKeys> all_keys) {
  // A batch refused for good is split to find the lead refused (insert_refusals.hpp).
  return store_rows::insert_or_refuse(
      all_leads, all_keys,
      [&](std::span<const Lead> leads, std::span<const SearchKeys> keys, std::string& refusal) {
        return run("insert_leads", std::vector<LeadInsertResult>{}, [&](Connection& c) {
          try {
            return insert_lead_batch(c, leads, keys);
          } catch (const PgError& e) {
            if (refused_for_good(e)) refusal = e.sqlstate + " " + e.message;
            throw;
          }
        });
      });
}

namespace {

/// One INSERT for the whole batch (its own transaction), then one read of the statuses of the
/// leads that already existed. Rows are inserted in id order, so two batches sharing leads
/// wait on each other instead of deadlocking. An empty vector means nothing was written.
///
/// The transaction commits without waiting for its WAL to reach the disk (synchronous_commit
/// off): a pending row is worth keeping only once something depends on it, and everything
/// that does (the lead's post intent, its outcome) commits synchronously later, which flushes
/// the WAL up to itself and so this insert with it. A server crash before that may lose the
/// row; the lead, not yet committed in the queue, is delivered and inserted again. The
/// worker waits on this insert before every auction, and a sync seller waits on the worker.
std::vector<LeadInsertResult> insert_lead_batch(Connection& c, std::span<const Lead> leads,
                                                std::span<const SearchKeys> keys) {
  {
    std::vector<LeadInsertResult> results(leads.size());
    if (leads.empty()) return results;
    constexpr int kColumns = 27;
    ArrayText cols[kColumns];
    const SearchKeys none;
    for (std::size_t n = 0; n < leads.size(); ++n) {
      const Lead& l = leads[n];
      const SearchKeys& k = n < keys.size() ? keys[n] : none;
      int i = 0;
      for (std::string_view v :
           {std::string_view(l.id), std::string_view(l.seller_id), std::string_view(l.campaign_id),
            std::string_view(l.api_key_id), surface_name(l.surface), std::string_view(l.first_name),
            std::string_view(l.last_name), std::string_view(l.email), std::string_view(l.phone),
            std::string_view(l.zip_code), std::string_view(l.zip4), std::string_view(l.state),
            std::string_view(l.vertical), std::string_view(l.source),
            std::string_view(l.landing_page), std::string_view(l.ip_address),
            std::string_view(l.user_agent), std::string_view(l.trustedform_cert_url),
            std::string_view(l.jornaya_leadid)})
        cols[i++].add(v);
      if (l.tcpa_consent)
        cols[i++].add(*l.tcpa_consent);
      else
        cols[i++].add_null();
      cols[i++].add(l.tcpa_consent_text);
      cols[i++].add(dump(custom_fields_to_json(l.custom_fields)));
      cols[i++].add(l.received_at_ms);
      cols[i++].add(l.sync_wait_ms);
      cols[i++].add(l.test);
      for (const std::string* key : {&k.email, &k.phone}) {
        if (key->empty())
          cols[i++].add_null();
        else
          cols[i++].add(*key);
      }
    }
    Params params;
    for (const auto& col : cols) params.add(col.str());

    std::vector<Statement> statements;
    statements.push_back({"BEGIN", Params()});
    statements.push_back({"SET LOCAL synchronous_commit TO OFF", Params()});
    statements.push_back(
        {"INSERT INTO leads (" LF_LEAD_COLUMNS ", email_key, phone_key) SELECT " LF_LEAD_COLUMNS
         ", email_key, phone_key"
         " FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[], $6::TEXT[],"
         " $7::TEXT[], $8::TEXT[], $9::TEXT[], $10::TEXT[], $11::TEXT[], $12::TEXT[],"
         " $13::TEXT[], $14::TEXT[], $15::TEXT[], $16::TEXT[], $17::TEXT[], $18::TEXT[],"
         " $19::TEXT[], $20::BOOLEAN[], $21::TEXT[], $22::TEXT[], $23::BIGINT[],"
         " $24::INTEGER[], $25::BOOLEAN[], $26::TEXT[], $27::TEXT[]) WITH ORDINALITY AS batch "
         "(" LF_LEAD_COLUMNS ", email_key, phone_key, ord)"
         " ORDER BY id, ord ON CONFLICT (id) DO NOTHING RETURNING id",
         std::move(params)});
    statements.push_back({"COMMIT", Params()});
    const std::vector<Result> done = c.exec_pipeline(statements, Effect::kWrite);
    const Result& inserted = done[2];

    std::unordered_set<std::string> fresh;
    for (int i = 0; i < inserted.rows(); ++i) fresh.insert(inserted.text(i, 0));
    // Of two copies of one id in the batch, the first is the inserted one.
    ArrayText existing;
    bool any_existing = false;
    for (std::size_t i = 0; i < leads.size(); ++i) {
      results[i].inserted = fresh.erase(leads[i].id) > 0;
      if (!results[i].inserted) {
        existing.add(leads[i].id);
        any_existing = true;
      }
    }
    if (!any_existing) return results;
    // A redelivery: report what became of the lead the first time.
    const Result statuses = c.exec("SELECT id, status FROM leads WHERE id = ANY ($1::TEXT[])",
                                   Params().add(existing.str()), Effect::kRead);
    std::unordered_map<std::string, DeliveryStatus> status_of;
    for (int i = 0; i < statuses.rows(); ++i)
      status_of[statuses.text(i, 0)] =
          parse_delivery_status(statuses.text(i, 1)).value_or(DeliveryStatus::kPending);
    for (std::size_t i = 0; i < leads.size(); ++i)
      if (!results[i].inserted)
        if (auto it = status_of.find(leads[i].id); it != status_of.end())
          results[i].existing_status = it->second;
    return results;
  }
}

}  // namespace

/// The lead and its sales on one leased connection.
Lookup<LeadRecord> PgStore::get_lead(std::string_view id) {
  return run("get_lead", Lookup<LeadRecord>{}, [&](Connection& c) -> Lookup<LeadRecord> {
    const Result lead = c.exec("SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
                               ", attempts, ineligible FROM leads WHERE id = $1",
                               Params().add(id), Effect::kRead);
    if (lead.rows() == 0) return {StoreStatus::kNotFound, std::nullopt};
    LeadRecord r = read_lead(Row{lead, 0}, true);
    if (r.distribution.status == DeliveryStatus::kDelivered ||
        r.distribution.status == DeliveryStatus::kReturned) {
      // Committed with the status it was read with (or later, by a settlement).
      const Result sales =
          c.exec("SELECT " LF_SALE_COLUMNS " FROM sales WHERE lead_id = $1 ORDER BY slot",
                 Params().add(id), Effect::kRead);
      std::vector<Sale> all;
      all.reserve(static_cast<std::size_t>(sales.rows()));
      for (int i = 0; i < sales.rows(); ++i) all.push_back(read_sale(Row{sales, i}));
      attach_sales(r, std::move(all));
    }
    return {StoreStatus::kOk, std::move(r)};
  });
}

std::optional<std::vector<LeadRecord>> PgStore::list_leads(const LeadQuery& lq) {
  using Page = std::optional<std::vector<LeadRecord>>;
  return run("list_leads", Page{}, [&](Connection& c) -> Page {
    // Only the filters in use appear, each as a placeholder: the values stay parameters.
    std::string sql =
        "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS " FROM leads WHERE TRUE";
    Params params;
    auto filter = [&](const char* condition, auto value) {
      params.add(value);
      sql += " AND ";
      sql += condition;
      sql += " $" + std::to_string(params.size());
    };
    if (!lq.lead_id.empty()) filter("id =", lq.lead_id);
    if (!lq.email_key.empty()) filter("email_key =", lq.email_key);
    if (!lq.phone_key.empty()) filter("phone_key =", lq.phone_key);
    if (!lq.seller_id.empty()) filter("seller_id =", lq.seller_id);
    if (lq.status) filter("status =", to_string(*lq.status));
    if (lq.test) filter("test =", *lq.test);
    if (!lq.vertical.empty()) filter("vertical =", lq.vertical);
    if (!lq.source.empty()) filter("source =", lq.source);
    // Every lead the buyer bought, a share of a shared sale included. A search finds its few
    // leads first and asks of each whether the buyer bought it.
    const bool search = !lq.lead_id.empty() || !lq.email_key.empty() || !lq.phone_key.empty();
    if (!lq.buyer_id.empty()) {
      filter(search ? "EXISTS (SELECT 1 FROM sales WHERE sales.lead_id = leads.id AND"
                      " sales.buyer_id ="
                    : "id IN (SELECT lead_id FROM sales WHERE buyer_id =",
             lq.buyer_id);
      sql += ")";
    }
    if (lq.created_from_ms != 0) filter("received_at >=", lq.created_from_ms);
    if (lq.created_to_ms != 0) filter("received_at <", lq.created_to_ms);
    if (!lq.before_id.empty()) filter("id <", lq.before_id);
    params.add(clamp_limit(lq.limit));
    sql += " ORDER BY id DESC LIMIT $" + std::to_string(params.size());

    const Result r = c.exec(sql.c_str(), params, Effect::kRead);
    std::vector<LeadRecord> out;
    out.reserve(static_cast<std::size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) out.push_back(read_lead(Row{r, i}, false));
    return out;
  });
}

/// Per outcome: kOk (written), kConflict (already decided: the first outcome stays; also for
/// an outcome that decides nothing, i.e. status pending), kNotFound (no such lead). When the
/// transaction itself fails, every result is kUnavailable and nothing was written.
///
/// One transaction, two round trips for any batch size (pipelines): BEGIN and the lock of the
/// batch's lead rows in id order (so batches overlapping in any order wait instead of
/// deadlocking); the winners are decided here from the locked statuses; then one statement
/// writing every winner's lead row and sales, one appending the sales' ledger entries
/// (money::sale_entries), the rollups' counts, and COMMIT. A seller waiting on a sync lead
/// waits on this write.
std::vector<StoreStatus> PgStore::record_outcomes(std::span<const OutcomeRecord> outcomes) {
  const std::vector<StoreStatus> all_failed(outcomes.size(), StoreStatus::kUnavailable);
  if (outcomes.empty()) return {};
  return run("record_outcomes", all_failed, [&](Connection& c) {
    std::vector<StoreStatus> results(outcomes.size(), StoreStatus::kUnavailable);
    ArrayText ids;
    for (const auto& o : outcomes) ids.add(o.lead_id);
    // On any failure from here the pool rolls the open transaction back. Whether the lead's
    // seller has a postback endpoint is read here, not from a cache, so an endpoint another
    // process made before this read is never missed (outbox_statement reads them again).
    const std::vector<Result> begun = c.exec_pipeline(
        {{"BEGIN", Params()},
         {"SELECT id, status, EXISTS (SELECT 1 FROM sales WHERE sales.lead_id = leads.id),"
          " received_at, seller_id, campaign_id, vertical, source,"
          " EXISTS (SELECT 1 FROM postback_endpoints pe WHERE pe.seller_id = leads.seller_id)"
          " FROM leads WHERE id = ANY ($1::TEXT[]) ORDER BY id FOR UPDATE",
          Params().add(ids.str())}},
        Effect::kRead);
    const Result& locked = begun[1];
    struct Current {
      bool pending;
      bool has_sale;
      LeadKeys keys;
      bool subscribed;  // the seller has a postback endpoint, on or off
    };
    std::unordered_map<std::string, Current> current;
    for (int i = 0; i < locked.rows(); ++i)
      current[locked.text(i, 0)] = {
          locked.text(i, 1) == "pending", locked.boolean(i, 2),
          LeadKeys{locked.int64(i, 3), locked.text(i, 4), locked.text(i, 5), locked.text(i, 6),
                   locked.text(i, 7)},
          locked.boolean(i, 8)};
    PerformanceDeltas performance;
    UnsoldDeltas unsold;

    ArrayText id, status, buyer, price, payout, buyer_lead_id, reason, decided_at, attempts,
        ineligible;
    ArrayText sale_lead, sale_slot, sale_buyer, sale_price, sale_payout, sale_reference;
    ArrayText reoffer_lead, reoffer_due;  // second chances, scheduled with their outcome
    bool any_reoffer = false;
    // The sales' ledger entries, each with the key of the revenue rollup row it adds to.
    std::vector<std::pair<std::tuple<std::int64_t, std::string, std::string, std::string,
                                     std::string, std::string, std::string, std::size_t>,
                          money::LedgerEntry>>
        entries;
    bool any = false;
    std::vector<OutboxEvent> outbox;  // for sellers with an endpoint only
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      const OutcomeRecord& o = outcomes[i];
      const Distribution& d = o.distribution;
      const auto it = current.find(o.lead_id);
      if (it == current.end()) {
        results[i] = StoreStatus::kNotFound;
        continue;
      }
      const std::vector<Sale> sales = sales_of(d);
      const bool sale = !sales.empty();
      // A pending outcome decides nothing; a decided lead keeps its first outcome; a sale
      // row already there (never for a pending lead, unless data was damaged) refuses a sale.
      if (d.status == DeliveryStatus::kPending || !it->second.pending ||
          (sale && it->second.has_sale)) {
        results[i] = StoreStatus::kConflict;
        continue;
      }
      it->second.pending = false;  // a later outcome of this lead in the batch conflicts
      results[i] = StoreStatus::kOk;
      any = true;
      id.add(o.lead_id);
      status.add(to_string(d.status));
      buyer.add(d.buyer_id);
      price.add(d.price);
      payout.add(d.payout);
      buyer_lead_id.add(d.buyer_lead_id);
      reason.add(d.reason);
      decided_at.add(d.decided_at_ms);
      attempts.add(dump(attempts_to_json(d.attempts)));
      ineligible.add(dump(ineligible_to_json(d.ineligible)));
      if (it->second.subscribed)
        if (auto event = outcome_outbox_event(o.lead_id, d)) outbox.push_back(std::move(*event));
      add_outcome(performance, it->second.keys, d);
      add_unsold(unsold, it->second.keys, d);
      if (o.reoffer_at_ms > 0 && d.status == DeliveryStatus::kUnsold) {
        reoffer_lead.add(o.lead_id);
        reoffer_due.add(o.reoffer_at_ms);
        any_reoffer = true;
      }
      for (std::size_t slot = 0; slot < sales.size(); ++slot) {
        sale_lead.add(o.lead_id);
        sale_slot.add(static_cast<std::int64_t>(slot));
        sale_buyer.add(sales[slot].buyer_id);
        sale_price.add(sales[slot].price);
        sale_payout.add(sales[slot].payout);
        sale_reference.add(sales[slot].buyer_lead_id);
      }
      const LeadKeys& keys = it->second.keys;
      std::vector<money::LedgerEntry> booked = money::sale_entries(
          {o.lead_id, keys.seller_id, keys.campaign_id}, sales, d.decided_at_ms);
      for (std::size_t slot = 0; slot < booked.size(); ++slot) {
        money::LedgerEntry& e = booked[slot];
        entries.push_back({{e.at_ms - e.at_ms % kRollupBucketMs, e.seller_id, e.campaign_id,
                            e.buyer_id, keys.vertical, keys.source, e.lead_id, slot},
                           std::move(e)});
      }
    }
    // The entries in the revenue rollup's key order (byte order, as its keys' "C" collation):
    // its trigger updates a row per entry, and every batch then locks those rows in one order.
    std::sort(entries.begin(), entries.end(),
              [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<money::LedgerEntry> ledger;
    ledger.reserve(entries.size());
    for (auto& [key, e] : entries) ledger.push_back(std::move(e));
    std::vector<Statement> finish;
    if (any) {
      finish.push_back(
          {"WITH batch AS (SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[],"
           "   $4::BIGINT[], $5::BIGINT[], $6::TEXT[], $7::TEXT[], $8::BIGINT[], $9::TEXT[],"
           "   $10::TEXT[]) AS b (id, status, buyer_id, price, payout, buyer_lead_id, reason,"
           "   decided_at, attempts, ineligible)),"
           " decided AS (UPDATE leads SET status = batch.status, buyer_id = batch.buyer_id,"
           "   price_cents = batch.price, payout_cents = batch.payout,"
           "   buyer_lead_id = batch.buyer_lead_id, reason = batch.reason,"
           "   decided_at = batch.decided_at, attempts = batch.attempts,"
           "   ineligible = batch.ineligible, changed_xid = pg_current_xact_id()"
           "   FROM batch WHERE leads.id = batch.id"
           "   RETURNING leads.id, leads.decided_at, leads.email, leads.phone, leads.email_key,"
           "   leads.phone_key),"
           " sold AS (SELECT * FROM unnest($11::TEXT[], $12::INTEGER[], $13::TEXT[],"
           "   $14::BIGINT[], $15::BIGINT[], $16::TEXT[]) AS s (lead_id, slot, buyer_id, price,"
           "   payout, buyer_lead_id))"
           " INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
           "   email, phone, buyer_lead_id, email_key, phone_key)"
           " SELECT sold.lead_id, sold.slot, sold.buyer_id, sold.price, sold.payout,"
           "   decided.decided_at, decided.email, decided.phone, sold.buyer_lead_id,"
           "   decided.email_key, decided.phone_key"
           " FROM sold JOIN decided ON decided.id = sold.lead_id",
           Params()
               .add(id.str())
               .add(status.str())
               .add(buyer.str())
               .add(price.str())
               .add(payout.str())
               .add(buyer_lead_id.str())
               .add(reason.str())
               .add(decided_at.str())
               .add(attempts.str())
               .add(ineligible.str())
               .add(sale_lead.str())
               .add(sale_slot.str())
               .add(sale_buyer.str())
               .add(sale_price.str())
               .add(sale_payout.str())
               .add(sale_reference.str())});
      if (!ledger.empty()) finish.push_back(ledger_statement(ledger));
      if (any_reoffer) {
        // The live auction's intents were answered: a re-offer starts with none.
        finish.push_back(
            {"WITH due AS (SELECT * FROM unnest($1::TEXT[], $2::BIGINT[]) AS r (lead_id, due_at)),"
             " cleared AS (DELETE FROM post_intents WHERE lead_id IN (SELECT lead_id FROM due))"
             " INSERT INTO reoffers (lead_id, round, due_at) SELECT lead_id, 1, due_at FROM due",
             Params().add(reoffer_lead.str()).add(reoffer_due.str())});
      }
      if (!outbox.empty()) finish.push_back(outbox_statement(outbox));
    }
    for (Statement& st : outcome_statements({std::move(performance), std::move(unsold)}))
      finish.push_back(std::move(st));
    finish.push_back({"COMMIT", Params()});
    // From here the outcome is unknown if the connection breaks: never retried.
    c.mark_not_retryable();
    c.exec_pipeline(finish, Effect::kWrite);
    return results;
  });
}

StoreStatus PgStore::claim_idempotency_key(const IdempotencyRecord& r,
                                           std::int64_t expire_before_ms,
                                           IdempotencyRecord& existing) {
  return run("claim_idempotency_key", StoreStatus::kUnavailable, [&](Connection& c) {
    // The holder may release its claim between the two statements: then claim again.
    for (int attempt = 0; attempt < 3; ++attempt) {
      // Claims the key, or takes it over from an expired claim, in one statement.
      const Result claimed = c.exec(
          "INSERT INTO idempotency_keys (scope, key, request_hash, lead_id, status, response,"
          " created_at) VALUES ($1, $2, $3, $4, 0, '', $5)"
          " ON CONFLICT (scope, key) DO UPDATE SET request_hash = excluded.request_hash,"
          " lead_id = excluded.lead_id, status = 0, response = '',"
          " created_at = excluded.created_at WHERE idempotency_keys.created_at < $6"
          " RETURNING 1",
          Params()
              .add(r.scope)
              .add(r.key)
              .add(r.request_hash)
              .add(r.lead_id)
              .add(r.created_at_ms)
              .add(expire_before_ms),
          Effect::kWrite);
      if (claimed.rows() > 0) return StoreStatus::kOk;
      const Result held = c.exec(
          "SELECT scope, key, request_hash, lead_id, status, response, created_at"
          " FROM idempotency_keys WHERE scope = $1 AND key = $2",
          Params().add(r.scope).add(r.key), Effect::kRead);
      if (held.rows() == 0) continue;
      existing.scope = held.text(0, 0);
      existing.key = held.text(0, 1);
      existing.request_hash = held.text(0, 2);
      existing.lead_id = held.text(0, 3);
      existing.status = static_cast<int>(held.int64(0, 4));
      existing.response = held.text(0, 5);
      existing.created_at_ms = held.int64(0, 6);
      return StoreStatus::kConflict;
    }
    log(LogLevel::kWarn, "store_unavailable",
        {{"op", "claim_idempotency_key"}, {"detail", "the key kept changing hands"}});
    return StoreStatus::kUnavailable;
  });
}

StoreStatus PgStore::complete_idempotency_key(std::string_view scope, std::string_view key,
                                              int status, std::string_view response) {
  return write("complete_idempotency_key",
               "UPDATE idempotency_keys SET status = $3, response = $4"
               " WHERE scope = $1 AND key = $2",
               Params().add(scope).add(key).add(status).add(response));
}

StoreStatus PgStore::release_idempotency_key(std::string_view scope, std::string_view key) {
  return write("release_idempotency_key",
               "DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND status = 0",
               Params().add(scope).add(key));
}

}  // namespace leadflow::pg
