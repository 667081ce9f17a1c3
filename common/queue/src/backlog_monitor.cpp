#include "leadflow/queue/backlog_monitor.hpp"

#include <algorithm>
#include <utility>

#include "leadflow/base/log.hpp"

namespace leadflow {

BacklogMonitor::BacklogMonitor(LeadQueue& queue, const Clock& clock, Options options)
    : queue_(queue), clock_(clock), options_(std::move(options)) {}

BacklogMonitor::~BacklogMonitor() {
  hook_.reset();
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (timer_.joinable()) timer_.join();
}

void BacklogMonitor::start() {
  measure();
  timer_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      const SteadyTime next = clock_.steady_now() + options_.interval;
      if (clock_.wait_until(lock, cv_, next, [this] { return stopping_; })) break;
      lock.unlock();
      measure();
      lock.lock();
    }
  });
  hook_ = std::make_unique<ScrapeHook>([this](auto& families) { collect(families); });
}

void BacklogMonitor::measure() {
  // Outside the lock: a Kafka reading waits on the brokers (bounded by the adapter's timeouts).
  const std::optional<GroupBacklog> b = queue_.group_backlog(options_.group);
  const SteadyTime now = clock_.steady_now();
  std::lock_guard lock(mu_);
  if (!b) {
    // Logged once per outage: the gauge going stale says the rest.
    if (known_)
      log(LogLevel::kWarn, "queue_backlog_unknown",
          {{"group", options_.group}, {"source", options_.source}});
    known_ = false;
    return;
  }
  known_ = true;
  records_ = b->records;
  // Any move of the position is the group at work (a reset to an older offset too); with nothing
  // waiting there is nothing to stall on. A first reading starts the count: how long the records
  // waited before the process started is not known.
  if (!position_ || *position_ != b->position || b->records <= 0) progress_ = now;
  position_ = b->position;
  oldest_produced_ms_ = b->oldest_produced_ms;
  stalled_seconds_ = b->records > 0 ? std::chrono::duration<double>(now - progress_).count() : 0.0;
}

void BacklogMonitor::collect(std::vector<prometheus::MetricFamily>& families) const {
  std::lock_guard lock(mu_);
  const GaugeSample::Labels labels = {{"source", options_.source}, {"group", options_.group}};
  std::vector<GaugeSample> records, stalled, oldest;
  if (known_) {
    records.push_back({labels, static_cast<double>(records_)});
    stalled.push_back({labels, stalled_seconds_});
    // The oldest waiting record of the last reading, aged to now; no sample when records wait
    // and the queue cannot tell their age.
    if (records_ <= 0) {
      oldest.push_back({labels, 0.0});
    } else if (oldest_produced_ms_) {
      const double age = std::chrono::duration<double>(clock_.now().time_since_epoch()).count() -
                         static_cast<double>(*oldest_produced_ms_) / 1000.0;
      oldest.push_back({labels, std::max(age, 0.0)});
    }
  }
  families.push_back(gauge_family(
      "leadflow_queue_backlog",
      "Records of the leads produced that the workers' group has not committed, measured from "
      "the queue's side (source=broker: committed offsets against the log end on the Kafka "
      "brokers); no sample while the queue cannot tell",
      records));
  families.push_back(gauge_family(
      "leadflow_queue_backlog_stalled_seconds",
      "Seconds records have been waiting while the workers' group committed nothing; 0 when "
      "none wait",
      stalled));
  families.push_back(gauge_family(
      "leadflow_queue_backlog_oldest_age_seconds",
      "Age of the oldest lead the workers' group has not committed (the time of the record at "
      "the group's committed offset, the oldest over the partitions), as of the last reading; "
      "0 when none wait",
      oldest));
  families.push_back(
      gauge_family("leadflow_queue_backlog_known",
                   "1 when the last backlog reading answered (every 10 s by default), else 0",
                   std::vector<GaugeSample>{{labels, known_ ? 1.0 : 0.0}}));
}

}  // namespace leadflow
