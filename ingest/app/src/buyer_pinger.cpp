#include "buyer_pinger.hpp"

#include <chrono>
#include <future>
#include <mutex>

#include "leadflow/delivery/buyer_protocol.hpp"
#include "leadflow/delivery/http_client.hpp"

namespace leadflow {
namespace {

class WorkerProtocolPinger final : public BuyerPinger {
 public:
  explicit WorkerProtocolPinger(const Config& c) {
    options_.max_connections = 16;
    options_.max_host_connections = 4;
    options_.allow_private_addresses = c.allow_private_buyers;
    options_.ca_file = c.buyer_ca_file;
    if (c.buyer_http2 != "auto") options_.http2 = c.buyer_http2 == "on";
  }

  TestPingResult ping(const Buyer& buyer, const Lead& lead, const std::string& ping_id) override {
    HttpRequest request = make_ping_request(buyer, lead, ping_id);
    TestPingResult out;
    out.url = request.url;
    const auto timeout = request.timeout;
    std::future<HttpResponse> answer = client().send(std::move(request));
    // The client answers every request by its timeout; the margin only guards against a client
    // that never does.
    if (answer.wait_for(timeout + std::chrono::seconds(5)) != std::future_status::ready) {
      out.outcome = "timeout";
      out.reason = "timeout";
      out.duration_ms = (timeout + std::chrono::seconds(5)).count();
      return out;
    }
    const HttpResponse r = answer.get();
    out.http_status = r.status;
    out.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(r.elapsed).count();
    const PingAnswer read = read_ping_answer(buyer, r);
    // As the auction classifies a ping (workers/auction, attempt_from and on_ping).
    if (r.timed_out) {
      out.outcome = "timeout";
    } else if (r.status == 0 || r.status >= 500) {
      out.outcome = "error";
    } else if (read.bid || read.shared_bid) {
      out.outcome = "bid";
    } else {
      out.outcome = "no_bid";
    }
    out.bid = read.bid ? read.bid : read.shared_bid;
    if (read.bid && *read.bid < buyer.min_bid) out.reason = "below min_bid";
    if (out.outcome != "bid") out.reason = read.reason;
    return out;
  }

 private:
  HttpClient& client() {
    std::call_once(made_, [this] { client_ = make_buyer_client(options_); });
    return *client_;
  }

  CurlClientOptions options_;
  std::once_flag made_;
  std::unique_ptr<HttpClient> client_;
};

}  // namespace

std::unique_ptr<BuyerPinger> make_worker_protocol_pinger(const Config& config) {
  return std::make_unique<WorkerProtocolPinger>(config);
}

}  // namespace leadflow
