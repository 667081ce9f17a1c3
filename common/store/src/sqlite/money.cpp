// The SQLite adapter of the money port (leadflow/store/money.hpp): returns, settlements and the
// ledger.
#include "sqlite/adapter.hpp"

#include "leadflow/money/settlement.hpp"

namespace leadflow::sqlite {

/// One transaction on the writer (BEGIN IMMEDIATE: nothing changes between the checks and the
/// writes), the return's ledger entry in it.
ReturnResult SqliteStore::record_return(const ReturnRequest& r) {
  return guarded("record_return", ReturnResult{}, [&]() -> ReturnResult {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return (report(c, rc, "record_return"), ReturnResult{});
    ReturnResult out;
    if (int rc = return_in_transaction(c, r, out))
      return (report(c, rc, "record_return"), ReturnResult{});
    if (out.status == ReturnStatus::kReturned)
      if (int rc = outbox_if_subscribed(c, "", return_outbox_event(out.ret)))
        return (report(c, rc, "record_return"), ReturnResult{});
    if (int rc = tx.commit()) return (report(c, rc, "record_return"), ReturnResult{});
    return out;
  });
}

/// One transaction (one fsync) for the whole batch, each return checked as it would be alone
/// after the ones before it. If the store fails on any of them, none is kept and every one
/// answers kUnavailable.
std::vector<ReturnResult> SqliteStore::record_returns(std::span<const ReturnRequest> rs) {
  const std::vector<ReturnResult> all_failed(rs.size());
  return guarded("record_returns", all_failed, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return (report(c, rc, "record_returns"), all_failed);
    std::vector<ReturnResult> out(rs.size());
    for (std::size_t i = 0; i < rs.size(); ++i) {
      if (int rc = return_in_transaction(c, rs[i], out[i]))
        return (report(c, rc, "record_returns"), all_failed);
      if (out[i].status == ReturnStatus::kReturned)
        if (int rc = outbox_if_subscribed(c, "", return_outbox_event(out[i].ret)))
          return (report(c, rc, "record_returns"), all_failed);
    }
    if (int rc = tx.commit()) return (report(c, rc, "record_returns"), all_failed);
    return out;
  });
}

/// One transaction on the writer. The sale a settlement makes, its payout and the lead's new
/// totals are money::settle_sold's; the sale's ledger entry is money::sale_entry's, written here.
SettleResult SqliteStore::settle_lead(const Settlement& asked, const PayoutRule& payout) {
  return guarded("settle_lead", SettleResult{}, [&]() -> SettleResult {
    SettleResult out;
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    const auto failed = [&](int rc) {
      report(c, rc, "settle_lead");
      return SettleResult{};
    };
    if (int rc = tx.begin()) return failed(rc);
    Settlement s = asked;
    // The lead: failed, or settled before (a shared sale is settled buyer by buyer).
    std::string status, seller_id, campaign_id;
    {
      Query q(c,
              "SELECT status, EXISTS (SELECT 1 FROM settlements WHERE lead_id = ?1),"
              " seller_id, campaign_id FROM leads WHERE id = ?1");
      const int rc = q.bind(s.lead_id).step();
      if (rc == SQLITE_DONE) return (out.status = SettleStatus::kNoSuchLead, out);
      if (rc != SQLITE_ROW) return failed(rc);
      status = q.text(0);
      seller_id = q.text(2);
      campaign_id = q.text(3);
      if (status != "failed" && !q.boolean(1)) return (out.status = SettleStatus::kNotUnknown, out);
    }
    if (s.buyer_id.empty()) {
      Query q(c, "SELECT buyer_id FROM post_intents WHERE lead_id = ?1 LIMIT 2");
      q.bind(s.lead_id);
      int rc;
      int found = 0;
      while ((rc = q.step()) == SQLITE_ROW) {
        ++found;
        s.buyer_id = q.text(0);
      }
      if (rc != SQLITE_DONE) return failed(rc);
      if (found == 0) return (out.status = SettleStatus::kNotUnknown, out);
      if (found > 1) return (out.status = SettleStatus::kBuyerNeeded, out);
    }
    {
      Query q(c, "SELECT " LF_SETTLEMENT_COLUMNS
                 " FROM settlements WHERE lead_id = ?1 AND buyer_id = ?2");
      const int rc = q.bind(s.lead_id).bind(s.buyer_id).step();
      if (rc == SQLITE_ROW) return {SettleStatus::kAlreadySettled, read_settlement(q)};
      if (rc != SQLITE_DONE) return failed(rc);
    }
    {
      Query q(c, "SELECT 1 FROM post_intents WHERE lead_id = ?1 AND buyer_id = ?2");
      const int rc = q.bind(s.lead_id).bind(s.buyer_id).step();
      if (rc == SQLITE_DONE) return (out.status = SettleStatus::kNotUnknown, out);
      if (rc != SQLITE_ROW) return failed(rc);
    }
    // What the lead's sales (settled ones, for a shared sale) hold so far.
    money::SalesHeld held;
    {
      Query q(c,
              "SELECT COUNT(*), COALESCE(SUM(price_cents), 0), COALESCE(SUM(payout_cents), 0)"
              " FROM sales WHERE lead_id = ?1");
      const int rc = q.bind(s.lead_id).step();
      if (rc != SQLITE_ROW) return failed(rc);
      held = {q.int64(0), q.int64(1), q.int64(2)};
    }
    const money::SettledSale sale =
        s.sold ? money::settle_sold(held, s.price, payout) : money::SettledSale{};
    s.payout = sale.payout;
    {
      Query q(c, "INSERT INTO settlements (" LF_SETTLEMENT_COLUMNS
                 ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
      q.bind(s.lead_id)
          .bind(s.buyer_id)
          .bind(s.sold)
          .bind(s.price)
          .bind(s.payout)
          .bind(s.buyer_lead_id)
          .bind(s.note)
          .bind(s.by_key_id)
          .bind(s.at_ms);
      if (int rc = q.run()) return failed(rc);
    }
    if (s.sold) {
      {
        Query q(c,
                "INSERT INTO sales (lead_id, slot, buyer_id, price_cents, payout_cents, sold_at,"
                " email, phone, buyer_lead_id, email_key, phone_key)"
                " SELECT id, ?2, ?3, ?4, ?5, ?6, email, phone, ?7, email_key, phone_key"
                " FROM leads WHERE id = ?1");
        if (int rc = q.bind(s.lead_id)
                         .bind(sale.slot)
                         .bind(s.buyer_id)
                         .bind(sale.price)
                         .bind(sale.payout)
                         .bind(s.at_ms)
                         .bind(s.buyer_lead_id)
                         .run())
          return failed(rc);
      }
      const money::LedgerEntry entry =
          money::sale_entry({s.lead_id, seller_id, campaign_id},
                            Sale{s.buyer_id, sale.price, sale.payout, s.buyer_lead_id}, s.at_ms);
      if (int rc = write_ledger_entries(c, std::span(&entry, 1))) return failed(rc);
      // The lead sums its sales up; the first buyer to take it is the one it names.
      Query q(c,
              "UPDATE leads SET status = 'delivered', price_cents = ?2, payout_cents = ?3,"
              " buyer_id = CASE WHEN ?4 THEN ?5 ELSE buyer_id END,"
              " buyer_lead_id = CASE WHEN ?4 THEN ?6 ELSE buyer_lead_id END,"
              " reason = ?7, decided_at = ?8 WHERE id = ?1");
      if (int rc = q.bind(s.lead_id)
                       .bind(sale.lead_price)
                       .bind(sale.lead_payout)
                       .bind(sale.first)
                       .bind(s.buyer_id)
                       .bind(s.buyer_lead_id)
                       .bind(settled_reason(true))
                       .bind(s.at_ms)
                       .run())
        return failed(rc);
      if (status == "failed")
        if (int rc = settled_in_rollup(c, s.lead_id, true)) return failed(rc);
    } else {
      // Unsold once no buyer is left to settle and none took it.
      Query q(c,
              "UPDATE leads SET status = 'unsold', reason = ?2, decided_at = ?3"
              " WHERE id = ?1 AND status = 'failed'"
              " AND NOT EXISTS (SELECT 1 FROM post_intents WHERE lead_id = ?1"
              "  AND buyer_id NOT IN (SELECT buyer_id FROM settlements WHERE lead_id = ?1))");
      if (int rc = q.bind(s.lead_id).bind(settled_reason(false)).bind(s.at_ms).run())
        return failed(rc);
      if (c.changes() > 0)
        if (int rc = settled_in_rollup(c, s.lead_id, false)) return failed(rc);
    }
    if (int rc = outbox_if_subscribed(c, seller_id, settlement_outbox_event(s))) return failed(rc);
    if (int rc = tx.commit()) return failed(rc);
    return {SettleStatus::kSettled, std::move(s)};
  });
}

std::optional<std::vector<Settlement>> SqliteStore::settlements_of_lead(std::string_view lead_id) {
  return read_rows<Settlement>(
      "settlements_of_lead",
      "SELECT " LF_SETTLEMENT_COLUMNS " FROM settlements WHERE lead_id = ?1 ORDER BY at, buyer_id",
      [&](Query& q) { q.bind(lead_id); }, read_settlement<Query>);
}

std::optional<std::vector<LeadReturn>> SqliteStore::returns_of_lead(std::string_view lead_id) {
  return read_rows<LeadReturn>(
      "returns_of_lead",
      "SELECT " LF_RETURN_COLUMNS " FROM returns WHERE lead_id = ?1 ORDER BY returned_at",
      [&](Query& q) { q.bind(lead_id); }, read_return<Query>);
}

std::optional<std::vector<LedgerEntry>> SqliteStore::list_ledger(const LedgerQuery& lq) {
  // One statement per set of filters, holding only the conditions asked for: with
  // "(?1 = '' OR lead_id = ?1)" the planner walked the whole ledger for one lead's entries.
  // Each filter's index (docs/money.md, "The ledger's journal") gives the entries in time order:
  // ledger_by_lead (a lead's few entries, sorted), ledger_by_buyer and ledger_by_seller
  // (account, at), ledger_by_time (at); SQLite appends the rowid (the id) to each, so the
  // cursor's (at, id) is a range of the index.
  std::string sql = "SELECT " LF_LEDGER_COLUMNS " FROM ledger_entries";
  std::vector<std::string_view> texts;
  std::vector<std::int64_t> numbers;
  std::string where;
  int n = 0;
  const auto next = [&] { return "?" + std::to_string(++n); };
  const auto text = [&](const std::string& column, const std::string& v) {
    if (v.empty()) return;
    where += std::string(where.empty() ? " WHERE " : " AND ") + column + " = " + next();
    texts.push_back(v);
  };
  text("lead_id", lq.lead_id);
  // A lead's few entries are found by its index; "+" keeps the planner, which has no statistics
  // of the ledger, from taking an account's index (a buyer's millions of entries) instead.
  const std::string by = lq.lead_id.empty() ? "" : "+";
  text(by + "buyer_id", lq.buyer_id);
  text(by + "seller_id", lq.seller_id);
  text("kind", lq.kind);
  const auto bound = [&](const char* cond, std::int64_t v) {
    where += std::string(where.empty() ? " WHERE " : " AND ") + cond + next();
    numbers.push_back(v);
  };
  if (lq.from_ms != 0) bound("at >= ", lq.from_ms);
  if (lq.to_ms != 0) bound("at < ", lq.to_ms);
  if (lq.after_id != 0) {
    const std::string at = next();
    where += std::string(where.empty() ? " WHERE " : " AND ") + "(at, id) > (" + at + ", " +
             next() + ")";
    numbers.push_back(lq.after_at_ms);
    numbers.push_back(lq.after_id);
  }
  sql += where + " ORDER BY at, id LIMIT " + next();
  return read_rows<LedgerEntry>(
      "list_ledger", sql,
      [&](Query& q) {
        for (std::string_view t : texts) q.bind(t);
        for (std::int64_t v : numbers) q.bind(v);
        q.bind(clamp_limit(lq.limit));
      },
      read_ledger_entry<Query>);
}

/// The three in one snapshot on one reader: one read lock instead of three, and a ledger that
/// agrees with the returns and settlements beside it.
std::optional<LeadMoney> SqliteStore::money_of_lead(std::string_view lead_id) {
  return read_snapshot(
      "money_of_lead", std::optional<LeadMoney>{}, [&](Connection& c) -> std::optional<LeadMoney> {
        auto by_lead = [&](Query& q) { q.bind(lead_id); };
        auto returns = rows_on<LeadReturn>(c, "money_of_lead",
                                           "SELECT " LF_RETURN_COLUMNS
                                           " FROM returns WHERE lead_id = ?1 ORDER BY returned_at",
                                           by_lead, read_return<Query>);
        auto settlements =
            rows_on<Settlement>(c, "money_of_lead",
                                "SELECT " LF_SETTLEMENT_COLUMNS
                                " FROM settlements WHERE lead_id = ?1 ORDER BY at, buyer_id",
                                by_lead, read_settlement<Query>);
        auto ledger = rows_on<LedgerEntry>(
            c, "money_of_lead",
            "SELECT " LF_LEDGER_COLUMNS
            " FROM ledger_entries WHERE lead_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3",
            [&](Query& q) { q.bind(lead_id).bind(std::int64_t{0}).bind(clamp_limit(1000)); },
            read_ledger_entry<Query>);
        if (!returns || !settlements || !ledger) return std::nullopt;
        return LeadMoney{std::move(*returns), std::move(*settlements), std::move(*ledger)};
      });
}

std::optional<ReturnStats> SqliteStore::return_stats(std::string_view buyer_id,
                                                     std::int64_t since_ms) {
  return guarded("return_stats", std::optional<ReturnStats>{}, [&]() -> std::optional<ReturnStats> {
    auto conn = readers_.acquire();
    if (!conn) return std::nullopt;
    Query q(*conn,
            "SELECT (SELECT COUNT(*) FROM sales"
            "  WHERE buyer_id = ?1 AND sold_at >= ?2),"
            " (SELECT COUNT(*) FROM returns WHERE buyer_id = ?1 AND sold_at >= ?2)");
    const int rc = q.bind(buyer_id).bind(since_ms).step();
    if (rc != SQLITE_ROW) {
      report(*conn, rc, "return_stats");
      return std::nullopt;
    }
    return ReturnStats{q.int64(0), q.int64(1)};
  });
}

}  // namespace leadflow::sqlite
