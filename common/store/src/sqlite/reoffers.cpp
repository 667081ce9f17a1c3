// The SQLite adapter of the re-offer port (leadflow/store/reoffers.hpp): the schedule of second
// chances, leased under the one writer, and the re-offer's outcome in one transaction.
#include "leadflow/domain/lead_codec.hpp"
#include "postback_rows.hpp"
#include "rollup_tiers.hpp"
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

namespace {

ReofferClaim read_claim(Query& q) { return {q.text(0), static_cast<int>(q.int64(1)), q.int64(2)}; }

}  // namespace

/// The one writer orders every claim: two workers claiming at once get different rows.
std::optional<std::vector<ReofferClaim>> SqliteStore::claim_reoffers(std::int64_t now_ms, int limit,
                                                                     std::int64_t lease_until_ms) {
  using Out = std::optional<std::vector<ReofferClaim>>;
  return guarded("claim_reoffers", Out{}, [&]() -> Out {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return (report(c, rc, "claim_reoffers"), std::nullopt);
    auto claims = rows_on<ReofferClaim>(
        c, "claim_reoffers",
        "SELECT lead_id, round, due_at FROM reoffers WHERE due_at <= ?1 AND lease_until < ?1"
        " ORDER BY due_at, lead_id LIMIT ?2",
        [&](Query& q) { q.bind(now_ms).bind(static_cast<std::int64_t>(std::max(0, limit))); },
        read_claim);
    if (!claims) return std::nullopt;
    for (const auto& claim : *claims) {
      Query q(c, "UPDATE reoffers SET lease_until = ?2 WHERE lead_id = ?1");
      if (int rc = q.bind(claim.lead_id).bind(lease_until_ms).run())
        return (report(c, rc, "claim_reoffers"), std::nullopt);
    }
    if (int rc = tx.commit()) return (report(c, rc, "claim_reoffers"), std::nullopt);
    return claims;
  });
}

StoreStatus SqliteStore::record_reoffer(const ReofferOutcome& o) {
  return guarded("record_reoffer", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    const auto failed = [&](int rc) { return report(c, rc, "record_reoffer"); };
    if (int rc = tx.begin()) return failed(rc);
    {
      // Run once: only the round still scheduled is recorded.
      Query q(c, "DELETE FROM reoffers WHERE lead_id = ?1 AND round = ?2");
      if (int rc = q.bind(o.lead_id).bind(static_cast<std::int64_t>(o.round)).run())
        return failed(rc);
      if (c.changes() == 0) return StoreStatus::kConflict;
    }
    std::string attempts_text, seller_id, campaign_id;
    Distribution before;  // the lead as stored: its live outcome, while no re-offer sold it
    {
      Query q(c,
              "SELECT attempts, seller_id, campaign_id, status, ineligible FROM leads"
              " WHERE id = ?1");
      const int rc = q.bind(o.lead_id).step();
      if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
      if (rc != SQLITE_ROW) return failed(rc);
      before.attempts = attempts_from_json(store_rows::parse_json(q.text(0)));
      std::vector<Attempt> history = before.attempts;
      history.insert(history.end(), o.attempts.begin(), o.attempts.end());
      attempts_text = dump(attempts_to_json(history));
      seller_id = q.text(1);
      campaign_id = q.text(2);
      before.status = parse_delivery_status(q.text(3)).value_or(DeliveryStatus::kPending);
      before.ineligible = ineligible_from_json(store_rows::parse_json(q.text(4)));
    }
    LeadKeys keys;
    if (int rc = read_lead_keys(c, o.lead_id, keys)) return failed(rc);
    std::int64_t held = 0;
    {
      Query q(c, "SELECT COUNT(*) FROM sales WHERE lead_id = ?1");
      const int rc = q.bind(o.lead_id).step();
      if (rc != SQLITE_ROW) return failed(rc);
      held = q.int64(0);
    }
    Cents price = 0, payout = 0;
    for (std::size_t i = 0; i < o.sales.size(); ++i) {
      const Sale& s = o.sales[i];
      Query q(c,
              "INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
              " email, phone, buyer_lead_id, email_key, phone_key, aged)"
              " SELECT id, ?2, ?3, ?4, ?5, ?6, email, phone, ?7, email_key, phone_key, 1"
              " FROM leads WHERE id = ?1");
      const int rc = q.bind(o.lead_id)
                         .bind(held + static_cast<std::int64_t>(i))
                         .bind(s.buyer_id)
                         .bind(s.price)
                         .bind(s.payout)
                         .bind(o.at_ms)
                         .bind(s.buyer_lead_id)
                         .run();
      if (is_constraint(rc)) return StoreStatus::kConflict;  // a buyer twice, or slot 20
      if (rc != SQLITE_OK) return failed(rc);
      price += s.price;
      payout += s.payout;
    }
    const auto entries = money::sale_entries({o.lead_id, seller_id, campaign_id}, o.sales, o.at_ms);
    if (int rc = write_ledger_entries(c, entries)) return failed(rc);
    // Each aged sale also in the revenue rollup's band of aged sales (docs/reports.md).
    static const auto aged_sql =
        store_rows::aged_sale_sql({"?1", "?2", "?3", "?4", "?5", "?6", "?7", "?8"});
    for (const auto& e : entries)
      for (const std::string& sql : aged_sql) {
        Query q(c, sql);
        q.bind(e.at_ms).bind(e.seller_id).bind(e.campaign_id).bind(e.buyer_id);
        if (int rc = q.bind(keys.vertical).bind(keys.source).bind(e.revenue).bind(e.payout).run())
          return failed(rc);
      }
    // An aged sale is reported to the seller's postback endpoints in its own transaction.
    if (!o.sales.empty())
      if (int rc = outbox_if_subscribed(c, seller_id,
                                        reoffer_outbox_event(o.lead_id, payout, o.reason, o.at_ms)))
        return failed(rc);
    {
      // A sale makes the lead delivered and adds to its totals; the first buyer to take it is
      // the one it names. Unsold, only its history grows.
      const bool sold = !o.sales.empty();
      // Bound as pointers until the statement runs: the strings must outlive it.
      const std::string first_buyer = sold ? o.sales.front().buyer_id : std::string();
      const std::string first_reference = sold ? o.sales.front().buyer_lead_id : std::string();
      Query q(c,
              "UPDATE leads SET attempts = ?2,"
              " status = CASE WHEN ?3 THEN 'delivered' ELSE status END,"
              " price_cents = price_cents + ?4, payout_cents = payout_cents + ?5,"
              " buyer_id = CASE WHEN ?3 AND buyer_id = '' THEN ?6 ELSE buyer_id END,"
              " buyer_lead_id = CASE WHEN ?3 AND buyer_lead_id = '' THEN ?7 ELSE buyer_lead_id END,"
              " reason = CASE WHEN ?3 THEN ?8 ELSE reason END,"
              " decided_at = CASE WHEN ?3 THEN ?9 ELSE decided_at END WHERE id = ?1");
      q.bind(o.lead_id)
          .bind(attempts_text)
          .bind(sold)
          .bind(price)
          .bind(payout)
          .bind(first_buyer)
          .bind(first_reference)
          .bind(o.reason)
          .bind(o.at_ms);
      if (int rc = q.run()) return failed(rc);
    }
    if (int rc = Query(c, "DELETE FROM post_intents WHERE lead_id = ?1").bind(o.lead_id).run())
      return failed(rc);
    {
      // The performance rollup: the buyers it asked, and the lead sold if this was its first sale;
      // the unsold rollup's second chances: a lead unsold live re-offered, then sold aged.
      OutcomeDeltas deltas;
      reports::add_reoffer(deltas.performance, keys, o.attempts, held == 0 && !o.sales.empty());
      for (int band : reports::second_chance_bands(o.round, held, !o.sales.empty()))
        reports::add_second_chance(deltas.unsold, keys, before, band);
      if (int rc = write_outcome_deltas(c, deltas)) return failed(rc);
    }
    if (o.next_at_ms > 0) {
      Query q(c, "INSERT INTO reoffers (lead_id, round, due_at) VALUES (?1, ?2, ?3)");
      if (int rc = q.bind(o.lead_id)
                       .bind(static_cast<std::int64_t>(o.round + 1))
                       .bind(o.next_at_ms)
                       .run())
        return failed(rc);
    }
    if (int rc = tx.commit()) return failed(rc);
    return StoreStatus::kOk;
  });
}

std::optional<std::int64_t> SqliteStore::count_reoffers(std::int64_t now_ms, bool due) {
  return read_optional<std::int64_t>(
      "count_reoffers", "SELECT COUNT(*) FROM reoffers WHERE NOT ?2 OR due_at <= ?1",
      [&](Query& q) { q.bind(now_ms).bind(due); }, [](Query& q) { return q.int64(0); });
}

Lookup<ReofferClaim> SqliteStore::scheduled_reoffer(std::string_view lead_id) {
  return lookup<ReofferClaim>(
      "scheduled_reoffer", "SELECT lead_id, round, due_at FROM reoffers WHERE lead_id = ?1",
      [&](Query& q) { q.bind(lead_id); }, read_claim);
}

}  // namespace leadflow::sqlite
