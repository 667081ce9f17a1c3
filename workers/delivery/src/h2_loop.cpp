#include "h2_loop.hpp"

#include <unistd.h>

#include "leadflow/domain/address_policy.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>
#include <utility>

namespace leadflow {
namespace {

using namespace std::chrono_literals;
using outbound::kShutDownError;

// How often the pool's slow timers (idle connections, stuck connects, long queue waits) run.
constexpr auto kHousekeeping = 250ms;
constexpr auto kIdlePoll = 1000ms;
constexpr int kH2MaxEvents = 512;
constexpr std::size_t kReadChunk = 64 * 1024;
// Bytes the codec is asked for before they are handed to TLS in one write.
constexpr std::size_t kWriteBatch = 64 * 1024;
constexpr std::uint64_t kWakeTag = 0;  // connection ids start at 1

}  // namespace

H2Loop::H2Loop(const CurlClientOptions& options, HttpClient& http1)
    : options_(options),
      clock_(options.clock != nullptr ? *options.clock : SystemClock::instance()),
      tls_(options.verify_tls, options.ca_file),
      pool_(options, clock_, http1, *this),
      read_buffer_(kReadChunk),
      turn_start_(outbound::RealClock::now()),
      next_housekeeping_(clock_.steady_now()),
      fds_(kWakeTag) {
  outbound::ignore_sigpipe_once();
  resolver_ = std::make_unique<HostResolver>([this](Resolution r) {
    {
      std::lock_guard lock(mutex_);
      resolved_.push_back(std::move(r));
    }
    fds_.wake();
  });
  loop_ = std::thread([this] { run(); });
}

H2Loop::~H2Loop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  fds_.wake();
  loop_.join();
  resolver_.reset();  // its callback wakes the loop: gone before the eventfd
}

void H2Loop::send(HttpRequest request, std::function<void(HttpResponse)> done) {
  auto ex = std::make_unique<H2Exchange>();
  ex->request = std::move(request);
  ex->done = std::move(done);
  ex->submitted = clock_.steady_now();
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      if (incoming_.empty()) unsent_.first_submitted(ex->submitted);
      incoming_.push_back(std::move(ex));
    }
  }
  if (ex) {  // refused: the client is shutting down; answer on the caller's thread
    pool_.fail(*ex, kShutDownError);
    return;
  }
  fds_.wake();
}

std::chrono::nanoseconds H2Loop::oldest_unsent() const { return unsent_.age(clock_.steady_now()); }

void H2Loop::run() {
  std::vector<epoll_event> events(kH2MaxEvents);
  for (;;) {
    std::deque<std::unique_ptr<H2Exchange>> incoming;
    std::deque<Resolution> resolved;
    bool stopping = false;
    {
      std::lock_guard lock(mutex_);
      incoming.swap(incoming_);
      unsent_.submissions_taken();
      resolved.swap(resolved_);
      stopping = stopping_;
    }
    if (stopping) {
      for (auto& ex : incoming) pool_.fail(*ex, kShutDownError);
      break;
    }
    for (auto& r : resolved) pool_.on_resolved(std::move(r));
    for (auto& ex : incoming) pool_.admit(std::move(ex));
    pool_.reap();

    // Sleep until a socket is ready, a wake-up, the next deadline or housekeeping.
    const auto turn_end = outbound::RealClock::now();
    note_lag(turn_end - turn_start_);
    const auto wait = poll_timeout(clock_.steady_now());
    const int n = outbound::wait_for_events(fds_.epoll(), events, wait);
    turn_start_ = outbound::RealClock::now();
    if (n == 0) note_lag(turn_start_ - (turn_end + wait));
    take_ready(events, n);
    pool_.reap();
    if (pool_.next_deadline() <= clock_.steady_now()) {
      // Every answer already in a socket is read before a deadline is enforced: the work
      // above may have taken a while, so look at the sockets once more first.
      take_ready(events, ::epoll_wait(fds_.epoll(), events.data(), kH2MaxEvents, 0));
      pool_.reap();
      note_lag(outbound::RealClock::now() - turn_start_);
      pool_.expire_overdue(last_stall_);
      pool_.reap();
    }
    if (clock_.steady_now() >= next_housekeeping_) {
      next_housekeeping_ = clock_.steady_now() + kHousekeeping;
      pool_.housekeeping();
      pool_.reap();
    }
    unsent_.waiting_since(pool_.oldest_waiting());
  }
  pool_.shut_down();
  by_id_.clear();
}

void H2Loop::take_ready(std::vector<epoll_event>& events, int n) {
  outbound::take_ready(fds_.epoll(), events, n, [this](const epoll_event& ev) { on_ready(ev); });
}

void H2Loop::on_ready(const epoll_event& ev) {
  if (ev.data.u64 == kWakeTag) {
    fds_.drain_wakeup();
    return;
  }
  auto it = by_id_.find(ev.data.u64);
  if (it == by_id_.end() || it->second->dead) return;
  H2Connection& c = *it->second;
  if (c.state == H2Connection::State::kConnecting) {
    advance_handshake(c);
    return;
  }
  if (c.state != H2Connection::State::kReady) return;
  if ((ev.events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) read(c);
  if (c.dead) return;
  pool_.dispatch(*c.host);
  flush(c);
}

// The loop woke up late, or one turn took long: remember when, so a timeout that spans it is
// not put down to the buyer.
void H2Loop::note_lag(outbound::RealClock::duration late) {
  if (late >= outbound::kStall) last_stall_ = clock_.steady_now();
}

SteadyTime::duration H2Loop::poll_timeout(SteadyTime now) const {
  auto next = std::min({now + kIdlePoll, next_housekeeping_, pool_.next_deadline()});
  return std::clamp<SteadyTime::duration>(next - now, SteadyTime::duration::zero(), kIdlePoll);
}

// ---- sockets ----

void H2Loop::resolve(const H2Host& host) { resolver_->resolve(host.key, host.name, host.port); }

// Connects to the next address the policy allows; a buyer's name was public when it was saved,
// but may resolve elsewhere now (DNS rebinding), so every address is checked here.
void H2Loop::connect(H2Connection& c) {
  const H2Host& h = *c.host;
  while (c.next_address < h.addresses.size()) {
    const ResolvedAddress& a = h.addresses[c.next_address++];
    if (!options_.allow_private_addresses) {
      const char* kind = non_public_address_kind(a.get());
      if (*kind != '\0') {
        c.refused = kind;
        continue;
      }
    }
    std::unique_ptr<TlsStream> tls;
    try {
      tls = std::make_unique<TlsStream>(tls_, h.name);
    } catch (const std::exception& e) {
      c.connect_error = e.what();
      continue;
    }
    if (!tls->connect(a.get(), a.length)) {
      const int e = tls->errno_value();
      c.out_of_sockets = e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
      c.connect_error = tls->error();
      continue;
    }
    c.tls = std::move(tls);
    c.state = H2Connection::State::kConnecting;
    by_id_[c.id] = &c;
    watch(c, EPOLLOUT);
    return;
  }
  if (c.refused != nullptr && c.connect_error.empty()) {
    pool_.mark_dead(c, outbound::refused_address_error(c.refused));
  } else if (c.out_of_sockets) {
    pool_.mark_dead(c, c.connect_error);
  } else {
    pool_.mark_dead(c, "could not connect to " + h.name + " port " + h.port + ": " +
                           (c.connect_error.empty() ? "no address" : c.connect_error));
  }
}

void H2Loop::advance_handshake(H2Connection& c) {
  switch (c.tls->handshake()) {
    case TlsStream::Io::kDone:
      pool_.connection_ready(c, c.tls->alpn());
      return;
    case TlsStream::Io::kWantRead:
      watch(c, EPOLLIN);
      return;
    case TlsStream::Io::kWantWrite:
      watch(c, EPOLLOUT);
      return;
    case TlsStream::Io::kClosed:
    case TlsStream::Io::kError:
      break;
  }
  if (c.tls->failed_in_connect()) {  // nothing reached the buyer: try its next address
    c.connect_error = c.tls->error();
    release(c);
    c.tls.reset();
    connect(c);
    return;
  }
  const std::string& why = c.tls->error();
  pool_.mark_dead(c, why.rfind("TLS certificate", 0) == 0
                         ? why
                         : "TLS handshake with " + c.host->name + " failed: " + why);
}

void H2Loop::read(H2Connection& c) {
  for (;;) {
    std::size_t n = 0;
    const TlsStream::Io io = c.tls->read(read_buffer_.data(), read_buffer_.size(), &n);
    if (io == TlsStream::Io::kWantRead || io == TlsStream::Io::kWantWrite) return;
    if (io != TlsStream::Io::kDone) {
      pool_.mark_dead(c, c.tls->error());
      return;
    }
    if (!c.codec->receive(read_buffer_.data(), n)) {
      pool_.mark_dead(c, c.codec->error());
      return;
    }
  }
}

// Hands TLS what the codec has to send, until the socket takes no more.
void H2Loop::flush(H2Connection& c) {
  if (c.dead || c.codec == nullptr) return;
  for (;;) {
    if (c.out_offset == c.out.size()) {
      c.out.clear();
      c.out_offset = 0;
      if (!c.codec->produce(c.out, kWriteBatch)) {
        pool_.mark_dead(c, c.codec->error());
        return;
      }
      if (c.out.empty()) break;
    }
    std::size_t n = 0;
    const TlsStream::Io io =
        c.tls->write(c.out.data() + c.out_offset, c.out.size() - c.out_offset, &n);
    if (io == TlsStream::Io::kDone) {
      c.out_offset += n;
      continue;
    }
    if (io == TlsStream::Io::kWantWrite || io == TlsStream::Io::kWantRead) break;
    pool_.mark_dead(c, c.tls->error());
    return;
  }
  const bool unsent = c.out_offset < c.out.size();
  watch(c, EPOLLIN | (unsent ? EPOLLOUT : 0u));
  if (!unsent && c.codec->finished()) {
    pool_.mark_dead(c, c.streams.empty() ? "" : "connection finished");  // both said GOAWAY
  }
}

void H2Loop::watch(H2Connection& c, std::uint32_t events) {
  if (c.tls == nullptr || c.tls->fd() < 0 || c.watching == events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id;
  ::epoll_ctl(fds_.epoll(), c.watching == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c.tls->fd(), &ev);
  c.watching = events;
}

void H2Loop::release(H2Connection& c) {
  if (c.tls != nullptr && c.watching != 0) {
    ::epoll_ctl(fds_.epoll(), EPOLL_CTL_DEL, c.tls->fd(), nullptr);
  }
  c.watching = 0;
  by_id_.erase(c.id);
}

bool http2_is_reliable() { return true; }

std::string nghttp2_version() {
  const nghttp2_info* info = ::nghttp2_version(0);
  return info != nullptr && info->version_str != nullptr ? info->version_str : "";
}

std::unique_ptr<HttpClient> make_h2_client(const CurlClientOptions& options, HttpClient& http1) {
  return std::make_unique<H2Loop>(options, http1);
}

}  // namespace leadflow
