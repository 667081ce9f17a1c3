#pragma once
// Private: the test ping's way out (leadflow/api/buyer_test_ping.hpp), through the workers' own
// buyer protocol and HTTP client.
#include <memory>

#include "leadflow/api/buyer_test_ping.hpp"
#include "leadflow/base/config.hpp"

namespace leadflow {

/// A BuyerPinger on the workers' code: make_ping_request (mapping, headers, timeout),
/// the buyer HTTP client (connections to non-public addresses refused at connect time unless
/// LEADFLOW_ALLOW_PRIVATE_BUYERS), read_ping_answer, and the auction's classification of an
/// answer (timed out: timeout; no answer or a 5xx: error; a bid: bid; else no_bid). Its client
/// (one loop thread) is made at the first ping. Thread-safe.
std::unique_ptr<BuyerPinger> make_worker_protocol_pinger(const Config& config);

}  // namespace leadflow
