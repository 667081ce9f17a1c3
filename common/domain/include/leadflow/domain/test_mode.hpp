#pragma once
// Test mode (docs/api.md, "Test leads"): how a seller's developers send leads before real
// traffic. A test lead is validated, stored, queued and recorded as a real lead is, and then
// decided `test` by the worker without an auction: no buyer is pinged or posted, no sale, no
// ledger entry, no cap, budget or duplicate counted, nothing in the reports' rollups. The rule
// of what makes a lead a test is here, once; what a test lead skips is the auction's
// (Distributor::decide) and the rollups' (reports::add_outcome), each calling is_test below.
#include <cstdint>

#include "leadflow/domain/lead.hpp"

namespace leadflow {

/// What may say a lead is a test: the post itself (`test: true`), its seller's test mode, and
/// (Surface B) its campaign's. Plain values; the front gathers them.
struct TestMarks {
  bool lead = false;      // the body's own `test`
  bool seller = false;    // the seller's test_mode
  bool campaign = false;  // the campaign's test_mode (Surface B only)
};

/// A lead is a test when any of the three says so: neither the seller nor its campaign can
/// make a lead its developer marked a test into a real one.
inline bool is_test_lead(const TestMarks& m) { return m.lead || m.seller || m.campaign; }

/// Whether a decided lead was a test one.
inline bool is_test(DeliveryStatus s) { return s == DeliveryStatus::kTest; }

/// What the worker records for a test lead, decided at `now_ms`: status `test`, no buyer, no
/// price or payout, no attempt and no ineligible buyer (none was considered).
Distribution test_outcome(std::int64_t now_ms);

}  // namespace leadflow
