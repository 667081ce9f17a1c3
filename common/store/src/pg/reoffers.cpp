// The PostgreSQL adapter of the re-offer port (leadflow/store/reoffers.hpp): the schedule of second
// chances, claimed with FOR UPDATE SKIP LOCKED under a lease, and the re-offer's outcome in one
// transaction.
#include <algorithm>
#include <tuple>

#include "leadflow/domain/lead_codec.hpp"
#include "pg/adapter.hpp"
#include "postback_rows.hpp"
#include "rollup_tiers.hpp"

namespace leadflow::pg {

namespace {

ReofferClaim read_claim(const Result& r, int i) {
  return {r.text(i, 0), static_cast<int>(r.int64(i, 1)), r.int64(i, 2)};
}

}  // namespace

/// Workers claiming at once skip each other's rows (SKIP LOCKED): each row goes to one of them,
/// and a row whose lease ended (its worker died) is claimed again.
std::optional<std::vector<ReofferClaim>> PgStore::claim_reoffers(std::int64_t now_ms, int limit,
                                                                 std::int64_t lease_until_ms) {
  using Out = std::optional<std::vector<ReofferClaim>>;
  return run("claim_reoffers", Out{}, [&](Connection& c) -> Out {
    const Result r = c.exec(
        "UPDATE reoffers SET lease_until = $3 FROM (SELECT lead_id FROM reoffers"
        "  WHERE due_at <= $1 AND lease_until < $1 ORDER BY due_at, lead_id LIMIT $2"
        "  FOR UPDATE SKIP LOCKED) AS due WHERE reoffers.lead_id = due.lead_id"
        " RETURNING reoffers.lead_id, reoffers.round, reoffers.due_at",
        Params().add(now_ms).add(static_cast<std::int64_t>(std::max(0, limit))).add(lease_until_ms),
        Effect::kWrite);
    std::vector<ReofferClaim> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(read_claim(r, i));
    std::sort(out.begin(), out.end(), [](const ReofferClaim& a, const ReofferClaim& b) {
      return std::tie(a.due_ms, a.lead_id) < std::tie(b.due_ms, b.lead_id);
    });
    return out;
  });
}

/// One transaction: the schedule's row first (run once: only the round still scheduled is
/// recorded), then the lead row locked, its history, sales, ledger entries and next round.
StoreStatus PgStore::record_reoffer(const ReofferOutcome& o) {
  return run("record_reoffer", StoreStatus::kUnavailable, [&](Connection& c) {
    Transaction tx(c);
    const Result mine = c.exec("DELETE FROM reoffers WHERE lead_id = $1 AND round = $2 RETURNING 1",
                               Params().add(o.lead_id).add(o.round), Effect::kWrite);
    if (mine.rows() == 0) return StoreStatus::kConflict;
    const Result lead = c.exec(
        "SELECT attempts, seller_id, campaign_id,"
        " (SELECT COUNT(*) FROM sales WHERE sales.lead_id = leads.id), received_at, vertical,"
        " source, status, ineligible FROM leads WHERE id = $1 FOR UPDATE",
        Params().add(o.lead_id), Effect::kRead);
    if (lead.rows() == 0) return StoreStatus::kNotFound;
    Distribution before;  // the lead as stored: its live outcome, while no re-offer sold it
    before.attempts = attempts_from_json(store_rows::parse_json(lead.text(0, 0)));
    before.status = parse_delivery_status(lead.text(0, 7)).value_or(DeliveryStatus::kPending);
    before.ineligible = ineligible_from_json(store_rows::parse_json(lead.text(0, 8)));
    const LeadKeys keys{lead.int64(0, 4), lead.text(0, 1), lead.text(0, 2), lead.text(0, 5),
                        lead.text(0, 6)};
    std::vector<Attempt> history = before.attempts;
    history.insert(history.end(), o.attempts.begin(), o.attempts.end());
    const std::string seller_id = lead.text(0, 1), campaign_id = lead.text(0, 2);
    const std::int64_t held = lead.int64(0, 3);
    Cents price = 0, payout = 0;
    for (std::size_t i = 0; i < o.sales.size(); ++i) {
      const Sale& s = o.sales[i];
      c.exec(
          "INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
          " email, phone, buyer_lead_id, email_key, phone_key, aged)"
          " SELECT id, $2, $3, $4, $5, $6, email, phone, $7, email_key, phone_key, TRUE"
          " FROM leads WHERE id = $1",
          Params()
              .add(o.lead_id)
              .add(held + static_cast<std::int64_t>(i))
              .add(s.buyer_id)
              .add(s.price)
              .add(s.payout)
              .add(o.at_ms)
              .add(s.buyer_lead_id),
          Effect::kWrite);
      price += s.price;
      payout += s.payout;
    }
    if (!o.sales.empty()) {
      const auto entries =
          money::sale_entries({o.lead_id, seller_id, campaign_id}, o.sales, o.at_ms);
      const Statement ledger = ledger_statement(entries);
      c.exec(ledger.sql, ledger.params, Effect::kWrite);
      // Each aged sale also in the revenue rollup's band of aged sales (docs/reports.md), under
      // the lock the ledger's trigger took for the revenue tiers.
      static const auto aged_sql =
          store_rows::aged_sale_sql({"$1::BIGINT", "$2::TEXT", "$3::TEXT", "$4::TEXT", "$5::TEXT",
                                     "$6::TEXT", "$7::BIGINT", "$8::BIGINT"});
      for (const auto& e : entries)
        for (const std::string& sql : aged_sql)
          c.exec(sql.c_str(),
                 Params()
                     .add(e.at_ms)
                     .add(e.seller_id)
                     .add(e.campaign_id)
                     .add(e.buyer_id)
                     .add(keys.vertical)
                     .add(keys.source)
                     .add(e.revenue)
                     .add(e.payout),
                 Effect::kWrite);
      // An aged sale is reported to the seller's postback endpoints in its own transaction.
      outbox_if_subscribed(c, reoffer_outbox_event(o.lead_id, payout, o.reason, o.at_ms));
    }
    // A sale makes the lead delivered and adds to its totals; the first buyer to take it is the
    // one it names. Unsold, only its history grows.
    const bool sold = !o.sales.empty();
    c.exec(
        "UPDATE leads SET attempts = $2,"
        " status = CASE WHEN $3 THEN 'delivered' ELSE status END,"
        " price_cents = price_cents + $4, payout_cents = payout_cents + $5,"
        " buyer_id = CASE WHEN $3 AND buyer_id = '' THEN $6 ELSE buyer_id END,"
        " buyer_lead_id = CASE WHEN $3 AND buyer_lead_id = '' THEN $7 ELSE buyer_lead_id END,"
        " reason = CASE WHEN $3 THEN $8 ELSE reason END,"
        " decided_at = CASE WHEN $3 THEN $9 ELSE decided_at END WHERE id = $1",
        Params()
            .add(o.lead_id)
            .add(dump(attempts_to_json(history)))
            .add(sold)
            .add(price)
            .add(payout)
            .add(sold ? o.sales.front().buyer_id : std::string())
            .add(sold ? o.sales.front().buyer_lead_id : std::string())
            .add(o.reason)
            .add(o.at_ms),
        Effect::kWrite);
    c.exec("DELETE FROM post_intents WHERE lead_id = $1", Params().add(o.lead_id), Effect::kWrite);
    {
      // The performance rollup: the buyers it asked, and the lead sold if this was its first sale;
      // the unsold rollup's second chances: a lead unsold live re-offered, then sold aged.
      OutcomeDeltas deltas;
      reports::add_reoffer(deltas.performance, keys, o.attempts, held == 0 && !o.sales.empty());
      for (int band : reports::second_chance_bands(o.round, held, !o.sales.empty()))
        reports::add_second_chance(deltas.unsold, keys, before, band);
      for (const Statement& st : outcome_statements(deltas))
        c.exec(st.sql, st.params, Effect::kWrite);
    }
    if (o.next_at_ms > 0)
      c.exec("INSERT INTO reoffers (lead_id, round, due_at) VALUES ($1, $2, $3)",
             Params().add(o.lead_id).add(o.round + 1).add(o.next_at_ms), Effect::kWrite);
    tx.commit();
    return StoreStatus::kOk;
  });
}

std::optional<std::int64_t> PgStore::count_reoffers(std::int64_t now_ms, bool due) {
  return run("count_reoffers", std::optional<std::int64_t>{},
             [&](Connection& c) -> std::optional<std::int64_t> {
               return c
                   .exec("SELECT COUNT(*) FROM reoffers WHERE NOT $2 OR due_at <= $1",
                         Params().add(now_ms).add(due), Effect::kRead)
                   .int64(0, 0);
             });
}

Lookup<ReofferClaim> PgStore::scheduled_reoffer(std::string_view lead_id) {
  return run(
      "scheduled_reoffer", Lookup<ReofferClaim>{}, [&](Connection& c) -> Lookup<ReofferClaim> {
        const Result r = c.exec("SELECT lead_id, round, due_at FROM reoffers WHERE lead_id = $1",
                                Params().add(lead_id), Effect::kRead);
        if (r.rows() == 0) return {StoreStatus::kNotFound, std::nullopt};
        return {StoreStatus::kOk, read_claim(r, 0)};
      });
}

}  // namespace leadflow::pg
