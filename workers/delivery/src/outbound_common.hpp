#pragma once
// What both outbound transports (libcurl's, and the HTTP/2 one on nghttp2) share, so a buyer's
// answer is capped, timed and described the same way whichever carried it.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <ctime>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <stdexcept>

#include <cstdint>
#include <vector>

#include "leadflow/base/text.hpp"
#include "leadflow/delivery/http_client.hpp"

namespace leadflow::outbound {

// A buyer answers a ping or a post in a few hundred bytes; anything past this is a misbehaving
// endpoint, and we refuse to buffer it rather than let one buyer grow a worker's memory.
constexpr std::size_t kMaxResponseBytes = 1 << 20;
// The loop ran this late (asleep past its wake-up, or busy in one turn): the process was starved
// of CPU, and a timeout that spans it says nothing certain about the buyer.
constexpr auto kStall = std::chrono::milliseconds(50);
// The real clock. Deadlines and waits read the client's Clock (CurlClientOptions::clock), but a
// loop's lateness is measured on this one: it says how much CPU this process got, which a
// simulated clock's jumps say nothing about. libcurl's own timers run on it too.
using RealClock = std::chrono::steady_clock;
constexpr const char* kShutDownError = "client shut down";

inline std::string timeout_error(const HttpRequest& rq) {
  return "timed out after " + std::to_string(rq.timeout.count()) + " ms";
}

// How long `rq` may wait in a client's own queue for a connection: its own limit, if it has
// one, within the client's.
inline std::chrono::milliseconds queue_limit(const HttpRequest& rq,
                                             std::chrono::milliseconds client) {
  return rq.max_queue_wait.count() > 0 ? std::min(rq.max_queue_wait, client) : client;
}

// A request that waited `limit` in our queue, and fails without having been sent.
inline HttpResponse not_sent_in_time(std::chrono::milliseconds limit) {
  HttpResponse r;
  r.not_sent = r.not_delivered = true;
  r.error = "not sent: no connection to the buyer came free within " +
            std::to_string(limit.count()) + " ms";
  return r;
}

inline std::string too_large_error() {
  return "response body larger than " + std::to_string(kMaxResponseBytes) + " bytes";
}

inline std::string refused_address_error(const char* kind) {
  return std::string("refused to connect to a ") + kind + " address";
}

inline bool has_line_break(std::string_view s) {
  return s.find_first_of("\r\n") != std::string_view::npos;
}

inline bool has_header(const Headers& headers, std::string_view name) {
  return std::any_of(headers.begin(), headers.end(),
                     [&](const auto& h) { return iequals(h.first, name); });
}

// "scheme://host[:port]" of a URL: requests to one buyer endpoint share its connection limit.
inline std::string host_key(const std::string& url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return url;
  const auto end = url.find_first_of("/?#", scheme_end + 3);
  return ascii_lower(std::string_view(url).substr(0, end));
}

// A write to a peer that hung up raises SIGPIPE unless the writer says otherwise, and neither
// libcurl (with CURLOPT_NOSIGNAL) nor OpenSSL does. A service never wants to die of it, so it is
// ignored once, unless the program installed its own handler.
inline void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      std::signal(SIGPIPE, SIG_IGN);
    }
  });
}

// Waits at most `timeout` (to the microsecond: libcurl asks to be called back in fractions of a
// millisecond, and a wait rounded up to whole ones delays every request it is in the middle of)
// for events of `epoll`; returns how many, as epoll_wait does.
inline int wait_for_events(int epoll, std::vector<epoll_event>& events,
                           std::chrono::nanoseconds timeout) {
  const auto ns = std::max<std::int64_t>(0, timeout.count());
  const timespec wait{static_cast<time_t>(ns / 1'000'000'000),
                      static_cast<long>(ns % 1'000'000'000)};
  return ::epoll_pwait2(epoll, events.data(), static_cast<int>(events.size()), &wait, nullptr);
}

// Hands `on_ready` the `n` events in `events`, and any more that are ready, until none are:
// a full batch means more may be waiting. Each transport's loop calls it after its epoll_wait.
template <class OnReady>
void take_ready(int epoll, std::vector<epoll_event>& events, int n, OnReady&& on_ready) {
  while (n > 0) {
    for (int i = 0; i < n; ++i) on_ready(events[static_cast<std::size_t>(i)]);
    if (static_cast<std::size_t>(n) < events.size()) break;
    n = ::epoll_wait(epoll, events.data(), static_cast<int>(events.size()), 0);
  }
}

/// When the oldest request waiting in `hosts`' queues for a connection was submitted (each
/// host's `waiting` is in the order its requests came; one put back goes first), if any waits.
template <class Hosts>
std::optional<SteadyTime> oldest_waiting(const Hosts& hosts) {
  std::optional<SteadyTime> oldest;
  for (const auto& [key, h] : hosts)
    if (!h.waiting.empty() && (!oldest || h.waiting.front()->submitted < *oldest))
      oldest = h.waiting.front()->submitted;
  return oldest;
}

/// When the oldest request a transport holds unsent was handed to it, readable from any thread
/// without the transport's lock (HttpClient::oldest_unsent). Two parts: its submission queue,
/// marked by send() and by the loop's taking of it under the transport's lock, and its hosts'
/// queues for a connection, marked by the loop after each turn.
class OldestUnsent {
 public:
  /// send(), under the transport's lock, with the queue empty before this request.
  void first_submitted(SteadyTime at) { incoming_.store(at.time_since_epoch().count()); }
  /// The loop, under the transport's lock, as it takes the whole submission queue.
  void submissions_taken() { incoming_.store(kNone); }
  /// The loop, after a turn: the oldest request still waiting for a connection, if any.
  void waiting_since(std::optional<SteadyTime> oldest) {
    waiting_.store(oldest ? oldest->time_since_epoch().count() : kNone);
  }
  std::chrono::nanoseconds age(SteadyTime now) const {
    const std::int64_t since = std::min(incoming_.load(), waiting_.load());
    if (since == kNone) return std::chrono::nanoseconds{0};
    return std::max(std::chrono::nanoseconds{0},
                    std::chrono::nanoseconds{now.time_since_epoch().count() - since});
  }

 private:
  static constexpr std::int64_t kNone = INT64_MAX;
  std::atomic<std::int64_t> incoming_{kNone};
  std::atomic<std::int64_t> waiting_{kNone};
};

/// A transport loop's epoll set and the eventfd that wakes it, the eventfd already in the set
/// with `wake_tag` as its epoll data. Owned by the transport; wake() may be called from any
/// thread, the rest only from the loop's.
class LoopFds {
 public:
  explicit LoopFds(std::uint64_t wake_tag)
      : epoll_(::epoll_create1(EPOLL_CLOEXEC)), wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (epoll_ < 0 || wake_ < 0) {
      close_all();
      throw std::runtime_error("epoll_create1/eventfd failed");
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = wake_tag;
    ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev);
  }
  LoopFds(const LoopFds&) = delete;
  LoopFds& operator=(const LoopFds&) = delete;
  ~LoopFds() { close_all(); }

  int epoll() const { return epoll_; }

  void wake() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_, &one, sizeof one);  // EAGAIN: a wake-up is pending
  }

  // Empties the eventfd after it woke the loop (the wake-up's only message is itself).
  void drain_wakeup() const {
    std::uint64_t count = 0;
    [[maybe_unused]] auto n = ::read(wake_, &count, sizeof count);
  }

 private:
  void close_all() {
    if (epoll_ >= 0) ::close(epoll_);
    if (wake_ >= 0) ::close(wake_);
  }

  int epoll_;
  int wake_;
};

}  // namespace leadflow::outbound
