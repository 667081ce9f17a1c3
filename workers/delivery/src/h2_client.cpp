// HTTP/2 to HTTPS buyers on nghttp2, driven by socket events: one event-loop thread owns every
// connection (a TLS stream and an nghttp2 client session) and an epoll set of their sockets;
// other threads only push onto a locked queue and wake the loop through an eventfd, and names
// are resolved on a thread of their own. libcurl 7.88 loses part of the HTTP/2 streams it runs
// in parallel, so this transport speaks HTTP/2 itself and leaves libcurl the HTTP/1.1 buyers.
//
// A request is "sent" when it is given to a connection: submitted as a stream on a ready one, or
// held by one still being made (its timeout covers the connect and the handshake, as libcurl's
// does). Until then it waits in its host's queue with no timeout running.
#include "leadflow/delivery/http_client.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "host_resolver.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/domain/address_policy.hpp"
#include "outbound_common.hpp"
#include "tls_stream.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
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

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using outbound::kShutDownError;

// Streams per connection at most, whatever the buyer allows: a connection's streams share one
// TCP window and one TLS stream, so past this another connection is cheaper than a longer queue.
constexpr std::size_t kMaxStreamsPerConnection = 100;
// Times a request the buyer refused unprocessed is sent again (see H2Client::replay).
constexpr int kMaxReplays = 2;
// An idle connection is kept this long for the next burst, then closed.
constexpr auto kIdleTimeout = 60s;
// Resolved addresses are reused this long before the name is looked up again.
constexpr auto kAddressTtl = 60s;
// A connection not ready (resolved, connected, TLS done) within this is given up; the requests
// it held have timed out long before.
constexpr auto kConnectTimeout = 10s;
// How often idle connections, stuck connects and long queue waits are looked at.
constexpr auto kHousekeeping = 250ms;
constexpr int kIdlePollMs = 1000;
constexpr int kMaxEvents = 512;
constexpr std::size_t kReadChunk = 64 * 1024;
// Bytes nghttp2 is asked for before they are handed to TLS in one write.
constexpr std::size_t kWriteBatch = 64 * 1024;
// Flow-control windows we grant the buyer: a whole capped answer per stream, and room for many
// streams at once per connection, so no answer waits on a WINDOW_UPDATE round trip.
constexpr std::uint32_t kStreamWindow = outbound::kMaxResponseBytes;
constexpr std::int32_t kConnectionWindow = 32 << 20;
constexpr std::uint64_t kWakeTag = 0;
constexpr const char* kUserAgent = "leadflow/0.1";

class H2Client;
struct Host;
struct Connection;

/// One request from send() to its answer. Owned by the queue, its host's waiting list, then the
/// connection carrying it (until its stream closes, even if it was answered by a timeout before,
/// since nghttp2 may still read its body).
struct Exchange {
  HttpRequest request;
  std::function<void(HttpResponse)> done;
  std::string authority;  // host[:port] as the URL says it
  std::string path;       // path and query, "/" at least
  Host* host = nullptr;
  Connection* connection = nullptr;
  std::int32_t stream_id = -1;  // once submitted
  Clock::time_point submitted;
  Clock::time_point sent{};  // given to a connection; the timeout runs from here
  std::multimap<Clock::time_point, Exchange*>::iterator deadline;
  bool has_deadline = false;
  std::size_t body_offset = 0;  // of the request body, handed to nghttp2 so far
  int status = 0;
  std::string body;
  bool too_large = false;
  bool answered = false;  // done() ran (a timeout): the stream only waits for its close
  int replays = 0;        // times the buyer refused it unprocessed and it was sent again
};

/// One TLS connection to a buyer host and its HTTP/2 session. Owned by its host.
struct Connection {
  enum class State { kResolving, kConnecting, kReady };
  H2Client* client = nullptr;
  Host* host = nullptr;
  std::uint64_t tag = 0;  // its epoll data
  State state = State::kResolving;
  std::unique_ptr<TlsStream> tls;
  nghttp2_session* session = nullptr;
  std::size_t next_address = 0;
  const char* refused = nullptr;  // an address the policy refused
  std::string connect_error;      // why the last address tried failed
  bool out_of_sockets = false;    // no descriptor for it: nothing left this process
  Clock::time_point opened;
  Clock::time_point idle_since;
  std::deque<std::unique_ptr<Exchange>> pending;  // given to it before it was ready
  std::unordered_map<std::int32_t, std::unique_ptr<Exchange>> streams;
  bool goaway = false;  // the buyer said no new streams
  std::int32_t goaway_last_stream = 0;
  bool dead = false;  // to be closed by reap(); error says why ("" when nothing failed)
  std::string error;
  std::string out;  // bytes from nghttp2 not yet taken by TLS
  std::size_t out_offset = 0;
  std::uint32_t watching = 0;  // epoll events asked for
};

/// A buyer endpoint (https://host:port): its connections, its queue, what it speaks.
struct Host {
  enum class Protocol { kUnknown, kHttp2, kHttp1 };
  std::string key;
  std::string name;  // for DNS, SNI and the certificate check
  std::string port;
  Protocol protocol = Protocol::kUnknown;
  std::deque<std::unique_ptr<Exchange>> waiting;
  std::vector<std::unique_ptr<Connection>> connections;
  std::vector<ResolvedAddress> addresses;
  Clock::time_point resolved_at{};
  bool resolving = false;
};

struct Target {
  std::string key;
  std::string name;
  std::string port;
  std::string authority;
  std::string path;
};

// https://host[:port][/path][?query]; nullopt for anything else (libcurl then says what is wrong).
std::optional<Target> parse_https_url(const std::string& url) {
  constexpr std::string_view kScheme = "https://";
  if (url.size() <= kScheme.size() || !iequals(url.substr(0, kScheme.size()), kScheme)) {
    return std::nullopt;
  }
  const std::string_view rest = std::string_view(url).substr(kScheme.size());
  const auto end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, end);
  if (authority.empty() || authority.find_first_of("@ \t\r\n") != std::string_view::npos) {
    return std::nullopt;
  }
  Target t;
  t.key = outbound::host_key(url);
  t.authority = std::string(authority);
  std::string_view port;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    t.name = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::nullopt;
      port = after.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    t.name = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    if (t.name.empty()) return std::nullopt;
  }
  if (port.empty()) port = "443";
  if (!all_digits(port) || port.size() > 5) return std::nullopt;
  t.port = std::string(port);
  std::string_view path = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  path = path.substr(0, path.find('#'));
  t.path = path.empty() || path.front() != '/' ? "/" + std::string(path) : std::string(path);
  return t;
}

// Connection-specific fields HTTP/2 forbids (RFC 9113 8.2.2), and those the transport sets itself.
bool dropped_header(std::string_view lower) {
  return lower == "connection" || lower == "keep-alive" || lower == "proxy-connection" ||
         lower == "transfer-encoding" || lower == "upgrade" || lower == "host" || lower == "te" ||
         lower == "expect" || lower == "content-length";
}

nghttp2_nv field(std::string_view name, std::string_view value) {
  // nghttp2 copies names and values on submit (no NO_COPY flags), so views of temporaries do.
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
          value.size(), NGHTTP2_NV_FLAG_NONE};
}

class H2Client final : public HttpClient {
 public:
  H2Client(const CurlClientOptions& options, HttpClient& http1)
      : options_(options), http1_(http1), tls_(options.verify_tls, options.ca_file) {
    outbound::ignore_sigpipe_once();
    if (nghttp2_session_callbacks_new(&callbacks_) != 0) {
      throw std::runtime_error("nghttp2_session_callbacks_new failed");
    }
    nghttp2_session_callbacks_set_on_header_callback(callbacks_, &H2Client::on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks_, &H2Client::on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks_, &H2Client::on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks_, &H2Client::on_close);
    resolver_ = std::make_unique<HostResolver>([this](Resolution r) {
      {
        std::lock_guard lock(mutex_);
        resolved_.push_back(std::move(r));
      }
      wake();
    });
    loop_ = std::thread([this] { run(); });
  }

  ~H2Client() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake();
    loop_.join();
    resolver_.reset();  // its callback wakes the loop: gone before the eventfd
    nghttp2_session_callbacks_del(callbacks_);
  }

  using HttpClient::send;

  void send(HttpRequest request, std::function<void(HttpResponse)> done) override {
    auto ex = std::make_unique<Exchange>();
    ex->request = std::move(request);
    ex->done = std::move(done);
    ex->submitted = Clock::now();
    {
      std::lock_guard lock(mutex_);
      if (!stopping_) incoming_.push_back(std::move(ex));
    }
    if (ex) {  // refused: the client is shutting down; answer on the caller's thread
      fail(*ex, kShutDownError);
      return;
    }
    wake();
  }

 private:
  // ---- nghttp2's callbacks: the session's user data is its Connection ----

  static Exchange* exchange_of(void* user, std::int32_t stream_id) {
    auto* c = static_cast<Connection*>(user);
    auto it = c->streams.find(stream_id);
    return it == c->streams.end() ? nullptr : it->second.get();
  }

  static int on_header(nghttp2_session* /*session*/, const nghttp2_frame* frame,
                       const std::uint8_t* name, std::size_t name_length, const std::uint8_t* value,
                       std::size_t value_length, std::uint8_t /*flags*/, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    Exchange* ex = exchange_of(user, frame->hd.stream_id);
    if (ex == nullptr || name_length != 7 || std::memcmp(name, ":status", 7) != 0) return 0;
    // A 1xx comes before the final answer, whose :status replaces it.
    int status = 0;
    const char* first = reinterpret_cast<const char*>(value);
    std::from_chars(first, first + value_length, status);
    ex->status = status;
    return 0;
  }

  static int on_data(nghttp2_session* session, std::uint8_t /*flags*/, std::int32_t stream_id,
                     const std::uint8_t* data, std::size_t length, void* user) {
    Exchange* ex = exchange_of(user, stream_id);
    if (ex == nullptr || ex->answered || ex->too_large) return 0;
    if (ex->body.size() + length > outbound::kMaxResponseBytes) {
      ex->too_large = true;
      ex->body.clear();
      nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
      return 0;
    }
    ex->body.append(reinterpret_cast<const char*>(data), length);
    return 0;
  }

  static int on_frame(nghttp2_session* /*session*/, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type == NGHTTP2_GOAWAY) {
      // No new streams here; nghttp2 closes those above last_stream_id as refused (never
      // processed), and the rest may still be answered.
      auto* c = static_cast<Connection*>(user);
      c->goaway = true;
      c->goaway_last_stream = frame->goaway.last_stream_id;
    }
    return 0;
  }

  static int on_close(nghttp2_session* /*session*/, std::int32_t stream_id,
                      std::uint32_t error_code, void* user) {
    auto* c = static_cast<Connection*>(user);
    c->client->stream_closed(*c, stream_id, error_code);
    return 0;
  }

  static ssize_t read_body(nghttp2_session* /*session*/, std::int32_t /*stream_id*/,
                           std::uint8_t* buffer, std::size_t length, std::uint32_t* flags,
                           nghttp2_data_source* source, void* /*user*/) {
    auto* ex = static_cast<Exchange*>(source->ptr);
    const std::string& body = ex->request.body;
    const std::size_t n = std::min(length, body.size() - ex->body_offset);
    std::memcpy(buffer, body.data() + ex->body_offset, n);
    ex->body_offset += n;
    if (ex->body_offset == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  void stream_closed(Connection& c, std::int32_t stream_id, std::uint32_t error_code) {
    auto it = c.streams.find(stream_id);
    if (it == c.streams.end()) return;
    std::unique_ptr<Exchange> ex = std::move(it->second);
    c.streams.erase(it);
    if (c.streams.empty() && c.pending.empty()) c.idle_since = Clock::now();
    if (ex->answered) return;
    if (error_code == NGHTTP2_REFUSED_STREAM || (c.goaway && stream_id > c.goaway_last_stream)) {
      if (replay(ex)) return;
    }
    clear_deadline(*ex);
    HttpResponse r;
    if (ex->too_large) {
      r.error = outbound::too_large_error();
    } else if (error_code != NGHTTP2_NO_ERROR) {
      // REFUSED_STREAM, or a stream past a GOAWAY's last one: the buyer says it never processed
      // it, so the auction may ask the next buyer.
      r.not_delivered =
          error_code == NGHTTP2_REFUSED_STREAM || (c.goaway && stream_id > c.goaway_last_stream);
      // A reset may be the buyer's or nghttp2's own (an answer breaking HTTP/2's rules).
      r.error = std::string(r.not_delivered ? "stream refused by the buyer: " : "stream reset: ") +
                nghttp2_http2_strerror(error_code);
    } else if (ex->status < 200) {
      r.error = "stream closed without an answer";
    } else {
      r.status = ex->status;
      r.body = std::move(ex->body);
    }
    finish(*ex, std::move(r));
  }

  // ---- the loop ----

  void wake() { fds_.wake(); }

  void run() {
    std::vector<epoll_event> events(kMaxEvents);
    for (;;) {
      std::deque<std::unique_ptr<Exchange>> incoming;
      std::deque<Resolution> resolved;
      bool stopping = false;
      {
        std::lock_guard lock(mutex_);
        incoming.swap(incoming_);
        resolved.swap(resolved_);
        stopping = stopping_;
      }
      if (stopping) {
        for (auto& ex : incoming) fail(*ex, kShutDownError);
        break;
      }
      for (auto& r : resolved) on_resolved(std::move(r));
      for (auto& ex : incoming) admit(std::move(ex));
      reap();

      // Sleep until a socket is ready, a wake-up, the next deadline or housekeeping.
      const auto turn_end = Clock::now();
      note_lag(turn_end - turn_start_);
      const auto wait = poll_timeout(turn_end);
      const int n = outbound::wait_for_events(fds_.epoll(), events, wait);
      turn_start_ = Clock::now();
      if (n == 0) note_lag(turn_start_ - (turn_end + wait));
      take_ready(events, n);
      reap();
      if (!deadlines_.empty() && deadlines_.begin()->first <= Clock::now()) {
        // Every answer already in a socket is read before a deadline is enforced: the work
        // above may have taken a while, so look at the sockets once more first.
        take_ready(events, ::epoll_wait(fds_.epoll(), events.data(), kMaxEvents, 0));
        reap();
        note_lag(Clock::now() - turn_start_);
        expire_overdue();
        reap();
      }
      if (Clock::now() >= next_housekeeping_) {
        housekeeping();
        reap();
      }
    }
    shut_down();
  }

  void take_ready(std::vector<epoll_event>& events, int n) {
    outbound::take_ready(fds_.epoll(), events, n, [this](const epoll_event& ev) { on_ready(ev); });
  }

  void on_ready(const epoll_event& ev) {
    if (ev.data.u64 == kWakeTag) {
      fds_.drain_wakeup();
      return;
    }
    auto it = by_tag_.find(ev.data.u64);
    if (it == by_tag_.end() || it->second->dead) return;
    Connection& c = *it->second;
    if (c.state == Connection::State::kConnecting) {
      advance_handshake(c);
      return;
    }
    if (c.state != Connection::State::kReady) return;
    if ((ev.events & (EPOLLIN | EPOLLERR | EPOLLHUP)) != 0) read_from(c);
    if (c.dead) return;
    dispatch(*c.host);
    flush(c);
  }

  void note_lag(Clock::duration late) {
    if (late >= outbound::kStall) last_stall_ = Clock::now();
  }

  Clock::duration poll_timeout(Clock::time_point now) const {
    auto next = std::min(now + std::chrono::milliseconds(kIdlePollMs), next_housekeeping_);
    if (!deadlines_.empty()) next = std::min(next, deadlines_.begin()->first);
    return std::clamp<Clock::duration>(next - now, Clock::duration::zero(),
                                       std::chrono::milliseconds(kIdlePollMs));
  }

  // ---- requests ----

  void admit(std::unique_ptr<Exchange> ex) {
    std::optional<Target> target = parse_https_url(ex->request.url);
    if (!target) {  // libcurl says what is wrong with it, as it would have without HTTP/2
      http1_.send(std::move(ex->request), std::move(ex->done));
      return;
    }
    for (const auto& [name, value] : ex->request.headers) {
      if (name.empty() || outbound::has_line_break(name) || outbound::has_line_break(value)) {
        fail(*ex, "invalid header");
        return;
      }
    }
    auto [it, added] = hosts_.try_emplace(target->key);
    Host& h = it->second;
    if (added) {
      h.key = target->key;
      h.name = ascii_lower(target->name);
      h.port = target->port;
    }
    ex->authority = std::move(target->authority);
    ex->path = std::move(target->path);
    ex->host = &h;
    if (h.protocol == Host::Protocol::kHttp1) {
      forward(std::move(ex));
      return;
    }
    h.waiting.push_back(std::move(ex));
    dispatch(h);
  }

  // Gives the host's waiting requests to connections with room, opening connections as allowed.
  void dispatch(Host& h) {
    if (h.protocol == Host::Protocol::kHttp1) {
      while (!h.waiting.empty()) {
        std::unique_ptr<Exchange> ex = std::move(h.waiting.front());
        h.waiting.pop_front();
        forward(std::move(ex));
      }
      return;
    }
    std::vector<Connection*> touched;
    while (!h.waiting.empty()) {
      Connection* c = nullptr;
      for (auto& candidate : h.connections) {
        if (room(*candidate) > 0) {
          c = candidate.get();
          break;
        }
      }
      if (c == nullptr) {
        if (!may_open(h)) break;
        c = &open_connection(h);
        if (room(*c) == 0) break;  // failed at once; reap() fails or retries what waits
      }
      std::unique_ptr<Exchange> ex = std::move(h.waiting.front());
      h.waiting.pop_front();
      assign(*c, std::move(ex));
      if (c->state == Connection::State::kReady &&
          std::find(touched.begin(), touched.end(), c) == touched.end()) {
        touched.push_back(c);
      }
    }
    for (Connection* c : touched) flush(*c);
  }

  static std::size_t stream_limit(const Connection& c) {
    if (c.session == nullptr) return kMaxStreamsPerConnection;
    const std::uint32_t peer =
        nghttp2_session_get_remote_settings(c.session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
    return std::min<std::size_t>(peer, kMaxStreamsPerConnection);
  }

  static std::size_t room(const Connection& c) {
    if (c.dead || c.goaway) return 0;
    const std::size_t used = c.pending.size() + c.streams.size();
    const std::size_t limit = stream_limit(c);
    return used >= limit ? 0 : limit - used;
  }

  // Another connection, when every one is full. Until a first handshake says whether the host
  // speaks HTTP/2, one at a time: a burst to a new host shares one TLS handshake, not thirty.
  bool may_open(const Host& h) const {
    if (h.connections.size() >=
        static_cast<std::size_t>(std::max(1L, options_.max_host_connections))) {
      return false;
    }
    for (const auto& c : h.connections) {
      if (c->dead || h.protocol == Host::Protocol::kUnknown) return false;
    }
    return true;
  }

  void assign(Connection& c, std::unique_ptr<Exchange> ex) {
    ex->connection = &c;
    if (!ex->has_deadline) {  // a replay keeps the deadline of its first sending
      ex->sent = Clock::now();
      ex->deadline = deadlines_.emplace(
          ex->sent + std::max(ex->request.timeout, std::chrono::milliseconds(1)), ex.get());
      ex->has_deadline = true;
    }
    if (c.state == Connection::State::kReady) {
      submit(c, std::move(ex));
    } else {
      c.pending.push_back(std::move(ex));
    }
  }

  void submit(Connection& c, std::unique_ptr<Exchange> ex) {
    const HttpRequest& rq = ex->request;
    std::vector<std::string> names;
    names.reserve(rq.headers.size());
    std::vector<nghttp2_nv> fields;
    fields.reserve(rq.headers.size() + 6);
    fields.push_back(field(":method", rq.method));
    fields.push_back(field(":scheme", "https"));
    fields.push_back(field(":authority", ex->authority));
    fields.push_back(field(":path", ex->path));
    bool has_user_agent = false;
    for (const auto& [name, value] : rq.headers) {
      // HTTP/2 field names are lower case; a buyer may reject any other.
      std::string& lower = names.emplace_back(ascii_lower(name));
      if (dropped_header(lower)) continue;
      has_user_agent = has_user_agent || lower == "user-agent";
      fields.push_back(field(lower, value));
    }
    if (!has_user_agent) fields.push_back(field("user-agent", kUserAgent));
    const bool bodyless = rq.body.empty() && (rq.method == "GET" || rq.method == "HEAD");
    const std::string length = std::to_string(rq.body.size());
    if (!bodyless) fields.push_back(field("content-length", length));

    nghttp2_data_provider provider{};
    provider.source.ptr = ex.get();
    provider.read_callback = &H2Client::read_body;
    const std::int32_t id = nghttp2_submit_request(c.session, nullptr, fields.data(), fields.size(),
                                                   rq.body.empty() ? nullptr : &provider, nullptr);
    if (id < 0) {
      clear_deadline(*ex);
      if (id == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE || id == NGHTTP2_ERR_START_STREAM_NOT_ALLOWED) {
        // This connection takes no more streams; the request was not sent, and goes first again.
        c.goaway = true;
        ex->sent = {};
        ex->connection = nullptr;
        ex->host->waiting.push_front(std::move(ex));
        return;
      }
      HttpResponse r;
      r.not_delivered = true;
      r.error = std::string("could not start a stream: ") + nghttp2_strerror(id);
      finish(*ex, std::move(r));
      return;
    }
    ex->stream_id = id;
    c.streams.emplace(id, std::move(ex));
  }

  // A stream the buyer refused unprocessed (REFUSED_STREAM, or past its GOAWAY's last stream)
  // may be sent again on another connection (RFC 9113 §8.7): a server that closes a connection
  // gracefully, as nginx does after keepalive_requests, refuses the streams still arriving, and
  // the buyer did nothing wrong. Up to kMaxReplays times, within the request's own deadline,
  // before it fails as not delivered. The host is dispatched again by reap().
  bool replay(std::unique_ptr<Exchange>& ex) {
    if (ex->replays >= kMaxReplays || !ex->has_deadline || ex->deadline->first <= Clock::now())
      return false;
    ++ex->replays;
    ex->connection = nullptr;
    ex->stream_id = -1;
    ex->body_offset = 0;
    ex->status = 0;
    ex->body.clear();
    Host& h = *ex->host;
    h.waiting.push_front(std::move(ex));
    if (std::find(replayed_.begin(), replayed_.end(), &h) == replayed_.end())
      replayed_.push_back(&h);
    return true;
  }

  // To libcurl, unchanged: the host answered ALPN without h2, and nothing of it was sent.
  void forward(std::unique_ptr<Exchange> ex) {
    clear_deadline(*ex);
    http1_.send(std::move(ex->request), std::move(ex->done));
  }

  void clear_deadline(Exchange& ex) {
    if (!ex.has_deadline) return;
    deadlines_.erase(ex.deadline);
    ex.has_deadline = false;
  }

  // A request's timeout, enforced after the sockets were read: a stream is cancelled
  // (RST_STREAM CANCEL) and its connection keeps serving the others.
  void expire_overdue() {
    const auto now = Clock::now();
    std::vector<Connection*> touched;
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      Exchange* ex = deadlines_.begin()->second;
      deadlines_.erase(deadlines_.begin());
      ex->has_deadline = false;
      HttpResponse r;
      r.timed_out = true;
      r.error = outbound::timeout_error(ex->request);
      r.stalled_here = last_stall_ >= ex->sent;
      if (ex->connection == nullptr) {
        // Refused unprocessed and waiting to be sent again: the buyer acted on none of it.
        auto& waiting = ex->host->waiting;
        auto it = std::find_if(waiting.begin(), waiting.end(),
                               [ex](const auto& w) { return w.get() == ex; });
        if (it == waiting.end()) continue;
        std::unique_ptr<Exchange> owned = std::move(*it);
        waiting.erase(it);
        r.not_delivered = true;
        finish(*owned, std::move(r));
        continue;
      }
      Connection& c = *ex->connection;
      if (ex->stream_id > 0) {
        ex->answered = true;
        finish(*ex, std::move(r));
        nghttp2_submit_rst_stream(c.session, NGHTTP2_FLAG_NONE, ex->stream_id, NGHTTP2_CANCEL);
        if (std::find(touched.begin(), touched.end(), &c) == touched.end()) touched.push_back(&c);
        continue;
      }
      // Still waiting for its connection to be made: the buyer cannot have seen it.
      auto it = std::find_if(c.pending.begin(), c.pending.end(),
                             [ex](const auto& p) { return p.get() == ex; });
      if (it == c.pending.end()) continue;
      std::unique_ptr<Exchange> owned = std::move(*it);
      c.pending.erase(it);
      r.not_delivered = true;
      r.error += " (" + describe_unready(c) + ")";
      finish(*owned, std::move(r));
    }
    for (Connection* c : touched) flush(*c);
    for (Connection* c : touched) {
      if (!c->dead) dispatch(*c->host);
    }
  }

  static std::string describe_unready(const Connection& c) {
    switch (c.state) {
      case Connection::State::kResolving:
        return "resolving " + c.host->name;
      case Connection::State::kConnecting:
        return c.tls != nullptr && c.tls->failed_in_connect()
                   ? "connecting to " + c.host->name + " port " + c.host->port
                   : "TLS handshake with " + c.host->name;
      case Connection::State::kReady:
        break;
    }
    return "connection not ready";
  }

  void housekeeping() {
    const auto now = Clock::now();
    next_housekeeping_ = now + kHousekeeping;
    for (auto& [key, h] : hosts_) {
      while (!h.waiting.empty() && now - h.waiting.front()->submitted >= options_.max_queue_wait) {
        std::unique_ptr<Exchange> ex = std::move(h.waiting.front());
        h.waiting.pop_front();
        HttpResponse r;
        r.not_sent = r.not_delivered = true;
        r.error = "not sent: no connection to the buyer came free within " +
                  std::to_string(options_.max_queue_wait.count()) + " ms";
        finish(*ex, std::move(r));
      }
      for (auto& c : h.connections) {
        if (c->dead) continue;
        if (c->state != Connection::State::kReady) {
          if (now - c->opened >= kConnectTimeout) {
            mark_dead(
                *c,
                describe_unready(*c) + " timed out after " +
                    std::to_string(
                        std::chrono::duration_cast<std::chrono::seconds>(kConnectTimeout).count()) +
                    " s");
          }
          continue;
        }
        if (c->streams.empty() && c->pending.empty() &&
            (c->goaway || now - c->idle_since >= kIdleTimeout)) {
          mark_dead(*c, "");
        }
      }
    }
  }

  // ---- connections ----

  Connection& open_connection(Host& h) {
    auto owned = std::make_unique<Connection>();
    Connection& c = *owned;
    c.client = this;
    c.host = &h;
    c.tag = next_tag_++;
    c.opened = c.idle_since = Clock::now();
    by_tag_.emplace(c.tag, &c);
    h.connections.push_back(std::move(owned));
    if (!h.addresses.empty() && c.opened - h.resolved_at < kAddressTtl) {
      start_connect(c);
    } else if (!h.resolving) {
      h.resolving = true;
      resolver_->resolve(h.key, h.name, h.port);
    }
    return c;
  }

  void on_resolved(Resolution r) {
    auto it = hosts_.find(r.key);
    if (it == hosts_.end()) return;
    Host& h = it->second;
    h.resolving = false;
    if (!r.error.empty()) {
      h.addresses.clear();
      for (auto& c : h.connections) {
        if (!c->dead && c->state == Connection::State::kResolving) {
          mark_dead(*c, "could not resolve host: " + h.name + " (" + r.error + ")");
        }
      }
      return;
    }
    h.addresses = std::move(r.addresses);
    h.resolved_at = Clock::now();
    for (auto& c : h.connections) {
      if (!c->dead && c->state == Connection::State::kResolving) start_connect(*c);
    }
  }

  // Connects to the next address the policy allows; a buyer's name was public when it was
  // saved, but may resolve elsewhere now (DNS rebinding), so every address is checked here.
  void start_connect(Connection& c) {
    const Host& h = *c.host;
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
      c.state = Connection::State::kConnecting;
      watch(c, EPOLLOUT);
      return;
    }
    if (c.refused != nullptr && c.connect_error.empty()) {
      mark_dead(c, outbound::refused_address_error(c.refused));
    } else if (c.out_of_sockets) {
      mark_dead(c, c.connect_error);
    } else {
      mark_dead(c, "could not connect to " + h.name + " port " + h.port + ": " +
                       (c.connect_error.empty() ? "no address" : c.connect_error));
    }
  }

  void advance_handshake(Connection& c) {
    switch (c.tls->handshake()) {
      case TlsStream::Io::kDone:
        tls_ready(c);
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
      unwatch(c);
      c.tls.reset();
      start_connect(c);
      return;
    }
    const std::string& why = c.tls->error();
    mark_dead(c, why.rfind("TLS certificate", 0) == 0
                     ? why
                     : "TLS handshake with " + c.host->name + " failed: " + why);
  }

  void tls_ready(Connection& c) {
    Host& h = *c.host;
    const std::string alpn = c.tls->alpn();
    if (alpn != "h2") {
      // HTTP/1.1 (or no ALPN at all): libcurl speaks to this host from now on. What this
      // connection held was never written to it, so it goes to libcurl as it came.
      if (h.protocol != Host::Protocol::kHttp1) {
        h.protocol = Host::Protocol::kHttp1;
        log(LogLevel::kInfo, "buyer_http1_only",
            {{"host", h.key}, {"alpn", alpn.empty() ? "none" : alpn}});
      }
      while (!c.pending.empty()) {
        std::unique_ptr<Exchange> ex = std::move(c.pending.front());
        c.pending.pop_front();
        forward(std::move(ex));
      }
      mark_dead(c, "");
      return;
    }
    if (nghttp2_session_client_new(&c.session, callbacks_, &c) != 0) {
      c.session = nullptr;
      mark_dead(c, "nghttp2_session_client_new failed");
      return;
    }
    const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
    };
    nghttp2_submit_settings(c.session, NGHTTP2_FLAG_NONE, settings, std::size(settings));
    nghttp2_session_set_local_window_size(c.session, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
    h.protocol = Host::Protocol::kHttp2;
    c.state = Connection::State::kReady;
    c.idle_since = Clock::now();
    std::deque<std::unique_ptr<Exchange>> pending = std::move(c.pending);
    c.pending.clear();
    for (auto& ex : pending) submit(c, std::move(ex));
    // The buyer's SETTINGS may have come with the handshake's last bytes, already read by TLS.
    read_from(c);
    if (c.dead) return;
    dispatch(h);
    flush(c);
  }

  void read_from(Connection& c) {
    for (;;) {
      std::size_t n = 0;
      const TlsStream::Io io = c.tls->read(read_buffer_.data(), read_buffer_.size(), &n);
      if (io == TlsStream::Io::kWantRead || io == TlsStream::Io::kWantWrite) return;
      if (io != TlsStream::Io::kDone) {
        mark_dead(c, c.tls->error());
        return;
      }
      const ssize_t rv = nghttp2_session_mem_recv(
          c.session, reinterpret_cast<const std::uint8_t*>(read_buffer_.data()), n);
      if (rv < 0) {
        mark_dead(c, std::string("HTTP/2 error: ") + nghttp2_strerror(static_cast<int>(rv)));
        return;
      }
    }
  }

  // Hands TLS what nghttp2 has to send, until the socket takes no more.
  void flush(Connection& c) {
    if (c.dead || c.session == nullptr) return;
    for (;;) {
      if (c.out_offset == c.out.size()) {
        c.out.clear();
        c.out_offset = 0;
        while (c.out.size() < kWriteBatch) {
          const std::uint8_t* data = nullptr;
          const ssize_t n = nghttp2_session_mem_send(c.session, &data);
          if (n < 0) {
            mark_dead(c, std::string("HTTP/2 error: ") + nghttp2_strerror(static_cast<int>(n)));
            return;
          }
          if (n == 0) break;
          c.out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
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
      mark_dead(c, c.tls->error());
      return;
    }
    const bool unsent = c.out_offset < c.out.size();
    watch(c, EPOLLIN | (unsent ? EPOLLOUT : 0u));
    if (!unsent && nghttp2_session_want_read(c.session) == 0 &&
        nghttp2_session_want_write(c.session) == 0) {
      mark_dead(c, c.streams.empty() ? "" : "connection finished");  // both sides said GOAWAY
    }
  }

  void watch(Connection& c, std::uint32_t events) {
    if (c.tls == nullptr || c.tls->fd() < 0 || c.watching == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = c.tag;
    ::epoll_ctl(fds_.epoll(), c.watching == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, c.tls->fd(), &ev);
    c.watching = events;
  }

  void unwatch(Connection& c) {
    if (c.tls != nullptr && c.watching != 0) {
      ::epoll_ctl(fds_.epoll(), EPOLL_CTL_DEL, c.tls->fd(), nullptr);
    }
    c.watching = 0;
  }

  // Connections are closed only here, between events, so nothing above ever holds one that is
  // gone. `error` is "" when nothing on it failed (idle, handed to libcurl, finished).
  void mark_dead(Connection& c, std::string error) {
    if (c.dead) return;
    c.dead = true;
    c.error = std::move(error);
    dead_.push_back(&c);
  }

  void reap() {
    while (!dead_.empty()) {
      Connection* c = dead_.front();
      dead_.pop_front();
      Host& h = *c->host;
      close_connection(*c);
      dispatch(h);
    }
    while (!replayed_.empty()) {
      Host* h = replayed_.back();
      replayed_.pop_back();
      dispatch(*h);
    }
  }

  void close_connection(Connection& c) {
    Host& h = *c.host;
    unwatch(c);
    by_tag_.erase(c.tag);
    const bool reached = c.state == Connection::State::kReady;
    auto pending = std::move(c.pending);
    auto streams = std::move(c.streams);
    c.pending.clear();
    c.streams.clear();
    if (c.session != nullptr) nghttp2_session_del(c.session);
    c.session = nullptr;
    c.tls.reset();
    const std::string error = c.error.empty() ? "connection closed" : c.error;

    // Given to a connection never made: nothing reached the buyer.
    for (auto& ex : pending) {
      clear_deadline(*ex);
      if (c.out_of_sockets) ex->sent = {};  // it never left this process
      HttpResponse r;
      r.not_delivered = true;
      r.error = error;
      finish(*ex, std::move(r));
    }
    // Streams on a connection that died may have been acted on, unless the buyer's GOAWAY said
    // it would not process them.
    for (auto& [id, ex] : streams) {
      if (ex->answered) continue;
      if (c.goaway && id > c.goaway_last_stream && replay(ex)) continue;
      clear_deadline(*ex);
      HttpResponse r;
      r.not_delivered = c.goaway && id > c.goaway_last_stream;
      r.error = error;
      finish(*ex, std::move(r));
    }
    // No connection could be made and none other is open or being made: what waits for this
    // host fails too, as each request would have failed on a connection of its own.
    if (!reached && !c.error.empty()) {
      const bool other = std::any_of(h.connections.begin(), h.connections.end(),
                                     [&](const auto& o) { return o.get() != &c && !o->dead; });
      if (!other) {
        while (!h.waiting.empty()) {
          std::unique_ptr<Exchange> ex = std::move(h.waiting.front());
          h.waiting.pop_front();
          if (!c.out_of_sockets) ex->sent = c.opened;  // tried on its behalf
          HttpResponse r;
          r.not_delivered = true;
          r.error = error;
          finish(*ex, std::move(r));
        }
      }
    }
    std::erase_if(h.connections, [&](const auto& o) { return o.get() == &c; });
  }

  void shut_down() {
    std::vector<std::unique_ptr<Exchange>> sent;
    std::vector<std::unique_ptr<Exchange>> unsent;
    for (auto& [key, h] : hosts_) {
      for (auto& ex : h.waiting) unsent.push_back(std::move(ex));
      h.waiting.clear();
      for (auto& c : h.connections) {
        unwatch(*c);
        for (auto& ex : c->pending) {
          ex->sent = {};  // its connection was not made: the buyer saw nothing
          unsent.push_back(std::move(ex));
        }
        c->pending.clear();
        for (auto& [id, ex] : c->streams) {
          if (!ex->answered) sent.push_back(std::move(ex));
        }
        c->streams.clear();
        if (c->session != nullptr) nghttp2_session_del(c->session);
        c->session = nullptr;
        c->tls.reset();
      }
      h.connections.clear();
    }
    by_tag_.clear();
    dead_.clear();
    deadlines_.clear();
    // Callbacks may call send() again; stopping_ makes those fail at once.
    for (auto& ex : unsent) fail(*ex, kShutDownError);
    for (auto& ex : sent) fail(*ex, kShutDownError);
  }

  static void fail(Exchange& ex, std::string error) {
    HttpResponse r;
    r.error = std::move(error);
    finish(ex, std::move(r));
  }

  static void finish(Exchange& ex, HttpResponse r) {
    // What the buyer took: from when the request was sent (nothing if it never was).
    if (ex.sent == Clock::time_point{}) {
      r.not_sent = r.not_delivered = true;
    } else {
      r.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - ex.sent);
    }
    if (!ex.done) return;
    auto done = std::move(ex.done);
    ex.done = nullptr;
    try {
      done(std::move(r));
    } catch (...) {
      // A callback must not throw; if one does, the loop still has other requests to serve.
    }
  }

  const CurlClientOptions options_;
  HttpClient& http1_;
  TlsClientContext tls_;
  nghttp2_session_callbacks* callbacks_ = nullptr;

  std::mutex mutex_;
  std::deque<std::unique_ptr<Exchange>> incoming_;  // guarded by mutex_
  std::deque<Resolution> resolved_;                 // guarded by mutex_
  bool stopping_ = false;                           // guarded by mutex_

  // Loop thread only.
  std::unordered_map<std::string, Host> hosts_;  // every buyer host seen (never dropped)
  std::unordered_map<std::uint64_t, Connection*> by_tag_;
  std::uint64_t next_tag_ = kWakeTag + 1;
  std::deque<Connection*> dead_;  // marked, not closed yet
  std::vector<Host*> replayed_;   // hosts with refused streams queued again, to dispatch
  std::multimap<Clock::time_point, Exchange*> deadlines_;  // every sent request not answered
  std::vector<char> read_buffer_ = std::vector<char>(kReadChunk);
  Clock::time_point turn_start_ = Clock::now();
  Clock::time_point last_stall_{};
  Clock::time_point next_housekeeping_ = Clock::now();
  // The epoll set, and the eventfd that send(), the resolver and the destructor wake it with.
  outbound::LoopFds fds_{kWakeTag};

  std::unique_ptr<HostResolver> resolver_;
  std::thread loop_;  // last: starts after everything above exists
};

}  // namespace

bool http2_is_reliable() { return true; }

std::string nghttp2_version() {
  const nghttp2_info* info = ::nghttp2_version(0);
  return info != nullptr && info->version_str != nullptr ? info->version_str : "";
}

std::unique_ptr<HttpClient> make_h2_client(const CurlClientOptions& options, HttpClient& http1) {
  return std::make_unique<H2Client>(options, http1);
}

}  // namespace leadflow
