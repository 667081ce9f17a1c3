#pragma once
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace leadflow {

class Exchange;
class HttpServer;
namespace http {
class Request;
class Response;
}  // namespace http

/// How a simulated buyer prices a lead, in dollars: fixed when min == max, otherwise uniform in
/// [min, max] rounded to the cent.
struct BidModel {
  double min = 10.0;
  double max = 10.0;
  static BidModel fixed(double dollars) { return {dollars, dollars}; }
  static BidModel uniform(double lo, double hi) { return {lo, hi}; }
};

struct BuyerSimOptions {
  std::string name = "sim";
  std::string host = "127.0.0.1";
  int port = 0;  // 0: an ephemeral port, read back with BuyerSimulator::port()

  BidModel bid;
  double shared_bid = 0.0;    // > 0: every bid also offers this for a share ({"shared_bid"})
  double no_bid_rate = 0.0;   // fraction of pings answered {"bid": 0}
  int latency_ms = 0;         // every answer waits this long...
  int jitter_ms = 0;          // ...plus a uniform 0..jitter_ms
  double timeout_rate = 0.0;  // fraction of pings that hang for hang_ms instead
  int hang_ms = 5000;
  double error_rate = 0.0;   // fraction of pings and posts answered 500
  double reject_rate = 0.0;  // fraction of posts answered {"accepted": false}
  std::string reject_reason = "duplicate in buyer CRM";
  std::uint64_t seed = 42;  // same seed + same request order -> same answers

  std::string tls_cert;  // PEM paths; both set -> HTTPS
  std::string tls_key;

  int loops = 1;                     // event-loop threads: each holds any number of connections
  int keep_alive_timeout_s = 5;      // idle keep-alive connections close after this
  std::size_t record_limit = 10000;  // recorded pings/posts kept for inspection (oldest dropped)
};

/// What the simulator has seen and answered since start (or since reset_records()).
struct BuyerSimStats {
  std::uint64_t pings = 0;
  std::uint64_t bids = 0;
  std::uint64_t no_bids = 0;
  std::uint64_t posts = 0;
  std::uint64_t accepted = 0;
  std::uint64_t rejected = 0;
  std::uint64_t duplicate_posts = 0;  // posts whose Idempotency-Key was already answered
  std::uint64_t errors = 0;           // 4xx/5xx answers (injected failures, bad JSON)
  std::uint64_t timeouts = 0;         // requests made to hang
  std::uint64_t pii_pings = 0;        // pings that carried a PII field (a protocol violation)
  std::uint64_t connections = 0;      // distinct client connections that sent a request
  nlohmann::json to_json() const;
};

/// One request as received, for assertions ("no PII in pings", "posts carry Idempotency-Key").
struct RecordedRequest {
  std::string path;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  /// The first header called `name` (case-insensitive), or "".
  std::string header(std::string_view name) const;
};

/// A buyer's ping/post endpoint (SPEC §5 default JSON protocol) on a real socket, with configurable
/// bids, latency, failures and rejects, and hooks for tests to stub answers and inject faults at
/// runtime. Also the engine of the leadflow-buyer-sim tool. Every public method is thread-safe.
///
/// Event-driven: it runs on leadflow's own HTTP server (leadflow::http), answering pings and posts
/// on the event loop. A delayed answer (latency, jitter, a hang) is decided when the request
/// arrives and handed to the loop to write once `latency` has passed since it was read
/// (Exchange::done_at): no thread waits, so one loop holds thousands of requests at once, each
/// answered after its own delay.
///
///   POST /ping   {"ping_id","lead_id",...}            -> {"bid": 12.5} | {"bid": 0}
///   POST /post   lead + ping_id + price, Idempotency-Key -> {"accepted": true, "buyer_lead_id"}
///                                                        | {"accepted": false, "reason"}
///   GET  /healthz, GET /stats
///
/// A repeated Idempotency-Key gets the first answer again and counts as a duplicate post.
class BuyerSimulator {
 public:
  explicit BuyerSimulator(BuyerSimOptions options);
  ~BuyerSimulator();
  BuyerSimulator(const BuyerSimulator&) = delete;
  BuyerSimulator& operator=(const BuyerSimulator&) = delete;

  /// Binds and returns once the server accepts connections. Throws std::runtime_error when the
  /// address cannot be bound or the TLS files cannot be loaded. Call once.
  void start();
  /// Stops accepting and writes every delayed answer at once (without waiting for its time),
  /// then joins. Idempotent.
  void stop();

  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT" (https with TLS)
  std::string ping_url() const { return base_url() + "/ping"; }
  std::string post_url() const { return base_url() + "/post"; }
  const std::string& name() const { return options_.name; }

  BuyerSimStats stats() const;
  std::vector<RecordedRequest> pings() const;
  std::vector<RecordedRequest> posts() const;
  void reset_records();  // clears recordings, counters and the idempotency memory
  /// Waits until at least `n` pings+posts have arrived (counted when received, before any delay).
  bool wait_for_requests(std::uint64_t n, std::chrono::milliseconds timeout) const;

  // Runtime overrides (an "HTTP imposter" for tests).
  void set_bid(double dollars);
  void set_bid_range(double min, double max);
  void set_shared_bid(double dollars);  // 0: bids for the lead alone only
  void set_no_bid_rate(double rate);
  void set_reject_rate(double rate);
  void set_error_rate(double rate);
  void set_latency(std::chrono::milliseconds base,
                   std::chrono::milliseconds jitter = std::chrono::milliseconds{0});
  void set_reject_next(int n, std::string reason = "rejected by test");
  void set_fail_next(int n, int status = 500);  // next n pings/posts answered `status`
  void set_hang_next(int n);                    // next n pings/posts wait hang_ms first
  /// Every request to `path` ("/ping", "/post") is answered with exactly this until cleared.
  void stub(std::string path, int status, std::string body,
            std::string content_type = "application/json");
  void clear_stubs();

 private:
  struct Answer {
    int status = 200;
    std::string body;
    std::string content_type = "application/json";
  };
  struct Stub {
    int status;
    std::string body;
    std::string content_type;
  };

  // Decide the answer and its delay when the request arrives; the loop writes it later.
  void handle_ping(Exchange& ex);
  void handle_post(Exchange& ex);
  void record(const http::Request& req, std::deque<RecordedRequest>& into);  // mutex_ held
  double draw();                                                             // mutex_ held
  std::chrono::milliseconds draw_latency();                                  // mutex_ held
  static void answer_after(Exchange& ex, const Answer& a, std::chrono::milliseconds delay);

  BuyerSimOptions options_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;

  mutable std::mutex mutex_;  // guards everything below
  mutable std::condition_variable received_cv_;
  std::mt19937_64 rng_;
  BuyerSimStats stats_;
  std::uint64_t received_ = 0;
  std::deque<RecordedRequest> pings_;
  std::deque<RecordedRequest> posts_;
  std::unordered_set<std::string> connections_;
  std::unordered_map<std::string, Answer> answered_posts_;  // by Idempotency-Key
  std::unordered_map<std::string, Stub> stubs_;
  int reject_next_ = 0;
  std::string reject_next_reason_;
  int fail_next_ = 0;
  int fail_status_ = 500;
  int hang_next_ = 0;
  std::uint64_t next_buyer_lead_id_ = 1;

  std::mutex stop_mutex_;
  bool stopping_ = false;  // guarded by stop_mutex_
  bool started_ = false;   // guarded by stop_mutex_
};

}  // namespace leadflow
