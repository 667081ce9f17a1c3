// The rollups' tiers in SQL: the key columns of a tier row and the statements that fill them.
#include "rollup_tiers.hpp"

#include <iterator>

#include "leadflow/reports/rollup.hpp"

namespace leadflow::store_rows {
namespace {

constexpr const char* kRevenueColumns[] = {"sales",   "revenue",          "payout",
                                           "returns", "returned_revenue", "returned_payout"};

// INSERT INTO <table>_tiers ... SELECT ... FROM <table>_rollup: one tier row per group.
std::string fill_sql(const std::string& table, const std::vector<std::string>& sums, bool unsold) {
  const std::string keys = "seller_id, campaign_id, buyer_id, vertical, source";
  std::string columns, additions;
  for (const std::string& c : sums) {
    columns += ", " + c;
    additions += ", SUM(r." + c + ")";
  }
  const std::string reason = unsold ? ", reason" : "";
  return "INSERT INTO " + table + "_tiers (tier, bucket, " + keys + reason + columns +
         ") SELECT t.tier, r.bucket - r.bucket % t.grain_ms, " +
         tier_key_columns(
             {"r.seller_id", "r.campaign_id", "r.buyer_id", "r.vertical", "r.source"}) +
         (unsold ? ", r.reason" : "") + additions + " FROM " + table +
         "_rollup AS r, rollup_tiers AS t" + (unsold ? " WHERE t.buyer = 1" : "") +
         " GROUP BY 1, 2, 3, 4, 5, 6, 7" + (unsold ? ", 8" : "");
}

}  // namespace

std::string tier_key_columns(const std::string (&keys)[5]) {
  static constexpr const char* kFlags[] = {"seller", "campaign", "buyer", "vertical", "source"};
  std::string out;
  for (int i = 0; i < 5; ++i)
    out += std::string(i ? ", " : "") + "CASE WHEN t." + kFlags[i] + " = 1 THEN " + keys[i] +
           " ELSE '' END";
  return out;
}

std::string rollup_tier_values() {
  std::string out;
  for (const RollupTier& t : kRollupTiers) {
    out += std::string(out.empty() ? "" : ", ") + "(" + std::to_string(t.id) + ", " +
           std::to_string(t.grain_ms);
    for (unsigned bit : {kTierSeller, kTierCampaign, kTierBuyer, kTierVertical, kTierSource})
      out += (t.keys & bit) ? ", 1" : ", 0";
    out += ")";
  }
  return out;
}

std::vector<std::string> fill_tiers_sql() {
  std::vector<std::string> performance(std::begin(kPerformanceColumns),
                                       std::end(kPerformanceColumns));
  return {
      "INSERT INTO rollup_tiers (tier, grain_ms, seller, campaign, buyer, vertical, source)"
      " VALUES " +
          rollup_tier_values(),
      fill_sql("revenue", {std::begin(kRevenueColumns), std::end(kRevenueColumns)}, false),
      fill_sql("performance", performance, false), fill_sql("unsold", {"leads"}, true)};
}

namespace {

// The upserts of one sale's or return's figures (after the keys) into band `n`'s quarter hour
// and tier rows.
std::vector<std::string> band_sql(int n, const std::string (&p)[8], const std::string& figures) {
  const std::string band = std::to_string(band_bucket(0, n));
  const auto additions = [](const std::string& table) {
    std::string out;
    for (const char* c : kRevenueColumns)
      out +=
          std::string(out.empty() ? "" : ", ") + c + " = " + table + "." + c + " + excluded." + c;
    return out;
  };
  const std::string keys = "seller_id, campaign_id, buyer_id, vertical, source";
  return {
      "INSERT INTO revenue_rollup (bucket, " + keys +
          ", sales, revenue, payout, returns, returned_revenue, returned_payout) SELECT " + p[0] +
          " - " + p[0] + " % " + std::to_string(kRollupBucketMs) + " + " + band + ", " + p[1] +
          ", " + p[2] + ", " + p[3] + ", " + p[4] + ", " + p[5] + figures +
          " WHERE 1 = 1 ON CONFLICT (bucket, " + keys + ") DO UPDATE SET " +
          additions("revenue_rollup"),
      "INSERT INTO revenue_tiers (tier, bucket, " + keys +
          ", sales, revenue, payout, returns, returned_revenue, returned_payout) SELECT t.tier, " +
          p[0] + " - " + p[0] + " % t.grain_ms + " + band + ", " +
          tier_key_columns({p[1], p[2], p[3], p[4], p[5]}) + figures +
          " FROM rollup_tiers AS t WHERE 1 = 1 ORDER BY 1, 2, 3, 4, 5, 6, 7 ON CONFLICT (tier, "
          "bucket, " +
          keys + ") DO UPDATE SET " + additions("revenue_tiers")};
}

}  // namespace

std::vector<std::string> aged_sale_sql(const std::string (&p)[8]) {
  return band_sql(kAgedSalesBand, p, ", 1, " + p[6] + ", " + p[7] + ", 0, 0, 0");
}

std::vector<std::string> band_return_sql(int band, const std::string (&p)[8]) {
  return band_sql(band, p, ", 0, 0, 0, 1, " + p[6] + ", " + p[7]);
}

}  // namespace leadflow::store_rows
