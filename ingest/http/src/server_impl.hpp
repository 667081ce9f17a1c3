#pragma once
// Private: what an HttpServer holds, shared by its event loops.
#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "blocking_pool.hpp"
#include "leadflow/http/server.hpp"

namespace leadflow {

namespace http {
class EventLoop;
}  // namespace http

/// The listener, its TLS context, the loops and the pool. Built by start(), read by the loops;
/// `stopping` is the one field written while they run.
struct HttpServer::Impl final : ExchangeHost {
  Routes routes;
  HttpServerOptions options;
  SSL_CTX* tls = nullptr;
  int listen_fd = -1;
  int port = 0;
  http::BlockingPool pool;
  std::vector<std::unique_ptr<http::EventLoop>> loops;
  std::atomic<bool> stopping{false};
  bool started = false;
  // Connections open on all loops, and per client address (its key: address_key), so that the
  // caps hold for the listener as a whole rather than per loop.
  std::atomic<std::size_t> open_connections{0};
  // Bytes of upload bodies (Routes::put_upload) being received on all loops, at their bound.
  std::atomic<std::size_t> upload_bytes{0};
  // Uploads whose body is read by their handler as it arrives (Routes::put_streamed), at once.
  std::atomic<std::size_t> upload_streams{0};
  std::mutex addresses_mu;
  std::unordered_map<std::string, std::size_t> per_address;

  /// Counts a connection just accepted from `address`. false (nothing counted): over a cap.
  /// `key` is set to the address's key when it was counted against the per-address cap.
  bool admit(std::string_view address, std::string& key, bool& over_address_cap);
  /// Uncounts a connection that admit() counted.
  void release(const std::string& key);

  Impl(Routes r, HttpServerOptions o) : routes(std::move(r)), options(std::move(o)) {}
  ~Impl() override {
    if (tls) SSL_CTX_free(tls);
    if (listen_fd >= 0) ::close(listen_fd);
  }

  void complete(std::shared_ptr<Exchange> exchange) override;
  void complete_at(std::shared_ptr<Exchange> exchange,
                   std::chrono::steady_clock::time_point when) override;
  void run_blocking(std::function<void()> task) override { pool.post(std::move(task)); }
  void handler_failed(Exchange& ex, const std::string& what) override;
  bool make_tls(std::string& error);
  bool bind_listener(std::string& error);
};

}  // namespace leadflow
