#include "leadflow/http/server.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <thread>

#include "event_loop.hpp"
#include "leadflow/base/address_key.hpp"
#include "leadflow/base/log.hpp"
#include "server_impl.hpp"
#include "tls.hpp"

namespace leadflow {

using http::EventLoop;

bool HttpServer::Impl::admit(std::string_view address, std::string& key, bool& over_address_cap) {
  over_address_cap = false;
  key.clear();
  if (open_connections.fetch_add(1, std::memory_order_relaxed) >= options.max_connections) {
    open_connections.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  const std::size_t cap = options.max_connections_per_address;
  if (cap == 0 || (options.uncapped && options.uncapped(address))) return true;
  std::string k = address_limit_key(address);
  std::lock_guard lock(addresses_mu);
  std::size_t& open = per_address[k];
  if (open >= cap) {
    open_connections.fetch_sub(1, std::memory_order_relaxed);
    over_address_cap = true;
    return false;
  }
  ++open;
  key = std::move(k);
  return true;
}

void HttpServer::Impl::release(const std::string& key) {
  open_connections.fetch_sub(1, std::memory_order_relaxed);
  if (key.empty()) return;
  std::lock_guard lock(addresses_mu);
  const auto it = per_address.find(key);
  if (it != per_address.end() && --it->second == 0) per_address.erase(it);
}

void HttpServer::Impl::complete(std::shared_ptr<Exchange> exchange) {
  const std::size_t loop = exchange->connection() & 0xff;
  loops[loop]->post(std::move(exchange));
}

void HttpServer::Impl::complete_at(std::shared_ptr<Exchange> exchange,
                                   std::chrono::steady_clock::time_point when) {
  const std::size_t loop = exchange->connection() & 0xff;
  loops[loop]->post_at(std::move(exchange), when);
}

void HttpServer::Impl::handler_failed(Exchange& ex, const std::string& what) {
  log(LogLevel::kError, "handler_exception", {{"what", what}});
  ex.res = http::Response();
  if (routes.on_exception) {
    routes.on_exception(ex.res, what);
  } else {
    ex.res.status = 500;
  }
}

bool HttpServer::Impl::make_tls(std::string& error) {
  if (options.tls_cert.empty() && options.tls_key.empty()) return true;
  tls = http::new_server_tls(options.tls_cert, options.tls_key, error);
  return tls != nullptr;
}

bool HttpServer::Impl::bind_listener(std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(options.port);
  const char* host = options.host.empty() ? nullptr : options.host.c_str();
  if (getaddrinfo(host, service.c_str(), &hints, &found) != 0 || !found) {
    error = "cannot resolve " + options.host;
    return false;
  }
  int last_errno = 0;
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd =
        ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
      listen_fd = fd;
      break;
    }
    last_errno = errno;
    ::close(fd);
  }
  freeaddrinfo(found);
  if (listen_fd < 0) {
    error = "cannot listen on " + options.host + ":" + service + ": " + std::strerror(last_errno);
    return false;
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(listen_fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return true;
}

HttpServer::HttpServer(Routes routes, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(routes), std::move(options))) {
  // The routes with a body limit of their own (uploads) say theirs as their requests arrive.
  if (impl_->routes.has_body_limits() && !impl_->options.limits.larger_body) {
    const Routes* routes_of = &impl_->routes;  // lives as long as the server, like the loops
    impl_->options.limits.larger_body = [routes_of](std::string_view method,
                                                    std::string_view path) {
      return routes_of->body_limit(method, path);
    };
    if (!impl_->options.limits.streamed_body)
      impl_->options.limits.streamed_body = [routes_of](std::string_view method,
                                                        std::string_view path) {
        return routes_of->streams_body(method, path);
      };
  }
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::port() const { return impl_->port; }

bool HttpServer::start(std::string& error) {
  Impl& m = *impl_;
  // OpenSSL writes to the socket itself: a peer gone mid-answer must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  if (!m.make_tls(error) || !m.bind_listener(error)) return false;
  int loops =
      m.options.loops > 0 ? m.options.loops : static_cast<int>(std::thread::hardware_concurrency());
  loops = std::clamp(loops, 1, http::kMaxLoops);
  for (int i = 0; i < loops; ++i) {
    auto loop = std::make_unique<EventLoop>(m, i);
    if (!loop->open(error)) return false;
    m.loops.push_back(std::move(loop));
  }
  m.pool.start(std::max(1, m.options.blocking_threads));
  for (auto& loop : m.loops) loop->start();
  m.started = true;
  return true;
}

void HttpServer::stop() {
  Impl& m = *impl_;
  if (!m.started) return;
  m.started = false;
  m.stopping = true;
  for (auto& loop : m.loops) loop->wake();
  for (auto& loop : m.loops) loop->join();  // each leaves once its answers are written
  m.pool.stop();
  m.loops.clear();
  if (m.listen_fd >= 0) {
    ::close(m.listen_fd);
    m.listen_fd = -1;
  }
}

}  // namespace leadflow
