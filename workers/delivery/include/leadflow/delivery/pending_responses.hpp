#pragma once
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "leadflow/base/clock.hpp"
#include "leadflow/delivery/http_client.hpp"

namespace leadflow {

/// The answers of requests sent through one HttpClient, waited for on a Clock rather than on
/// futures, so an auction's deadline and a buyer's delay both run on the same (possibly
/// simulated) time. Answers that arrive after the owner stopped waiting (a ping answered after
/// the auction deadline) land in state shared with the client's callbacks and are dropped with
/// it. Used by one thread; the client's callbacks may run on any thread.
class PendingResponses {
 public:
  explicit PendingResponses(const Clock& clock);

  /// Sends `request`; returns the index its answer is waited for by.
  std::size_t send(HttpClient& http, HttpRequest request);
  /// The answer of request `index`, waiting for it until `deadline` on the clock; nullopt if it
  /// has not come by then. SteadyTime::max() waits as long as the client takes (the client
  /// always answers, at the latest when the request's own timeout passes).
  std::optional<HttpResponse> wait(std::size_t index, SteadyTime deadline = SteadyTime::max());

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::optional<HttpResponse>> answers;
  };
  const Clock& clock_;
  std::shared_ptr<State> state_;
};

/// Sends one request and waits for its answer on `clock`.
HttpResponse send_and_wait(HttpClient& http, const Clock& clock, HttpRequest request);

}  // namespace leadflow
