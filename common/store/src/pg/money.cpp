// The PostgreSQL adapter of the money port (leadflow/store/money.hpp): returns, settlements and the
// ledger.
#include "pg/adapter.hpp"

#include "leadflow/money/settlement.hpp"

namespace leadflow::pg {

Statement ledger_statement(std::span<const money::LedgerEntry> entries) {
  ArrayText kind, lead, buyer, seller, campaign, revenue, payout, at;
  for (const money::LedgerEntry& e : entries) {
    kind.add(e.kind);
    lead.add(e.lead_id);
    buyer.add(e.buyer_id);
    seller.add(e.seller_id);
    campaign.add(e.campaign_id);
    revenue.add(e.revenue);
    payout.add(e.payout);
    at.add(e.at_ms);
  }
  // WITH ORDINALITY and the ORDER BY keep the entries' order, so their ids follow it.
  return {
      "INSERT INTO ledger_entries (kind, lead_id, buyer_id, seller_id, campaign_id,"
      " revenue_cents, payout_cents, at)"
      " SELECT kind, lead_id, buyer_id, seller_id, campaign_id, revenue, payout, at"
      " FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],"
      "  $6::BIGINT[], $7::BIGINT[], $8::BIGINT[]) WITH ORDINALITY"
      "  AS e (kind, lead_id, buyer_id, seller_id, campaign_id, revenue, payout, at, n)"
      " ORDER BY n",
      Params()
          .add(kind.str())
          .add(lead.str())
          .add(buyer.str())
          .add(seller.str())
          .add(campaign.str())
          .add(revenue.str())
          .add(payout.str())
          .add(at.str())};
}

/// One transaction: the lead row locked first (FOR UPDATE), so two returns of one lead wait
/// for each other; the return's ledger entry is written in it.
ReturnResult PgStore::record_return(const ReturnRequest& r) {
  return run("record_return", ReturnResult{}, [&](Connection& c) -> ReturnResult {
    ReturnResult out;
    Transaction tx(c);
    return_in_transaction(c, r, out);
    if (out.status == ReturnStatus::kReturned)
      outbox_if_subscribed(c, return_outbox_event(out.ret));
    tx.commit();
    return out;
  });
}

/// One transaction (one commit) for the whole batch, each return checked as it would be alone
/// after the ones before it; their leads are locked in the batch's order. If the store fails
/// on any of them (a deadlock with another batch included), none is kept and every one
/// answers kUnavailable.
std::vector<ReturnResult> PgStore::record_returns(std::span<const ReturnRequest> rs) {
  const std::vector<ReturnResult> all_failed(rs.size());
  return run("record_returns", all_failed, [&](Connection& c) {
    std::vector<ReturnResult> out(rs.size());
    Transaction tx(c);
    std::vector<OutboxEvent> events;  // one statement writes the batch's
    for (std::size_t i = 0; i < rs.size(); ++i) {
      return_in_transaction(c, rs[i], out[i]);
      if (out[i].status == ReturnStatus::kReturned)
        events.push_back(return_outbox_event(out[i].ret));
    }
    if (!events.empty()) {
      const Statement st = outbox_statement(events);
      c.exec(st.sql, st.params, Effect::kWrite);
    }
    tx.commit();
    return out;
  });
}

/// One transaction, the lead row locked first. The sale a settlement makes, its payout and the
/// lead's new totals are money::settle_sold's; the sale's ledger entry is money::sale_entry's.
SettleResult PgStore::settle_lead(const Settlement& asked, const PayoutRule& payout) {
  return run("settle_lead", SettleResult{}, [&](Connection& c) -> SettleResult {
    Transaction tx(c);
    Settlement s = asked;
    // The lead: failed, or settled before (a shared sale is settled buyer by buyer).
    const Result found = c.exec(
        "SELECT lead.status = 'failed' OR EXISTS (SELECT 1 FROM settlements"
        "  WHERE settlements.lead_id = lead.id),"
        " (SELECT COUNT(*) FROM post_intents WHERE post_intents.lead_id = lead.id),"
        " (SELECT MIN(buyer_id) FROM post_intents WHERE post_intents.lead_id = lead.id),"
        " lead.status, lead.received_at, lead.seller_id, lead.campaign_id, lead.vertical,"
        " lead.source FROM (SELECT id, status, received_at, seller_id, campaign_id, vertical,"
        " source FROM leads WHERE id = $1 FOR UPDATE) AS lead",
        Params().add(s.lead_id), Effect::kRead);
    if (found.rows() == 0) return {SettleStatus::kNoSuchLead, {}};
    if (!found.boolean(0, 0)) return {SettleStatus::kNotUnknown, {}};
    const bool was_failed = found.text(0, 3) == "failed";
    const LeadKeys keys{found.int64(0, 4), found.text(0, 5), found.text(0, 6), found.text(0, 7),
                        found.text(0, 8)};
    if (s.buyer_id.empty()) {
      const std::int64_t intents = found.int64(0, 1);
      if (intents == 0) return {SettleStatus::kNotUnknown, {}};
      if (intents > 1) return {SettleStatus::kBuyerNeeded, {}};
      s.buyer_id = found.text(0, 2);
    }
    const Result before = c.exec("SELECT " LF_SETTLEMENT_COLUMNS
                                 " FROM settlements WHERE lead_id = $1 AND buyer_id = $2",
                                 Params().add(s.lead_id).add(s.buyer_id), Effect::kRead);
    if (before.rows() > 0) return {SettleStatus::kAlreadySettled, read_settlement(Row{before, 0})};
    // The intent, and what the lead's sales (settled ones, for a shared sale) hold so far.
    const Result held = c.exec(
        "SELECT EXISTS (SELECT 1 FROM post_intents WHERE lead_id = $1 AND buyer_id = $2),"
        " COUNT(*), COALESCE(SUM(price_cents), 0)::BIGINT,"
        " COALESCE(SUM(payout_cents), 0)::BIGINT FROM sales WHERE lead_id = $1",
        Params().add(s.lead_id).add(s.buyer_id), Effect::kRead);
    if (!held.boolean(0, 0)) return {SettleStatus::kNotUnknown, {}};
    const money::SettledSale sale =
        s.sold ? money::settle_sold({held.int64(0, 1), held.int64(0, 2), held.int64(0, 3)}, s.price,
                                    payout)
               : money::SettledSale{};
    s.payout = sale.payout;
    c.exec("INSERT INTO settlements (" LF_SETTLEMENT_COLUMNS
           ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
           Params()
               .add(s.lead_id)
               .add(s.buyer_id)
               .add(s.sold)
               .add(s.price)
               .add(s.payout)
               .add(s.buyer_lead_id)
               .add(s.note)
               .add(s.by_key_id)
               .add(s.at_ms),
           Effect::kWrite);
    if (s.sold) {
      c.exec(
          "INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
          " email, phone, buyer_lead_id, email_key, phone_key)"
          " SELECT id, $2, $3, $4, $5, $6, email, phone, $7, email_key, phone_key"
          " FROM leads WHERE id = $1",
          Params()
              .add(s.lead_id)
              .add(sale.slot)
              .add(s.buyer_id)
              .add(sale.price)
              .add(sale.payout)
              .add(s.at_ms)
              .add(s.buyer_lead_id),
          Effect::kWrite);
      const money::LedgerEntry entry =
          money::sale_entry({s.lead_id, keys.seller_id, keys.campaign_id},
                            Sale{s.buyer_id, sale.price, sale.payout, s.buyer_lead_id}, s.at_ms);
      const Statement ledger = ledger_statement(std::span(&entry, 1));
      c.exec(ledger.sql, ledger.params, Effect::kWrite);
      // The lead sums its sales up; the first buyer to take it is the one it names.
      c.exec(
          "UPDATE leads SET status = 'delivered', price_cents = $2, payout_cents = $3,"
          " buyer_id = CASE WHEN $4::BOOLEAN THEN $5 ELSE buyer_id END,"
          " buyer_lead_id = CASE WHEN $4::BOOLEAN THEN $6 ELSE buyer_lead_id END,"
          " reason = $7, decided_at = $8 WHERE id = $1",
          Params()
              .add(s.lead_id)
              .add(sale.lead_price)
              .add(sale.lead_payout)
              .add(sale.first)
              .add(s.buyer_id)
              .add(s.buyer_lead_id)
              .add(settled_reason(true))
              .add(s.at_ms),
          Effect::kWrite);
      if (was_failed) {
        // A settlement moved the failed lead to sold: so does its row of the rollup.
        OutcomeDeltas deltas;
        add_settled(deltas.performance, keys, true);
        for (const Statement& st : outcome_statements(deltas))
          c.exec(st.sql, st.params, Effect::kWrite);
      }
    } else {
      // Unsold once no buyer is left to settle and none took it.
      const Result unsold = c.exec(
          "UPDATE leads SET status = 'unsold', reason = $2, decided_at = $3"
          " WHERE id = $1 AND status = 'failed'"
          " AND NOT EXISTS (SELECT 1 FROM post_intents WHERE lead_id = $1"
          "  AND buyer_id NOT IN (SELECT buyer_id FROM settlements WHERE lead_id = $1))"
          " RETURNING 1",
          Params().add(s.lead_id).add(settled_reason(false)).add(s.at_ms), Effect::kWrite);
      if (unsold.rows() > 0) {
        OutcomeDeltas deltas;
        add_settled(deltas.performance, keys, false);
        add_settled_unsold(deltas.unsold, keys);
        for (const Statement& st : outcome_statements(deltas))
          c.exec(st.sql, st.params, Effect::kWrite);
      }
    }
    outbox_if_subscribed(c, settlement_outbox_event(s));
    tx.commit();
    return {SettleStatus::kSettled, std::move(s)};
  });
}

std::optional<std::vector<Settlement>> PgStore::settlements_of_lead(std::string_view lead_id) {
  return read_rows<Settlement>("settlements_of_lead",
                               "SELECT " LF_SETTLEMENT_COLUMNS
                               " FROM settlements WHERE lead_id = $1 ORDER BY at, buyer_id",
                               Params().add(lead_id), read_settlement<Row>);
}

std::optional<std::vector<LeadReturn>> PgStore::returns_of_lead(std::string_view lead_id) {
  return read_rows<LeadReturn>("returns_of_lead",
                               "SELECT " LF_RETURN_COLUMNS
                               " FROM returns WHERE lead_id = $1 ORDER BY returned_at",
                               Params().add(lead_id), read_return<Row>);
}

std::optional<std::vector<LedgerEntry>> PgStore::list_ledger(const LedgerQuery& q) {
  // One statement per set of filters, as in the SQLite adapter, holding only the conditions
  // asked for, so that the plan never depends on folding "($1 = '' OR lead_id = $1)". Each
  // filter's index (docs/money.md, "The ledger's journal") gives the entries in time order:
  // ledger_by_lead (a lead's few entries, sorted), ledger_by_buyer and ledger_by_seller
  // (account, at, id), ledger_by_time (at, id); the cursor's (at, id) is a range of each.
  std::string sql = "SELECT " LF_LEDGER_COLUMNS " FROM ledger_entries";
  Params params;
  std::string where;
  const auto cond = [&](const std::string& c) {
    where += (where.empty() ? " WHERE " : " AND ") + c;
  };
  const auto next = [&] { return "$" + std::to_string(params.size() + 1); };
  const auto text = [&](const char* column, const std::string& v) {
    if (v.empty()) return;
    cond(std::string(column) + " = " + next());
    params.add(v);
  };
  text("lead_id", q.lead_id);
  text("buyer_id", q.buyer_id);
  text("seller_id", q.seller_id);
  text("kind", q.kind);
  if (q.from_ms != 0) {
    cond("at >= " + next());
    params.add(q.from_ms);
  }
  if (q.to_ms != 0) {
    cond("at < " + next());
    params.add(q.to_ms);
  }
  if (q.after_id != 0) {
    const std::string at = next();
    params.add(q.after_at_ms);
    cond("(at, id) > (" + at + ", " + next() + ")");
    params.add(q.after_id);
  }
  sql += where + " ORDER BY at, id LIMIT " + next();
  params.add(std::clamp(q.limit, 1, 1000));
  return read_rows<LedgerEntry>("list_ledger", sql.c_str(), params, read_ledger_entry<Row>);
}

/// The three on one leased connection, one after the other (each its own snapshot: a
/// REPEATABLE READ transaction would add two round trips to every lead view).
std::optional<LeadMoney> PgStore::money_of_lead(std::string_view lead_id) {
  return run(
      "money_of_lead", std::optional<LeadMoney>{}, [&](Connection& c) -> std::optional<LeadMoney> {
        const Params by_lead = Params().add(lead_id);
        LeadMoney m;
        const Result returns = c.exec("SELECT " LF_RETURN_COLUMNS
                                      " FROM returns WHERE lead_id = $1 ORDER BY returned_at",
                                      by_lead, Effect::kRead);
        for (int i = 0; i < returns.rows(); ++i) m.returns.push_back(read_return(Row{returns, i}));
        const Result settled = c.exec("SELECT " LF_SETTLEMENT_COLUMNS
                                      " FROM settlements WHERE lead_id = $1 ORDER BY at, buyer_id",
                                      by_lead, Effect::kRead);
        for (int i = 0; i < settled.rows(); ++i)
          m.settlements.push_back(read_settlement(Row{settled, i}));
        const Result ledger = c.exec("SELECT " LF_LEDGER_COLUMNS
                                     " FROM ledger_entries WHERE lead_id = $1"
                                     " ORDER BY id LIMIT 1000",
                                     by_lead, Effect::kRead);
        for (int i = 0; i < ledger.rows(); ++i)
          m.ledger.push_back(read_ledger_entry(Row{ledger, i}));
        return m;
      });
}

std::optional<ReturnStats> PgStore::return_stats(std::string_view buyer_id, std::int64_t since_ms) {
  return run("return_stats", std::optional<ReturnStats>{},
             [&](Connection& c) -> std::optional<ReturnStats> {
               const Result r = c.exec(
                   "SELECT (SELECT COUNT(*) FROM sales WHERE buyer_id = $1 AND sold_at >= $2),"
                   " (SELECT COUNT(*) FROM returns WHERE buyer_id = $1 AND sold_at >= $2)",
                   Params().add(buyer_id).add(since_ms), Effect::kRead);
               return ReturnStats{r.int64(0, 0), r.int64(0, 1)};
             });
}

}  // namespace leadflow::pg
