#pragma once
// POST /v1/buyers/{id}/test-ping: an operator pings a buyer with a synthetic lead to check its
// configuration (URL, headers, mapping, timeout) before letting it into auctions.
//
// The front never links the workers' HTTP client (docs/architecture.md): the ping itself goes
// through the BuyerPinger port, which the composition root implements with the workers' own
// request building, client and answer reading.
#include <cstdint>
#include <optional>
#include <string>

#include "leadflow/api/api.hpp"
#include "leadflow/base/money.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/verticals.hpp"

namespace leadflow {

/// What one test ping came to, as the API answers it.
struct TestPingResult {
  std::string url;
  int http_status = 0;  // 0 when no HTTP answer came
  std::int64_t duration_ms = 0;
  std::string outcome;  // "bid", "no_bid", "error" or "timeout"
  std::optional<Cents> bid;
  std::string reason;  // why there is no bid, or what went wrong ("" for a bid)
};

/// Sends a buyer's ping for a lead exactly as a worker would (its mapping, headers and timeout,
/// and the private-address rule of LEADFLOW_ALLOW_PRIVATE_BUYERS), waits for the answer and
/// reads it as a worker reads it. Blocks the calling thread for at most about the buyer's
/// timeout. Thread-safe.
class BuyerPinger {
 public:
  virtual ~BuyerPinger() = default;
  virtual TestPingResult ping(const Buyer& buyer, const Lead& lead, const std::string& ping_id) = 0;
};

/// Test pings a minute per caller (its key or user), and per buyer whoever asks.
inline constexpr int kTestPingsPerMinute = 10;
inline constexpr int kTestPingsPerBuyerPerMinute = 20;

/// The synthetic lead of a test ping: of `vertical` (its required custom fields filled with
/// sample values), with a made-up person who is clearly not a real one (lead id "test_…",
/// source "leadflow_test_ping", a 555-01XX phone, an example.invalid e-mail), in a state and
/// ZIP the buyer's filters accept where they name some.
Lead test_ping_lead(const Buyer& buyer, const Vertical& vertical, std::int64_t now_ms);

/// Registers POST /v1/buyers/{id}/test-ping (admin: buyers:write, operator only). `pinger`
/// must outlive the routes.
void register_buyer_test_ping(Routes& routes, IngestContext& ctx, BuyerPinger& pinger);

}  // namespace leadflow
