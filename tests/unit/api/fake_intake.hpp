#pragma once
// The intake port's writes, for the handler tests' fakes that only read leads: one base, so the
// fakes answer the reads and nothing else.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "leadflow/store/intake.hpp"

namespace leadflow::testing {

/// IntakeStore with writes the read routes never make: nothing inserted or recorded, and no
/// Idempotency-Key claimed (kUnavailable). A fake derives it and answers get_lead and list_leads.
class FakeIntakeReads : public IntakeStore {
 public:
  using IntakeStore::insert_leads;
  std::vector<LeadInsertResult> insert_leads(std::span<const Lead>,
                                             std::span<const SearchKeys>) override {
    return {};
  }
  std::vector<StoreStatus> record_outcomes(std::span<const OutcomeRecord>) override { return {}; }
  StoreStatus claim_idempotency_key(const IdempotencyRecord&, std::int64_t,
                                    IdempotencyRecord&) override {
    return StoreStatus::kUnavailable;
  }
  StoreStatus complete_idempotency_key(std::string_view, std::string_view, int,
                                       std::string_view) override {
    return StoreStatus::kUnavailable;
  }
  StoreStatus release_idempotency_key(std::string_view, std::string_view) override {
    return StoreStatus::kUnavailable;
  }
};

}  // namespace leadflow::testing
