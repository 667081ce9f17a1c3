// The PostgreSQL adapter of the reporting port (leadflow/store/reporting.hpp): the rollups and the
// figures counted beside them.
#include "pg/adapter.hpp"

namespace leadflow::pg {

std::optional<std::vector<RevenueCell>> PgStore::revenue_rollup(const RollupQuery& rq) {
  static constexpr const char* kColumns[] = {"sales",   "revenue",          "payout",
                                             "returns", "returned_revenue", "returned_payout"};
  const std::string sql =
      planned_sql("revenue", kColumns, LF_REVENUE_SUMS, rq, RollupKind::kRevenue);
  return read_rollup<RevenueCell>("revenue_rollup", sql, filter_params(rq),
                                  [&rq](const Row& r) { return read_revenue_cell(r, rq); });
}

std::optional<std::int64_t> PgStore::count_queued(std::string_view campaign_id,
                                                  std::int64_t since_ms) {
  return run("count_queued", std::optional<std::int64_t>{},
             [&](Connection& c) -> std::optional<std::int64_t> {
               return c
                   .exec(
                       "SELECT COUNT(*) FROM leads WHERE status = 'pending'"
                       " AND campaign_id = $1 AND received_at >= $2",
                       Params().add(campaign_id).add(since_ms), Effect::kRead)
                   .int64(0, 0);
             });
}

/// The campaign's count, its row of the performance rollup, then its rows of the tiers, in
/// one transaction (the rollup before its tiers, as every writer of both goes).
void PgStore::count_invalid(std::string_view campaign_id, std::int64_t at_ms) {
  static const std::string tiers =
      "INSERT INTO performance_tiers (tier, bucket, seller_id, campaign_id, buyer_id, vertical,"
      " source, invalid) SELECT t.tier, $2 - $2 % t.grain_ms, " +
      tier_key_columns({"c.seller_id", "c.id", "''", "c.vertical", "''"}) +
      ", 1 FROM campaigns AS c, rollup_tiers AS t WHERE c.id = $1 ORDER BY 1, 2, 3, 4, 5, 6, 7"
      " ON CONFLICT (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source)"
      " DO UPDATE SET invalid = performance_tiers.invalid + 1";
  const std::int64_t bucket = at_ms - at_ms % kRollupBucketMs;
  run("count_invalid", StoreStatus::kUnavailable, [&](Connection& c) {
    Transaction tx(c);
    c.exec(
        "WITH counted AS (INSERT INTO invalid_counts (campaign_id, hour_start, count)"
        " VALUES ($1, $2, 1) ON CONFLICT (campaign_id, hour_start)"
        " DO UPDATE SET count = invalid_counts.count + 1)"
        " INSERT INTO performance_rollup (bucket, seller_id, campaign_id, buyer_id, vertical,"
        " source, invalid) SELECT $3, seller_id, id, '', vertical, '', 1 FROM campaigns"
        " WHERE id = $1"
        " ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source)"
        " DO UPDATE SET invalid = performance_rollup.invalid + 1",
        Params().add(campaign_id).add(hour_start(at_ms)).add(bucket), Effect::kWrite);
    c.exec(tiers.c_str(), Params().add(campaign_id).add(bucket), Effect::kWrite);
    tx.commit();
    return StoreStatus::kOk;
  });
}

std::optional<std::vector<PerformanceCell>> PgStore::performance_rollup(const RollupQuery& rq) {
  static const std::string sums = performance_sums();
  const std::string sql =
      planned_sql("performance", kPerformanceColumns, sums, rq, RollupKind::kPerformance);
  return read_rollup<PerformanceCell>("performance_rollup", sql, filter_params(rq),
                                      [&rq](const Row& r) { return read_performance_cell(r, rq); });
}

std::optional<std::vector<UnsoldCell>> PgStore::unsold_rollup(const RollupQuery& rq) {
  static constexpr const char* kColumns[] = {"leads"};
  const std::string sql =
      planned_sql("unsold", kColumns, "COALESCE(SUM(leads), 0)", rq, RollupKind::kUnsold);
  return read_rollup<UnsoldCell>("unsold_rollup", sql, filter_params(rq),
                                 [&rq](const Row& r) { return read_unsold_cell(r, rq); });
}

}  // namespace leadflow::pg
