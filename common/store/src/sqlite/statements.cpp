// The SQLite adapter of the statements port (leadflow/store/statements.hpp): closes of periods
// and the ledger entries statements are cut from. Which entry belongs where, and every total,
// are money::statement_of's and money::freeze's.
#include "sqlite/adapter.hpp"
#include "statement_rows.hpp"

namespace leadflow::sqlite {
namespace {

// Every row of `sql` on `c`, or nullopt when it could not read them (as all_rows).
template <class T, class Bind, class Read>
std::optional<std::vector<T>> all_rows(Connection& c, const char* op, const char* sql, Bind&& bind,
                                       Read&& read) {
  std::vector<T> out;
  Query q(c, sql);
  bind(q);
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) out.push_back(read(q));
  if (rc != SQLITE_DONE) return (report(c, rc, op), std::nullopt);
  return out;
}

// The window's entries, of one account or of all (?4 = ''), oldest first.
constexpr const char* kEntriesSql =
    "SELECT " LF_STATEMENT_ENTRY_COLUMNS("s.sold <> 0") " WHERE e.at < ?2"
    " AND (e.at >= ?1 OR (?3 >= 0 AND e.id > ?3))"
    " AND (?4 = '' OR (?5 = 'buyer' AND e.buyer_id = ?4) OR (?5 = 'seller' AND e.seller_id = ?4))"
    " ORDER BY e.id";

std::optional<std::vector<money::StatementEntry>> entries_on(Connection& c,
                                                             const StatementQuery& sq) {
  const std::string party(money::to_string(sq.party));
  return all_rows<money::StatementEntry>(
      c, "statement_entries", kEntriesSql,
      [&](Query& q) {
        q.bind(sq.window.from_ms)
            .bind(sq.window.to_ms)
            .bind(sq.window.moved_after_id)
            .bind(sq.account_id)
            .bind(party);
      },
      read_statement_entry<Query>);
}

std::optional<money::Closes> closes_on(Connection& c) {
  auto rows = all_rows<std::optional<money::Close>>(
      c, "list_closes", "SELECT " LF_CLOSE_COLUMNS " FROM period_closes", [](Query&) {},
      read_close<Query>);
  if (!rows) return std::nullopt;
  money::Closes closes;
  for (auto& close : *rows)
    if (close) closes.emplace(close->period.label(), std::move(*close));
  if (!all_rows<bool>(
          c, "list_closes", LF_CLOSE_ZONES_SQL, [](Query&) {},
          [&](Query& q) {
            read_close_zone(q, closes);
            return true;
          }))
    return std::nullopt;
  return closes;
}

std::optional<std::vector<money::FrozenTotals>> totals_on(Connection& c, const std::string& p) {
  return all_rows<money::FrozenTotals>(
      c, "frozen_totals",
      "SELECT " LF_CLOSE_TOTALS_COLUMNS
      " FROM period_close_totals WHERE period = ?1 ORDER BY party, account_id",
      [&](Query& q) { q.bind(p); }, read_close_totals<Query>);
}

int write_close(Connection& c, const PeriodClose& pc) {
  const std::string label = pc.close.period.label();
  Query close(c, "INSERT INTO period_closes (" LF_CLOSE_COLUMNS ") VALUES (?1, ?2, ?3, ?4)");
  if (int rc = close.bind(label)
                   .bind(pc.close.through_entry_id)
                   .bind(pc.close.closed_by)
                   .bind(pc.close.closed_at_ms)
                   .run())
    return rc;
  for (const auto& f : pc.totals) {
    const std::string party(money::to_string(f.party));
    const money::Totals& t = f.totals;
    Query q(c, "INSERT INTO period_close_totals (period, " LF_CLOSE_TOTALS_COLUMNS
               ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
    if (int rc = q.bind(label)
                     .bind(party)
                     .bind(f.account_id)
                     .bind(f.zone)
                     .bind(t.sales)
                     .bind(t.sales_revenue)
                     .bind(t.sales_payout)
                     .bind(t.returns)
                     .bind(t.returns_revenue)
                     .bind(t.returns_payout)
                     .bind(t.adjustments)
                     .bind(t.adjustments_revenue)
                     .bind(t.adjustments_payout)
                     .bind(t.revenue)
                     .bind(t.payout)
                     .run())
      return rc;
  }
  return SQLITE_OK;
}

}  // namespace

std::optional<money::Closes> SqliteStore::list_closes() {
  return read_snapshot("list_closes", std::optional<money::Closes>{},
                       [&](Connection& c) { return closes_on(c); });
}

std::optional<std::vector<money::FrozenTotals>> SqliteStore::frozen_totals(
    std::string_view period) {
  const std::string p(period);
  return read_snapshot("frozen_totals", std::optional<std::vector<money::FrozenTotals>>{},
                       [&](Connection& c) { return totals_on(c, p); });
}

std::optional<std::vector<money::StatementEntry>> SqliteStore::statement_entries(
    const StatementQuery& q) {
  return read_snapshot("statement_entries", std::optional<std::vector<money::StatementEntry>>{},
                       [&](Connection& c) { return entries_on(c, q); });
}

/// One transaction on the writer (BEGIN IMMEDIATE): no ledger entry is written between reading
/// the ledger's last id and the close's commit, so the frozen totals hold every entry up to it.
CloseResult SqliteStore::close_period(const CloseRequest& r) {
  return guarded("close_period", CloseResult{}, [&]() -> CloseResult {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    const auto failed = [&](int rc) {
      report(c, rc, "close_period");
      return CloseResult{};
    };
    if (int rc = tx.begin()) return failed(rc);
    auto closes = closes_on(c);
    if (!closes) return CloseResult{};
    const std::string label = r.period.label();
    CloseResult out;
    if (auto before = closes->find(label); before != closes->end()) {
      auto totals = totals_on(c, label);
      if (!totals) return CloseResult{};
      out.status = CloseStatus::kAlreadyClosed;
      out.closed = {before->second, std::move(*totals)};
      return out;
    }
    std::int64_t through = 0;
    {
      Query q(c, "SELECT COALESCE(MAX(id), 0) FROM ledger_entries");
      const int rc = q.step();
      if (rc != SQLITE_ROW) return failed(rc);
      through = q.int64(0);
    }
    StatementQuery all;
    all.window = money::close_window(r.period, *closes);
    auto entries = entries_on(c, all);
    if (!entries) return CloseResult{};
    // Each buyer's zone as written in its schedule, each seller's as stored;
    // money::account_zone reads what it is.
    auto accounts = all_rows<money::Account>(
        c, "close_period",
        "SELECT 'buyer', id, COALESCE(json_extract(doc, '$.schedule.timezone'), '') FROM buyers"
        " WHERE json_valid(doc) UNION ALL SELECT 'seller', id, time_zone FROM sellers",
        [](Query&) {},
        [](Query& q) {
          return money::Account{*money::parse_party(q.text(0)), q.text(1), q.text(2)};
        });
    if (!accounts) return CloseResult{};
    out.closed.close = {r.period, through, r.closed_by, r.at_ms, {}};
    out.closed.totals = money::freeze(r.period, *accounts, *entries, *closes);
    if (int rc = write_close(c, out.closed)) return failed(rc);
    if (int rc = tx.commit()) return failed(rc);
    out.status = CloseStatus::kClosed;
    return out;
  });
}

}  // namespace leadflow::sqlite
