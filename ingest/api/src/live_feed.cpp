#include "leadflow/api/live_feed.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <random>
#include <utility>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <nlohmann/json.hpp>

#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"

namespace leadflow {
namespace {

/// The live feed's metric families, registered once.
struct LiveMetrics {
  prometheus::Gauge& connections;      // leadflow_live_connections
  prometheus::Counter& events;         // leadflow_live_events_total
  prometheus::Counter& dropped_slow;   // leadflow_live_dropped_total{reason="slow"}
  prometheus::Counter& refused;        // leadflow_live_refused_total
  prometheus::Counter& poll_failures;  // leadflow_live_poll_failures_total
};

LiveMetrics& live_metrics() {
  static LiveMetrics m = [] {
    auto& r = *metrics_registry();
    auto& connections = prometheus::BuildGauge()
                            .Name("leadflow_live_connections")
                            .Help("Live feed streams (GET /v1/live) open in this process")
                            .Register(r)
                            .Add({});
    auto& events = prometheus::BuildCounter()
                       .Name("leadflow_live_events_total")
                       .Help("Lead events written to live feed streams (one per stream)")
                       .Register(r)
                       .Add({});
    auto& dropped = prometheus::BuildCounter()
                        .Name("leadflow_live_dropped_total")
                        .Help("Live feed streams closed because their reader fell behind")
                        .Register(r)
                        .Add({{"reason", "slow"}});
    auto& refused = prometheus::BuildCounter()
                        .Name("leadflow_live_refused_total")
                        .Help("Live feed streams refused at LEADFLOW_LIVE_MAX_CONNECTIONS")
                        .Register(r)
                        .Add({});
    auto& failures = prometheus::BuildCounter()
                         .Name("leadflow_live_poll_failures_total")
                         .Help("Reads of the leads that changed the store could not answer")
                         .Register(r)
                         .Add({});
    return LiveMetrics{connections, events, dropped, refused, failures};
  }();
  return m;
}

std::string random_boot() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

// The same reader, for the projection's sake (one projection per event and kind of reader).
std::string reader_key(const Viewer& v) {
  std::string key(1, static_cast<char>('0' + static_cast<int>(v.party)));
  key.append(v.seller_id).append(1, '|').append(v.buyer_id).append(v.seller_names ? "|n" : "|");
  return key;
}

// An event's id: `<process>-<n>/<position>`, n counting the process's events and position the
// store's (every change before the event's is at or before it).
std::string event_id(const std::string& boot, std::uint64_t seq, const std::string& position) {
  return boot + "-" + std::to_string(seq) + "/" + position;
}

struct EventId {
  bool valid = false;
  std::string boot;
  std::uint64_t seq = 0;
  std::string position;  // empty in an id written before ids carried one
};

EventId parse_event_id(std::string_view id) {
  EventId out;
  const auto dash = id.find('-');
  if (dash == std::string_view::npos || dash == 0) return out;
  const auto slash = id.find('/', dash);
  const std::string_view n = id.substr(
      dash + 1, slash == std::string_view::npos ? std::string_view::npos : slash - dash - 1);
  const auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), out.seq);
  if (n.empty() || ec != std::errc() || ptr != n.data() + n.size()) return out;
  out.boot = std::string(id.substr(0, dash));
  if (slash != std::string_view::npos) out.position = std::string(id.substr(slash + 1));
  out.valid = true;
  return out;
}

// The stream resumes from now, not from its Last-Event-ID: `reason` says why. Its id is where
// the stream joined the feed, so the browser's next reconnect resumes from there.
std::string reset_frame(const std::string& boot, std::uint64_t seq, const std::string& position,
                        const char* reason) {
  return "id: " + event_id(boot, seq, position) +
         "\nevent: reset\ndata: " + nlohmann::json{{"reason", reason}}.dump() + "\n\n";
}

}  // namespace

LiveFeed::LiveFeed(LeadChangesStore& store, LiveOptions options)
    : store_(store), options_(options), boot_(random_boot()) {
  live_metrics();
}

LiveFeed::~LiveFeed() {
  stop();
  std::lock_guard lock(mu_);
  for (auto& s : subscribers_) s->body->finish();
  live_metrics().connections.Decrement(static_cast<double>(subscribers_.size()));
}

void LiveFeed::start() {
  thread_ = std::thread([this] {
    auto last_beat = std::chrono::steady_clock::now();
    std::unique_lock lock(run_mu_);
    while (!stopping_) {
      lock.unlock();
      poll();
      const auto now = std::chrono::steady_clock::now();
      if (now - last_beat >= options_.heartbeat) {
        last_beat = now;
        heartbeat(now);
      }
      lock.lock();
      run_cv_.wait_for(lock, options_.poll_interval, [this] { return stopping_; });
    }
  });
}

void LiveFeed::stop() {
  {
    std::lock_guard lock(run_mu_);
    stopping_ = true;
  }
  run_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::size_t LiveFeed::connections() const {
  std::lock_guard lock(mu_);
  return subscribers_.size();
}

std::string LiveFeed::frame(const Event& e, const Subscriber& s) const {
  if (!may_see_lead(s.viewer, e.record)) return {};
  const nlohmann::json data = {
      {"kind", e.decided ? "decided" : "received"},
      {"lead", project_lead(s.viewer, e.record, s.labels, LeadDetail::kRow)}};
  std::string out = "id: " + event_id(boot_, e.seq, e.position) + "\nevent: lead\ndata: ";
  out += data.dump();
  out += "\n\n";
  return out;
}

void LiveFeed::send(Subscriber& s, std::string_view bytes) {
  if (bytes.empty()) return;
  // Never waits: a stream over its bound ends, and is let go at the next sweep.
  if (s.body->push(bytes)) live_metrics().events.Increment();
}

LiveSubscription LiveFeed::subscribe(const Viewer& viewer, const SellerLabels& labels,
                                     std::string_view last_event_id) {
  using Refused = LiveSubscription::Refused;
  const EventId named = parse_event_id(last_event_id);
  std::optional<std::string> fresh;  // the store's position, for a feed that follows none yet
  bool following;
  {
    std::lock_guard lock(mu_);
    following = !position_.empty();
  }
  if (!following && !(fresh = store_.lead_changes_position()))
    return {nullptr, Refused::kUnavailable};

  Subscriber* s = nullptr;
  std::string upto;
  std::uint64_t seq = 0;
  {
    std::lock_guard lock(mu_);
    if (subscribers_.size() >= options_.max_connections) {
      live_metrics().refused.Increment();
      return {nullptr, Refused::kFull};
    }
    if (position_.empty()) {
      // Idle since, or never listened to: from the store's position now.
      if (!fresh) fresh = store_.lead_changes_position();  // seldom: went idle meanwhile
      if (!fresh) return {nullptr, Refused::kUnavailable};
      position_ = *fresh;
    }
    auto owned = std::make_unique<Subscriber>();
    s = owned.get();
    s->viewer = viewer;
    s->labels = labels;
    s->body = std::make_shared<http::StreamBody>(options_.buffer_bytes);
    s->opened = std::chrono::steady_clock::now();
    s->body->push("retry: " + std::to_string(options_.retry_ms) + "\n\n");
    // Where this stream joins the fan-out: every change at or before `upto` was sent before it.
    upto = position_;
    seq = next_seq_ - 1;
    subscribers_.push_back(std::move(owned));
    live_metrics().connections.Increment();
    if (last_event_id.empty()) return {s->body};
    // This process's event still kept: what came after it, from memory.
    const bool kept = named.valid && named.boot == boot_ && named.seq >= 1 && named.seq <= seq &&
                      (recent_.empty() ? named.seq == seq : named.seq + 1 >= recent_.front().seq);
    if (kept) {
      for (const Event& e : recent_)
        if (e.seq > named.seq) send(*s, frame(e, *s));
      return {s->body};
    }
    if (!named.valid || named.position.empty()) {
      send(*s, reset_frame(boot_, seq, upto, "unknown_id"));
      return {s->body};
    }
    s->catching_up = true;  // the fan-out holds its frames until the store's are sent
  }
  // From the store, outside the lock: the poller goes on meanwhile.
  std::vector<std::string> frames;
  const StoreStatus status = catch_up(*s, named.position, upto, seq, frames);
  std::lock_guard lock(mu_);
  if (status == StoreStatus::kUnavailable) {
    live_metrics().poll_failures.Increment();
    std::erase_if(subscribers_, [s](const auto& p) { return p.get() == s; });
    live_metrics().connections.Decrement();
    return {nullptr, Refused::kUnavailable};
  }
  if (status != StoreStatus::kOk)
    frames = {reset_frame(boot_, seq, upto,
                          status == StoreStatus::kLimitReached ? "too_far_behind" : "unknown_id")};
  for (const std::string& f : frames) send(*s, f);
  for (const std::string& f : s->held) send(*s, f);
  s->held.clear();
  s->catching_up = false;
  return {s->body};
}

StoreStatus LiveFeed::catch_up(Subscriber& s, const std::string& position, const std::string& upto,
                               std::uint64_t seq, std::vector<std::string>& frames) {
  const Lookup<LeadChanges> got = store_.list_lead_changes(position, upto, options_.resume);
  if (got.status != StoreStatus::kOk || !got.value) return got.status;
  if (got.value->more) return StoreStatus::kLimitReached;
  const auto& leads = got.value->leads;
  for (std::size_t i = 0; i < leads.size(); ++i) {
    // Each lead once, in its state now. The last event carries where the stream joined the
    // feed; the others name no event of this process (n = 0), so a reconnect cut among them
    // reads the store again from the position it resumed from.
    const bool last = i + 1 == leads.size();
    const Event e{last ? seq : 0, leads[i].distribution.status != DeliveryStatus::kPending,
                  leads[i], last ? upto : position};
    frames.push_back(frame(e, s));
  }
  return StoreStatus::kOk;
}

bool LiveFeed::poll() {
  const auto now = std::chrono::steady_clock::now();
  std::string from;
  {
    std::lock_guard lock(mu_);
    if (!subscribers_.empty()) last_listened_ = now;
    if (now - last_listened_ > options_.idle_after) {
      // Nobody listens: nothing read, nothing followed; a stream opened later starts from the
      // store's position then.
      position_.clear();
      received_.clear();
      received_order_.clear();
      return true;
    }
    from = position_;
  }
  if (from.empty()) {
    const auto now_position = store_.lead_changes_position();
    if (!now_position) {
      live_metrics().poll_failures.Increment();
      sweep_closed();
      return false;
    }
    std::lock_guard lock(mu_);
    if (position_.empty()) position_ = *now_position;
    from = position_;
  }
  // A backlog drained at once is read over a few pages now, and the rest at the next poll.
  for (int page = 0; page < 8; ++page) {
    bool more = false;
    if (!read_page(from, more)) return false;
    if (!more) break;
    std::lock_guard lock(mu_);
    from = position_;
  }
  return true;
}

bool LiveFeed::read_page(const std::string& from, bool& more) {
  Lookup<LeadChanges> got = store_.list_lead_changes(from, "", options_.page);
  if (got.status != StoreStatus::kOk || !got.value) {
    live_metrics().poll_failures.Increment();
    if (got.status == StoreStatus::kNotFound) {
      // Not a position of this store (it was replaced): from its position now.
      std::lock_guard lock(mu_);
      if (position_ == from) position_.clear();
    }
    sweep_closed();
    return false;
  }
  std::vector<Event> events;
  for (LeadRecord& r : got.value->leads) {
    const std::string id = r.lead.id;
    if (r.distribution.status == DeliveryStatus::kPending) {
      remember_received(id);
      events.push_back(Event{0, false, std::move(r), {}});
      continue;
    }
    if (received_.erase(id) == 0) {
      // Recorded and decided between two reads: sent as it was recorded, then as decided.
      LeadRecord as_received = r;
      as_received.distribution = Distribution{};
      events.push_back(Event{0, false, std::move(as_received), {}});
    }
    events.push_back(Event{0, true, std::move(r), {}});
  }
  more = got.value->more;
  fan_out(events, from, got.value->position);
  return true;
}

void LiveFeed::remember_received(const std::string& id) {
  if (!received_.insert(id).second) return;
  received_order_.push_back(id);
  while (received_order_.size() > options_.watched) {
    received_.erase(received_order_.front());
    received_order_.pop_front();
  }
}

void LiveFeed::fan_out(const std::vector<Event>& events, const std::string& from,
                       const std::string& to) {
  std::lock_guard lock(mu_);
  if (position_ != from) return;  // let go meanwhile (idle, or a store replaced)
  for (std::size_t i = 0; i < events.size(); ++i) {
    Event e = events[i];
    e.seq = next_seq_++;
    e.position = i + 1 == events.size() ? to : from;
    // Each kind of reader's projection once per event, however many streams it has.
    std::unordered_map<std::string, std::string> frames;
    for (auto& s : subscribers_) {
      if (s->body->closed()) continue;
      const std::string key = reader_key(s->viewer);
      auto it = frames.find(key);
      if (it == frames.end()) it = frames.emplace(key, frame(e, *s)).first;
      if (s->catching_up) {
        if (!it->second.empty()) s->held.push_back(it->second);
      } else {
        send(*s, it->second);
      }
    }
    recent_.push_back(std::move(e));
    if (recent_.size() > options_.replay) recent_.pop_front();
  }
  position_ = to;
  sweep_closed_locked();
}

void LiveFeed::heartbeat(std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mu_);
  for (auto& s : subscribers_) {
    if (s->catching_up) continue;  // its resume is being read: it has nothing to keep alive yet
    s->body->push(": keep-alive\n\n");
    if (now - s->opened >= options_.max_age) s->body->finish();  // written, then closed
  }
  sweep_closed_locked();
}

void LiveFeed::sweep_closed() {
  std::lock_guard lock(mu_);
  sweep_closed_locked();
}

void LiveFeed::sweep_closed_locked() {
  const auto before = subscribers_.size();
  std::erase_if(subscribers_, [](const std::unique_ptr<Subscriber>& s) {
    if (s->catching_up || !s->body->closed()) return false;
    if (s->body->fell_behind()) {
      live_metrics().dropped_slow.Increment();
      log(LogLevel::kInfo, "live_stream_dropped", {{"reason", "slow"}});
    }
    return true;
  });
  live_metrics().connections.Decrement(static_cast<double>(before - subscribers_.size()));
}

}  // namespace leadflow
