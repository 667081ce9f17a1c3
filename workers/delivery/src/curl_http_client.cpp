// Outbound HTTP over libcurl's multi interface, driven by socket events: one event-loop thread
// owns every easy handle, the multi handles with their connection caches, and an epoll set of the
// sockets libcurl watches; other threads only push onto a locked queue and wake the loop through an
// eventfd. Each wake-up costs what became ready, not what is in flight: thousands of requests
// waiting on slow buyers cost nothing until they answer.
//
// A buyer's connections are split into lanes of at most kLaneConnections, each a multi handle of
// its own. libcurl walks a multi's whole connection cache whenever a finished transfer leaves it,
// so one multi holding the 1,500 keep-alive connections a 500 ms buyer needs at 2,000 leads/s
// spent most of the client's CPU there; a lane keeps that walk short.
#include "leadflow/delivery/http_client.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "leadflow/base/text.hpp"
#include "leadflow/domain/buyer.hpp"
#include "outbound_common.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace leadflow {

namespace {

using outbound::has_header;
using outbound::has_line_break;
using outbound::host_key;
using outbound::kMaxResponseBytes;
using outbound::kShutDownError;
using outbound::kStall;
using outbound::timeout_error;

// Easy handles kept for reuse between requests (each holds a few KiB of state).
constexpr std::size_t kMaxIdleHandles = 256;
// How long the loop sleeps with nothing to do; a wakeup or a curl timer ends it sooner.
constexpr int kIdlePollMs = 1000;
// Connections (or, over HTTP/2, connections x 100 streams) per lane.
constexpr long kLaneConnections = 64;
constexpr long kStreamsPerConnection = 100;
// Socket events taken per epoll_wait; more ready ones are taken at once by the next call.
constexpr int kMaxEvents = 512;
// libcurl's own timer is only a safety net, this far past our deadline: the loop expires a request
// itself, after it has read every answer already waiting in a socket.
constexpr long kCurlTimeoutSlackMs = 1000;

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw std::runtime_error("curl_global_init failed");
    }
    // CURLOPT_NOSIGNAL stops libcurl from touching signal dispositions, which also means it no
    // longer ignores SIGPIPE around TLS writes to a peer that hung up.
    outbound::ignore_sigpipe_once();
  });
}

// libcurl multiplexes HTTP/2 without losing exchanges from 8.1 on. 7.88 (Debian 12's) answers
// part of the streams run in parallel with "Stream error in the HTTP/2 framing layer" after their
// 200 (the curl tool does too: 677 of 3,000 parallel POSTs to nginx here), so older ones are
// asked for HTTP/1.1 whatever the options say; make_buyer_client speaks HTTP/2 through its own
// transport instead.
bool libcurl_multiplexes_reliably() {
  const curl_version_info_data* v = curl_version_info(CURLVERSION_NOW);
  return v != nullptr && (v->features & CURL_VERSION_HTTP2) != 0 && v->version_num >= 0x080100;
}

CurlClientOptions with_reliable_http2(CurlClientOptions options) {
  options.http2 = options.http2 && libcurl_multiplexes_reliably();
  return options;
}

// libcurl's own timers run on the real clock (it measures them itself); our deadlines and the
// wait in our queue read the client's Clock.
using outbound::RealClock;

/// A multi handle and its connection cache: one share of a buyer host's connections.
struct Lane {
  CURLM* multi = nullptr;
  std::uint32_t index = 0;  // in the client's lanes_, and in the epoll data of its sockets
  int epoll = -1;           // the client's epoll set, which the lane's sockets join
  long in_flight = 0;
  struct Host* owner = nullptr;                // the buyer host whose connections it holds
  std::optional<RealClock::time_point> timer;  // libcurl's next timeout, in real time
  bool active = false;                         // libcurl ran since its messages were last read
};

struct Host;

/// One request from hand-over to completion. Owned by the queue, then by the loop.
struct Transfer {
  HttpRequest request;
  std::function<void(HttpResponse)> done;
  std::string host;             // scheme://host:port, the key of its host's queue
  Host* state = nullptr;        // that host's queue (hosts_ never drops one)
  struct Lane* lane = nullptr;  // the multi handle it runs on, while it does
  SteadyTime submitted;
  SteadyTime sent{};    // handed to a connection; the timeout runs from here
  SteadyTime deadline;  // sent + request.timeout
  std::multimap<SteadyTime, CURL*>::iterator deadline_entry;
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  std::string body;
  bool too_large = false;
  bool allow_private = false;
  const char* refused_address = nullptr;  // set when the resolved address was not public
  int socket_errno = 0;                   // set when no socket could be made for it
  bool sent_again = false;  // once, on a new connection (CurlClient::send_again_fresh)
  char error_buffer[CURL_ERROR_SIZE] = {0};

  ~Transfer() {
    if (header_list != nullptr) curl_slist_free_all(header_list);
  }
};

// A buyer's requests in flight (on connections) and waiting in our queue for a slot.
struct Host {
  long in_flight = 0;
  // Over TLS a buyer may offer HTTP/2; until its first answer says, one request goes at a time.
  // A burst sent before that would open a connection (and a TLS handshake) per request, since
  // libcurl cannot share a connection whose protocol it does not know yet.
  bool known = false;
  bool multiplexed = false;  // it answered over HTTP/2: streams share connections
  std::deque<std::unique_ptr<Transfer>> waiting;
  std::vector<Lane*> lanes;  // its connections, filled in order so the first ones stay warm
};

// Checks the address libcurl is about to connect to: a buyer's host was public when its URL was
// saved, but a name can resolve elsewhere later (DNS rebinding).
curl_socket_t open_socket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* t = static_cast<Transfer*>(user);
  if (purpose == CURLSOCKTYPE_IPCXN && !t->allow_private) {
    const char* kind = non_public_address_kind(&address->addr);
    if (*kind != '\0') {
      t->refused_address = kind;
      return CURL_SOCKET_BAD;
    }
  }
  const curl_socket_t fd = ::socket(address->family, address->socktype, address->protocol);
  if (fd == CURL_SOCKET_BAD) t->socket_errno = errno;
  return fd;
}

size_t write_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->body.size() + n > kMaxResponseBytes) {
    t->too_large = true;
    return 0;  // anything but n aborts the transfer with CURLE_WRITE_ERROR
  }
  t->body.append(data, n);
  return n;
}

class CurlClient final : public HttpClient {
 public:
  explicit CurlClient(const CurlClientOptions& options) : options_(with_reliable_http2(options)) {
    global_init_once();
    // TLS sessions and DNS answers are reused across every lane (one thread: no locks).
    share_ = curl_share_init();
    if (share_ != nullptr) {
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
      curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    }
    loop_ = std::thread([this] { run(); });
  }

  ~CurlClient() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake();
    loop_.join();
    for (CURL* easy : idle_handles_) curl_easy_cleanup(easy);
    for (Lane& lane : lanes_) curl_multi_cleanup(lane.multi);
    if (share_ != nullptr) curl_share_cleanup(share_);
  }

  using HttpClient::send;

  std::chrono::nanoseconds oldest_unsent() const override {
    return unsent_.age(clock_.steady_now());
  }

  void send(HttpRequest request, std::function<void(HttpResponse)> done) override {
    auto t = std::make_unique<Transfer>();
    t->request = std::move(request);
    t->done = std::move(done);
    t->submitted = clock_.steady_now();
    t->host = host_key(t->request.url);
    {
      std::lock_guard lock(mutex_);
      if (!stopping_) {
        if (queue_.empty()) unsent_.first_submitted(t->submitted);
        queue_.push_back(std::move(t));
      }
    }
    if (t) {  // refused: the client is shutting down; answer on the caller's thread
      fail(*t, kShutDownError);
      return;
    }
    wake();
  }

 private:
  // The epoll data of the eventfd; a socket's is (lane index << 32 | socket).
  static constexpr std::uint64_t kWakeTag = ~std::uint64_t{0};

  void wake() { fds_.wake(); }

  Lane& new_lane() {
    Lane& lane = lanes_.emplace_back();
    lane.index = static_cast<std::uint32_t>(lanes_.size() - 1);
    lane.epoll = fds_.epoll();
    open_lane(lane);
    return lane;
  }

  // A fresh multi handle for `lane` (at its fixed address: libcurl's callbacks point there).
  void open_lane(Lane& lane) {
    CURLM* multi = curl_multi_init();
    if (multi == nullptr) throw std::runtime_error("curl_multi_init failed");
    lane.multi = multi;
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, kLaneConnections);
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, kLaneConnections);
    // The idle-connection cache: as many as the lane may use, so keep-alive survives bursts.
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, kLaneConnections);
    // HTTP/2 streams share a connection where the buyer offers it.
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    // The streams per connection our host limit counts on, said to libcurl too.
    curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, kStreamsPerConnection);
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &CurlClient::on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, &lane);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &CurlClient::on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, &lane);
  }

  // libcurl says which sockets of a lane to watch for what; the epoll set follows.
  static int on_socket(CURL* /*easy*/, curl_socket_t s, int what, void* user, void* socket_data) {
    auto* lane = static_cast<Lane*>(user);
    if (what == CURL_POLL_REMOVE) {
      ::epoll_ctl(lane->epoll, EPOLL_CTL_DEL, s, nullptr);
      return 0;
    }
    epoll_event ev{};
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    ev.data.u64 = (std::uint64_t{lane->index} << 32) | static_cast<std::uint32_t>(s);
    // A socket libcurl has not assigned yet is new to the set. A closed socket leaves the set by
    // itself, so its number may come back: ADD and MOD each fall back to the other.
    if (socket_data == nullptr) {
      if (::epoll_ctl(lane->epoll, EPOLL_CTL_ADD, s, &ev) != 0 && errno == EEXIST) {
        ::epoll_ctl(lane->epoll, EPOLL_CTL_MOD, s, &ev);
      }
      curl_multi_assign(lane->multi, s, lane);
    } else if (::epoll_ctl(lane->epoll, EPOLL_CTL_MOD, s, &ev) != 0 && errno == ENOENT) {
      ::epoll_ctl(lane->epoll, EPOLL_CTL_ADD, s, &ev);
    }
    return 0;
  }

  // libcurl's next timer for a lane: -1 none, 0 as soon as possible. Applied by the loop, never
  // from here.
  static int on_timer(CURLM* /*multi*/, long timeout_ms, void* user) {
    auto* lane = static_cast<Lane*>(user);
    lane->timer = timeout_ms < 0
                      ? std::nullopt
                      : std::optional(RealClock::now() + std::chrono::milliseconds(timeout_ms));
    return 0;
  }

  void run() {
    std::vector<epoll_event> events(kMaxEvents);
    for (;;) {
      std::deque<std::unique_ptr<Transfer>> incoming;
      bool stopping = false;
      {
        std::lock_guard lock(mutex_);
        incoming.swap(queue_);
        unsent_.submissions_taken();
        stopping = stopping_;
      }
      if (stopping) {
        for (auto& t : incoming) fail(*t, kShutDownError);
        break;
      }
      for (auto& t : incoming) admit(std::move(t));

      // Sleep until a socket is ready, a wake-up, libcurl's timer or the next deadline.
      const auto turn_end = RealClock::now();
      note_lag(turn_end - turn_start_);
      const auto wait = poll_timeout(clock_.steady_now());
      const int n = outbound::wait_for_events(fds_.epoll(), events, wait);
      turn_start_ = RealClock::now();
      if (n == 0) note_lag(turn_start_ - (turn_end + wait));
      take_ready(events, n);
      run_timers();
      collect_finished();
      if (!deadlines_.empty() && deadlines_.begin()->first <= clock_.steady_now()) {
        // Every answer already in a socket is read before a deadline is enforced: the callbacks
        // above may have taken a while, so look at the sockets once more first.
        take_ready(events, ::epoll_wait(fds_.epoll(), events.data(), kMaxEvents, 0));
        collect_finished();
        note_lag(RealClock::now() - turn_start_);
        expire_overdue();
      }
      expire_queued();
      unsent_.waiting_since(outbound::oldest_waiting(hosts_));
    }
    // Fail whatever is still queued or on the wire. Callbacks may call send() again; stopping_
    // makes those fail at once, so this loop ends.
    for (auto& [key, host] : hosts_) {
      while (!host.waiting.empty()) {
        std::unique_ptr<Transfer> t = std::move(host.waiting.front());
        host.waiting.pop_front();
        fail(*t, kShutDownError);
      }
    }
    while (!active_.empty()) {
      auto it = active_.begin();
      std::unique_ptr<Transfer> t = std::move(it->second);
      active_.erase(it);
      deadlines_.erase(t->deadline_entry);
      curl_multi_remove_handle(t->lane->multi, t->easy);
      recycle(t->easy);
      t->easy = nullptr;
      fail(*t, kShutDownError);
    }
  }

  // Hands libcurl the `n` events in `events`, and any more that are ready, until none are.
  void take_ready(std::vector<epoll_event>& events, int n) {
    outbound::take_ready(fds_.epoll(), events, n, [this](const epoll_event& ev) { on_ready(ev); });
  }

  void on_ready(const epoll_event& ev) {
    if (ev.data.u64 == kWakeTag) {
      fds_.drain_wakeup();
      return;
    }
    Lane& lane = lanes_[static_cast<std::size_t>(ev.data.u64 >> 32)];
    const auto s = static_cast<curl_socket_t>(ev.data.u64 & 0xffffffffu);
    int mask = 0;
    if (ev.events & EPOLLIN) mask |= CURL_CSELECT_IN;
    if (ev.events & EPOLLOUT) mask |= CURL_CSELECT_OUT;
    if (ev.events & (EPOLLERR | EPOLLHUP)) mask |= CURL_CSELECT_ERR;
    int running = 0;
    curl_multi_socket_action(lane.multi, s, mask, &running);
    lane.active = true;
  }

  void run_timers() {
    const auto now = RealClock::now();
    for (Lane& lane : lanes_) {
      if (!lane.timer || *lane.timer > now) continue;
      lane.timer.reset();
      int running = 0;
      curl_multi_socket_action(lane.multi, CURL_SOCKET_TIMEOUT, 0, &running);
      lane.active = true;
    }
  }

  // The loop woke up late, or one turn took long: remember when, so a timeout that spans it is
  // not put down to the buyer.
  void note_lag(RealClock::duration late) {
    if (late >= kStall) last_stall_ = clock_.steady_now();
  }

  long host_limit(const Host& h) const {
    if (!h.known) return 1;
    return h.multiplexed ? options_.max_host_connections * kStreamsPerConnection
                         : options_.max_host_connections;
  }

  // Connections in use by every HTTP/1.1 host together (an HTTP/2 host needs few).
  bool total_full(const Host& h) const {
    return !h.multiplexed && connections_in_use_ >= options_.max_connections;
  }

  // The first of the host's lanes with room, or a new one. Filling them in order keeps the
  // request on a lane whose connections are already open. Lanes keep their connections alive
  // when idle, so past the lanes max_connections allows, a new lane is made by closing an idle
  // lane of another buyer: open connections stay near max_connections however many buyers
  // have had a busy moment, and descriptors with them.
  Lane& lane_for(Host& h) {
    const long room = h.multiplexed ? kLaneConnections * kStreamsPerConnection : kLaneConnections;
    for (Lane* lane : h.lanes) {
      if (lane->in_flight < room) return *lane;
    }
    const auto max_lanes = static_cast<std::size_t>(
        std::max(1L, (options_.max_connections + kLaneConnections - 1) / kLaneConnections));
    Lane* lane = lanes_.size() >= max_lanes ? idle_lane_of_another(h) : nullptr;
    if (lane != nullptr) {
      std::erase(lane->owner->lanes, lane);
      curl_multi_cleanup(lane->multi);  // closes its idle connections
      lane->timer.reset();
      lane->active = false;
      open_lane(*lane);
    } else {
      lane = &new_lane();
    }
    lane->owner = &h;
    h.lanes.push_back(lane);
    return *lane;
  }

  // A lane with nothing in flight that holds another buyer's connections, taken in turn.
  Lane* idle_lane_of_another(const Host& h) {
    for (std::size_t n = 0; n < lanes_.size(); ++n) {
      Lane& lane = lanes_[(next_idle_ + n) % lanes_.size()];
      if (lane.in_flight == 0 && lane.owner != &h) {
        next_idle_ = (lane.index + 1) % lanes_.size();
        return &lane;
      }
    }
    return nullptr;
  }

  // A request goes to a connection when its host has a free slot, else it waits in our queue.
  // Its timeout starts only when it is sent: libcurl would start it when the request joins
  // libcurl's own queue, so a buyer answering in 500 ms behind 1,000 queued requests would be
  // timed out for our queueing, and then paused as unhealthy.
  void admit(std::unique_ptr<Transfer> t) {
    auto [it, added] = hosts_.try_emplace(t->host);
    Host& h = it->second;
    t->state = &h;
    // Plain HTTP, or HTTPS with HTTP/2 off, is HTTP/1.1: nothing to learn first.
    if (added) h.known = !options_.http2 || t->host.rfind("https://", 0) != 0;
    if (h.in_flight < host_limit(h) && h.waiting.empty() && !total_full(h)) {
      start(h, std::move(t));
    } else {
      h.waiting.push_back(std::move(t));
      if (total_full(h)) waiting_for_total_ = true;
    }
  }

  // A slot of `t`'s host came free: send the next requests waiting for it, or for any
  // connection if every host together was at max_connections.
  void release_slot(const Transfer& t) {
    --t.lane->in_flight;
    Host& h = *t.state;
    --h.in_flight;
    if (!h.multiplexed) --connections_in_use_;
    send_waiting(h);
    if (waiting_for_total_ && connections_in_use_ < options_.max_connections) {
      waiting_for_total_ = false;
      for (auto& [key, other] : hosts_) send_waiting(other);
    }
  }

  void send_waiting(Host& h) {
    while (!h.waiting.empty() && h.in_flight < host_limit(h)) {
      if (total_full(h)) {
        waiting_for_total_ = true;
        return;
      }
      std::unique_ptr<Transfer> next = std::move(h.waiting.front());
      h.waiting.pop_front();
      if (expired(*next, clock_.steady_now())) continue;  // answered not sent; takes no slot
      start(h, std::move(next));
    }
  }

  // Fails `t` as not sent if it waited in our queue past its limit.
  bool expired(Transfer& t, SteadyTime now) const {
    const auto limit = outbound::queue_limit(t.request, options_.max_queue_wait);
    if (now - t.submitted < limit) return false;
    finish(t, outbound::not_sent_in_time(limit));
    return true;
  }

  // A request that waited in our queue past its limit fails without having been sent: each
  // host's first here, any other when its turn comes (send_waiting).
  void expire_queued() {
    const auto now = clock_.steady_now();
    for (auto& [key, h] : hosts_) {
      while (!h.waiting.empty() && expired(*h.waiting.front(), now)) h.waiting.pop_front();
    }
  }

  // The loop enforces each request's timeout itself, after reading what the sockets hold;
  // libcurl's own timer is only a safety net behind it.
  void expire_overdue() {
    const auto now = clock_.steady_now();
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      CURL* easy = deadlines_.begin()->second;
      deadlines_.erase(deadlines_.begin());
      auto it = active_.find(easy);
      if (it == active_.end()) continue;
      std::unique_ptr<Transfer> t = std::move(it->second);
      active_.erase(it);
      curl_multi_remove_handle(t->lane->multi, easy);
      t->easy = nullptr;
      recycle(easy);
      HttpResponse r;
      r.timed_out = true;
      r.error = timeout_error(t->request);
      r.stalled_here = last_stall_ >= t->sent;
      release_slot(*t);
      learn_protocol(*t->state, false);  // no answer to learn from: HTTP/1.1 until one says
      finish(*t, std::move(r));
    }
  }

  // Until libcurl's next timer or the next deadline, whichever comes first. (Requests waiting in
  // our queue are looked at at least every kIdlePollMs.)
  SteadyTime::duration poll_timeout(SteadyTime now) const {
    SteadyTime::duration wait = std::chrono::milliseconds(kIdlePollMs);
    if (!deadlines_.empty()) wait = std::min(wait, deadlines_.begin()->first - now);
    const auto real_now = RealClock::now();
    for (const Lane& lane : lanes_) {
      if (lane.timer) wait = std::min(wait, *lane.timer - real_now);
    }
    return std::clamp<SteadyTime::duration>(wait, SteadyTime::duration::zero(),
                                            std::chrono::milliseconds(kIdlePollMs));
  }

  CURL* take_handle() {
    if (!idle_handles_.empty()) {
      CURL* easy = idle_handles_.back();
      idle_handles_.pop_back();
      return easy;
    }
    return curl_easy_init();
  }

  void recycle(CURL* easy) {
    if (easy == nullptr) return;
    if (idle_handles_.size() >= kMaxIdleHandles) {
      curl_easy_cleanup(easy);
      return;
    }
    curl_easy_reset(easy);  // options go; the lanes keep the connections
    idle_handles_.push_back(easy);
  }

  // Configures an easy handle for `t` and hands it to a lane of its host; answers at once if it
  // cannot. Takes one of its host's slots until it is answered.
  void start(Host& h, std::unique_ptr<Transfer> t) {
    const HttpRequest& rq = t->request;
    for (const auto& [name, value] : rq.headers) {
      if (name.empty() || has_line_break(name) || has_line_break(value)) {
        fail(*t, "invalid header");
        return;
      }
    }
    CURL* easy = take_handle();
    if (easy == nullptr) {
      fail(*t, "curl_easy_init failed");
      return;
    }
    t->easy = easy;
    t->sent = clock_.steady_now();
    t->deadline = t->sent + std::max(rq.timeout, std::chrono::milliseconds(1));

    for (const auto& [name, value] : rq.headers) {
      // "Name;" is curl's way of sending a header with an empty value; "Name:" would drop it.
      std::string line = value.empty() ? name + ";" : name + ": " + value;
      t->header_list = curl_slist_append(t->header_list, line.c_str());
    }
    // libcurl would otherwise add "Expect: 100-continue" to larger bodies and wait a round trip.
    if (!has_header(rq.headers, "Expect")) {
      t->header_list = curl_slist_append(t->header_list, "Expect:");
    }

    const long timeout_ms =
        std::max<long>(1, static_cast<long>(rq.timeout.count())) + kCurlTimeoutSlackMs;
    curl_easy_setopt(easy, CURLOPT_URL, rq.url.c_str());
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(kMaxResponseBytes));
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &write_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->error_buffer);
    t->allow_private = options_.allow_private_addresses;
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &open_socket);
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, t.get());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, t->header_list);
    if (share_ != nullptr) curl_easy_setopt(easy, CURLOPT_SHARE, share_);
    // HTTP/2 where TLS negotiates it, when it is on (a new host is asked one request at a time
    // until it has answered: see Host::known).
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION,
                     options_.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "leadflow/0.1");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, options_.verify_tls ? 1L : 0L);
    curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, options_.verify_tls ? 2L : 0L);
    if (!options_.ca_file.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, options_.ca_file.c_str());

    const bool has_body = !rq.body.empty();
    if (rq.method == "GET" && !has_body) {
      curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
    } else if (rq.method == "HEAD") {
      curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
    } else {
      // POST fields carry the body for every method; CUSTOMREQUEST renames the verb if needed.
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(rq.body.size()));
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, rq.body.data());
      if (rq.method != "POST") curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, rq.method.c_str());
    }

    Lane& lane = lane_for(h);
    t->lane = &lane;
    CURLMcode rc = curl_multi_add_handle(lane.multi, easy);
    if (rc != CURLM_OK) {
      t->easy = nullptr;
      t->lane = nullptr;
      recycle(easy);
      fail(*t, std::string("curl_multi_add_handle: ") + curl_multi_strerror(rc));
      return;
    }
    t->deadline_entry = deadlines_.emplace(t->deadline, easy);
    ++lane.in_flight;
    ++h.in_flight;
    if (!h.multiplexed) ++connections_in_use_;
    active_.emplace(easy, std::move(t));
  }

  void collect_finished() {
    for (Lane& lane : lanes_) {
      if (!lane.active) continue;
      lane.active = false;
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(lane.multi, &left)) {
        if (msg->msg == CURLMSG_DONE) finished(lane, msg->easy_handle, msg->data.result);
      }
    }
  }

  void finished(Lane& lane, CURL* easy, CURLcode code) {
    auto it = active_.find(easy);
    curl_multi_remove_handle(lane.multi, easy);
    if (it == active_.end()) {
      recycle(easy);
      return;
    }
    if (send_again_fresh(lane, easy, code, *it->second)) return;
    std::unique_ptr<Transfer> t = std::move(it->second);
    active_.erase(it);
    deadlines_.erase(t->deadline_entry);

    HttpResponse r;
    bool multiplexed = false;
    if (code == CURLE_OK) {
      long status = 0;
      curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
      r.status = static_cast<int>(status);
      r.body = std::move(t->body);
      long version = 0;
      curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &version);
      multiplexed = version == CURL_HTTP_VERSION_2_0;
    } else if (t->refused_address != nullptr) {
      r.not_delivered = true;
      r.error = outbound::refused_address_error(t->refused_address);
    } else if (t->too_large || code == CURLE_FILESIZE_EXCEEDED) {
      r.error = outbound::too_large_error();
    } else {
      std::string detail = t->error_buffer[0] != '\0' ? std::string(t->error_buffer)
                                                      : std::string(curl_easy_strerror(code));
      // Out of descriptors or socket memory here: the request never left this process, and
      // says nothing about the buyer.
      const int e = t->socket_errno;
      r.not_sent = e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM;
      // Before a connection existed nothing can have reached the buyer.
      r.not_delivered = r.not_sent || code == CURLE_COULDNT_CONNECT ||
                        code == CURLE_COULDNT_RESOLVE_HOST || code == CURLE_SSL_CONNECT_ERROR ||
                        code == CURLE_PEER_FAILED_VERIFICATION;
      if (r.not_sent) detail = std::string("no socket for the request: ") + std::strerror(e);
      r.timed_out = code == CURLE_OPERATION_TIMEDOUT;
      r.stalled_here = r.timed_out && last_stall_ >= t->sent;
      // libcurl names the stage its timer fired in ("Failed to resolve host ... with timeout"
      // for a request still waiting for a connection); lead with what happened.
      r.error = r.timed_out ? timeout_error(t->request) + " (" + detail + ")" : std::move(detail);
    }
    t->easy = nullptr;
    recycle(easy);
    release_slot(*t);
    learn_protocol(*t->state, multiplexed);
    finish(*t, std::move(r));
  }

  // A request that failed while being written to a kept connection, which the server closed
  // while idle (libcurl 7.88 takes its TLS close_notify for a live one), cannot have been read
  // whole: sent once more on a new connection, within its deadline (docs/outbound.md).
  bool send_again_fresh(Lane& lane, CURL* easy, CURLcode code, Transfer& t) {
    if (code != CURLE_SEND_ERROR || t.sent_again || t.too_large) return false;
    long connects = 0;
    if (curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects) != CURLE_OK || connects != 0)
      return false;
    if (clock_.steady_now() >= t.deadline) return false;
    t.sent_again = true;
    t.body.clear();
    t.error_buffer[0] = '\0';
    curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
    return curl_multi_add_handle(lane.multi, easy) == CURLM_OK;
  }

  // An exchange with the host ended. Over HTTP/2 its streams share connections from now on, and
  // no longer count against max_connections one by one; either way, what waited for its first
  // answer may go.
  void learn_protocol(Host& h, bool multiplexed) {
    if (h.known && (h.multiplexed || !multiplexed)) return;
    h.known = true;
    if (multiplexed) {
      connections_in_use_ -= h.in_flight;
      h.multiplexed = true;
    }
    send_waiting(h);
  }

  void fail(Transfer& t, std::string error) const {
    HttpResponse r;
    r.error = std::move(error);
    finish(t, std::move(r));
  }

  void finish(Transfer& t, HttpResponse r) const {
    // What the buyer took: from when the request was sent (nothing if it never was).
    if (t.sent == SteadyTime{}) {
      r.not_sent = true;
    } else {
      r.elapsed =
          std::chrono::duration_cast<std::chrono::microseconds>(clock_.steady_now() - t.sent);
    }
    if (!t.done) return;
    try {
      t.done(std::move(r));
    } catch (...) {
      // A callback must not throw; if one does, the loop still has other requests to serve.
    }
  }

  const CurlClientOptions options_;
  const Clock& clock_ = options_.clock != nullptr ? *options_.clock : SystemClock::instance();

  std::mutex mutex_;
  std::deque<std::unique_ptr<Transfer>> queue_;  // guarded by mutex_
  bool stopping_ = false;                        // guarded by mutex_
  outbound::OldestUnsent unsent_;

  // Loop thread only.
  std::deque<Lane> lanes_;     // a deque: a lane's address is its libcurl timer data
  std::size_t next_idle_ = 0;  // where the next look for an idle lane to close starts
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> active_;
  std::multimap<SteadyTime, CURL*> deadlines_;  // every transfer in active_, by deadline
  std::vector<CURL*> idle_handles_;
  // Every buyer host seen, kept with its lanes (and their idle keep-alive connections).
  std::unordered_map<std::string, Host> hosts_;
  long connections_in_use_ = 0;
  bool waiting_for_total_ = false;  // a request waits because max_connections are in use
  CURLSH* share_ = nullptr;
  // The epoll set, and the eventfd that send() and the destructor wake it with.
  outbound::LoopFds fds_{kWakeTag};
  RealClock::time_point turn_start_ = RealClock::now();
  SteadyTime last_stall_{};

  std::thread loop_;  // last: starts after everything above exists
};

}  // namespace

std::string libcurl_version() {
  const curl_version_info_data* v = curl_version_info(CURLVERSION_NOW);
  return v != nullptr && v->version != nullptr ? v->version : "";
}

std::unique_ptr<HttpClient> make_curl_client(const CurlClientOptions& options) {
  return std::make_unique<CurlClient>(options);
}

}  // namespace leadflow
