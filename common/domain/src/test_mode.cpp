#include "leadflow/domain/test_mode.hpp"

namespace leadflow {

Distribution test_outcome(std::int64_t now_ms) {
  Distribution d;
  d.status = DeliveryStatus::kTest;
  d.reason = "test";
  d.decided_at_ms = now_ms;
  return d;
}

}  // namespace leadflow
