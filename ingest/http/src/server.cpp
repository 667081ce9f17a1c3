#include "leadflow/http/server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <ctime>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "leadflow/base/log.hpp"
#include "leadflow/http/forms.hpp"

namespace leadflow {

namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr std::uint64_t kListenerTag = 1;
constexpr std::uint64_t kWakeTag = 2;
constexpr std::uint64_t kFirstConnection = 1 << 8;  // ids below are tags; low 8 bits: the loop
constexpr int kMaxLoops = 255;
constexpr std::size_t kReadChunk = 16 * 1024;
constexpr int kAcceptBatch = 8;  // per wake-up, so another loop takes part of a burst

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "unknown TLS error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

// "Sun, 22 Nov 2026 11:26:49 GMT", rebuilt once a second per thread.
const std::string& http_date() {
  thread_local std::time_t cached_at = 0;
  thread_local std::string cached;
  const std::time_t now = std::time(nullptr);
  if (now != cached_at) {
    cached_at = now;
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[64];
    const std::size_t n = std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    cached.assign(buf, n);
  }
  return cached;
}

void serialize(std::string& out, const http::Response& res, bool head_only, bool close, bool http10) {
  const bool bodiless = res.status < 200 || res.status == 204 || res.status == 304;
  out.reserve(out.size() + 128 + res.header_block().size() + res.body.size());
  out.append("HTTP/1.1 ").append(std::to_string(res.status)).append(1, ' ');
  out.append(http::reason_phrase(res.status)).append("\r\n");
  out.append(res.header_block());
  if (!bodiless) out.append("Content-Length: ").append(std::to_string(res.body.size())).append("\r\n");
  if (close)
    out.append("Connection: close\r\n");
  else if (http10)
    out.append("Connection: keep-alive\r\n");
  out.append("Date: ").append(http_date()).append("\r\n\r\n");
  if (!head_only && !bodiless) out.append(res.body);
}

/// Runs tasks on a fixed set of threads. stop() runs what is queued, then joins.
class BlockingPool {
 public:
  void start(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
  }
  void post(std::function<void()> task) {
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }
  void stop() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void run() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

struct Conn {
  std::uint64_t id = 0;
  int fd = -1;
  SSL* ssl = nullptr;
  std::string in;   // received, not yet parsed
  std::string out;  // answers not yet sent
  std::size_t out_off = 0;
  std::uint32_t interest = 0;  // the epoll events registered
  bool busy = false;           // a request is being answered
  bool read_closed = false;  // the peer sent all it will (EOF, close_notify) or the read failed
  bool close_after_write = false;
  bool continue_sent = false;
  bool keep_alive = true;
  bool http10 = false;
  bool head_only = false;
  bool tls_wants_write = false;  // a read (handshake) needs the socket writable
  bool tls_wants_read = false;   // a write needs the socket readable
  bool lingering = false;        // answered and half-closed: dropping input until the peer closes
  std::size_t lingered = 0;      // bytes dropped so far
  SteadyClock::time_point last_active;
  std::string remote_addr;
  int remote_port = 0;

  ~Conn() {
    if (ssl) SSL_free(ssl);
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

namespace http {
class EventLoop;
}  // namespace http

struct HttpServer::Impl final : ExchangeHost {
  Routes routes;
  HttpServerOptions options;
  SSL_CTX* tls = nullptr;
  int listen_fd = -1;
  int port = 0;
  BlockingPool pool;
  std::vector<std::unique_ptr<http::EventLoop>> loops;
  std::atomic<bool> stopping{false};
  bool started = false;

  Impl(Routes r, HttpServerOptions o) : routes(std::move(r)), options(std::move(o)) {}
  ~Impl() override {
    if (tls) SSL_CTX_free(tls);
    if (listen_fd >= 0) ::close(listen_fd);
  }

  void complete(std::shared_ptr<Exchange> exchange) override;
  void run_blocking(std::function<void()> task) override { pool.post(std::move(task)); }
  void handler_failed(Exchange& ex, const std::string& what) override {
    log(LogLevel::kError, "handler_exception", {{"what", what}});
    ex.res = http::Response();
    if (routes.on_exception) {
      routes.on_exception(ex.res, what);
    } else {
      ex.res.status = 500;
    }
  }
  bool make_tls(std::string& error);
  bool bind_listener(std::string& error);
};

namespace http {

/// One event loop: a thread, an epoll set, and the connections it accepted.
class EventLoop {
 public:
  EventLoop(HttpServer::Impl& server, int index, std::size_t max_connections)
      : server_(server),
        index_(index),
        input_cap_(server.options.limits.max_header_bytes + server.options.limits.max_body_bytes + 64 * 1024),
        max_connections_(max_connections) {}
  ~EventLoop() {
    if (epfd_ >= 0) ::close(epfd_);
    if (wakefd_ >= 0) ::close(wakefd_);
  }

  bool open(std::string& error) {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    wakefd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epfd_ < 0 || wakefd_ < 0) {
      error = std::string("epoll/eventfd: ") + std::strerror(errno);
      return false;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kWakeTag;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, wakefd_, &ev);
    // Every loop waits on the one listening socket; EPOLLEXCLUSIVE wakes one of them per
    // connection burst rather than all.
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.u64 = kListenerTag;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, server_.listen_fd, &ev) != 0) {
      error = std::string("epoll_ctl: ") + std::strerror(errno);
      return false;
    }
    return true;
  }
  void start() { thread_ = std::thread([this] { run(); }); }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  void wake() {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(wakefd_, &one, sizeof one);
  }

  /// From any thread: the exchange is answered.
  void post(std::shared_ptr<Exchange> ex) {
    if (t_current_loop == this) {
      ready_.push_back(std::move(ex));  // answered inside a handler on this loop
      return;
    }
    bool first;
    {
      std::lock_guard lock(inbox_mu_);
      first = inbox_.empty();
      inbox_.push_back(std::move(ex));
    }
    if (first) wake();  // one wake-up per batch: later ones find the inbox non-empty
  }

 private:
  void run();
  void accept_some();
  void on_event(std::uint64_t id, std::uint32_t events);
  bool read_in(Conn& c);
  bool flush_out(Conn& c);
  bool process(Conn& c);
  void dispatch(Conn& c);
  void answer_error(Conn& c, int status, const std::string& detail);
  void finish(const std::shared_ptr<Exchange>& ex);
  void drain_ready();
  void update_interest(Conn& c);
  void close_conn(Conn& c);
  void linger(Conn& c);
  void drain_linger(Conn& c);
  void sweep(SteadyClock::time_point now);
  void begin_stop();

  HttpServer::Impl& server_;
  const int index_;
  // Received bytes a connection may hold unparsed (a request of the largest size, and room for
  // pipelined ones); beyond it reading pauses until the front is parsed.
  const std::size_t input_cap_;
  int epfd_ = -1;
  int wakefd_ = -1;
  std::thread thread_;
  static thread_local EventLoop* t_current_loop;
  std::uint64_t next_id_ = 0;
  std::unordered_map<std::uint64_t, std::unique_ptr<Conn>> conns_;
  std::size_t inflight_ = 0;  // exchanges handed out, not yet finished
  std::vector<std::shared_ptr<Exchange>> ready_;
  std::mutex inbox_mu_;
  std::vector<std::shared_ptr<Exchange>> inbox_;
  bool listening_ = true;
  std::size_t max_connections_ = 0;  // this loop's share of HttpServerOptions::max_connections
  std::optional<SteadyClock::time_point> accept_paused_until_;
  http::Request parsing_;  // the request being read; its buffers are reused until one is whole
  char buf_[kReadChunk];
};

thread_local EventLoop* EventLoop::t_current_loop = nullptr;

}  // namespace http

using http::EventLoop;

void HttpServer::Impl::complete(std::shared_ptr<Exchange> exchange) {
  const std::size_t loop = exchange->connection() & 0xff;
  loops[loop]->post(std::move(exchange));
}

void EventLoop::run() {
  t_current_loop = this;
  epoll_event events[256];
  SteadyClock::time_point last_sweep = SteadyClock::now();
  for (;;) {
    const int n = epoll_wait(epfd_, events, 256, accept_paused_until_ ? 20 : 250);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t tag = events[i].data.u64;
      if (tag == kListenerTag) {
        if (listening_) accept_some();
      } else if (tag == kWakeTag) {
        std::uint64_t count;
        [[maybe_unused]] const ssize_t r = ::read(wakefd_, &count, sizeof count);
        std::vector<std::shared_ptr<Exchange>> batch;
        {
          std::lock_guard lock(inbox_mu_);
          batch.swap(inbox_);
        }
        for (auto& ex : batch) finish(ex);
      } else {
        on_event(tag, events[i].events);
      }
      drain_ready();
    }
    const auto now = SteadyClock::now();
    if (accept_paused_until_ && now >= *accept_paused_until_) {
      accept_paused_until_.reset();
      if (listening_) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLEXCLUSIVE;
        ev.data.u64 = kListenerTag;
        epoll_ctl(epfd_, EPOLL_CTL_ADD, server_.listen_fd, &ev);
      }
    }
    if (now - last_sweep >= std::chrono::milliseconds(250)) {
      last_sweep = now;
      sweep(now);
    }
    if (server_.stopping.load(std::memory_order_relaxed)) {
      if (listening_) begin_stop();
      if (conns_.empty() && inflight_ == 0) {
        std::lock_guard lock(inbox_mu_);
        if (inbox_.empty()) break;
      }
    }
  }
}

void EventLoop::begin_stop() {
  listening_ = false;
  epoll_ctl(epfd_, EPOLL_CTL_DEL, server_.listen_fd, nullptr);  // ENOENT when paused: fine
  std::vector<Conn*> idle;
  for (auto& [id, c] : conns_) {
    c->close_after_write = true;
    if (!c->busy && c->out_off >= c->out.size()) idle.push_back(c.get());
  }
  for (Conn* c : idle) close_conn(*c);
}

void EventLoop::accept_some() {
  for (int i = 0; i < kAcceptBatch; ++i) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const int fd = ::accept4(server_.listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: the pending connection stays queued and the level-triggered
        // listener would wake this loop at once, forever. Stop listening for a moment.
        epoll_ctl(epfd_, EPOLL_CTL_DEL, server_.listen_fd, nullptr);
        accept_paused_until_ = SteadyClock::now() + std::chrono::milliseconds(100);
        static std::atomic<std::int64_t> last_logged{0};
        const std::int64_t now_s = std::time(nullptr);
        if (last_logged.exchange(now_s) != now_s)
          log(LogLevel::kWarn, "accept_failed", {{"error", std::strerror(errno)}, {"server", server_.options.name}});
      }
      return;  // EAGAIN: another loop took it, or none left
    }
    if (conns_.size() >= max_connections_) {
      // Full: each connection holds buffers and TLS state, so a flood of idle ones must not
      // grow without bound. Closing at once tells the client to come back (or go elsewhere).
      ::close(fd);
      static std::atomic<std::int64_t> last_logged{0};
      const std::int64_t now_s = std::time(nullptr);
      if (last_logged.exchange(now_s) != now_s)
        log(LogLevel::kWarn, "connections_full", {{"server", server_.options.name}, {"open", conns_.size()}});
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->id = ((++next_id_) << 8) | static_cast<std::uint64_t>(index_);
    c->last_active = SteadyClock::now();
    char host[INET6_ADDRSTRLEN] = "";
    if (addr.ss_family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
      c->remote_port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
      c->remote_port = ntohs(a->sin6_port);
    }
    c->remote_addr = host;
    if (server_.tls) {
      c->ssl = SSL_new(server_.tls);
      if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1) continue;  // ~Conn closes the socket
      SSL_set_accept_state(c->ssl);
    }
    epoll_event ev{};
    ev.events = c->interest = EPOLLIN;
    ev.data.u64 = c->id;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) continue;
    conns_.emplace(c->id, std::move(c));
  }
}

void EventLoop::on_event(std::uint64_t id, std::uint32_t events) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = *it->second;
  if (c.lingering) {
    drain_linger(c);
    return;
  }
  if ((events & EPOLLOUT) || c.tls_wants_read) {
    if (c.out_off < c.out.size() && !flush_out(c)) return;
  }
  if (!read_in(c)) return;
  process(c);

}

// Reads what the socket has. false: the connection was closed (and is gone).
bool EventLoop::read_in(Conn& c) {
  while (!c.read_closed) {
    if (c.in.size() >= input_cap_) break;  // a flood of pipelined requests: read again once parsed
    int n;
    if (c.ssl) {
      ERR_clear_error();
      n = SSL_read(c.ssl, buf_, sizeof buf_);
      if (n <= 0) {
        const int err = SSL_get_error(c.ssl, n);
        c.tls_wants_write = err == SSL_ERROR_WANT_WRITE;
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) break;
        // close_notify, a reset, or a failed handshake. Requests already read are still
        // answered (a client may half-close after its request); a write to a dead peer fails
        // and closes the connection then.
        c.read_closed = true;
        break;
      }
    } else {
      n = static_cast<int>(::recv(c.fd, buf_, sizeof buf_, 0));
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
      if (n <= 0) {
        c.read_closed = true;
        break;
      }
    }
    c.in.append(buf_, static_cast<std::size_t>(n));
    c.last_active = SteadyClock::now();
    if (!c.ssl && static_cast<std::size_t>(n) < sizeof buf_) break;  // drained
  }
  update_interest(c);
  return true;
}

// Sends what is queued. false: the connection was closed (and is gone).
bool EventLoop::flush_out(Conn& c) {
  c.tls_wants_read = false;
  while (c.out_off < c.out.size()) {
    const char* p = c.out.data() + c.out_off;
    const std::size_t left = c.out.size() - c.out_off;
    int n;
    if (c.ssl) {
      ERR_clear_error();
      n = SSL_write(c.ssl, p, static_cast<int>(std::min<std::size_t>(left, 1 << 30)));
      if (n <= 0) {
        const int err = SSL_get_error(c.ssl, n);
        if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
          c.tls_wants_read = err == SSL_ERROR_WANT_READ;
          update_interest(c);
          return true;
        }
        close_conn(c);
        return false;
      }
    } else {
      n = static_cast<int>(::send(c.fd, p, left, MSG_NOSIGNAL));
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        update_interest(c);
        return true;
      }
      if (n <= 0) {
        close_conn(c);
        return false;
      }
    }
    c.out_off += static_cast<std::size_t>(n);
    c.last_active = SteadyClock::now();
  }
  c.out.clear();
  c.out_off = 0;
  if (c.out.capacity() > kReadChunk * 4) c.out.shrink_to_fit();
  if (c.close_after_write && !c.busy) {
    linger(c);
    return false;
  }
  update_interest(c);
  return true;
}

void EventLoop::update_interest(Conn& c) {
  std::uint32_t want = 0;
  if ((!c.read_closed && c.in.size() < input_cap_) || c.tls_wants_read) want |= EPOLLIN;
  if (c.out_off < c.out.size() || c.tls_wants_write) want |= EPOLLOUT;
  if (want == c.interest) return;
  // With nothing to wait for (input closed, an answer still being made) the socket leaves the
  // set: a reset would otherwise report EPOLLHUP on every wait until the answer is ready.
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = c.id;
  const int op = want == 0 ? EPOLL_CTL_DEL : c.interest == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  epoll_ctl(epfd_, op, c.fd, &ev);
  c.interest = want;
}

// Parses and dispatches what has arrived, one request at a time per connection. false: closed.
bool EventLoop::process(Conn& c) {
  for (;;) {
  while (!c.busy && !c.close_after_write && c.out.empty() && !c.in.empty()) {
    const ParseResult r = parse_request(c.in, server_.options.limits, parsing_);
    if (r.status == ParseStatus::kIncomplete) {
      // HTTP/1.0 clients do not know 100 (RFC 9110 §10.1.1): they just send the body.
      if (r.headers_complete && !c.continue_sent && parsing_.expect_continue() && parsing_.version_minor() == 1) {
        c.continue_sent = true;
        c.out.append("HTTP/1.1 100 Continue\r\n\r\n");
        return flush_out(c);
      }
      break;
    }
    if (r.status == ParseStatus::kError) {
      // The stream cannot be resynchronised: answer, then close.
      c.in.clear();
      answer_error(c, r.error_status, r.error_detail);
      break;
    }
    if (r.consumed >= c.in.size())
      c.in.clear();
    else
      c.in.erase(0, r.consumed);
    // A large body leaves a large buffer behind; an idle keep-alive connection should not keep it.
    if (c.in.capacity() > kReadChunk * 4 && c.in.size() < kReadChunk) c.in.shrink_to_fit();
    c.continue_sent = false;
    dispatch(c);
  }
  // Bytes OpenSSL decrypted but read_in left for later (the input was full) raise no epoll
  // event: read them now that there is room.
  if (c.ssl && !c.busy && !c.close_after_write && c.out.empty() && !c.read_closed &&
      c.in.size() < input_cap_ && SSL_pending(c.ssl) > 0) {
    if (!read_in(c)) return false;
    continue;
  }
  break;
  }
  // Input is over and every request read so far is answered (what is left is a partial
  // request that will never complete): done.
  if (c.read_closed && !c.busy && c.out_off >= c.out.size()) {
    close_conn(c);
    return false;
  }
  update_interest(c);
  return true;
}

void EventLoop::answer_error(Conn& c, int status, const std::string& detail) {
  auto ex = std::make_shared<Exchange>(server_, c.id);
  ex->res.status = status;
  ex->refusal = detail;  // Routes::on_error puts what the parser found in the problem body
  if (server_.routes.before) server_.routes.before(ex->req, ex->res);
  c.busy = true;
  c.close_after_write = true;
  c.keep_alive = false;
  c.head_only = false;
  ++inflight_;
  ready_.push_back(std::move(ex));
}

// Routes the request just parsed (in parsing_) and hands it to its handler.
void EventLoop::dispatch(Conn& c) {
  auto ex = std::make_shared<Exchange>(server_, c.id, std::move(parsing_));
  parsing_ = http::Request();
  http::Request& req = ex->req;
  req.remote_addr_ = c.remote_addr;
  req.remote_port_ = c.remote_port;
  req.tls_ = c.ssl != nullptr;
  c.busy = true;
  c.keep_alive = req.keep_alive();
  c.http10 = req.version_minor() == 0;
  c.head_only = req.method() == "HEAD";
  ++inflight_;

  const Routes& routes = server_.routes;
  if (routes.before) routes.before(req, ex->res);
  const Routes::Route* route = routes.find(req);
  if (!route) {
    ex->res.status = 404;
    ready_.push_back(std::move(ex));
    return;
  }
  const std::string_view content_type = req.header("Content-Type");
  if (content_type.size() >= 19 && http::iequals_ascii(content_type.substr(0, 19), "multipart/form-data") &&
      !http::parse_multipart(content_type, req.body(), req.form_parts_)) {
    ex->res.status = 400;
    ready_.push_back(std::move(ex));
    return;
  }
  if (route->inline_handler) {
    try {
      route->inline_handler(ex);
    } catch (const std::exception& e) {
      server_.handler_failed(*ex, e.what());
      ex->done();
    }
    return;
  }
  server_.pool.post([ex = std::move(ex), route] {
    ex->run_guarded([route](Exchange& e) { route->handler(e.req, e.res); });
    ex->done();
  });
}

void EventLoop::drain_ready() {
  while (!ready_.empty()) {
    std::vector<std::shared_ptr<Exchange>> batch;
    batch.swap(ready_);
    for (auto& ex : batch) finish(ex);
  }
}

// Writes an answer. On the loop thread.
void EventLoop::finish(const std::shared_ptr<Exchange>& ex) {
  --inflight_;
  auto it = conns_.find(ex->connection());
  if (it == conns_.end()) return;  // the connection was closed meanwhile
  Conn& c = *it->second;
  c.busy = false;
  const Routes& routes = server_.routes;
  http::Response& res = ex->res;
  if (res.status >= 400 && res.body.empty() && routes.on_error) routes.on_error(ex->req, res, ex->refusal);
  if (server_.stopping.load(std::memory_order_relaxed)) c.close_after_write = true;
  const bool close = !c.keep_alive || c.close_after_write;
  c.close_after_write = close;
  serialize(c.out, res, c.head_only, close, c.http10);
  if (routes.after)
    routes.after(ex->req, res, std::chrono::duration<double>(SteadyClock::now() - ex->started).count());
  if (!flush_out(c)) return;
  process(c);  // a pipelined request may be waiting
}

void EventLoop::close_conn(Conn& c) {
  // A busy connection's exchange still comes back to finish(), and finds the connection gone.
  if (c.ssl && !c.lingering && SSL_is_init_finished(c.ssl)) {
    ERR_clear_error();
    SSL_shutdown(c.ssl);  // best effort close_notify; never waits
  }
  if (c.interest != 0) epoll_ctl(epfd_, EPOLL_CTL_DEL, c.fd, nullptr);
  conns_.erase(c.id);  // destroys c
}

// Closing a socket with unread input makes the kernel answer with a reset, and a reset can
// destroy the answer still on its way to the client: a client still sending the body we refused
// with 413 would see no answer at all. So: close_notify and FIN after the answer, then read and
// drop what comes until the client closes too (at most 2 s or 1 MiB), then close.
void EventLoop::linger(Conn& c) {
  if (c.ssl && SSL_is_init_finished(c.ssl)) {
    ERR_clear_error();
    SSL_shutdown(c.ssl);
  }
  if (c.read_closed || ::shutdown(c.fd, SHUT_WR) != 0) {
    close_conn(c);
    return;
  }
  c.lingering = true;
  c.last_active = SteadyClock::now();
  c.in.clear();
  c.in.shrink_to_fit();
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = c.id;
  epoll_ctl(epfd_, c.interest == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c.fd, &ev);
  c.interest = EPOLLIN;
  drain_linger(c);
}

void EventLoop::drain_linger(Conn& c) {
  for (;;) {
    const ssize_t n = ::recv(c.fd, buf_, sizeof buf_, 0);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) break;  // the client closed (or reset): done
    c.lingered += static_cast<std::size_t>(n);
    if (c.lingered > (1u << 20)) break;
  }
  close_conn(c);
}

void EventLoop::sweep(SteadyClock::time_point now) {
  const auto& o = server_.options;
  std::vector<Conn*> expired;
  for (auto& [id, cp] : conns_) {
    Conn& c = *cp;
    if (c.lingering) {
      if (now - c.last_active > std::chrono::seconds(2)) expired.push_back(&c);
      continue;
    }
    if (c.busy) continue;  // the handler's own deadlines bound it
    const auto quiet = now - c.last_active;
    const bool handshaking = c.ssl && !SSL_is_init_finished(c.ssl);
    const bool mid_io = handshaking || !c.in.empty() || c.out_off < c.out.size();
    if (quiet > (mid_io ? o.io_timeout : o.idle_timeout)) expired.push_back(&c);
  }
  for (Conn* c : expired) close_conn(*c);
}

bool HttpServer::Impl::make_tls(std::string& error) {
  if (options.tls_cert.empty() && options.tls_key.empty()) return true;
  tls = SSL_CTX_new(TLS_server_method());
  if (!tls) {
    error = "TLS: " + openssl_error();
    return false;
  }
  SSL_CTX_set_min_proto_version(tls, TLS1_2_VERSION);
  SSL_CTX_set_options(tls, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(tls, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(tls, options.tls_cert.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(tls, options.tls_key.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(tls) != 1) {
    error = "cannot load " + options.tls_cert + " / " + options.tls_key + ": " + openssl_error();
    return false;
  }
  return true;
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
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
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
    : impl_(std::make_unique<Impl>(std::move(routes), std::move(options))) {}

HttpServer::~HttpServer() { stop(); }

int HttpServer::port() const { return impl_->port; }

bool HttpServer::start(std::string& error) {
  Impl& m = *impl_;
  // OpenSSL writes to the socket itself: a peer gone mid-answer must not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  if (!m.make_tls(error) || !m.bind_listener(error)) return false;
  int loops = m.options.loops > 0 ? m.options.loops : static_cast<int>(std::thread::hardware_concurrency());
  loops = std::clamp(loops, 1, kMaxLoops);
  for (int i = 0; i < loops; ++i) {
    auto loop = std::make_unique<EventLoop>(m, i, std::max<std::size_t>(1, m.options.max_connections / loops));
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
