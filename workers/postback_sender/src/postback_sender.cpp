#include "leadflow/postback_sender/postback_sender.hpp"

#include <algorithm>

#include <prometheus/counter.h>
#include <prometheus/histogram.h>

#include "leadflow/base/config.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/postbacks/rules.hpp"
#include "leadflow/postbacks/signature.hpp"
#include "leadflow/visibility/postback.hpp"

namespace leadflow {

namespace {
/// How far the clocks of two senders may disagree: a row due this much past a lease is no
/// other sender's.
constexpr std::chrono::milliseconds kLeaseClockMargin{5000};
}  // namespace

PostbackMetrics& postback_metrics() {
  static PostbackMetrics m = [] {
    auto& r = *metrics_registry();
    auto& latency = prometheus::BuildHistogram()
                        .Name("leadflow_postback_attempt_seconds")
                        .Help("Time of one postback attempt, answered or not")
                        .Register(r);
    auto& expired = prometheus::BuildCounter()
                        .Name("leadflow_postback_expired_total")
                        .Help("Postbacks given up after 24 hours of retries")
                        .Register(r);
    auto& pruned = prometheus::BuildCounter()
                       .Name("leadflow_postback_pruned_total")
                       .Help("Delivered and expired postback events deleted after the retention")
                       .Register(r);
    return PostbackMetrics{prometheus::BuildCounter()
                               .Name("leadflow_postback_attempts_total")
                               .Help("Postback attempts, by result (delivered, failed)")
                               .Register(r),
                           latency.Add({}, latency_buckets()), expired.Add({}), pruned.Add({})};
  }();
  return m;
}

PostbackSender::PostbackSender(PostbackStore& store, HttpClient& client, const Clock& clock,
                               PostbackSenderOptions options)
    : store_(store), client_(client), clock_(clock), options_(options) {
  postback_metrics();
  scrape_ = std::make_unique<ScrapeHook>([this](std::vector<prometheus::MetricFamily>& out) {
    if (const auto recent = store_.recent_postback_statuses(postbacks::kFailingAfter)) {
      int failing = 0;
      for (const RecentStatuses& e : *recent)
        if (postbacks::endpoint_failing_by_status(e.statuses)) ++failing;
      out.push_back(gauge_family("leadflow_postback_endpoints_failing",
                                 "Endpoints on whose last 5 postback attempts, from every process,"
                                 " all failed",
                                 failing));
    }
    out.push_back(gauge_family("leadflow_postback_in_flight",
                               "Postback requests in flight from this process", in_flight()));
    if (const auto backlog = store_.postback_backlog()) {
      out.push_back(gauge_family("leadflow_postback_outbox_pending",
                                 "Postback events still to be delivered, in the whole outbox",
                                 static_cast<double>(backlog->pending)));
      const double age =
          backlog->pending == 0
              ? 0
              : std::max<double>(0, (clock_.now_ms() - backlog->oldest_pending_at_ms) / 1000.0);
      out.push_back(gauge_family("leadflow_postback_outbox_oldest_seconds",
                                 "Age of the oldest postback event still to be delivered", age));
    }
  });
}

PostbackSender::~PostbackSender() { stop(); }

void PostbackSender::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { loop(); });
}

void PostbackSender::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // The requests in flight end within their timeout; their attempts are recorded, so their
  // events are not sent again only for want of a record.
  std::unique_lock lock(mu_);
  wake_.wait_for(lock, options_.timeout + std::chrono::seconds(2),
                 [&] { return in_flight_.load() == 0; });
  lock.unlock();
  flush();
  // What it held unsent goes back at once, for another sender to take without waiting out the
  // leases.
  std::vector<PostbackRelease> back;
  const std::int64_t now = clock_.now_ms();
  for (auto& [id, rows] : waiting_)
    for (const Waiting& w : rows) back.push_back({w.delivery.facts.event_id, id, now});
  waiting_.clear();
  waiting_count_ = 0;
  store_.release_postbacks(back);
}

void PostbackSender::loop() {
  while (true) {
    run_once();
    std::unique_lock lock(mu_);
    // Asleep for a poll, unless it is stopping, or events wait for a slot (or every slot is
    // taken) and a request ended: an endpoint that answers fast is kept busy, and the store is
    // still asked and written at most once a poll.
    const bool waiting = waiting_count_ > 0 || in_flight_.load() >= options_.max_in_flight;
    const std::uint64_t seen = completions_;
    wake_.wait_for(lock, backlog_ ? options_.backlog_gap : options_.poll,
                   [&] { return stopping_ || (waiting && completions_ != seen); });
    if (stopping_) return;
  }
}

void PostbackSender::flush() {
  std::vector<Finished> done;
  {
    std::lock_guard lock(mu_);
    done.swap(finished_);
  }
  if (done.empty()) return;
  std::vector<PostbackAttempt> attempts;
  attempts.reserve(done.size());
  const SteadyTime steady = clock_.steady_now();
  const std::int64_t now = clock_.now_ms();
  for (auto& f : done) {
    PostbackAttempt& a = f.attempt;
    // A failing endpoint's failed attempt may be the one that tries it again soon, so that its
    // first answer is noticed though none of its other events comes due for long.
    if (!f.ok && a.then == PostbackState::kPending && endpoint_failing(a.endpoint_id) &&
        probe_due(failing_entry(a.endpoint_id, steady), steady))
      a.next_at_ms = std::min(a.next_at_ms, now + options_.failing_retry.count());
    attempts.push_back(std::move(a));
  }
  // Not recorded: the events' leases run out and they are sent again (at least once).
  if (store_.record_postback_attempts(attempts) != StoreStatus::kOk)
    log(LogLevel::kWarn, "postback_attempts_not_recorded",
        {{"attempts", static_cast<std::int64_t>(attempts.size())}});
}

void PostbackSender::refresh_endpoints() {
  const SteadyTime now = clock_.steady_now();
  const std::uint64_t version = store_.postback_endpoints_version();
  if (endpoints_read_at_ != SteadyTime{} && version == endpoints_version_ &&
      now - endpoints_read_at_ <= options_.endpoints_refresh)
    return;
  auto all = store_.list_postback_endpoints("");
  if (!all) return;
  std::unordered_map<std::string, PostbackEndpoint> read;
  for (auto& e : *all) read.emplace(e.id, std::move(e));
  // Switched on again: what it held back while the endpoint was off is due at once, as for an
  // endpoint that answers again.
  for (const auto& [id, e] : read) {
    const auto was = endpoints_.find(id);
    if (e.active && was != endpoints_.end() && !was->second.active) resume(id);
  }
  endpoints_ = std::move(read);
  endpoints_read_at_ = now;
  endpoints_version_ = version;
}

/// Every row of the endpoint due past the longest lease another sender could hold (with a margin
/// for the clocks of several processes) is due now.
void PostbackSender::resume(const std::string& endpoint_id) {
  const std::int64_t now = clock_.now_ms();
  const auto resumed = store_.resume_postbacks(
      endpoint_id, now, now + options_.lease.count() + kLeaseClockMargin.count());
  if (!resumed)  // they come due when they were put back for
    log(LogLevel::kWarn, "postbacks_not_resumed", {{"endpoint_id", endpoint_id}});
}

std::chrono::milliseconds PostbackSender::paused_deferral(const PostbackEndpoint& e,
                                                          std::int64_t now_ms) const {
  return std::clamp(std::chrono::milliseconds(e.off_since_ms > 0 ? now_ms - e.off_since_ms : 0),
                    options_.paused_retry, options_.failing_retry_max);
}

const PostbackEndpoint* PostbackSender::endpoint(const std::string& id) {
  refresh_endpoints();
  auto it = endpoints_.find(id);
  if (it == endpoints_.end()) {
    // Made since the last read: read it alone.
    auto one = store_.get_postback_endpoint(id);
    if (one.status != StoreStatus::kOk) return nullptr;
    it = endpoints_.emplace(id, std::move(*one.value)).first;
  }
  return &it->second;
}

std::size_t PostbackSender::ready_to_send() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const auto& [id, rows] : waiting_) {
    const auto it = in_flight_by_endpoint_.find(id);
    if (it == in_flight_by_endpoint_.end() || it->second < options_.max_in_flight_per_endpoint)
      n += rows.size();
  }
  return n;
}

bool PostbackSender::endpoint_failing(const std::string& id) const {
  std::lock_guard lock(mu_);
  const auto it = recent_.find(id);
  if (it == recent_.end()) return false;
  bool newest_first[postbacks::kFailingAfter] = {};
  std::copy(it->second.begin(), it->second.end(), newest_first);
  return postbacks::endpoint_failing(std::span<const bool>(newest_first, it->second.size()));
}

std::chrono::milliseconds PostbackSender::failing_deferral(const std::string& id, SteadyTime now) {
  Failing& f = failing_entry(id, now);
  return probe_due(f, now) ? options_.failing_retry : failing_for(f, now);
}

std::chrono::milliseconds PostbackSender::failing_for(const Failing& f, SteadyTime now) const {
  return std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(now - f.since),
                    options_.failing_retry, options_.failing_retry_max);
}

std::vector<PostbackHold> PostbackSender::holds(SteadyTime steady, std::int64_t now) {
  std::vector<PostbackHold> out;
  refresh_endpoints();
  for (const auto& [id, e] : endpoints_)
    if (!e.active) out.push_back({id, now + paused_deferral(e, now).count()});
  for (const auto& [id, f] : failing_)  // only endpoints still failing (run_once)
    out.push_back({id, now + failing_for(f, steady).count()});
  for (const auto& [id, rows] : waiting_)
    if (rows.size() >= static_cast<std::size_t>(options_.max_waiting_per_endpoint) &&
        !failing_.contains(id))
      out.push_back({id, now + busy_deferral(id, steady).count()});
  return out;
}

bool PostbackSender::probe_due(Failing& f, SteadyTime now) {
  if (f.probe_at > now) return false;
  f.probe_at = now + options_.failing_retry;
  return true;
}

std::chrono::milliseconds PostbackSender::busy_deferral(const std::string& id,
                                                        SteadyTime now) const {
  const auto it = waiting_.find(id);
  const auto waited =
      it == waiting_.end() || it->second.empty()
          ? std::chrono::milliseconds(0)
          : std::chrono::duration_cast<std::chrono::milliseconds>(now - it->second.front().claimed);
  return std::clamp(waited, options_.busy_retry, std::max(options_.busy_retry, options_.lease / 2));
}

int PostbackSender::run_once() {
  const SteadyTime steady = clock_.steady_now();
  // An endpoint that answered again starts afresh, and what this sender put back for as long as
  // it had been failing is due at once: every row of it due past the longest lease another
  // sender could hold (with a margin for the clocks of several processes).
  for (auto it = failing_.begin(); it != failing_.end();) {
    if (endpoint_failing(it->first)) {
      ++it;
      continue;
    }
    resume(it->first);
    it = failing_.erase(it);
  }
  const std::size_t room = 2 * static_cast<std::size_t>(options_.max_in_flight);
  // A poll after the last claim; with a backlog, as soon as what it held for endpoints with a
  // free slot is half sent (an endpoint at its limit, a hanging one, holds no claim up).
  const bool due =
      !last_claim_ || steady - *last_claim_ >= options_.poll ||
      (backlog_ && steady - *last_claim_ >= options_.backlog_gap && ready_to_send() < room / 2);
  if (due || !last_flush_) {
    flush();
    last_flush_ = steady;
  }
  const std::int64_t now = clock_.now_ms();
  // What the sender cannot start goes back in one write: never one write per event, which would
  // take the store's writer from the workers as often as events arrive.
  std::vector<PostbackRelease> back;
  // Held past half its lease: back to the outbox, never sent by this sender once another may
  // have claimed it.
  for (auto& [id, rows] : waiting_) {
    while (!rows.empty() && steady - rows.front().claimed > options_.lease / 2) {
      back.push_back({rows.front().delivery.facts.event_id, id, now});
      rows.pop_front();
      --waiting_count_;
    }
    // An endpoint failing keeps a slot's worth waiting; the rest go back for failing_retry, so
    // a hanging endpoint's events do not fill the sender and hold the others' claims up.
    if (rows.size() > failing_hold() && endpoint_failing(id))
      while (rows.size() > failing_hold()) {
        back.push_back(
            {rows.back().delivery.facts.event_id, id, now + failing_deferral(id, steady).count()});
        rows.pop_back();
        --waiting_count_;
      }
  }
  if (due && waiting_count_ < room) {
    last_claim_ = steady;
    const int asked = static_cast<int>(room - waiting_count_);
    const auto claimed =
        store_.claim_postbacks(now, options_.lease.count(), asked, holds(steady, now));
    backlog_ = claimed && static_cast<int>(claimed->size()) >= asked;
    for (const PostbackDelivery& d : claimed.value_or(std::vector<PostbackDelivery>{})) {
      const PostbackEndpoint* e = endpoint(d.endpoint_id);
      if (e == nullptr) continue;  // deleted, with its rows; or unreadable: the lease runs out
      auto& rows = waiting_[e->id];
      const bool failing = e->active && endpoint_failing(e->id);
      if (!e->active ||
          rows.size() >= (failing ? failing_hold()
                                  : static_cast<std::size_t>(options_.max_waiting_per_endpoint))) {
        const auto later = !e->active ? paused_deferral(*e, now)
                           : failing  ? failing_deferral(e->id, steady)
                                      : busy_deferral(e->id, steady);
        back.push_back({d.facts.event_id, d.endpoint_id, now + later.count()});
        continue;
      }
      rows.push_back({d, steady});
      ++waiting_count_;
    }
  }
  store_.release_postbacks(back);  // not written: their leases run out instead
  const int sent = dispatch();
  if (!next_prune_ || steady >= *next_prune_) prune();
  return sent;
}

std::optional<int> PostbackSender::prune() {
  const SteadyTime steady = clock_.steady_now();
  next_prune_ = steady + options_.prune_every;
  const auto before = postbacks::prune_before(clock_.now_ms(), options_.retention_days);
  if (!before) return 0;
  int pruned = 0;
  bool more = false;
  for (PostbackState state :
       {PostbackState::kPending, PostbackState::kDelivered, PostbackState::kExpired}) {
    if (!postbacks::prunable_state(to_string(state))) continue;
    const auto n = store_.prune_postbacks(state, *before, postbacks::kPruneBatch);
    if (!n) {
      log(LogLevel::kWarn, "postbacks_not_pruned", {{"state", std::string(to_string(state))}});
      return std::nullopt;  // tried again at the next round
    }
    pruned += *n;
    more = more || *n >= postbacks::kPruneBatch;
  }
  if (pruned > 0) {
    postback_metrics().pruned.Increment(pruned);
    log(LogLevel::kDebug, "postbacks_pruned", {{"events", static_cast<std::int64_t>(pruned)}});
  }
  if (more) next_prune_ = steady + options_.poll;  // a backlog: the next batch a poll later
  return pruned;
}

int PostbackSender::dispatch() {
  int sent = 0;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    auto& rows = it->second;
    const PostbackEndpoint* e = rows.empty() ? nullptr : endpoint(it->first);
    while (e != nullptr && !rows.empty() && in_flight_.load() < options_.max_in_flight) {
      {
        std::lock_guard lock(mu_);
        int& n = in_flight_by_endpoint_[e->id];
        if (n >= options_.max_in_flight_per_endpoint) break;
        ++n;
      }
      send(rows.front().delivery, *e);
      rows.pop_front();
      --waiting_count_;
      ++sent;
    }
    if (rows.empty()) {
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
  return sent;
}

void PostbackSender::send(const PostbackDelivery& d, const PostbackEndpoint& e) {
  HttpRequest req;
  req.method = "POST";
  req.url = e.url;
  req.body = postback_body(d.facts);
  req.timeout = options_.timeout;
  const std::int64_t now_ms = clock_.now_ms();
  const std::int64_t unix_s = now_ms / 1000;
  // Through a rotation's overlap every attempt, retry or replay is signed with both secrets.
  const std::vector<std::string> secrets = postbacks::signing_secrets(
      e.secret, e.previous_secret, e.previous_secret_expires_at_ms, now_ms);
  req.headers = {
      {"Content-Type", "application/json"},
      {"User-Agent", "leadflow-postbacks/1"},
      {std::string(postbacks::kEventIdHeader), d.facts.event_id},
      {"Leadflow-Event-Type", d.facts.kind},
      {std::string(postbacks::kSignatureHeader), postbacks::sign(secrets, unix_s, req.body)}};
  in_flight_.fetch_add(1);
  client_.send(
      std::move(req), [this, event_id = d.facts.event_id, endpoint_id = d.endpoint_id,
                       attempts = d.attempts, window_from = d.window_from_ms](HttpResponse r) {
        Finished f;
        PostbackAttempt& a = f.attempt;
        a.event_id = event_id;
        a.endpoint_id = endpoint_id;
        a.at_ms = clock_.now_ms();
        a.status = r.status;
        a.latency_us = r.elapsed.count();
        a.error = r.timed_out ? "timed out" : r.error;
        f.ok = postbacks::delivered(r.status);
        if (f.ok) {
          a.then = PostbackState::kDelivered;
        } else if (auto next = postbacks::next_attempt_at(window_from, attempts + 1, a.at_ms)) {
          a.then = PostbackState::kPending;
          a.next_at_ms = *next;
        } else {
          a.then = PostbackState::kExpired;
          postback_metrics().expired.Increment();
        }
        PostbackMetrics& m = postback_metrics();
        m.attempts.Add({{"result", f.ok ? "delivered" : "failed"}}).Increment();
        m.latency.Observe(static_cast<double>(a.latency_us) / 1e6);
        {
          std::lock_guard lock(mu_);
          if (--in_flight_by_endpoint_[endpoint_id] <= 0) in_flight_by_endpoint_.erase(endpoint_id);
          std::deque<bool>& recent = recent_[endpoint_id];
          recent.push_front(f.ok);
          if (recent.size() > postbacks::kFailingAfter) recent.pop_back();
          finished_.push_back(std::move(f));
          in_flight_.fetch_sub(1);
          ++completions_;
        }
        wake_.notify_all();
      });
}

int PostbackSender::failing_endpoints() const {
  std::lock_guard lock(mu_);
  int n = 0;
  for (const auto& [id, recent] : recent_) {
    bool newest_first[postbacks::kFailingAfter] = {};
    std::copy(recent.begin(), recent.end(), newest_first);
    if (postbacks::endpoint_failing(std::span<const bool>(newest_first, recent.size()))) ++n;
  }
  return n;
}

}  // namespace leadflow

namespace leadflow {

PostbackService::PostbackService(const Config& c, PostbackStore& store, const Clock& clock) {
  CurlClientOptions co;
  co.allow_private_addresses = c.allow_private_buyers;
  co.ca_file = c.buyer_ca_file;
  co.http2 = false;  // one request at a time per connection: a hanging endpoint holds its own
  co.max_connections = c.postback_concurrency;
  co.max_host_connections = c.postback_concurrency;
  co.clock = &clock;
  client_ = make_curl_client(co);
  PostbackSenderOptions o;
  o.max_in_flight = c.postback_concurrency;
  o.timeout = std::chrono::milliseconds(c.postback_timeout_ms);
  o.lease = std::max(o.lease, o.timeout * 4);
  o.retention_days = c.postback_retention_days;
  sender_ = std::make_unique<PostbackSender>(store, *client_, clock, o);
  sender_->start();
}

PostbackService::~PostbackService() {
  sender_->stop();
  sender_.reset();
  client_.reset();
}

}  // namespace leadflow
