#pragma once
// The HTTP/2 client's loop: one event-loop thread owns every buyer connection's socket (a
// TlsStream) and an epoll set of them, moves bytes between TLS and each connection's codec, and
// runs the pool's timers; other threads only push onto a locked queue and wake it through an
// eventfd, and names are resolved on a thread of their own. libcurl 7.88 loses part of the
// HTTP/2 streams it runs in parallel, so this transport speaks HTTP/2 itself and leaves libcurl
// the HTTP/1.1 buyers.
#include <sys/epoll.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "h2_pool.hpp"
#include "host_resolver.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/delivery/http_client.hpp"
#include "outbound_common.hpp"
#include "tls_stream.hpp"

namespace leadflow {

/// The HTTP/2 client (make_h2_client): send() from any thread; the loop's thread does the rest.
/// Its timers read options.clock.
class H2Loop final : public HttpClient, private H2Io {
 public:
  H2Loop(const CurlClientOptions& options, HttpClient& http1);
  ~H2Loop() override;
  H2Loop(const H2Loop&) = delete;
  H2Loop& operator=(const H2Loop&) = delete;

  using HttpClient::send;
  void send(HttpRequest request, std::function<void(HttpResponse)> done) override;
  std::chrono::nanoseconds oldest_unsent() const override;

 private:
  // H2Io: what the pool asks of the sockets.
  void resolve(const H2Host& host) override;
  void connect(H2Connection& c) override;
  void read(H2Connection& c) override;
  void flush(H2Connection& c) override;
  void release(H2Connection& c) override;

  void run();
  void take_ready(std::vector<epoll_event>& events, int n);
  void on_ready(const epoll_event& ev);
  void advance_handshake(H2Connection& c);
  void note_lag(outbound::RealClock::duration late);
  SteadyTime::duration poll_timeout(SteadyTime now) const;
  void watch(H2Connection& c, std::uint32_t events);

  const CurlClientOptions options_;
  const Clock& clock_;
  TlsClientContext tls_;

  std::mutex mutex_;
  std::deque<std::unique_ptr<H2Exchange>> incoming_;  // guarded by mutex_
  std::deque<Resolution> resolved_;                   // guarded by mutex_
  bool stopping_ = false;                             // guarded by mutex_
  outbound::OldestUnsent unsent_;

  // Loop thread only.
  H2Pool pool_;
  std::unordered_map<std::uint64_t, H2Connection*> by_id_;  // connections with a socket
  std::vector<char> read_buffer_;
  outbound::RealClock::time_point turn_start_;  // real time: lateness is measured on it
  SteadyTime last_stall_{};
  SteadyTime next_housekeeping_;
  // The epoll set, and the eventfd that send(), the resolver and the destructor wake it with.
  outbound::LoopFds fds_;

  std::unique_ptr<HostResolver> resolver_;
  std::thread loop_;  // last: starts after everything above exists
};

}  // namespace leadflow
