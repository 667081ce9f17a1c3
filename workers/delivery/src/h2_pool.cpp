// A request is "sent" when it is given to a connection: submitted as a stream on a ready one, or
// held by one still being made (its timeout covers the connect and the handshake, as libcurl's
// does). Until then it waits in its host's queue with no timeout running.
#include "h2_pool.hpp"

#include "leadflow/base/log.hpp"
#include "leadflow/base/text.hpp"
#include "outbound_common.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

namespace leadflow {
namespace {

using namespace std::chrono_literals;

// Streams a connection is given before its buyer's SETTINGS say how many it takes.
constexpr std::size_t kStreamsBeforeSettings = 100;
// Times a request the buyer refused unprocessed is sent again (see H2Pool::replay).
constexpr int kMaxReplays = 2;
// An idle connection is kept this long for the next burst, then closed.
constexpr auto kIdleTimeout = 60s;
// Meanwhile it is asked for a PING every so often, and given up if the ACK does not come in
// time: a connection a middlebox or the buyer dropped without a word is found while idle, not
// by the next auction's request waiting out its deadline on it.
constexpr auto kPingWhenIdleFor = 15s;
constexpr auto kPingTimeout = 5s;
// Resolved addresses are reused this long before the name is looked up again.
constexpr auto kAddressTtl = 60s;
// A connection not ready (resolved, connected, TLS done) within this is given up; the requests
// it held have timed out long before.
constexpr auto kConnectTimeout = 10s;

}  // namespace

std::string describe_unready(const H2Connection& c) {
  switch (c.state) {
    case H2Connection::State::kResolving:
      return "resolving " + c.host->name;
    case H2Connection::State::kConnecting:
      return c.tls != nullptr && c.tls->failed_in_connect()
                 ? "connecting to " + c.host->name + " port " + c.host->port
                 : "TLS handshake with " + c.host->name;
    case H2Connection::State::kReady:
      break;
  }
  return "connection not ready";
}

H2Pool::H2Pool(const CurlClientOptions& options, const Clock& clock, HttpClient& http1, H2Io& io)
    : options_(options), clock_(clock), http1_(http1), io_(io) {}

H2Pool::~H2Pool() { shut_down(); }

H2Host* H2Pool::host(const std::string& key) {
  auto it = hosts_.find(key);
  return it == hosts_.end() ? nullptr : &it->second;
}

// ---- requests ----

void H2Pool::admit(std::unique_ptr<H2Exchange> ex) {
  std::optional<H2Target> target = parse_https_url(ex->request.url);
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
  H2Host& h = it->second;
  if (added) {
    h.key = target->key;
    h.name = ascii_lower(target->name);
    h.port = target->port;
  }
  ex->authority = std::move(target->authority);
  ex->path = std::move(target->path);
  ex->host = &h;
  if (h.protocol == H2Host::Protocol::kHttp1) {
    forward(std::move(ex));
    return;
  }
  h.waiting.push_back(std::move(ex));
  dispatch(h);
}

void H2Pool::dispatch(H2Host& h) {
  if (h.protocol == H2Host::Protocol::kHttp1) {
    while (!h.waiting.empty()) {
      std::unique_ptr<H2Exchange> ex = std::move(h.waiting.front());
      h.waiting.pop_front();
      forward(std::move(ex));
    }
    return;
  }
  std::vector<H2Connection*> touched;
  while (!h.waiting.empty()) {
    H2Connection* c = nullptr;
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
    std::unique_ptr<H2Exchange> ex = std::move(h.waiting.front());
    h.waiting.pop_front();
    if (expired(*ex, clock_.steady_now())) continue;  // answered not sent; takes no room
    assign(*c, std::move(ex));
    if (c->state == H2Connection::State::kReady &&
        std::find(touched.begin(), touched.end(), c) == touched.end()) {
      touched.push_back(c);
    }
  }
  for (H2Connection* c : touched) io_.flush(*c);
}

bool H2Pool::expired(H2Exchange& ex, SteadyTime now) const {
  const auto limit = outbound::queue_limit(ex.request, options_.max_queue_wait);
  if (now - ex.submitted < limit) return false;
  finish(ex, outbound::not_sent_in_time(limit));
  return true;
}

std::size_t H2Pool::room(const H2Connection& c) const {
  if (c.dead || c.full || (c.codec != nullptr && c.codec->goaway())) return 0;
  const std::size_t used = c.pending.size() + c.streams.size();
  const std::size_t limit = c.codec == nullptr ? kStreamsBeforeSettings : c.codec->stream_limit();
  return used >= limit ? 0 : limit - used;
}

// Another connection, when every one is full. Until a first handshake says whether the host
// speaks HTTP/2, one at a time: a burst to a new host shares one TLS handshake, not thirty.
bool H2Pool::may_open(const H2Host& h) const {
  if (h.connections.size() >=
      static_cast<std::size_t>(std::max(1L, options_.max_host_connections))) {
    return false;
  }
  for (const auto& c : h.connections) {
    if (c->dead || h.protocol == H2Host::Protocol::kUnknown) return false;
  }
  return true;
}

void H2Pool::assign(H2Connection& c, std::unique_ptr<H2Exchange> ex) {
  ex->connection = &c;
  if (!ex->has_deadline) {  // a replay keeps the deadline of its first sending
    ex->sent = clock_.steady_now();
    ex->deadline = deadlines_.emplace(
        ex->sent + std::max(ex->request.timeout, std::chrono::milliseconds(1)), ex.get());
    ex->has_deadline = true;
  }
  if (c.state == H2Connection::State::kReady) {
    submit(c, std::move(ex));
  } else {
    c.pending.push_back(std::move(ex));
  }
}

void H2Pool::submit(H2Connection& c, std::unique_ptr<H2Exchange> ex) {
  const std::int32_t id = c.codec->submit(ex->request, ex->authority, ex->path);
  if (id < 0) {
    clear_deadline(*ex);
    if (H2Codec::takes_no_more_streams(id)) {
      // This connection takes no more streams; the request was not sent, and goes first again.
      c.full = true;
      ex->sent = {};
      ex->connection = nullptr;
      ex->host->waiting.push_front(std::move(ex));
      return;
    }
    HttpResponse r;
    r.not_delivered = true;
    r.error = "could not start a stream: " + H2Codec::error_text(id);
    finish(*ex, std::move(r));
    return;
  }
  ex->stream_id = id;
  c.streams.emplace(id, std::move(ex));
}

void H2Pool::stream_ended(H2Connection& c, H2StreamEnd end) {
  auto it = c.streams.find(end.stream_id);
  if (it == c.streams.end()) return;
  std::unique_ptr<H2Exchange> ex = std::move(it->second);
  c.streams.erase(it);
  if (c.streams.empty() && c.pending.empty()) c.idle_since = clock_.steady_now();
  if (ex->answered) return;
  if (end.refused && replay(ex)) return;
  clear_deadline(*ex);
  finish(*ex, response_of(end));
}

// A stream the buyer refused unprocessed (REFUSED_STREAM, or past its GOAWAY's last stream)
// may be sent again on another connection (RFC 9113 §8.7): a server that closes a connection
// gracefully, as nginx does after keepalive_requests, refuses the streams still arriving, and
// the buyer did nothing wrong. Up to kMaxReplays times, within the request's own deadline,
// before it fails as not delivered. The host is dispatched again by reap().
bool H2Pool::replay(std::unique_ptr<H2Exchange>& ex) {
  if (ex->replays >= kMaxReplays || !ex->has_deadline || ex->deadline->first <= clock_.steady_now())
    return false;
  ++ex->replays;
  ex->connection = nullptr;
  ex->stream_id = -1;
  H2Host& h = *ex->host;
  h.waiting.push_front(std::move(ex));
  if (std::find(replayed_.begin(), replayed_.end(), &h) == replayed_.end()) replayed_.push_back(&h);
  return true;
}

// To libcurl, unchanged: the host answered ALPN without h2, and nothing of it was sent.
void H2Pool::forward(std::unique_ptr<H2Exchange> ex) {
  clear_deadline(*ex);
  http1_.send(std::move(ex->request), std::move(ex->done));
}

void H2Pool::clear_deadline(H2Exchange& ex) {
  if (!ex.has_deadline) return;
  deadlines_.erase(ex.deadline);
  ex.has_deadline = false;
}

std::optional<SteadyTime> H2Pool::oldest_waiting() const {
  return outbound::oldest_waiting(hosts_);
}

SteadyTime H2Pool::next_deadline() const {
  return deadlines_.empty() ? SteadyTime::max() : deadlines_.begin()->first;
}

// A stream is cancelled (RST_STREAM CANCEL) and its connection keeps serving the others.
void H2Pool::expire_overdue(SteadyTime last_stall) {
  const auto now = clock_.steady_now();
  std::vector<H2Connection*> touched;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    H2Exchange* ex = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    ex->has_deadline = false;
    HttpResponse r;
    r.timed_out = true;
    r.error = outbound::timeout_error(ex->request);
    r.stalled_here = last_stall >= ex->sent;
    if (ex->connection == nullptr) {
      // Refused unprocessed and waiting to be sent again: the buyer acted on none of it.
      auto& waiting = ex->host->waiting;
      auto it = std::find_if(waiting.begin(), waiting.end(),
                             [ex](const auto& w) { return w.get() == ex; });
      if (it == waiting.end()) continue;
      std::unique_ptr<H2Exchange> owned = std::move(*it);
      waiting.erase(it);
      r.not_delivered = true;
      finish(*owned, std::move(r));
      continue;
    }
    H2Connection& c = *ex->connection;
    if (ex->stream_id > 0) {
      ex->answered = true;
      finish(*ex, std::move(r));
      c.codec->cancel(ex->stream_id);
      if (std::find(touched.begin(), touched.end(), &c) == touched.end()) touched.push_back(&c);
      continue;
    }
    // Still waiting for its connection to be made: the buyer cannot have seen it.
    auto it = std::find_if(c.pending.begin(), c.pending.end(),
                           [ex](const auto& p) { return p.get() == ex; });
    if (it == c.pending.end()) continue;
    std::unique_ptr<H2Exchange> owned = std::move(*it);
    c.pending.erase(it);
    r.not_delivered = true;
    r.error += " (" + describe_unready(c) + ")";
    finish(*owned, std::move(r));
  }
  for (H2Connection* c : touched) io_.flush(*c);
  for (H2Connection* c : touched) {
    if (!c->dead) dispatch(*c->host);
  }
}

void H2Pool::housekeeping() {
  const auto now = clock_.steady_now();
  for (auto& [key, h] : hosts_) {
    while (!h.waiting.empty() && expired(*h.waiting.front(), now)) h.waiting.pop_front();
    for (auto& c : h.connections) {
      if (c->dead) continue;
      if (c->state != H2Connection::State::kReady) {
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
      const bool idle = c->streams.empty() && c->pending.empty();
      if (idle && (c->full || c->codec->goaway() || now - c->idle_since >= kIdleTimeout)) {
        mark_dead(*c, "");
      } else if (c->codec->awaiting_ping()) {
        if (now - c->pinged_at >= kPingTimeout)
          mark_dead(
              *c, "the buyer did not answer a PING within " +
                      std::to_string(
                          std::chrono::duration_cast<std::chrono::seconds>(kPingTimeout).count()) +
                      " s");
      } else if (idle && now - std::max(c->idle_since, c->pinged_at) >= kPingWhenIdleFor &&
                 c->codec->ping()) {
        c->pinged_at = now;
        io_.flush(*c);
      }
    }
  }
}

// ---- connections ----

H2Connection& H2Pool::open_connection(H2Host& h) {
  auto owned = std::make_unique<H2Connection>();
  H2Connection& c = *owned;
  c.host = &h;
  c.id = next_id_++;
  c.opened = c.idle_since = clock_.steady_now();
  h.connections.push_back(std::move(owned));
  if (!h.addresses.empty() && c.opened - h.resolved_at < kAddressTtl) {
    io_.connect(c);
  } else if (!h.resolving) {
    h.resolving = true;
    io_.resolve(h);
  }
  return c;
}

void H2Pool::on_resolved(Resolution r) {
  auto it = hosts_.find(r.key);
  if (it == hosts_.end()) return;
  H2Host& h = it->second;
  h.resolving = false;
  if (!r.error.empty()) {
    h.addresses.clear();
    for (auto& c : h.connections) {
      if (!c->dead && c->state == H2Connection::State::kResolving) {
        mark_dead(*c, "could not resolve host: " + h.name + " (" + r.error + ")");
      }
    }
    return;
  }
  h.addresses = std::move(r.addresses);
  h.resolved_at = clock_.steady_now();
  for (auto& c : h.connections) {
    if (!c->dead && c->state == H2Connection::State::kResolving) io_.connect(*c);
  }
}

void H2Pool::connection_ready(H2Connection& c, const std::string& alpn) {
  H2Host& h = *c.host;
  if (alpn != "h2") {
    // HTTP/1.1 (or no ALPN at all): libcurl speaks to this host from now on. What this
    // connection held was never written to it, so it goes to libcurl as it came.
    if (h.protocol != H2Host::Protocol::kHttp1) {
      h.protocol = H2Host::Protocol::kHttp1;
      log(LogLevel::kInfo, "buyer_http1_only",
          {{"host", h.key}, {"alpn", alpn.empty() ? "none" : alpn}});
    }
    while (!c.pending.empty()) {
      std::unique_ptr<H2Exchange> ex = std::move(c.pending.front());
      c.pending.pop_front();
      forward(std::move(ex));
    }
    mark_dead(c, "");
    return;
  }
  try {
    c.codec =
        std::make_unique<H2Codec>([this, &c](H2StreamEnd end) { stream_ended(c, std::move(end)); });
  } catch (const std::exception& e) {
    mark_dead(c, e.what());
    return;
  }
  h.protocol = H2Host::Protocol::kHttp2;
  c.state = H2Connection::State::kReady;
  c.idle_since = clock_.steady_now();
  std::deque<std::unique_ptr<H2Exchange>> pending = std::move(c.pending);
  c.pending.clear();
  for (auto& ex : pending) submit(c, std::move(ex));
  // The buyer's SETTINGS may have come with the handshake's last bytes, already read by TLS.
  io_.read(c);
  if (c.dead) return;
  dispatch(h);
  io_.flush(c);
}

// Connections are closed only in reap(), between events, so nothing ever holds one that is gone.
void H2Pool::mark_dead(H2Connection& c, std::string error) {
  if (c.dead) return;
  c.dead = true;
  c.error = std::move(error);
  dead_.push_back(&c);
}

void H2Pool::reap() {
  while (!dead_.empty()) {
    H2Connection* c = dead_.front();
    dead_.pop_front();
    H2Host& h = *c->host;
    close_connection(*c);
    dispatch(h);
  }
  while (!replayed_.empty()) {
    H2Host* h = replayed_.back();
    replayed_.pop_back();
    dispatch(*h);
  }
}

void H2Pool::close_connection(H2Connection& c) {
  H2Host& h = *c.host;
  io_.release(c);
  const bool reached = c.state == H2Connection::State::kReady;
  auto pending = std::move(c.pending);
  auto streams = std::move(c.streams);
  c.pending.clear();
  c.streams.clear();
  // Which streams the buyer's GOAWAY refused is asked of the codec before it goes.
  std::vector<std::int32_t> refused;
  for (const auto& [id, ex] : streams) {
    if (c.codec != nullptr && c.codec->refused(id)) refused.push_back(id);
  }
  c.codec.reset();
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
    const bool unprocessed = std::find(refused.begin(), refused.end(), id) != refused.end();
    if (unprocessed && replay(ex)) continue;
    clear_deadline(*ex);
    HttpResponse r;
    r.not_delivered = unprocessed;
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
        std::unique_ptr<H2Exchange> ex = std::move(h.waiting.front());
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

void H2Pool::shut_down() {
  std::vector<std::unique_ptr<H2Exchange>> sent;
  std::vector<std::unique_ptr<H2Exchange>> unsent;
  for (auto& [key, h] : hosts_) {
    for (auto& ex : h.waiting) unsent.push_back(std::move(ex));
    h.waiting.clear();
    for (auto& c : h.connections) {
      io_.release(*c);
      for (auto& ex : c->pending) {
        ex->sent = {};  // its connection was not made: the buyer saw nothing
        unsent.push_back(std::move(ex));
      }
      c->pending.clear();
      for (auto& [id, ex] : c->streams) {
        if (!ex->answered) sent.push_back(std::move(ex));
      }
      c->streams.clear();
      c->codec.reset();
      c->tls.reset();
    }
    h.connections.clear();
  }
  dead_.clear();
  replayed_.clear();
  deadlines_.clear();
  // Callbacks may call send() again; the loop refuses those once it stops.
  for (auto& ex : unsent) fail(*ex, outbound::kShutDownError);
  for (auto& ex : sent) fail(*ex, outbound::kShutDownError);
}

void H2Pool::fail(H2Exchange& ex, std::string error) const {
  HttpResponse r;
  r.error = std::move(error);
  finish(ex, std::move(r));
}

void H2Pool::finish(H2Exchange& ex, HttpResponse r) const {
  // What the buyer took: from when the request was sent (nothing if it never was).
  if (ex.sent == SteadyTime{}) {
    r.not_sent = r.not_delivered = true;
  } else {
    r.elapsed =
        std::chrono::duration_cast<std::chrono::microseconds>(clock_.steady_now() - ex.sent);
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

}  // namespace leadflow
