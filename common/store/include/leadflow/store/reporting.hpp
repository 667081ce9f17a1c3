#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leadflow/reports/rollup.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// The reporting port: the rollups the reports read, the one figure counted outside an outcome
/// (an invalid Surface B post) and the leads still queued; for the API's report routes.
class ReportingStore : public virtual StorePort {
 public:
  // --- reports ------------------------------------------------------------------------------
  /// The revenue rollup's sums (kept with each ledger entry, so exact); nullopt when the store
  /// cannot say.
  virtual std::optional<std::vector<RevenueCell>> revenue_rollup(const RollupQuery& q) = 0;
  /// The performance rollup's sums (kept with each outcome); nullopt when the store cannot say.
  virtual std::optional<std::vector<PerformanceCell>> performance_rollup(const RollupQuery& q) = 0;
  /// The unsold rollup's sums (kept with each outcome); nullopt when the store cannot say.
  virtual std::optional<std::vector<UnsoldCell>> unsold_rollup(const RollupQuery& q) = 0;
  /// Counts a Surface B post that failed validation (the lead itself is never stored).
  virtual void count_invalid(std::string_view campaign_id, std::int64_t at_ms) = 0;
  /// How many of the campaign's leads received since `since_ms` are still undecided (the
  /// rollups count a lead once decided); nullopt when the store cannot say.
  virtual std::optional<std::int64_t> count_queued(std::string_view campaign_id,
                                                   std::int64_t since_ms) = 0;
};

}  // namespace leadflow
