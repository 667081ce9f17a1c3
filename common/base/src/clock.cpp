#include "leadflow/base/clock.hpp"

namespace leadflow {

SystemClock& SystemClock::instance() {
  static SystemClock clock;
  return clock;
}

}  // namespace leadflow
