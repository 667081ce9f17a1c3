#include "leadflow/api/live_feed.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <random>
#include <unordered_set>
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

}  // namespace

LiveFeed::LiveFeed(LeadChangesStore& store, std::int64_t now_ms, LiveOptions options)
    : store_(store), options_(options), boot_(random_boot()), cursor_ms_(now_ms) {
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
  std::string out = "id: " + boot_ + "-" + std::to_string(e.seq) + "\nevent: lead\ndata: ";
  out += data.dump();
  out += "\n\n";
  return out;
}

void LiveFeed::send(Subscriber& s, std::string_view bytes) {
  if (bytes.empty()) return;
  // Never waits: a stream over its bound ends, and is let go at the next sweep.
  if (s.body->push(bytes)) live_metrics().events.Increment();
}

std::shared_ptr<http::StreamBody> LiveFeed::subscribe(const Viewer& viewer,
                                                      const SellerLabels& labels,
                                                      std::string_view last_event_id) {
  std::lock_guard lock(mu_);
  if (subscribers_.size() >= options_.max_connections) {
    live_metrics().refused.Increment();
    return nullptr;
  }
  auto s = std::make_unique<Subscriber>(
      Subscriber{viewer, labels, std::make_shared<http::StreamBody>(options_.buffer_bytes),
                 std::chrono::steady_clock::now()});
  s->body->push("retry: " + std::to_string(options_.retry_ms) + "\n\n");
  // A reconnect to this process names the last event it had: what it missed is sent again, if
  // still kept. Another process's ids (or none) resume from now.
  if (last_event_id.size() > boot_.size() + 1 && last_event_id.substr(0, boot_.size()) == boot_ &&
      last_event_id[boot_.size()] == '-') {
    std::uint64_t seq = 0;
    const char* first = last_event_id.data() + boot_.size() + 1;
    const char* last = last_event_id.data() + last_event_id.size();
    if (std::from_chars(first, last, seq).ptr == last) {
      for (const Event& e : recent_)
        if (e.seq > seq) send(*s, frame(e, *s));
    }
  }
  const std::shared_ptr<http::StreamBody> body = s->body;
  subscribers_.push_back(std::move(s));
  live_metrics().connections.Increment();
  return body;
}

bool LiveFeed::poll() {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    if (!subscribers_.empty()) last_listened_ = now;
  }
  if (now - last_listened_ > options_.idle_after) {
    if (!idle_) {
      idle_ = true;
      pending_.clear();
      seen_.clear();
      page_full_ = false;
    }
    return true;
  }
  if (idle_) {
    // Listened to again: from now (less the overlap), not from before the pause.
    idle_ = false;
    const std::int64_t wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
    cursor_ms_ = std::max(cursor_ms_, wall_ms);
  }
  std::vector<std::string> watched;
  watched.reserve(pending_.size());
  for (const auto& [id, at] : pending_) watched.push_back(id);
  const std::int64_t since = page_full_ ? cursor_ms_ : cursor_ms_ - options_.overlap.count();
  const auto rows = store_.list_lead_changes(since, watched, options_.page);
  if (!rows) {
    live_metrics().poll_failures.Increment();
    sweep_closed();
    return false;
  }
  std::vector<Event> events;
  for (const LeadRecord& r : *rows) {
    const std::string& id = r.lead.id;
    const bool decided = r.distribution.status != DeliveryStatus::kPending;
    const bool known = seen_.count(id) > 0;
    const bool was_pending = pending_.erase(id) > 0;
    if (!known) {
      seen_.emplace(id, r.lead.received_at_ms);
      events.push_back(Event{next_seq_++, decided, r});
    } else if (decided && was_pending) {
      events.push_back(Event{next_seq_++, true, r});
    }
    if (!decided) pending_.emplace(id, r.lead.received_at_ms);
    cursor_ms_ = std::max(cursor_ms_, r.lead.received_at_ms);
  }
  // A full page of leads received may leave leads of the same window unread: the next read
  // starts at its last lead rather than go back the overlap (which would read the same page
  // again). The read's other part is the watched leads decided, each once (one may also be in
  // the page, read decided there too).
  const std::unordered_set<std::string> asked(watched.begin(), watched.end());
  std::unordered_set<std::string> decided_watched;
  for (const LeadRecord& r : *rows)
    if (r.distribution.status != DeliveryStatus::kPending && asked.count(r.lead.id) > 0)
      decided_watched.insert(r.lead.id);
  page_full_ = rows->size() - decided_watched.size() >= static_cast<std::size_t>(options_.page);
  // Bounds: what fell out of the window is no longer re-read; the oldest watched go first.
  const std::int64_t horizon = cursor_ms_ - 2 * options_.overlap.count();
  std::erase_if(seen_, [&](const auto& kv) { return kv.second < horizon; });
  while (pending_.size() > options_.watched) {
    auto oldest =
        std::min_element(pending_.begin(), pending_.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    pending_.erase(oldest);
  }
  fan_out(events);
  return true;
}

void LiveFeed::fan_out(const std::vector<Event>& events) {
  std::lock_guard lock(mu_);
  for (const Event& e : events) {
    // Each kind of reader's projection once per event, however many streams it has.
    std::unordered_map<std::string, std::string> frames;
    for (auto& s : subscribers_) {
      if (s->body->closed()) continue;
      const std::string key = reader_key(s->viewer);
      auto it = frames.find(key);
      if (it == frames.end()) it = frames.emplace(key, frame(e, *s)).first;
      send(*s, it->second);
    }
    recent_.push_back(e);
    if (recent_.size() > options_.replay) recent_.pop_front();
  }
  sweep_closed_locked();
}

void LiveFeed::heartbeat(std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mu_);
  for (auto& s : subscribers_) {
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
    if (!s->body->closed()) return false;
    if (s->body->fell_behind()) {
      live_metrics().dropped_slow.Increment();
      log(LogLevel::kInfo, "live_stream_dropped", {{"reason", "slow"}});
    }
    return true;
  });
  live_metrics().connections.Decrement(static_cast<double>(before - subscribers_.size()));
}

}  // namespace leadflow
