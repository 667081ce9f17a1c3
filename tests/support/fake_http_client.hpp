#pragma once
// An outbound HTTP client for unit tests: buyers answer from a script, on simulated time.
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "leadflow/delivery/http_client.hpp"
#include "simulated_clock.hpp"

namespace leadflow::testing {

/// What a scripted endpoint does with one request.
struct FakeAnswer {
  enum class Kind { kHttp, kTransportError, kRefused, kNoAnswer, kNotSent };
  Kind kind = Kind::kHttp;
  int status = 200;
  std::string body;
  std::string error;                   // kTransportError: the transport's text
  std::chrono::milliseconds delay{0};  // when the answer comes, after the request went out
  /// How long it first waits in the client's own queue for a connection (no timeout runs);
  /// past the request's max_queue_wait (else 30 s) it is never sent.
  std::chrono::milliseconds queued{0};
  /// A timeout reported while this process was starved of CPU (HttpResponse::stalled_here).
  bool stalled = false;

  /// A ping answered with a bid in dollars: {"bid": 12.5}.
  static FakeAnswer bid(double dollars, std::chrono::milliseconds delay = {});
  /// A bid for the lead alone and one for a share of it (0 leaves either out).
  static FakeAnswer bids(double exclusive, double shared, std::chrono::milliseconds delay = {});
  /// A ping answered with no bid: {"bid": 0}.
  static FakeAnswer no_bid(std::chrono::milliseconds delay = {});
  /// A post taken: {"accepted": true, "buyer_lead_id": reference}.
  static FakeAnswer accept(std::string reference = "ref-1", std::chrono::milliseconds delay = {});
  /// A post refused with a 200: {"accepted": false, "reason": reason}.
  static FakeAnswer reject(std::string reason, std::chrono::milliseconds delay = {});
  /// An HTTP error status (408, 429, 503...) with an empty JSON body.
  static FakeAnswer http_error(int status, std::chrono::milliseconds delay = {});
  /// No HTTP answer: the connection failed or was lost (status 0, `error`).
  static FakeAnswer transport_error(std::string error = "connection reset",
                                    std::chrono::milliseconds delay = {});
  /// No connection: refused at connect (status 0, not_delivered). What an unscripted URL gets.
  static FakeAnswer refused(std::chrono::milliseconds delay = {});
  /// Never answers: the request times out after its own timeout, as the real client reports it.
  static FakeAnswer no_answer();
  /// Never sent: the client gave up waiting for a connection of its own (not_sent, status 0)
  /// after `delay`, which the request's timeout does not cut (it had not started).
  static FakeAnswer not_sent(std::chrono::milliseconds delay = {});
};

/// An HttpClient whose endpoints answer from a script, per URL: one-off answers queued with
/// answer_next() are used first, in order, then the standing answer set with answer(). A URL with
/// neither is refused at once (a transport error, like a closed port). Every answer comes on the
/// SimulatedClock, `delay` after the request was sent, or at the request's timeout (reported
/// timed out, as libcurl does) when the delay is longer or the endpoint never answers. Every
/// request is recorded with its headers and body. Thread-safe.
class FakeHttpClient final : public HttpClient {
 public:
  explicit FakeHttpClient(SimulatedClock& clock) : clock_(clock) {}

  void answer(const std::string& url, FakeAnswer answer);
  void answer_next(const std::string& url, FakeAnswer answer);

  using HttpClient::send;
  void send(HttpRequest request, std::function<void(HttpResponse)> done) override;
  /// A request answered not_sent waits in "our queue" until that answer: the oldest one's age.
  std::chrono::nanoseconds oldest_unsent() const override;

  struct Sent {
    HttpRequest request;
    std::chrono::nanoseconds at;  // on the clock, since it was made
    /// The value of header `name` (case-insensitive), "" if absent.
    std::string header(const std::string& name) const;
  };
  /// Every request so far, in the order sent.
  std::vector<Sent> requests() const;
  /// The requests to `url`, in the order sent.
  std::vector<Sent> requests_to(const std::string& url) const;
  std::size_t count(const std::string& url) const;

 private:
  struct Script {
    std::deque<FakeAnswer> next;
    std::optional<FakeAnswer> standing;
  };
  SimulatedClock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, Script> scripts_;
  std::vector<Sent> sent_;
  std::multiset<SteadyTime> unsent_;  // when each request still waiting to be not_sent came
};

}  // namespace leadflow::testing
