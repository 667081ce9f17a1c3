#pragma once
// leadflow's HTTP/1.1 server (TLS or plain), event-driven.
//
// A few event loops (one per core by default), each with its own epoll set, all waiting on one
// listening socket (EPOLLEXCLUSIVE: one loop wakes per burst, and accepts a few connections at
// a time so the others take the rest). Sockets are non-blocking, TLS is OpenSSL on them. A loop
// reads, parses and routes requests itself. Handlers that never wait on I/O run right there
// (Routes::post_inline: the lead post of an async campaign, whose answer comes from the queue's
// writer once the lead is durable); every other handler runs on a pool of blocking threads. An
// answer finished on another thread comes back through the loop's inbox, one wake-up per batch,
// so a group commit of N leads costs one wake-up per loop rather than N. An answer may also be
// given for later (Exchange::done_at): the connection's loop keeps it in a heap ordered by time
// and writes it when it is due, its epoll wait bounded by the earliest one, so a delayed answer
// holds neither a thread nor a timer of its own (the buyer simulator's latency).
//
// Why not cpp-httplib's server: it holds a thread per connection and wakes it per request; with
// the group commit's wake-up on top, the kernel's scheduling was most of the CPU
// (docs/benchmarks.md, "An earlier run").
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "leadflow/http/parser.hpp"
#include "leadflow/http/routes.hpp"

namespace leadflow {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                   // 0: any free port (see HttpServer::port)
  int loops = 0;                  // event loops; 0: one per core
  int blocking_threads = 64;      // the pool for handlers that wait
  std::string tls_cert, tls_key;  // PEM files; both empty: plain HTTP
  http::ParseLimits limits;
  std::chrono::milliseconds idle_timeout{10'000};  // keep-alive connection with no request
  std::chrono::milliseconds io_timeout{10'000};    // no progress in a request or an answer: closed
  // Deadlines, however steadily the bytes come (past one: 408, then close):
  std::chrono::milliseconds header_timeout{10'000};  // a header section, from its first byte
  std::chrono::milliseconds body_timeout{10'000};    // a body, from the end of its headers, plus
  std::size_t body_min_rate = 4096;  // its declared size (chunked: the limit) at this many bytes/s
  std::chrono::milliseconds tls_handshake_timeout{10'000};  // from accept; past it, closed
  std::size_t max_connections = 10'000;  // open at once on all loops; beyond, new ones are closed
  // Bodies of upload routes (Routes::put_upload) held at once, counted at their declared
  // length (chunked: the route's limit); one past it is answered 503 and closed.
  std::size_t max_upload_bytes = std::size_t{2} << 30;
  // Uploads whose body is handed to their handler as it arrives (Routes::put_streamed) at once:
  // each holds a blocking thread while its body arrives, and what its handler makes of it; none
  // is held whole, so they do not count in max_upload_bytes. One past it is answered 503.
  std::size_t max_upload_streams = 4;
  // Open at once from one client address (an IPv6 client: its /64); beyond, new ones are closed.
  // 0: no cap. Addresses `uncapped` says yes to (trusted proxies, which carry many clients) are
  // not capped.
  std::size_t max_connections_per_address = 0;
  std::function<bool(std::string_view address)> uncapped;
  std::string name = "http";  // for logs
};

/// Owns its loops, pool and sockets. start() once, stop() once (the destructor stops).
class HttpServer {
 public:
  HttpServer(Routes routes, HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Binds and starts serving. false with `error` naming the address or the certificate.
  bool start(std::string& error);
  /// The bound port.
  int port() const;
  /// Stops accepting, closes idle connections, writes the answers still in progress (waiting for
  /// handlers to finish; deferred answers are written at once, before their time), then closes
  /// everything and joins the threads.
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace leadflow
