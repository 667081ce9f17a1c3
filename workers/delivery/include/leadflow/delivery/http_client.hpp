#pragma once
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "leadflow/base/clock.hpp"

namespace leadflow {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  Headers headers;
  std::string body;
  std::chrono::milliseconds timeout{
      1000};  // whole exchange, connect included, from when it is sent
  /// How long it may wait in the client's own queue for a connection before it fails as not
  /// sent (a ping no longer worth sending); 0: the client's CurlClientOptions::max_queue_wait,
  /// which also bounds this.
  std::chrono::milliseconds max_queue_wait{0};
};

struct HttpResponse {
  int status = 0;  // 0 when no HTTP answer came (transport error or timeout)
  std::string body;
  bool timed_out = false;
  std::string error;                     // transport error text, "" on an HTTP answer
  std::chrono::microseconds elapsed{0};  // from when the request was sent
  /// The request never left this process (the client shut down, or it waited too long for a
  /// connection of its own): the buyer saw nothing, so it says nothing about the buyer's health.
  bool not_sent = false;
  /// The request certainly never reached the buyer: not sent, or no connection could be made
  /// (refused, name not resolved, TLS handshake failed, address refused by policy). Unlike a
  /// reset or a timeout, it cannot have been acted on.
  bool not_delivered = false;
  /// A timeout while this process was starved of CPU (its client loop ran late during the
  /// exchange): the answer may have been on its way, so it says nothing certain about the buyer.
  bool stalled_here = false;
};

/// Whether a failed exchange may be tried again: transport errors, timeouts, 408, 429 and 5xx are
/// retryable; every other 4xx is final; 2xx/3xx are not failures (kNone).
enum class RetryClass { kNone, kRetryable, kFinal };
RetryClass classify_retry(const HttpResponse& r);

/// Outbound HTTP for buyer pings and posts. Implementations multiplex every in-flight request over
/// a small fixed set of threads with pooled keep-alive connections: no thread per call.
/// Thread-safe; `done` runs on the client's own thread and must not block.
class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual void send(HttpRequest request, std::function<void(HttpResponse)> done) = 0;

  /// How long the oldest request this client still holds unsent has waited: for its loop to take
  /// it, or in its queue for a connection. 0 when none waits. Any thread; cheap (no lock).
  virtual std::chrono::nanoseconds oldest_unsent() const { return std::chrono::nanoseconds{0}; }

  std::future<HttpResponse> send(HttpRequest request) {
    auto promise = std::make_shared<std::promise<HttpResponse>>();
    auto future = promise->get_future();
    send(std::move(request), [promise](HttpResponse r) { promise->set_value(std::move(r)); });
    return future;
  }
};

/// Whether buyers that offer HTTP/2 are spoken to over it by default (LEADFLOW_BUYER_HTTP2=auto):
/// yes, through leadflow's own transport on nghttp2 (make_buyer_client). libcurl's HTTP/2 is not
/// used for that: 7.88 (Debian 12's) loses part of the streams it runs in parallel ("Stream error
/// in the HTTP/2 framing layer" after their 200; fixed upstream in 8.0–8.1).
bool http2_is_reliable();

/// "7.88.1": the libcurl this process runs with.
std::string libcurl_version();

/// "1.52.0": the nghttp2 this process runs with.
std::string nghttp2_version();

struct CurlClientOptions {
  /// Requests in flight over HTTP/1.1 to every buyer together, each holding a connection; beyond
  /// it a request waits in our own queue like one over its host's limit.
  long max_connections = 8192;
  /// Requests in flight per buyer host (scheme, host and port): connections for HTTP/1.1, and
  /// 100 streams per connection for a buyer that speaks HTTP/2. Beyond it a request waits in our
  /// own queue, and its timeout starts only once it is handed to a connection: a buyer is never
  /// timed out for our queueing.
  long max_host_connections = 2048;
  /// A request that waited this long in our queue without a connection fails as not sent.
  std::chrono::milliseconds max_queue_wait{30'000};
  bool verify_tls = true;  // false only for loopback test buyers with self-signed certs
  std::string ca_file;     // extra CA bundle, "" for the system's
  /// false: connections to loopback, private, link-local and metadata addresses are refused at
  /// connect time, whatever the URL said when it was saved (LEADFLOW_ALLOW_PRIVATE_BUYERS).
  bool allow_private_addresses = false;
  /// HTTP/2 with HTTPS buyers that offer it (TLS ALPN), thousands of requests sharing a few
  /// connections; off, every buyer is spoken to over HTTP/1.1 (LEADFLOW_BUYER_HTTP2).
  /// make_buyer_client speaks it through its own transport; make_curl_client alone uses
  /// libcurl's, and only on a libcurl (8.1 or later) that does not lose streams.
  bool http2 = http2_is_reliable();
  /// Where the clients' timers read the time: request deadlines, the wait in our queue, and the
  /// HTTP/2 transport's idle and connect timers (libcurl's own connect and safety-net timers
  /// run inside libcurl, on real time). nullptr: the system's. Not owned; outlives the client.
  const Clock* clock = nullptr;
};

/// libcurl multi interface on one event-loop thread driven by socket events (epoll): connections
/// pooled and kept alive, HTTP/2 multiplexed where the buyer offers it (TLS ALPN) and libcurl is
/// 8.1 or later (HTTP/1.1 otherwise), TLS sessions and DNS answers shared. A request's timeout is
/// checked only after every answer already waiting in a socket has been read, so a late loop never
/// turns a received answer into a timeout.
std::unique_ptr<HttpClient> make_curl_client(const CurlClientOptions& options = {});

/// HTTP/2 to HTTPS buyers on nghttp2 and OpenSSL, on one event-loop thread of its own: per buyer
/// host, up to max_host_connections TLS connections of min(the buyer's
/// SETTINGS_MAX_CONCURRENT_STREAMS, 100) streams each, a new one opened only when every one is
/// full; requests beyond wait in its own queue, their timeout not started. A host whose TLS does
/// not choose h2 (ALPN) is remembered as HTTP/1.1, and its requests, none of them sent yet, are
/// handed to `http1` unchanged, which must outlive the client. Takes only https:// URLs.
/// Thread-safe; `done` runs on the client's thread (or on `http1`'s).
std::unique_ptr<HttpClient> make_h2_client(const CurlClientOptions& options, HttpClient& http1);

/// The client the workers talk to buyers with: HTTPS buyers go to the HTTP/2 transport
/// (make_h2_client) when options.http2 is on, and it hands those that answer only HTTP/1.1 to a
/// libcurl client (make_curl_client, its own HTTP/2 off), which also takes plain-http buyers and
/// everything when options.http2 is off. Owns both. Thread-safe.
std::unique_ptr<HttpClient> make_buyer_client(const CurlClientOptions& options = {});

}  // namespace leadflow
