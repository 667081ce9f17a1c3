// The rollups written with outcomes, as PostgreSQL statements, and their filling at migration.
#include "pg/rollup_rows.hpp"

#include <array>
#include <string>

#include "leadflow/base/log.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "rollup_tiers.hpp"
#include "rows.hpp"

namespace leadflow::pg {

using namespace store_rows;

namespace {

// "INSERT INTO <table> (<keys>, <figures>) SELECT * FROM unnest(<one array per column>) ORDER
// BY <keys> ON CONFLICT (<keys>) DO UPDATE SET <each figure added>": rows in the key's order (a
// map of tuples orders as "C" collation does), so concurrent transactions lock them in one order.
std::string performance_upsert(const char* table, bool tiers) {
  const std::string keys = std::string(tiers ? "tier, " : "") +
                           "bucket, seller_id, campaign_id, buyer_id, vertical, source";
  const int key_count = tiers ? 7 : 6;
  std::string s = std::string("INSERT INTO ") + table + " (" + keys + ", " +
                  performance_column_list() + ") SELECT * FROM unnest(";
  for (int i = 0; i < key_count + kFigures; ++i) {
    const char* type = i >= key_count       ? "BIGINT"
                       : (tiers && i == 0)  ? "INTEGER"
                       : i == key_count - 6 ? "BIGINT"
                                            : "TEXT";
    s += std::string(i ? ", $" : "$") + std::to_string(i + 1) + "::" + type + "[]";
  }
  s += ") ORDER BY ";
  for (int i = 1; i <= key_count; ++i) s += (i > 1 ? ", " : "") + std::to_string(i);
  return s + " ON CONFLICT (" + keys + ") DO UPDATE SET " + performance_additions(table);
}

template <typename Key>
void add_key(ArrayText (&columns)[6], const Key& key) {
  columns[0].add(std::get<0>(key));
  columns[1].add(std::get<1>(key));
  columns[2].add(std::get<2>(key));
  columns[3].add(std::get<3>(key));
  columns[4].add(std::get<4>(key));
  columns[5].add(std::get<5>(key));
}

template <typename Deltas, typename KeyOf>
Params performance_params(const Deltas& deltas, bool tiers, KeyOf key_of) {
  ArrayText tier, keys[6];
  std::array<ArrayText, kFigures> figures;
  for (const auto& [key, values] : deltas) {
    if (tiers) tier.add(static_cast<std::int64_t>(key_of(key).first));
    add_key(keys, key_of(key).second);
    for (int i = 0; i < kFigures; ++i) figures[i].add(values[i]);
  }
  Params params;
  if (tiers) params.add(tier.str());
  for (const auto& k : keys) params.add(k.str());
  for (const auto& f : figures) params.add(f.str());
  return params;
}

Statement performance_statement(const PerformanceDeltas& deltas) {
  static const std::string sql = performance_upsert("performance_rollup", false);
  return {sql.c_str(), performance_params(deltas, false, [](const PerformanceKey& k) {
            return std::pair<int, const PerformanceKey&>(0, k);
          })};
}

Statement performance_tiers_statement(const PerformanceTierDeltas& deltas) {
  static const std::string sql = performance_upsert("performance_tiers", true);
  return {sql.c_str(),
          performance_params(deltas, true, [](const std::pair<int, PerformanceKey>& k) {
            return std::pair<int, const PerformanceKey&>(k.first, k.second);
          })};
}

Statement unsold_statement(const UnsoldDeltas& deltas) {
  ArrayText keys[6], reason, leads;
  for (const auto& [key, n] : deltas) {
    add_key(keys, key);
    reason.add(std::get<6>(key));
    leads.add(n);
  }
  Params params;
  for (const auto& k : keys) params.add(k.str());
  params.add(reason.str()).add(leads.str());
  return {
      "INSERT INTO unsold_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source,"
      " reason, leads) SELECT * FROM unnest($1::BIGINT[], $2::TEXT[], $3::TEXT[],"
      " $4::TEXT[], $5::TEXT[], $6::TEXT[], $7::TEXT[], $8::BIGINT[])"
      " ORDER BY 1, 2, 3, 4, 5, 6, 7"
      " ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source, reason)"
      " DO UPDATE SET leads = unsold_rollup.leads + excluded.leads",
      std::move(params)};
}

Statement unsold_tiers_statement(const UnsoldTierDeltas& deltas) {
  ArrayText tier, keys[6], reason, leads;
  for (const auto& [key, n] : deltas) {
    tier.add(static_cast<std::int64_t>(key.first));
    add_key(keys, key.second);
    reason.add(std::get<6>(key.second));
    leads.add(n);
  }
  Params params;
  params.add(tier.str());
  for (const auto& k : keys) params.add(k.str());
  params.add(reason.str()).add(leads.str());
  return {
      "INSERT INTO unsold_tiers (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source,"
      " reason, leads) SELECT * FROM unnest($1::INTEGER[], $2::BIGINT[], $3::TEXT[], $4::TEXT[],"
      " $5::TEXT[], $6::TEXT[], $7::TEXT[], $8::TEXT[], $9::BIGINT[])"
      " ORDER BY 1, 2, 3, 4, 5, 6, 7, 8"
      " ON CONFLICT (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source, reason)"
      " DO UPDATE SET leads = unsold_tiers.leads + excluded.leads",
      std::move(params)};
}

}  // namespace

std::vector<Statement> outcome_statements(const OutcomeDeltas& deltas) {
  std::vector<Statement> out;
  if (!deltas.performance.empty()) {
    out.push_back(performance_statement(deltas.performance));
    const PerformanceTierDeltas tiers = performance_tiers(deltas.performance);
    if (!tiers.empty()) out.push_back(performance_tiers_statement(tiers));
  }
  if (!deltas.unsold.empty()) {
    out.push_back(unsold_statement(deltas.unsold));
    const UnsoldTierDeltas tiers = unsold_tiers(deltas.unsold);
    if (!tiers.empty()) out.push_back(unsold_tiers_statement(tiers));
  }
  return out;
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
      backfill_lead(deltas, keys, d, buyers, unsold);
    }
    if (page.rows() > 0) after = page.text(page.rows() - 1, 0);
    // The rollups' rows only: the tiers' own migration (12) fills them from the rollups.
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
