#pragma once
// Private: an event loop of the HTTP server. Kept whole: accepting, reading, parsing, routing
// and writing share the loop's connections and its single thread.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "connection.hpp"
#include "leadflow/http/routes.hpp"
#include "server_impl.hpp"

namespace leadflow::http {

/// One event loop: a thread, an epoll set, and the connections it accepted.
class EventLoop {
 public:
  EventLoop(HttpServer::Impl& server, int index)
      : server_(server),
        index_(index),
        input_cap_(server.options.limits.max_header_bytes + server.options.limits.max_body_bytes +
                   64 * 1024) {}
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
  void start() {
    thread_ = std::thread([this] { run(); });
  }
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
      first = inbox_.empty() && deferred_inbox_.empty() && stream_inbox_.empty();
      inbox_.push_back(std::move(ex));
    }
    if (first) wake();  // one wake-up per batch: later ones find the inbox non-empty
  }
  /// From any thread: the exchange is answered, to be written once `when` has come.
  void post_at(std::shared_ptr<Exchange> ex, SteadyClock::time_point when) {
    if (t_current_loop == this) {
      defer(std::move(ex), when);
      return;
    }
    bool first;
    {
      std::lock_guard lock(inbox_mu_);
      first = inbox_.empty() && deferred_inbox_.empty() && stream_inbox_.empty();
      deferred_inbox_.emplace_back(when, std::move(ex));
    }
    if (first) wake();
  }

  /// From any thread: the streamed answer of connection `id` has bytes (or its end) waiting, or
  /// its streamed upload's handler took the bytes that were waiting.
  void stream_ready(std::uint64_t id) {
    bool first;
    {
      std::lock_guard lock(inbox_mu_);
      first = inbox_.empty() && deferred_inbox_.empty() && stream_inbox_.empty();
      stream_inbox_.push_back(id);
    }
    if (first) wake();
  }

 private:
  void run();
  void start_stream(Conn& c, std::shared_ptr<StreamBody> body);
  bool pump_stream(Conn& c);
  void accept_some();
  void on_event(std::uint64_t id, std::uint32_t events);
  bool read_in(Conn& c);
  bool flush_out(Conn& c);
  bool process(Conn& c);
  void dispatch(Conn& c);
  void dispatch_request(Conn& c, http::Request request);
  bool start_upload(Conn& c, const ParseResult& r);
  bool pass_upload(Conn& c, const ParseResult& r);
  bool feed_upload(Conn& c);
  void end_upload_early(Conn& c);
  void answer_error(Conn& c, int status, const std::string& detail);
  void finish(const std::shared_ptr<Exchange>& ex);
  void defer(std::shared_ptr<Exchange> ex, SteadyClock::time_point when);
  void release_deferred(SteadyClock::time_point until);
  timespec wait_for(int longest_ms) const;
  void drain_ready();
  void update_interest(Conn& c);
  void close_conn(Conn& c);
  void linger(Conn& c);
  void drain_linger(Conn& c);
  void sweep(SteadyClock::time_point now);
  void begin_stop();
  void start_request_clock(Conn& c, SteadyClock::time_point now);
  void done_reading(Conn& c);

  HttpServer::Impl& server_;
  const int index_;
  // Received bytes a connection may hold unparsed (a request of the largest size, and room for
  // pipelined ones); beyond it reading pauses until the front is parsed.
  const std::size_t input_cap_;
  /// What a connection's input may hold: the loop's cap, or its request's (Conn::in_cap).
  std::size_t cap_of(const Conn& c) const { return c.in_cap > input_cap_ ? c.in_cap : input_cap_; }
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
  std::vector<std::pair<SteadyClock::time_point, std::shared_ptr<Exchange>>> deferred_inbox_;
  std::vector<std::uint64_t> stream_inbox_;  // connections whose stream has bytes waiting
  // Answered exchanges waiting for their time (Exchange::done_at): a min-heap by time, then by
  // arrival, so answers due together leave in the order they were given.
  struct Deferred {
    SteadyClock::time_point when;
    std::uint64_t seq;
    std::shared_ptr<Exchange> ex;
  };
  std::vector<Deferred> deferred_;
  std::uint64_t deferred_seq_ = 0;
  bool listening_ = true;
  std::optional<SteadyClock::time_point> accept_paused_until_;
  std::unique_ptr<Reading> spare_reading_;  // a reader between requests, handed to the next one
  char buf_[kReadChunk];
};

}  // namespace leadflow::http
