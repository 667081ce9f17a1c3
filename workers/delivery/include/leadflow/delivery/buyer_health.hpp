#pragma once
#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "leadflow/base/clock.hpp"

namespace leadflow {

/// Takes a buyer out of auctions for a while when it keeps timing out or failing, so one dead
/// endpoint does not add its whole timeout to every lead (SPEC §4.2 "health"). A buyer is paused
/// when at least `min_requests` of its last `window` pings and posts are known and `failure_ratio`
/// of those failed (timeout, transport error, 408, 429, 5xx); after `cool_down` it comes back with
/// a clean record. Per process: each worker judges from what it saw itself. Thread-safe.
class BuyerHealth {
 public:
  struct Options {
    int window = 20;
    int min_requests = 10;
    double failure_ratio = 0.5;
    std::chrono::milliseconds cool_down{30'000};
  };

  BuyerHealth(const Clock& clock, Options options) : clock_(clock), options_(options) {}

  /// Records one exchange. Returns true when this one paused the buyer.
  bool record(const std::string& buyer_id, bool failed);
  /// Whether the buyer sits out auctions now.
  bool paused(const std::string& buyer_id);

 private:
  struct State {
    std::deque<bool> recent;  // true = failed, newest at the back
    SteadyTime paused_until{};
  };
  const Clock& clock_;
  Options options_;
  std::mutex mu_;
  std::unordered_map<std::string, State> states_;
};

}  // namespace leadflow
