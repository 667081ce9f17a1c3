#include "leadflow/runtime/worker.hpp"

#include <algorithm>
#include <charconv>

#include "leadflow/auction/worker_metrics.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/domain/lead_search.hpp"
#include "leadflow/erasure/erasure.hpp"

namespace leadflow {

namespace {
constexpr std::size_t kMaxBatch = 256;
constexpr auto kStoreRetry = std::chrono::milliseconds(200);
}  // namespace

OutcomeRecorder::OutcomeRecorder(IntakeStore& store, const Clock& clock)
    : store_(store), clock_(clock), thread_([this] { run(); }) {}

OutcomeRecorder::~OutcomeRecorder() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    give_up_ = true;
  }
  work_cv_.notify_all();
  thread_.join();
}

void OutcomeRecorder::record(OutcomeRecord outcome, std::function<void(StoreStatus)> done) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back({std::move(outcome), std::move(done)});
  }
  work_cv_.notify_one();
}

void OutcomeRecorder::give_up() {
  {
    std::lock_guard lock(mu_);
    give_up_ = true;
  }
  work_cv_.notify_all();
}

void OutcomeRecorder::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty() && stopping_) return;
    std::vector<Item> batch;
    batch.swap(queue_);
    lock.unlock();
    std::vector<OutcomeRecord> records;
    records.reserve(batch.size());
    for (auto& item : batch) records.push_back(item.record);
    auto statuses = store_.record_outcomes(records);
    std::vector<Item> again;
    lock.lock();
    const bool give_up = give_up_;
    lock.unlock();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const StoreStatus s = i < statuses.size() ? statuses[i] : StoreStatus::kUnavailable;
      if (s == StoreStatus::kUnavailable) {
        worker_metrics().store_errors.Increment();
        if (!give_up) {
          again.push_back(std::move(batch[i]));
          continue;
        }
      }
      batch[i].done(s);
    }
    if (!again.empty()) {
      log(LogLevel::kWarn, "store_unavailable", {{"during", "record_outcomes"}});
      clock_.sleep_for(kStoreRetry);
    }
    lock.lock();
    for (auto& item : again) queue_.push_back(std::move(item));
  }
}

void HeldLeads::add(const QueueRecord& record, std::int64_t received_at_ms) {
  std::lock_guard lock(mu_);
  auto [it, added] =
      by_record_.try_emplace({record.topic, record.partition, record.offset}, received_at_ms);
  if (added) received_.insert(received_at_ms);
}

void HeldLeads::remove(const QueueRecord& record) {
  std::lock_guard lock(mu_);
  auto it = by_record_.find({record.topic, record.partition, record.offset});
  if (it == by_record_.end()) return;
  received_.erase(received_.find(it->second));
  by_record_.erase(it);
}

std::optional<std::int64_t> HeldLeads::oldest_received_ms() const {
  std::lock_guard lock(mu_);
  if (received_.empty()) return std::nullopt;
  return *received_.begin();
}

Worker::Worker(LeadQueue& queue, IntakeStore& store, LeadDecider& distributor,
               OutcomePublisher& publisher, const Clock& clock, WorkerOptions options)
    : queue_(queue),
      store_(store),
      distributor_(distributor),
      publisher_(publisher),
      clock_(clock),
      options_(std::move(options)),
      recorder_(store, clock),
      window_(AuctionWindowOptions{.initial = options_.first_window,
                                   .maximum = options_.concurrency}) {}

Worker::~Worker() { stop(); }

void Worker::start() {
  consumer_ = queue_.make_consumer(options_.group, {options_.topics.leads, options_.topics.retry});
  consumer_->set_revoke_handler([this] { drain_for_rebalance(); });
  consume_thread_ = std::thread([this] { consume_loop(); });
  log(LogLevel::kInfo, "worker_started",
      {{"group", options_.group}, {"concurrency", options_.concurrency}});
}

int Worker::held() const {
  std::lock_guard lock(held_mu_);
  return held_;
}

int Worker::running() const {
  std::lock_guard lock(held_mu_);
  return running_;
}

int Worker::window() const {
  std::lock_guard lock(held_mu_);
  return window_.size();
}

bool Worker::leads_waiting() const {
  std::lock_guard lock(held_mu_);
  return !waiting_.empty();
}

std::vector<PartitionLag> Worker::lag() const {
  return consumer_ ? consumer_->lag() : std::vector<PartitionLag>{};
}

void Worker::stop() {
  if (stopping_.exchange(true)) return;
  if (consume_thread_.joinable()) consume_thread_.join();
  {
    // Every auction in flight finishes and is recorded; a store that cannot take an outcome
    // now leaves that lead uncommitted, to be delivered again after the restart.
    recorder_.give_up();
    std::unique_lock lock(held_mu_);
    space_cv_.wait(lock, [&] { return held_ == 0; });
  }
  apply_commits();
  if (consumer_) consumer_->close();
  log(LogLevel::kInfo, "worker_stopped", {{"group", options_.group}});
}

void Worker::consume_loop() {
  auto& metrics = worker_metrics();
  std::vector<QueueRecord> batch;
  std::vector<Lead> leads;
  // Auctions in flight are bounded by the concurrency; a read-ahead of up to one batch (no more
  // than the concurrency) waits beside them, so a finished auction is replaced at once.
  const std::size_t in_flight = static_cast<std::size_t>(std::max(1, options_.concurrency));
  const std::size_t limit = in_flight + std::min(kMaxBatch, in_flight);
  while (!stopping_) {
    apply_commits();
    std::size_t room;
    {
      // Read ahead no further than the worker may hold: the queue, not memory, holds the
      // backlog. This wait and the poll timeouts below are only how often the loop looks at
      // `stopping_` (real time); what the worker schedules (the store retry pause) runs on clock_.
      std::unique_lock lock(held_mu_);
      space_cv_.wait_for(lock, std::chrono::milliseconds(100),
                         [&] { return stopping_ || static_cast<std::size_t>(held_) < limit; });
      if (stopping_) break;
      if (static_cast<std::size_t>(held_) >= limit) continue;
      room = std::min(kMaxBatch, limit - static_cast<std::size_t>(held_));
    }
    auto first = consumer_->poll(std::chrono::milliseconds(100));
    if (!first) continue;
    batch.clear();
    leads.clear();
    batch.push_back(std::move(*first));
    while (batch.size() < room) {
      auto more = consumer_->poll(std::chrono::milliseconds(0));
      if (!more) break;
      batch.push_back(std::move(*more));
    }
    const SteadyTime consumed_at = clock_.steady_now();
    // A rebalance inside poll() may have taken partitions away after some of this batch was
    // handed out: those records now belong to another worker, which will read them again.
    const std::uint64_t generation = consumer_->generation();
    std::erase_if(batch, [&](const QueueRecord& r) {
      if (r.generation == generation) return false;
      metrics.stale_records.Increment();
      return true;
    });
    if (batch.empty()) continue;
    std::vector<QueueRecord> good;
    {
      std::lock_guard lock(offsets_mu_);
      for (auto& r : batch) trackers_[{r.topic, r.partition}].started(r.offset);
    }
    {
      std::lock_guard lock(held_mu_);
      held_ += static_cast<int>(batch.size());
    }
    for (auto& r : batch) {
      auto lead = decode_lead(r.payload);
      if (!lead) {
        // A record no worker can read is set aside, never retried forever.
        log(LogLevel::kError, "undecodable_record",
            {{"topic", r.topic}, {"partition", r.partition}, {"offset", r.offset}});
        queue_.producer().produce(options_.topics.dead, r.key, r.payload, std::chrono::seconds(5));
        release(r, true, false);
        continue;
      }
      held_leads_.add(r, lead->received_at_ms);
      leads.push_back(std::move(*lead));
      good.push_back(std::move(r));
    }
    if (leads.empty()) continue;

    // Record the leads as pending, in one transaction, before anything is sold; with the keys
    // that find them by e-mail or phone (GET /v1/leads?q=).
    std::vector<SearchKeys> keys;
    if (!options_.search_secret.empty()) {
      keys.reserve(leads.size());
      for (const Lead& l : leads) keys.push_back(search_keys_of(l, options_.search_secret));
    }
    std::vector<LeadInsertResult> inserted;
    while (!stopping_) {
      inserted = store_.insert_leads(leads, keys);
      if (inserted.size() == leads.size()) break;
      healthy_ = false;
      metrics.store_errors.Increment();
      log(LogLevel::kWarn, "store_unavailable", {{"during", "insert_leads"}});
      clock_.sleep_for(kStoreRetry);
    }
    if (inserted.size() != leads.size()) {
      // Stopping: the records stay uncommitted, for redelivery.
      for (auto& r : good) release(r, false, false);
      break;
    }
    healthy_ = true;

    for (std::size_t i = 0; i < leads.size(); ++i) {
      if (inserted[i].refused) {
        refuse(good[i], leads[i], inserted[i].refusal, consumed_at);
        continue;
      }
      if (!inserted[i].inserted) metrics.redeliveries.Increment();
      // Decided before a crash lost the commit: answer any waiter again, sell nothing.
      const bool already_decided = !inserted[i].inserted && is_final(inserted[i].existing_status);
      auto job = std::make_shared<Job>(
          Job{std::move(good[i]), std::move(leads[i]), consumed_at, already_decided});
      std::lock_guard lock(held_mu_);
      waiting_.push_back(std::move(job));
    }
    // The batch starts in the queue's order, behind any lead still waiting, while there are
    // slots and the worker's own work keeps up with the auctions already running.
    const bool behind = behind_itself();
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::lock_guard lock(held_mu_);
        job = admit_locked(behind);
      }
      if (!job) break;
      start_job(std::move(job));
    }
  }
}

bool Worker::behind_itself() const {
  return distributor_.own_backlog() >= options_.own_backlog_limit;
}

std::shared_ptr<Worker::Job> Worker::admit_locked(bool behind) {
  if (waiting_.empty() || running_ >= window_.size()) return nullptr;
  // Falling behind holds new auctions back, but never all of them: with none running, nothing
  // would ever start one again.
  if (behind && running_ > 0) return nullptr;
  auto job = std::move(waiting_.front());
  waiting_.pop_front();
  ++running_;
  return job;
}

void Worker::start_job(std::shared_ptr<Job> job) {
  if (job->already_decided) {
    side_.run([this, job] {
      publish_stored(job->lead.id);
      release(job->record, true);
    });
    return;
  }
  distributor_.decide(job->lead,
                      [this, job](Decision decision) { on_decided(job, std::move(decision)); });
}

void Worker::on_decided(std::shared_ptr<Job> job, Decision decision) {
  // Runs on the decider's thread (the auction loop): nothing here may block.
  switch (decision.kind) {
    case Decision::Kind::kDecided:
      record(std::move(job), std::move(decision.distribution), decision.reoffer_at_ms);
      return;
    case Decision::Kind::kFailed:
      side_.run([this, job, error = std::move(decision.error),
                 tried = std::move(decision.distribution)]() mutable {
        set_aside(job, error, std::move(tried));
      });
      return;
    case Decision::Kind::kDeferred:
      side_.run([this, job, error = std::move(decision.error)] { defer(job, error); });
      return;
  }
}

void Worker::record(std::shared_ptr<Job> job, Distribution d, std::int64_t reoffer_at_ms) {
  auto decided = std::make_shared<const Distribution>(d);
  OutcomeRecord outcome{job->lead.id, std::move(d), reoffer_at_ms};
  recorder_.record(std::move(outcome), [this, job, decided](StoreStatus status) {
    auto& metrics = worker_metrics();
    if (status == StoreStatus::kOk) {
      metrics.decided(decided->status);
      // Once per sale: a shared lead counts each buyer's purchase and its part of the payout.
      if (decided->status == DeliveryStatus::kDelivered && decided->sales.empty())
        metrics.count_sale(decided->buyer_id, decided->price, decided->payout);
      for (const auto& s : decided->sales) metrics.count_sale(s.buyer_id, s.price, s.payout);
      metrics.decide_seconds.Observe(
          std::chrono::duration<double>(clock_.steady_now() - job->consumed_at).count());
      // Awaited only when the seller asked to wait: an async lead's outcome is announced to no
      // request.
      publisher_.publish({job->lead.id, decided->status, decided->buyer_id, decided->price,
                          decided->payout, job->lead.sync_wait_ms > 0});
      log(LogLevel::kDebug, "lead_decided",
          {{"lead_id", job->lead.id}, {"status", to_string(decided->status)}});
      release(job->record, true);
    } else if (status == StoreStatus::kConflict) {
      side_.run([this, job] {
        publish_stored(job->lead.id);
        release(job->record, true);
      });
    } else {
      // Not recorded (the store is down while stopping): left uncommitted for redelivery.
      release(job->record, false);
    }
  });
}

namespace {
// The reason a lead refused by the store is recorded failed with (its seller reads it too).
constexpr const char* kRefusedByStore = "refused by the store";

// Retry records are keyed "<lead id>:<attempt>"; a record of the leads topic is attempt 1.
int attempt_of(const QueueRecord& r, const Topics& topics) {
  if (r.topic != topics.retry) return 1;
  const auto colon = r.key.rfind(':');
  if (colon == std::string::npos) return 1;
  int n = 1;
  std::from_chars(r.key.data() + colon + 1, r.key.data() + r.key.size(), n);
  return std::max(1, n);
}
}  // namespace

void Worker::set_aside(std::shared_ptr<Job> job, const std::string& error, Distribution tried) {
  // A lead whose auction fails must not stall its partition or crash the worker in a loop: it
  // goes to the retry topic, and after the last attempt it is recorded as failed (so the seller
  // learns its fate) and copied to the dead-letter topic for the operator.
  const int attempt = attempt_of(job->record, options_.topics);
  log(LogLevel::kError, "auction_failed",
      {{"lead_id", job->lead.id}, {"attempt", attempt}, {"error", error}});
  if (attempt < options_.max_attempts &&
      queue_.producer().produce(
          options_.topics.retry, job->lead.id + ":" + std::to_string(attempt + 1),
          job->record.payload, std::chrono::seconds(10)) == ProduceStatus::kOk) {
    worker_metrics().retried.Increment();
    release(job->record, true);
    return;
  }
  queue_.producer().produce(options_.topics.dead, job->lead.id, job->record.payload,
                            std::chrono::seconds(10));
  worker_metrics().dead_lettered.Increment();
  // The last try's pings and posts are kept: the operator settling the lead sees when it was
  // posted, to whom and at what price (the earlier tries left their post intents, which that
  // last try asked first again).
  Distribution d;
  d.attempts = std::move(tried.attempts);
  d.ineligible = std::move(tried.ineligible);
  d.status = DeliveryStatus::kFailed;
  d.reason = "processing failed: " + error;
  d.decided_at_ms = clock_.now_ms();
  record(std::move(job), std::move(d));
}

void Worker::refuse(const QueueRecord& record, const Lead& lead, const std::string& refusal,
                    SteadyTime consumed_at) {
  // The store refuses this lead for good (a constraint no retry gets past, never an outage):
  // asking again would stall its partition for ever. It is written without the person's fields
  // (the erasure's tombstone: its seller, campaign, vertical, source and times) and recorded
  // failed, so that the seller and the operator find it and a seller waiting on it is answered;
  // the lead as posted is set aside on the dead-letter topic for the operator. The record is
  // committed only once that copy is durable, so an acknowledged lead is never dropped. A lead
  // refused even so (its seller or campaign is what the store refuses) has no row: a seller
  // waiting on it is still answered `failed` (a GET of it answers 404), and the operator finds it
  // on the dead-letter topic (counted as refused, logged with its id).
  log(LogLevel::kError, "lead_refused_by_store", {{"lead_id", lead.id}, {"refusal", refusal}});
  const Lead husk = tombstone_of(lead);
  const std::vector<LeadInsertResult> written = store_.insert_leads({&husk, 1});
  if (written.size() != 1) {
    // Our own outage: nothing is decided. Delivered again after a restart or a rebalance.
    worker_metrics().store_errors.Increment();
    release(record, false, false);
    return;
  }
  if (queue_.producer().produce(options_.topics.dead, lead.id, record.payload,
                                std::chrono::seconds(10)) != ProduceStatus::kOk) {
    // The queue cannot take it either: it stays uncommitted and is delivered again after a
    // restart or a rebalance; meanwhile its partition's commits wait behind it.
    release(record, false, false);
    return;
  }
  worker_metrics().refused.Increment();
  worker_metrics().dead_lettered.Increment();
  if (written[0].refused) {
    log(LogLevel::kError, "lead_refused_without_row", {{"lead_id", lead.id}});
    publisher_.publish({lead.id, DeliveryStatus::kFailed, "", 0, 0, lead.sync_wait_ms > 0});
    release(record, true, false);
    return;
  }
  if (!written[0].inserted && is_final(written[0].existing_status)) {
    // Recorded before a crash lost the commit: answer any waiter again.
    publish_stored(lead.id);
    release(record, true, false);
    return;
  }
  {
    std::lock_guard lock(held_mu_);
    ++running_;  // record() releases it as a started job
  }
  Distribution d;
  d.status = DeliveryStatus::kFailed;
  d.reason = kRefusedByStore;
  d.decided_at_ms = clock_.now_ms();
  Worker::record(std::make_shared<Job>(Job{record, husk, consumed_at, false}), std::move(d));
}

void Worker::defer(std::shared_ptr<Job> job, const std::string& error) {
  // Our store, not a buyer, stopped the auction: the lead is not decided and the attempt does
  // not count. It goes back through the retry topic under the same attempt number.
  const int attempt = attempt_of(job->record, options_.topics);
  log(LogLevel::kWarn, "auction_deferred", {{"lead_id", job->lead.id}, {"error", error}});
  if (queue_.producer().produce(options_.topics.retry, job->lead.id + ":" + std::to_string(attempt),
                                job->record.payload,
                                std::chrono::seconds(10)) == ProduceStatus::kOk) {
    worker_metrics().retried.Increment();
    release(job->record, true);
    return;
  }
  // The queue cannot take it either: the lead stays uncommitted and is delivered again after a
  // restart or a rebalance; meanwhile its partition's commits wait behind it.
  release(job->record, false);
}

void Worker::release(const QueueRecord& record, bool done, bool started) {
  held_leads_.remove(record);
  if (done) {
    std::lock_guard lock(offsets_mu_);
    const std::int64_t next = trackers_[{record.topic, record.partition}].completed(record.offset);
    if (next >= 0) to_commit_[{record.topic, record.partition}] = next;
  }
  // A finished auction makes room for the next lead waiting, and for one more while the worker
  // keeps up: after it fell behind, the auctions in flight grow back as it catches up. Its end
  // moves the window: wider if the decider's work kept its time meanwhile, halved if not.
  const bool behind = behind_itself();
  const std::uint64_t times_behind = started ? distributor_.times_behind() : 0;
  std::shared_ptr<Job> next, more;
  {
    std::lock_guard lock(held_mu_);
    --held_;
    if (started) {
      --running_;
      if (times_behind != times_behind_seen_) {
        times_behind_seen_ = times_behind;
        window_.fell_behind(clock_.steady_now());
      } else {
        window_.finished(clock_.steady_now());
      }
    }
    next = admit_locked(behind);
    if (next && !behind) more = admit_locked(false);
    // Under the lock: once stop() sees nothing held it may destroy this worker, and a notify
    // still running after the unlock would touch a destroyed condition variable (ThreadSanitizer
    // caught it). With nothing held there is no `next` either, so nothing below runs then.
    space_cv_.notify_all();
  }
  if (next) start_job(std::move(next));
  if (more) start_job(std::move(more));
}

void Worker::drain_for_rebalance() {
  // Runs on the consume thread inside poll(), so no new lead arrives meanwhile. Whatever is held
  // is finished and committed before the partitions go to another worker: a lead is never
  // auctioned by two workers at once.
  {
    std::unique_lock lock(held_mu_);
    space_cv_.wait(lock, [&] { return held_ == 0; });
  }
  apply_commits();
  std::lock_guard lock(offsets_mu_);
  trackers_.clear();
  to_commit_.clear();
  log(LogLevel::kInfo, "worker_partitions_revoked", {{"group", options_.group}});
}

void Worker::publish_stored(const std::string& lead_id) {
  if (auto r = store_.get_lead(lead_id).value) {
    const auto& d = r->distribution;
    publisher_.publish({lead_id, d.status, d.buyer_id, d.price, d.payout});
  }
}

void Worker::apply_commits() {
  std::map<std::pair<std::string, int>, std::int64_t> commits;
  {
    std::lock_guard lock(offsets_mu_);
    commits.swap(to_commit_);
  }
  for (const auto& [tp, next] : commits) consumer_->commit(tp.first, tp.second, next);
}

}  // namespace leadflow
