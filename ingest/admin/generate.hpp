#pragma once
// leadflow-admin generate: realistic leads, auctions, sales and returns written into a store in
// bulk, through the store's own write paths (insert_leads, record_outcomes, record_returns,
// count_invalid), so every rollup is filled by the code that fills it in production. For
// benchmarks of the reports and for tests that compare the rollups with the raw rows.
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "leadflow/store/store.hpp"

namespace leadflow {

/// What to generate. The same options and seed give the same data, byte for byte, whatever the
/// store (the time range included: `end_ms` is part of the options).
struct GenerateOptions {
  std::int64_t leads = 100'000;
  int days = 90;
  std::uint64_t seed = 1;
  int sellers = 8;
  int buyers = 20;
  std::int64_t end_ms = 0;  // the leads arrive in [end_ms - days, end_ms); 0 = now
  int batch = 5'000;        // leads per insert_leads / record_outcomes transaction
  double duplicate_rate = 0.03;
  double return_rate = 0.04;    // of sales
  double invalid_rate = 0.002;  // refused Surface B posts, per Surface B lead
  bool keep_invalid = false;    // list the invalid posts counted in the summary (tests)
  FILE* progress = nullptr;     // progress lines every few seconds ("" = none)
};

/// An invalid Surface B post the generator counted (count_invalid).
struct InvalidPost {
  std::string campaign_id;
  std::int64_t at_ms = 0;
};

/// What was written.
struct GenerateSummary {
  std::int64_t leads = 0, duplicates = 0, sold = 0, unsold = 0, failed = 0;
  std::int64_t sales = 0, returns = 0, invalid = 0, pings = 0, posts = 0;
  std::int64_t from_ms = 0, to_ms = 0;
  std::vector<std::string> seller_ids, buyer_ids;
  std::vector<InvalidPost> invalid_posts;  // with keep_invalid
  double seconds = 0;
};

/// Writes the accounts (sellers, campaigns, buyers) and the leads into `store`, which must hold
/// no lead yet. nullopt with `error` set when the store refused something; what was written
/// before stays.
std::optional<GenerateSummary> generate(Store& store, const GenerateOptions& options,
                                        std::string& error);

/// `leadflow-admin generate` with its flags (--leads, --days, --seed, ...): progress on stderr,
/// the summary as JSON on stdout. Returns the process's exit code.
int run_generate(Store& store, const std::map<std::string, std::string>& flags);

}  // namespace leadflow
