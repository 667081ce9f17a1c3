#pragma once
// The state machine of one lead's auction (auction_machine.cpp), run on the Distributor's loop.
#include <functional>

#include "leadflow/auction/distributor.hpp"

namespace leadflow {

/// Starts `lead`'s auction on `dist`'s loop; `done` runs exactly once with its decision.
void run_auction(Distributor& dist, Lead lead, std::function<void(Decision)> done);

}  // namespace leadflow
