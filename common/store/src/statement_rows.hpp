#pragma once
// The rows of statements and closes, shared by both adapters (statements.cpp of each): the
// column lists and readers; the SQL that differs per dialect stays in the adapters.
#include <cstdint>
#include <optional>
#include <string>

#include "leadflow/money/statements.hpp"

#define LF_CLOSE_COLUMNS "period, through_entry_id, closed_by, closed_at"
#define LF_CLOSE_TOTALS_COLUMNS                                                            \
  "party, account_id, zone, sales, sales_revenue, sales_payout, returns, returns_revenue," \
  " returns_payout, adjustments, adjustments_revenue, adjustments_payout, revenue, payout"
// The entry, whether its sale was a settlement, and when the sale it refers to was made: a
// return's sale, a settled lead's arrival, else the entry's own time.
#define LF_STATEMENT_ENTRY_COLUMNS(SOLD)                                                  \
  "e.id, e.kind, e.lead_id, e.buyer_id, e.seller_id, e.campaign_id, e.revenue_cents,"     \
  " e.payout_cents, e.at, (e.kind = 'sale' AND s.lead_id IS NOT NULL),"                   \
  " CASE WHEN e.kind = 'return' THEN COALESCE(r.sold_at, e.at)"                           \
  " WHEN s.lead_id IS NOT NULL THEN COALESCE((SELECT l.received_at FROM leads l"          \
  " WHERE l.id = e.lead_id), e.at) ELSE e.at END"                                         \
  " FROM ledger_entries e"                                                                \
  " LEFT JOIN settlements s ON e.kind = 'sale' AND s.lead_id = e.lead_id"                 \
  " AND s.buyer_id = e.buyer_id AND " SOLD                                                \
  " LEFT JOIN returns r ON e.kind = 'return' AND r.lead_id = e.lead_id AND r.buyer_id = " \
  "e.buyer_id"

namespace leadflow::store_rows {

template <class Row>
money::StatementEntry read_statement_entry(const Row& q) {
  money::StatementEntry e;
  e.entry.id = q.int64(0);
  e.entry.kind = q.text(1);
  e.entry.lead_id = q.text(2);
  e.entry.buyer_id = q.text(3);
  e.entry.seller_id = q.text(4);
  e.entry.campaign_id = q.text(5);
  e.entry.revenue = q.int64(6);
  e.entry.payout = q.int64(7);
  e.entry.at_ms = q.int64(8);
  e.settled = q.boolean(9);
  e.ref_at_ms = q.int64(10);
  return e;
}

/// A close row; nullopt for a period label the rule does not read (none is ever written).
template <class Row>
std::optional<money::Close> read_close(const Row& q) {
  auto period = money::parse_period(q.text(0));
  if (!period) return std::nullopt;
  return money::Close{*period, q.int64(1), q.text(2), q.int64(3), {}};
}

// The zone a close froze an account in: period, party, account_id, zone.
#define LF_CLOSE_ZONES_SQL "SELECT period, party, account_id, zone FROM period_close_totals"
template <class Row>
void read_close_zone(const Row& q, money::Closes& closes) {
  const auto close = closes.find(q.text(0));
  const auto party = money::parse_party(q.text(1));
  if (close != closes.end() && party) close->second.zones[{*party, q.text(2)}] = q.text(3);
}

template <class Row>
money::FrozenTotals read_close_totals(const Row& q) {
  money::FrozenTotals f;
  f.party = money::parse_party(q.text(0)).value_or(money::Party::kBuyer);
  f.account_id = q.text(1);
  f.zone = q.text(2);
  money::Totals& t = f.totals;
  t.sales = q.int64(3);
  t.sales_revenue = q.int64(4);
  t.sales_payout = q.int64(5);
  t.returns = q.int64(6);
  t.returns_revenue = q.int64(7);
  t.returns_payout = q.int64(8);
  t.adjustments = q.int64(9);
  t.adjustments_revenue = q.int64(10);
  t.adjustments_payout = q.int64(11);
  t.revenue = q.int64(12);
  t.payout = q.int64(13);
  return f;
}

}  // namespace leadflow::store_rows
