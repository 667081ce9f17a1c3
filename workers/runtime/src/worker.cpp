#include "leadflow/runtime/worker.hpp"

#include <charconv>

#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/auction/worker_metrics.hpp"

namespace leadflow {

namespace {
constexpr std::size_t kMaxBatch = 256;
constexpr auto kStoreRetry = std::chrono::milliseconds(200);
}  // namespace

OutcomeRecorder::OutcomeRecorder(Store& store) : store_(store), thread_([this] { run(); }) {}

OutcomeRecorder::~OutcomeRecorder() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  thread_.join();
}

StoreStatus OutcomeRecorder::record(OutcomeRecord outcome) {
  auto item = std::make_shared<Item>();
  item->record = std::move(outcome);
  std::unique_lock lock(mu_);
  if (stopping_) return StoreStatus::kUnavailable;
  queue_.push_back(item);
  work_cv_.notify_one();
  done_cv_.wait(lock, [&] { return item->done; });
  return item->status;
}

void OutcomeRecorder::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty() && stopping_) return;
    std::vector<std::shared_ptr<Item>> batch;
    batch.swap(queue_);
    lock.unlock();
    std::vector<OutcomeRecord> records;
    records.reserve(batch.size());
    for (auto& item : batch) records.push_back(item->record);
    auto statuses = store_.record_outcomes(records);
    lock.lock();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      batch[i]->status = i < statuses.size() ? statuses[i] : StoreStatus::kUnavailable;
      batch[i]->done = true;
    }
    done_cv_.notify_all();
  }
}

Worker::Worker(LeadQueue& queue, Store& store, LeadDecider& distributor,
               OutcomePublisher& publisher, const Clock& clock, WorkerOptions options)
    : queue_(queue),
      store_(store),
      distributor_(distributor),
      publisher_(publisher),
      clock_(clock),
      options_(std::move(options)),
      recorder_(store) {}

Worker::~Worker() { stop(); }

void Worker::start() {
  consumer_ = queue_.make_consumer(options_.group, {options_.topics.leads, options_.topics.retry});
  consumer_->set_revoke_handler([this] { drain_for_rebalance(); });
  consume_thread_ = std::thread([this] { consume_loop(); });
  for (int i = 0; i < options_.concurrency; ++i)
    auction_threads_.emplace_back([this] { auction_loop(); });
  log(LogLevel::kInfo, "worker_started",
      {{"group", options_.group}, {"concurrency", options_.concurrency}});
}

void Worker::stop() {
  if (stopping_.exchange(true)) return;
  if (consume_thread_.joinable()) consume_thread_.join();
  {
    std::lock_guard lock(jobs_mu_);
    consumer_done_ = true;
  }
  jobs_cv_.notify_all();
  for (auto& t : auction_threads_) t.join();
  auction_threads_.clear();
  apply_commits();
  if (consumer_) consumer_->close();
  log(LogLevel::kInfo, "worker_stopped", {{"group", options_.group}});
}

void Worker::consume_loop() {
  auto& metrics = worker_metrics();
  std::vector<QueueRecord> batch;
  std::vector<Lead> leads;
  while (!stopping_) {
    apply_commits();
    {
      // Read ahead no further than the auction threads can take: the queue, not memory, holds
      // the backlog. This wait and the poll timeouts below are only how often the loop looks at
      // `stopping_` (real time); what the worker schedules (the store retry pause) runs on clock_.
      std::unique_lock lock(jobs_mu_);
      space_cv_.wait_for(lock, std::chrono::milliseconds(100), [&] {
        return stopping_ || jobs_.size() + busy_ < static_cast<std::size_t>(options_.concurrency) * 2;
      });
      if (stopping_) break;
      if (jobs_.size() + busy_ >= static_cast<std::size_t>(options_.concurrency) * 2) continue;
    }
    auto first = consumer_->poll(std::chrono::milliseconds(100));
    if (!first) continue;
    batch.clear();
    leads.clear();
    batch.push_back(std::move(*first));
    while (batch.size() < kMaxBatch) {
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
    for (auto& r : batch) {
      auto lead = decode_lead(r.payload);
      if (!lead) {
        // A record no worker can read is set aside, never retried forever.
        log(LogLevel::kError, "undecodable_record",
            {{"topic", r.topic}, {"partition", r.partition}, {"offset", r.offset}});
        queue_.producer().produce(options_.topics.dead, r.key, r.payload, std::chrono::seconds(5));
        finish(r);
        continue;
      }
      leads.push_back(std::move(*lead));
      good.push_back(std::move(r));
    }
    if (leads.empty()) continue;

    // Record the leads as pending, in one transaction, before anything is sold.
    std::vector<LeadInsertResult> inserted;
    while (!stopping_) {
      inserted = store_.insert_leads(leads);
      if (inserted.size() == leads.size()) break;
      healthy_ = false;
      metrics.store_errors.Increment();
      log(LogLevel::kWarn, "store_unavailable", {{"during", "insert_leads"}});
      clock_.sleep_for(kStoreRetry);
    }
    if (inserted.size() != leads.size()) break;  // stopping: the records stay uncommitted
    healthy_ = true;

    std::lock_guard lock(jobs_mu_);
    for (std::size_t i = 0; i < leads.size(); ++i) {
      if (!inserted[i].inserted) metrics.redeliveries.Increment();
      if (!inserted[i].inserted && is_final(inserted[i].existing_status)) {
        // Decided before a crash lost the commit: answer any waiter again, sell nothing.
        jobs_.push_back({std::move(good[i]), std::move(leads[i]), consumed_at, true});
        continue;
      }
      jobs_.push_back({std::move(good[i]), std::move(leads[i]), consumed_at, false});
    }
    metrics.in_flight.Set(static_cast<double>(jobs_.size() + busy_));
    jobs_cv_.notify_all();
  }
}

void Worker::auction_loop() {
  auto& metrics = worker_metrics();
  for (;;) {
    Job job;
    {
      std::unique_lock lock(jobs_mu_);
      jobs_cv_.wait(lock, [&] { return !jobs_.empty() || consumer_done_; });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++busy_;
    }
    space_cv_.notify_one();

    std::optional<Distribution> outcome;
    if (!job.already_decided) outcome = decide_or_set_aside(job);
    if (job.already_decided) {
      publish_stored(job.lead.id);
    } else if (outcome) {
      Distribution d = std::move(*outcome);
      const Distribution decided = d;
      StoreStatus status;
      while ((status = recorder_.record({job.lead.id, std::move(d)})) == StoreStatus::kUnavailable) {
        metrics.store_errors.Increment();
        if (stopping_ && consumer_done_) break;
        clock_.sleep_for(kStoreRetry);
        d = decided;
      }
      if (status == StoreStatus::kOk) {
        metrics.decided(decided.status);
        if (decided.status == DeliveryStatus::kDelivered) metrics.revenue_cents.Increment(decided.price);
        metrics.decide_seconds.Observe(
            std::chrono::duration<double>(clock_.steady_now() - job.consumed_at).count());
        publisher_.publish({job.lead.id, decided.status, decided.buyer_id, decided.price, decided.payout});
        log(LogLevel::kDebug, "lead_decided",
            {{"lead_id", job.lead.id}, {"status", to_string(decided.status)}});
      } else if (status == StoreStatus::kConflict) {
        publish_stored(job.lead.id);
      } else {
        // Not recorded (store down while stopping): leave it uncommitted for redelivery.
        {
          std::lock_guard lock(jobs_mu_);
          --busy_;
        }
        drained_cv_.notify_all();
        continue;
      }
    }
    finish(job.record);
    {
      std::lock_guard lock(jobs_mu_);
      --busy_;
      metrics.in_flight.Set(static_cast<double>(jobs_.size() + busy_));
    }
    space_cv_.notify_one();
    drained_cv_.notify_all();
  }
}

namespace {
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

std::optional<Distribution> Worker::decide_or_set_aside(const Job& job) {
  try {
    return distributor_.decide(job.lead);
  } catch (const AuctionDeferred& e) {
    // Our store, not a buyer, stopped the auction: the lead is not decided and the attempt does
    // not count. It goes back through the retry topic under the same attempt number.
    const int attempt = attempt_of(job.record, options_.topics);
    log(LogLevel::kWarn, "auction_deferred", {{"lead_id", job.lead.id}, {"error", e.what()}});
    while (queue_.producer().produce(options_.topics.retry, job.lead.id + ":" + std::to_string(attempt),
                                     job.record.payload, std::chrono::seconds(10)) != ProduceStatus::kOk) {
      clock_.sleep_for(kStoreRetry);
    }
    worker_metrics().retried.Increment();
    return std::nullopt;
  } catch (const std::exception& e) {
    // A lead whose auction throws must not stall its partition or crash the worker in a loop:
    // it goes to the retry topic, and after the last attempt it is recorded as failed (so the
    // seller learns its fate) and copied to the dead-letter topic for the operator.
    const int attempt = attempt_of(job.record, options_.topics);
    log(LogLevel::kError, "auction_failed",
        {{"lead_id", job.lead.id}, {"attempt", attempt}, {"error", e.what()}});
    if (attempt < options_.max_attempts &&
        queue_.producer().produce(options_.topics.retry, job.lead.id + ":" + std::to_string(attempt + 1),
                                  job.record.payload, std::chrono::seconds(10)) == ProduceStatus::kOk) {
      worker_metrics().retried.Increment();
      return std::nullopt;
    }
    queue_.producer().produce(options_.topics.dead, job.lead.id, job.record.payload,
                              std::chrono::seconds(10));
    worker_metrics().dead_lettered.Increment();
    Distribution d;
    d.status = DeliveryStatus::kFailed;
    d.reason = std::string("processing failed: ") + e.what();
    d.decided_at_ms = clock_.now_ms();
    return d;
  }
}

void Worker::drain_for_rebalance() {
  // Runs on the consume thread inside poll(), so no new job arrives meanwhile. Whatever is queued
  // or running is finished and committed before the partitions go to another worker: a lead is
  // never auctioned by two workers at once.
  {
    std::unique_lock lock(jobs_mu_);
    drained_cv_.wait(lock, [&] { return jobs_.empty() && busy_ == 0; });
  }
  apply_commits();
  std::lock_guard lock(offsets_mu_);
  trackers_.clear();
  to_commit_.clear();
  log(LogLevel::kInfo, "worker_partitions_revoked", {{"group", options_.group}});
}

void Worker::publish_stored(const std::string& lead_id) {
  if (auto r = store_.get_lead(lead_id)) {
    const auto& d = r->distribution;
    publisher_.publish({lead_id, d.status, d.buyer_id, d.price, d.payout});
  }
}

void Worker::finish(const QueueRecord& record) {
  std::lock_guard lock(offsets_mu_);
  const std::int64_t next = trackers_[{record.topic, record.partition}].completed(record.offset);
  if (next >= 0) to_commit_[{record.topic, record.partition}] = next;
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
