// The rollups written with outcomes, as PostgreSQL statements, and their filling at migration.
#include "pg/rollup_rows.hpp"

#include <array>
#include <string>

#include "leadflow/base/log.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "rows.hpp"

namespace leadflow::pg {

using namespace store_rows;

/// Adds `deltas` to the performance rollup in one statement, rows in the key's order (a map
/// of tuples orders as "C" collation does), so concurrent transactions lock them in one order.
Statement performance_statement(const PerformanceDeltas& deltas) {
  static const std::string sql = [] {
    std::string s =
        "INSERT INTO performance_rollup (bucket, seller_id, campaign_id, buyer_id, vertical,"
        " source, " +
        performance_column_list() +
        ") SELECT * FROM unnest($1::BIGINT[], $2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[],"
        " $6::TEXT[]";
    for (int i = 0; i < kFigures; ++i) s += ", $" + std::to_string(7 + i) + "::BIGINT[]";
    return s +
           ") ORDER BY 1, 2, 3, 4, 5, 6"
           " ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE"
           " SET " +
           performance_additions("performance_rollup");
  }();
  ArrayText keys[6];
  std::array<ArrayText, kFigures> figures;
  for (const auto& [key, values] : deltas) {
    keys[0].add(std::get<0>(key));
    keys[1].add(std::get<1>(key));
    keys[2].add(std::get<2>(key));
    keys[3].add(std::get<3>(key));
    keys[4].add(std::get<4>(key));
    keys[5].add(std::get<5>(key));
    for (int i = 0; i < kFigures; ++i) figures[i].add(values[i]);
  }
  Params params;
  for (const auto& k : keys) params.add(k.str());
  for (const auto& f : figures) params.add(f.str());
  return {sql.c_str(), std::move(params)};
}

/// Adds `deltas` to the unsold rollup in one statement, rows in the key's order.
Statement unsold_statement(const UnsoldDeltas& deltas) {
  ArrayText keys[7], leads;
  for (const auto& [key, n] : deltas) {
    keys[0].add(std::get<0>(key));
    keys[1].add(std::get<1>(key));
    keys[2].add(std::get<2>(key));
    keys[3].add(std::get<3>(key));
    keys[4].add(std::get<4>(key));
    keys[5].add(std::get<5>(key));
    keys[6].add(std::get<6>(key));
    leads.add(n);
  }
  Params params;
  for (const auto& k : keys) params.add(k.str());
  params.add(leads.str());
  return {
      "INSERT INTO unsold_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source,"
      " reason, leads) SELECT * FROM unnest($1::BIGINT[], $2::TEXT[], $3::TEXT[],"
      " $4::TEXT[], $5::TEXT[], $6::TEXT[], $7::TEXT[], $8::BIGINT[])"
      " ORDER BY 1, 2, 3, 4, 5, 6, 7"
      " ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source, reason)"
      " DO UPDATE SET leads = unsold_rollup.leads + excluded.leads",
      std::move(params)};
}

void backfill_rollups(Connection& c, bool buyers, bool unsold) {
  // Pages in id order, each page's counts written before the next is read: memory stays
  // bounded by a page's keys, whatever the store holds.
  constexpr int kPage = 5000;
  const std::string sql =
      std::string(
          "SELECT id, received_at, seller_id, campaign_id, vertical, source,"
          " status, reason, attempts, ineligible FROM leads WHERE id > $1 AND ") +
      (buyers ? "status <> 'pending'" : "status IN ('unsold', 'rejected')") +
      " ORDER BY id LIMIT " + std::to_string(kPage);
  std::string after;
  std::int64_t leads = 0;
  for (;;) {
    const Result page = c.exec(sql.c_str(), Params().add(after), Effect::kRead);
    OutcomeDeltas deltas;
    for (int i = 0; i < page.rows(); ++i) {
      const LeadKeys keys{page.int64(i, 1), page.text(i, 2), page.text(i, 3), page.text(i, 4),
                          page.text(i, 5)};
      Distribution d;
      d.status = parse_delivery_status(page.text(i, 6)).value_or(DeliveryStatus::kPending);
      d.reason = page.text(i, 7);
      d.attempts = attempts_from_json(parse_json(page.text(i, 8)));
      d.ineligible = ineligible_from_json(parse_json(page.text(i, 9)));
      add_backfill(deltas, keys, d, buyers, unsold);
    }
    if (page.rows() > 0) after = page.text(page.rows() - 1, 0);
    if (!deltas.performance.empty()) {
      const Statement st = performance_statement(deltas.performance);
      c.exec(st.sql, st.params, Effect::kWrite);
    }
    if (!deltas.unsold.empty()) {
      const Statement st = unsold_statement(deltas.unsold);
      c.exec(st.sql, st.params, Effect::kWrite);
    }
    leads += page.rows();
    if (page.rows() < kPage) break;
    if (leads % 100'000 == 0) log(LogLevel::kInfo, "store_backfill", {{"leads", leads}});
  }
}

}  // namespace leadflow::pg
