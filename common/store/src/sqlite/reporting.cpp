// The SQLite adapter of the reporting port (leadflow/store/reporting.hpp): the rollups and the
// figures counted beside them.
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

/// `invalid` counts whole hours: posts in the hour that contains `since_ms` all count.
std::optional<std::vector<RevenueCell>> SqliteStore::revenue_rollup(const RollupQuery& rq) {
  static constexpr const char* kColumns[] = {"sales",   "revenue",          "payout",
                                             "returns", "returned_revenue", "returned_payout"};
  auto sums =
      fold_rollup<6>("revenue_rollup", store_rows::RollupKind::kRevenue, "revenue", kColumns, rq);
  if (!sums) return std::nullopt;
  std::vector<RevenueCell> out;
  out.reserve(sums->size());
  for (auto& [key, f] : *sums)
    out.push_back({key.first, std::move(key.second), f[0], f[1], f[2], f[3], f[4], f[5]});
  return out;
}

std::optional<std::int64_t> SqliteStore::count_queued(std::string_view campaign_id,
                                                      std::int64_t since_ms) {
  return guarded(
      "count_queued", std::optional<std::int64_t>{}, [&]() -> std::optional<std::int64_t> {
        auto conn = readers_.acquire();
        if (!conn) return std::nullopt;
        // The leads still pending are few, whatever the campaign's history holds.
        Query q(*conn,
                "SELECT COUNT(*) FROM leads INDEXED BY leads_by_status WHERE status = 'pending'"
                " AND campaign_id = ?1 AND received_at >= ?2");
        const int rc = q.bind(campaign_id).bind(since_ms).step();
        if (rc == SQLITE_ROW) return q.int64(0);
        report(*conn, rc, "count_queued");
        return std::nullopt;
      });
}

/// The campaign's count, and its row of the performance rollup, in one transaction.
void SqliteStore::count_invalid(std::string_view campaign_id, std::int64_t at_ms) {
  guarded("count_invalid", 0, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "count_invalid"), 0;
    {
      Query q(c,
              "INSERT INTO invalid_counts (campaign_id, hour_start, count) VALUES (?1, ?2, 1)"
              " ON CONFLICT (campaign_id, hour_start) DO UPDATE SET count = count + 1");
      if (int rc = q.bind(campaign_id).bind(hour_start(at_ms)).run())
        return report(c, rc, "count_invalid"), 0;
    }
    {
      Query q(c,
              "INSERT INTO performance_rollup (bucket, seller_id, campaign_id, buyer_id,"
              " vertical, source, invalid) SELECT ?2, seller_id, id, '', vertical, '', 1"
              " FROM campaigns WHERE id = ?1"
              " ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source)"
              " DO UPDATE SET invalid = invalid + 1");
      if (int rc = q.bind(campaign_id).bind(at_ms - at_ms % kRollupBucketMs).run())
        return report(c, rc, "count_invalid"), 0;
    }
    {
      static const std::string sql =
          "INSERT INTO performance_tiers (tier, bucket, seller_id, campaign_id, buyer_id,"
          " vertical, source, invalid) SELECT t.tier, ?2 - ?2 % t.grain_ms, " +
          store_rows::tier_key_columns({"c.seller_id", "c.id", "''", "c.vertical", "''"}) +
          ", 1 FROM campaigns AS c, rollup_tiers AS t WHERE c.id = ?1"
          " ON CONFLICT (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source)"
          " DO UPDATE SET invalid = invalid + 1";
      Query q(c, sql);
      if (int rc = q.bind(campaign_id).bind(at_ms - at_ms % kRollupBucketMs).run())
        return report(c, rc, "count_invalid"), 0;
    }
    if (int rc = tx.commit()) return report(c, rc, "count_invalid"), 0;
    return 0;
  });
}

std::optional<std::vector<PerformanceCell>> SqliteStore::performance_rollup(const RollupQuery& rq) {
  auto sums = fold_rollup<kFigures>("performance_rollup", store_rows::RollupKind::kPerformance,
                                    "performance", kPerformanceColumns, rq);
  if (!sums) return std::nullopt;
  std::vector<PerformanceCell> out;
  out.reserve(sums->size());
  for (auto& [key, f] : *sums) out.push_back({key.first, std::move(key.second), f});
  return out;
}

std::optional<std::vector<UnsoldCell>> SqliteStore::unsold_rollup(const RollupQuery& rq) {
  static constexpr const char* kColumns[] = {"leads"};
  auto sums =
      fold_rollup<1>("unsold_rollup", store_rows::RollupKind::kUnsold, "unsold", kColumns, rq);
  if (!sums) return std::nullopt;
  std::vector<UnsoldCell> out;
  out.reserve(sums->size());
  for (auto& [key, f] : *sums) out.push_back({key.first, std::move(key.second), f[0]});
  return out;
}

}  // namespace leadflow::sqlite
