// The PostgreSQL adapter of the statements port (leadflow/store/statements.hpp): closes of
// periods and the ledger entries statements are cut from. Which entry belongs where, and every
// total, are money::statement_of's and money::freeze's.
#include <array>

#include "pg/adapter.hpp"
#include "statement_rows.hpp"

namespace leadflow::pg {
namespace {

// The window's entries, of one account or of all ($4 = ''), oldest first.
constexpr const char* kEntriesSql =
    "SELECT " LF_STATEMENT_ENTRY_COLUMNS("s.sold") " WHERE e.at < $2"
    " AND (e.at >= $1 OR ($3 >= 0 AND e.id > $3))"
    " AND ($4 = '' OR ($5 = 'buyer' AND e.buyer_id = $4) OR ($5 = 'seller' AND e.seller_id = $4))"
    " ORDER BY e.id";

template <class T, class Read>
std::vector<T> rows_of(const Result& r, Read&& read) {
  std::vector<T> out;
  out.reserve(static_cast<std::size_t>(r.rows()));
  for (int i = 0; i < r.rows(); ++i) out.push_back(read(Row{r, i}));
  return out;
}

std::vector<money::StatementEntry> entries_on(Connection& c, const StatementQuery& q) {
  return rows_of<money::StatementEntry>(c.exec(kEntriesSql,
                                               Params()
                                                   .add(q.window.from_ms)
                                                   .add(q.window.to_ms)
                                                   .add(q.window.moved_after_id)
                                                   .add(q.account_id)
                                                   .add(money::to_string(q.party)),
                                               Effect::kRead),
                                        read_statement_entry<Row>);
}

money::Closes closes_on(Connection& c) {
  money::Closes closes;
  const Result r = c.exec("SELECT " LF_CLOSE_COLUMNS " FROM period_closes", Effect::kRead);
  for (int i = 0; i < r.rows(); ++i)
    if (auto close = read_close(Row{r, i})) closes.emplace(close->period.label(), *close);
  const Result zones = c.exec(LF_CLOSE_ZONES_SQL, Effect::kRead);
  for (int i = 0; i < zones.rows(); ++i) read_close_zone(Row{zones, i}, closes);
  return closes;
}

std::vector<money::FrozenTotals> totals_on(Connection& c, std::string_view period) {
  return rows_of<money::FrozenTotals>(
      c.exec("SELECT " LF_CLOSE_TOTALS_COLUMNS
             " FROM period_close_totals WHERE period = $1 ORDER BY party, account_id",
             Params().add(period), Effect::kRead),
      read_close_totals<Row>);
}

void write_close(Connection& c, const PeriodClose& pc) {
  const std::string label = pc.close.period.label();
  c.exec("INSERT INTO period_closes (" LF_CLOSE_COLUMNS ") VALUES ($1, $2, $3, $4)",
         Params()
             .add(label)
             .add(pc.close.through_entry_id)
             .add(pc.close.closed_by)
             .add(pc.close.closed_at_ms),
         Effect::kWrite);
  if (pc.totals.empty()) return;
  ArrayText party, account, zone;
  std::array<ArrayText, 11> figures;
  for (const auto& f : pc.totals) {
    party.add(money::to_string(f.party));
    account.add(f.account_id);
    zone.add(f.zone);
    const money::Totals& t = f.totals;
    const std::int64_t values[] = {t.sales,
                                   t.sales_revenue,
                                   t.sales_payout,
                                   t.returns,
                                   t.returns_revenue,
                                   t.returns_payout,
                                   t.adjustments,
                                   t.adjustments_revenue,
                                   t.adjustments_payout,
                                   t.revenue,
                                   t.payout};
    for (std::size_t k = 0; k < figures.size(); ++k) figures[k].add(values[k]);
  }
  Params p;
  p.add(label).add(party.str()).add(account.str()).add(zone.str());
  for (auto& column : figures) p.add(column.str());
  c.exec("INSERT INTO period_close_totals (period, " LF_CLOSE_TOTALS_COLUMNS
         ") SELECT $1, * FROM unnest($2::TEXT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[],"
         " $6::BIGINT[], $7::BIGINT[], $8::BIGINT[], $9::BIGINT[], $10::BIGINT[], $11::BIGINT[],"
         " $12::BIGINT[], $13::BIGINT[], $14::BIGINT[], $15::BIGINT[])",
         p, Effect::kWrite);
}

}  // namespace

std::optional<money::Closes> PgStore::list_closes() {
  return run("list_closes", std::optional<money::Closes>{},
             [&](Connection& c) -> std::optional<money::Closes> { return closes_on(c); });
}

std::optional<std::vector<money::FrozenTotals>> PgStore::frozen_totals(std::string_view period) {
  return run("frozen_totals", std::optional<std::vector<money::FrozenTotals>>{},
             [&](Connection& c) -> std::optional<std::vector<money::FrozenTotals>> {
               return totals_on(c, period);
             });
}

std::optional<std::vector<money::StatementEntry>> PgStore::statement_entries(
    const StatementQuery& q) {
  return run("statement_entries", std::optional<std::vector<money::StatementEntry>>{},
             [&](Connection& c) -> std::optional<std::vector<money::StatementEntry>> {
               return entries_on(c, q);
             });
}

/// One transaction. The ledger is locked in SHARE mode first: that waits for every transaction
/// writing entries to end and holds new ones off until the close commits, so no entry with an
/// id up to the close's last one can commit after it (ids are handed out before commit).
CloseResult PgStore::close_period(const CloseRequest& r) {
  return run("close_period", CloseResult{}, [&](Connection& c) -> CloseResult {
    Transaction tx(c);
    c.exec_script("LOCK TABLE ledger_entries IN SHARE MODE", Effect::kRead);
    // Two closes of one period take turns on its row.
    c.exec("SELECT pg_advisory_xact_lock(hashtextextended($1, 7))", Params().add(r.period.label()),
           Effect::kRead);
    const money::Closes closes = closes_on(c);
    const std::string label = r.period.label();
    CloseResult out;
    if (auto before = closes.find(label); before != closes.end()) {
      out.status = CloseStatus::kAlreadyClosed;
      out.closed = {before->second, totals_on(c, label)};
      return out;
    }
    const std::int64_t through =
        c.exec("SELECT COALESCE(MAX(id), 0) FROM ledger_entries", Effect::kRead).int64(0, 0);
    StatementQuery all;
    all.window = money::close_window(r.period, closes);
    const auto entries = entries_on(c, all);
    // Each buyer's zone as written in its schedule, each seller's as stored;
    // money::account_zone reads what it is.
    const auto accounts = rows_of<money::Account>(
        c.exec("SELECT 'buyer', id, COALESCE(doc::jsonb #>> '{schedule,timezone}', '') FROM buyers"
               " UNION ALL SELECT 'seller', id, time_zone FROM sellers",
               Effect::kRead),
        [](const Row& q) {
          return money::Account{*money::parse_party(q.text(0)), q.text(1), q.text(2)};
        });
    out.closed.close = {r.period, through, r.closed_by, r.at_ms, {}};
    out.closed.totals = money::freeze(r.period, accounts, entries, closes);
    write_close(c, out.closed);
    tx.commit();
    out.status = CloseStatus::kClosed;
    return out;
  });
}

}  // namespace leadflow::pg
