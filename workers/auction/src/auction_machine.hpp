#pragma once
// The state machine of one lead's auction (auction_machine.cpp), run on the Distributor's loop.
#include <functional>
#include <vector>

#include "leadflow/auction/distributor.hpp"

namespace leadflow {

/// Starts `lead`'s auction on `dist`'s loop; `done` runs exactly once with its decision.
void run_auction(Distributor& dist, Lead lead, std::function<void(Decision)> done);

/// What an aged auction (a re-offer, docs/reoffers.md) knows of the lead's past.
struct AgedLead {
  int round = 1;                 // which re-offer this is
  std::vector<Attempt> history;  // every ping and post so far, live and aged
  std::vector<Sale> sales;       // what it sold in earlier re-offers (shares)
};

/// Starts `lead`'s `aged.round`th re-offer on `dist`'s loop; `done` runs exactly once.
void run_aged_auction(Distributor& dist, Lead lead, AgedLead aged,
                      std::function<void(Decision)> done);

}  // namespace leadflow
