#include "event_loop.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <openssl/err.h>

#include <algorithm>
#include <atomic>
#include <ctime>

#include "answer_writer.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/http/forms.hpp"

namespace leadflow::http {

thread_local EventLoop* EventLoop::t_current_loop = nullptr;

namespace {

// The heap order of deferred answers: `a` sorts below `b` when it is due later (or, due
// together, was given later), so the heap's front is the earliest.
constexpr auto later_first = [](const auto& a, const auto& b) {
  return a.when != b.when ? a.when > b.when : a.seq > b.seq;
};

}  // namespace

void EventLoop::run() {
  t_current_loop = this;
  epoll_event events[256];
  SteadyClock::time_point last_sweep = SteadyClock::now();
  for (;;) {
    const timespec wait = wait_for(accept_paused_until_ ? 20 : 250);
    const int n = epoll_pwait2(epfd_, events, 256, &wait, nullptr);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t tag = events[i].data.u64;
      if (tag == kListenerTag) {
        if (listening_) accept_some();
      } else if (tag == kWakeTag) {
        std::uint64_t count;
        [[maybe_unused]] const ssize_t r = ::read(wakefd_, &count, sizeof count);
        std::vector<std::shared_ptr<Exchange>> batch;
        std::vector<std::pair<SteadyClock::time_point, std::shared_ptr<Exchange>>> later;
        std::vector<std::uint64_t> streams;
        {
          std::lock_guard lock(inbox_mu_);
          batch.swap(inbox_);
          later.swap(deferred_inbox_);
          streams.swap(stream_inbox_);
        }
        for (auto& ex : batch) finish(ex);
        for (auto& [when, ex] : later) defer(std::move(ex), when);
        for (const std::uint64_t id : streams) {
          auto it = conns_.find(id);
          if (it == conns_.end()) continue;
          if (it->second->stream)
            pump_stream(*it->second);
          else if (it->second->upload)
            feed_upload(*it->second);
        }
      } else {
        on_event(tag, events[i].events);
      }
      drain_ready();
    }
    const auto now = SteadyClock::now();
    release_deferred(now);
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
      // A stopping server does not wait for deferred answers' time: they leave now.
      release_deferred(SteadyClock::time_point::max());
      if (conns_.empty() && inflight_ == 0) {
        std::lock_guard lock(inbox_mu_);
        if (inbox_.empty() && deferred_inbox_.empty()) break;
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
    // A stream never ends by itself: it closes with the server.
    if (c->stream || (!c->busy && c->out_off >= c->out.size())) idle.push_back(c.get());
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
          log(LogLevel::kWarn, "accept_failed",
              {{"error", std::strerror(errno)}, {"server", server_.options.name}});
      }
      return;  // EAGAIN: another loop took it, or none left
    }
    char host[INET6_ADDRSTRLEN] = "";
    int port = 0;
    if (addr.ss_family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
      port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
      port = ntohs(a->sin6_port);
    }
    // Each connection holds buffers and TLS state, so a flood of idle ones must not grow without
    // bound, and one address must not take the room of all the others. Closing at once tells the
    // client to come back (or go elsewhere).
    std::string key;
    bool over_address_cap = false;
    if (!server_.admit(host, key, over_address_cap)) {
      ::close(fd);
      static std::atomic<std::int64_t> last_logged{0};
      const std::int64_t now_s = std::time(nullptr);
      if (last_logged.exchange(now_s) != now_s) {
        if (over_address_cap) {
          log(LogLevel::kWarn, "connections_per_address_full",
              {{"server", server_.options.name},
               {"address", host},
               {"cap", server_.options.max_connections_per_address}});
        } else {
          log(LogLevel::kWarn, "connections_full",
              {{"server", server_.options.name},
               {"open", server_.open_connections.load(std::memory_order_relaxed)}});
        }
      }
      continue;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->id = ((++next_id_) << 8) | static_cast<std::uint64_t>(index_);
    c->last_active = c->accepted = SteadyClock::now();
    c->remote_addr = host;
    c->remote_port = port;
    c->address_key = std::move(key);
    c->admitted_by = &server_;
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
  if (c.upload) {
    feed_upload(c);
    return;
  }
  if (c.stream) {
    // A streamed answer's reader has nothing more to say; what it sends is dropped, and its
    // going away ends the stream.
    c.in.clear();
    if (c.read_closed) {
      close_conn(c);
      return;
    }
    update_interest(c);
    return;
  }
  process(c);
}

// Reads what the socket has. false: the connection was closed (and is gone).
bool EventLoop::read_in(Conn& c) {
  while (!c.read_closed) {
    if (c.in.size() >= cap_of(c)) break;  // a flood of pipelined requests: read again once parsed
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
    c.last_active = SteadyClock::now();
    if (c.in.empty() && !c.upload) start_request_clock(c, c.last_active);
    c.in.append(buf_, static_cast<std::size_t>(n));
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
  if (c.stream) return pump_stream(c);  // the socket took it all: the stream's next bytes
  update_interest(c);
  return true;
}

// The handler answered with a stream: its head now, then its bytes as they come (pump_stream).
void EventLoop::start_stream(Conn& c, std::shared_ptr<StreamBody> body) {
  c.busy = true;  // no further request is read on this connection
  c.chunked = !c.http10;
  c.stream = std::move(body);
  setsockopt(c.fd, SOL_SOCKET, SO_SNDBUF, &kStreamSendBuffer, sizeof kStreamSendBuffer);
  const std::uint64_t id = c.id;
  c.stream->attach([this, id] { stream_ready(id); });
}

// Moves the stream's waiting bytes to the socket, once it took the previous ones: a reader that
// does not read leaves them in the stream, whose bound then ends it. false: closed (and gone).
bool EventLoop::pump_stream(Conn& c) {
  if (c.out_off < c.out.size()) return true;  // flush_out comes back here once it is written
  std::string bytes;
  const bool ended = c.stream->take(bytes);
  if (ended && c.stream->overflowed()) {
    close_conn(c);  // a reader this far behind gets no more
    return false;
  }
  if (c.chunked)
    append_chunk(c.out, bytes);
  else
    c.out.append(bytes);
  if (ended) {
    if (c.chunked) c.out.append("0\r\n\r\n");
    c.stream->detach();
    c.stream.reset();
    c.busy = false;
    c.close_after_write = true;
  }
  if (c.out.empty()) {
    update_interest(c);
    return true;
  }
  return flush_out(c);
}

void EventLoop::update_interest(Conn& c) {
  std::uint32_t want = 0;
  if ((!c.read_closed && c.in.size() < cap_of(c)) || c.tls_wants_read) want |= EPOLLIN;
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
      if (!c.reading) {
        c.reading = spare_reading_ ? std::move(spare_reading_)
                                   : std::make_unique<Reading>(server_.options.limits);
      }
      Reading& rd = *c.reading;
      const ParseResult r = rd.reader.read(c.in, rd.request);
      if (r.body_streamed && r.status != ParseStatus::kError) {
        // The body goes on to its handler as it arrives (feed_upload).
        if (!start_upload(c, r)) return false;
        break;
      }
      if (r.status == ParseStatus::kIncomplete) {
        if (r.headers_complete && !c.head_read) {
          // The header section is in: the body has its own deadline, scaled by its size.
          c.head_read = true;
          const auto& o = server_.options;
          const auto rate = std::max<std::size_t>(1, o.body_min_rate);
          c.deadline = SteadyClock::now() + o.body_timeout +
                       std::chrono::milliseconds(r.body_bound * 1000 / rate);
          // An upload route's body is larger than the loop's cap on what a connection holds; the
          // server holds at most max_upload_bytes of such bodies at once (they arrive before
          // their handler can authenticate anyone), and refuses one past that.
          if (r.body_bound > o.limits.max_body_bytes) {
            const std::size_t held =
                server_.upload_bytes.fetch_add(r.body_bound, std::memory_order_relaxed);
            c.uploads = &server_.upload_bytes;
            c.upload_bytes = r.body_bound;
            c.in_cap = o.limits.max_header_bytes + r.body_bound + 64 * 1024;
            if (held + r.body_bound > o.max_upload_bytes) {
              c.in.clear();
              done_reading(c);
              answer_error(c, 503, "Too many large uploads at once; retry later.");
              break;
            }
          }
        }
        // HTTP/1.0 clients do not know 100 (RFC 9110 §10.1.1): they just send the body.
        if (r.headers_complete && !c.continue_sent && rd.request.expect_continue() &&
            rd.request.version_minor() == 1) {
          c.continue_sent = true;
          c.out.append("HTTP/1.1 100 Continue\r\n\r\n");
          return flush_out(c);
        }
        break;
      }
      if (r.status == ParseStatus::kError) {
        // The stream cannot be resynchronised: answer, then close.
        c.in.clear();
        done_reading(c);
        answer_error(c, r.error_status, r.error_detail);
        break;
      }
      if (r.consumed >= c.in.size())
        c.in.clear();
      else
        c.in.erase(0, r.consumed);
      // A large body leaves a large buffer behind; an idle keep-alive connection should not keep
      // it.
      if (c.in.capacity() > kReadChunk * 4 && c.in.size() < kReadChunk) c.in.shrink_to_fit();
      c.continue_sent = false;
      dispatch(c);
    }
    // Bytes OpenSSL decrypted but read_in left for later (the input was full) raise no epoll
    // event: read them now that there is room.
    if (c.ssl && !c.busy && !c.close_after_write && c.out.empty() && !c.read_closed &&
        c.in.size() < cap_of(c) && SSL_pending(c.ssl) > 0) {
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

// The request being received is whole (or refused): its clock stops, and its reader goes back
// to be reused by the next request on any connection.
void EventLoop::done_reading(Conn& c) {
  c.head_read = false;
  // A streamed upload's handler holds what it read until it answers: counted until then.
  if (!c.busy) c.end_upload();
  if (!c.reading) return;
  c.reading->reader.reset();
  c.reading->request = http::Request();
  if (!spare_reading_) spare_reading_ = std::move(c.reading);
  c.reading.reset();
}

// A request's first byte is here (or, for one that arrived while the previous one was being
// answered, its wait begins): the header section has header_timeout from now.
void EventLoop::start_request_clock(Conn& c, SteadyClock::time_point now) {
  c.head_read = false;
  c.deadline = now + server_.options.header_timeout;
}

// Routes the request just read (in c.reading) and hands it to its handler.
void EventLoop::dispatch(Conn& c) {
  http::Request request = std::move(c.reading->request);
  done_reading(c);
  dispatch_request(c, std::move(request));
}

// Hands `request` to its route's handler.
void EventLoop::dispatch_request(Conn& c, http::Request request) {
  auto ex = std::make_shared<Exchange>(server_, c.id, std::move(request));
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
  if (!req.upload_ && content_type.size() >= 19 &&
      iequals(content_type.substr(0, 19), "multipart/form-data") &&
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
  http::Response& res = ex->res;
  if (const http::UploadStream* u = ex->req.upload(); u && u->failed_status() != 0) {
    // The body failed (late, too large, badly framed): the server's answer, whatever the
    // handler said.
    res = http::Response();
    res.status = u->failed_status();
    ex->refusal = u->failed_detail();
  }
  // Answered before its body was whole (a refusal): the rest of it is not read.
  if (c.upload) end_upload_early(c);
  c.busy = false;
  c.end_upload();
  if (!c.in.empty()) start_request_clock(c, SteadyClock::now());  // pipelined while answering
  const Routes& routes = server_.routes;
  if (res.status >= 400 && res.body.empty() && routes.on_error)
    routes.on_error(ex->req, res, ex->refusal);
  if (server_.stopping.load(std::memory_order_relaxed)) c.close_after_write = true;
  if (res.stream && (res.status != 200 || c.head_only || c.close_after_write)) {
    res.stream->detach();  // nothing will be streamed: a plain answer
    res.stream.reset();
  }
  if (res.stream) {
    serialize_stream_head(c.out, res, c.http10, c.ssl != nullptr);
    if (routes.after)
      routes.after(ex->req, res,
                   std::chrono::duration<double>(SteadyClock::now() - ex->started).count());
    start_stream(c, std::move(res.stream));
    flush_out(c);
    return;
  }
  const bool close = !c.keep_alive || c.close_after_write;
  c.close_after_write = close;
  serialize(c.out, res, c.head_only, close, c.http10, c.ssl != nullptr);
  if (routes.after)
    routes.after(ex->req, res,
                 std::chrono::duration<double>(SteadyClock::now() - ex->started).count());
  if (!flush_out(c)) return;
  process(c);  // a pipelined request may be waiting
}

// Keeps an answered exchange until `when` (Exchange::done_at). On the loop thread.
void EventLoop::defer(std::shared_ptr<Exchange> ex, SteadyClock::time_point when) {
  if (when <= SteadyClock::now() || server_.stopping.load(std::memory_order_relaxed)) {
    ready_.push_back(std::move(ex));
    return;
  }
  deferred_.push_back(Deferred{when, deferred_seq_++, std::move(ex)});
  std::push_heap(deferred_.begin(), deferred_.end(), later_first);
}

// Writes the deferred answers due by `until`, earliest first.
void EventLoop::release_deferred(SteadyClock::time_point until) {
  while (!deferred_.empty() && deferred_.front().when <= until) {
    std::pop_heap(deferred_.begin(), deferred_.end(), later_first);
    const std::shared_ptr<Exchange> ex = std::move(deferred_.back().ex);
    deferred_.pop_back();
    finish(ex);
    drain_ready();
  }
}

// How long epoll may wait: at most `longest` ms, and no later than the next deferred answer,
// to the microsecond (a simulated buyer's latency is what tests and benchmarks measure against;
// rounding up to whole milliseconds could make an answer up to a millisecond late).
timespec EventLoop::wait_for(int longest_ms) const {
  std::chrono::nanoseconds left = std::chrono::milliseconds(longest_ms);
  if (!deferred_.empty()) {
    left = std::clamp<std::chrono::nanoseconds>(deferred_.front().when - SteadyClock::now(),
                                                std::chrono::nanoseconds::zero(), left);
  }
  const auto ns = left.count();
  return timespec{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
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
  std::vector<Conn*> expired, late, late_uploads;
  for (auto& [id, cp] : conns_) {
    Conn& c = *cp;
    if (c.lingering) {
      if (now - c.last_active > std::chrono::seconds(2)) expired.push_back(&c);
      continue;
    }
    if (c.stream) {
      // A stream is quiet between its events; one whose reader stopped taking bytes is not.
      if (c.out_off < c.out.size() && now - c.last_active > o.io_timeout) {
        c.stream->mark_stalled();
        expired.push_back(&c);
      }
      continue;
    }
    if (c.upload) {
      // A body read by its handler as it arrives: late past its deadline, or stalled while the
      // server waits for its bytes (not while the handler is behind).
      if (now > c.deadline || (!c.upload->full() && now - c.last_active > o.io_timeout))
        late_uploads.push_back(&c);
      continue;
    }
    if (c.busy) continue;  // the handler's own deadlines bound it
    const bool handshaking = c.ssl && !SSL_is_init_finished(c.ssl);
    if (handshaking && now - c.accepted > o.tls_handshake_timeout) {
      expired.push_back(&c);  // no answer can be written before the handshake
      continue;
    }
    // A request that is taking too long, however steadily its bytes come: 408.
    if (!handshaking && !c.in.empty() && !c.close_after_write && c.out.empty() &&
        now > c.deadline) {
      late.push_back(&c);
      continue;
    }
    const auto quiet = now - c.last_active;
    const bool mid_io = handshaking || !c.in.empty() || c.out_off < c.out.size();
    if (quiet > (mid_io ? o.io_timeout : o.idle_timeout)) expired.push_back(&c);
  }
  for (Conn* c : expired) close_conn(*c);
  for (Conn* c : late_uploads) {
    // Its handler finds the body failed and the 408 is written once it returns.
    c->upload->fail(408, "The request body did not arrive in time.");
    end_upload_early(*c);
  }
  for (Conn* c : late) {
    const char* detail = c->head_read ? "The request body did not arrive in time."
                                      : "The request's header section did not arrive in time.";
    c->in.clear();
    done_reading(*c);
    answer_error(*c, 408, detail);
  }
  drain_ready();
}

}  // namespace leadflow::http
