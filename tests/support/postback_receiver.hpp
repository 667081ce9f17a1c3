#pragma once
// A seller's postback endpoint for the tests: leadflow's own HTTPS server on loopback (a
// self-signed certificate the sender is told to trust), verifying every request's signature as a
// receiver would (leadflow/postbacks/signature.hpp) and keeping what it took. Each path is an
// endpoint of its own whose behaviour the test sets: answer 200, answer a status, answer 200 after
// a delay, or hang (never answer within any client's timeout).
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/http/server.hpp"

namespace leadflow::testing {

class PostbackReceiver {
 public:
  enum class Mode { kOk, kFail, kSlow, kHang };
  struct Received {
    std::string path;
    std::string event_id;   // the Leadflow-Event-Id header
    std::string signature;  // the Leadflow-Signature header, as it came
    bool signature_ok = false;
    nlohmann::json body;
    std::string raw_body;  // the bytes as they came, which the signature covers
    int answered = 0;      // the status it was answered with (0: hung)
  };

  /// Starts on 127.0.0.1:0 with a certificate made in `dir`; closes a connection idle for
  /// `idle_timeout` (with TLS's close_notify, as servers do).
  explicit PostbackReceiver(const std::string& dir,
                            std::chrono::milliseconds idle_timeout = std::chrono::seconds(10));
  ~PostbackReceiver();

  /// The endpoint at `path` ("/a") verifies with `secret` and behaves as `mode` (kSlow answers
  /// 200 after `slow`).
  void set(const std::string& path, const std::string& secret, Mode mode, int fail_status = 503,
           std::chrono::milliseconds slow = std::chrono::milliseconds(300));
  std::string url(const std::string& path) const;
  const std::string& cert_file() const { return cert_; }

  std::vector<Received> received() const;
  /// Waits (up to `timeout`) until `done(received())` holds; whether it did.
  bool wait_for(const std::function<bool(const std::vector<Received>&)>& done,
                std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;

 private:
  struct Endpoint {
    std::string secret;
    Mode mode = Mode::kOk;
    int fail_status = 503;
    std::chrono::milliseconds slow{300};
  };
  std::string cert_, key_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::map<std::string, Endpoint> endpoints_;
  std::vector<Received> received_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace leadflow::testing
