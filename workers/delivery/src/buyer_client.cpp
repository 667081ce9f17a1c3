// The client the workers use: which transport a buyer is spoken to over is decided here, per
// request, from its URL; the HTTP/2 transport itself hands on the HTTPS buyers that turn out to
// speak only HTTP/1.1.
#include "leadflow/delivery/http_client.hpp"

#include "leadflow/base/text.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string_view>
#include <utility>

namespace leadflow {

RetryClass classify_retry(const HttpResponse& r) {
  if (r.status == 0) return RetryClass::kRetryable;  // transport error or timeout: no answer came
  if (r.status < 400) return RetryClass::kNone;
  if (r.status == 408 || r.status == 429 || r.status >= 500) return RetryClass::kRetryable;
  return RetryClass::kFinal;
}

namespace {

bool is_https(std::string_view url) {
  constexpr std::string_view kScheme = "https://";
  return url.size() > kScheme.size() && iequals(url.substr(0, kScheme.size()), kScheme);
}

class BuyerClient final : public HttpClient {
 public:
  explicit BuyerClient(const CurlClientOptions& options) {
    CurlClientOptions http1 = options;
    http1.http2 = false;  // HTTP/2 goes through our own transport, never libcurl's
    http1_ = make_curl_client(http1);
    if (options.http2) http2_ = make_h2_client(options, *http1_);
  }

  using HttpClient::send;

  std::chrono::nanoseconds oldest_unsent() const override {
    return http2_ == nullptr ? http1_->oldest_unsent()
                             : std::max(http1_->oldest_unsent(), http2_->oldest_unsent());
  }

  void send(HttpRequest request, std::function<void(HttpResponse)> done) override {
    if (http2_ != nullptr && is_https(request.url)) {
      http2_->send(std::move(request), std::move(done));
    } else {
      http1_->send(std::move(request), std::move(done));
    }
  }

 private:
  std::unique_ptr<HttpClient> http1_;
  std::unique_ptr<HttpClient> http2_;  // declared last: gone first, since it hands on to http1_
};

}  // namespace

std::unique_ptr<HttpClient> make_buyer_client(const CurlClientOptions& options) {
  return std::make_unique<BuyerClient>(options);
}

}  // namespace leadflow
