// The retention pass: the leads received before now - LEADFLOW_RETENTION_DAYS erased, batch by
// batch, oldest first.
#include "leadflow/erasure/retention.hpp"

#include <prometheus/gauge.h>

#include <string>
#include <vector>

#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/erasure/erasure.hpp"

namespace leadflow {
namespace {

prometheus::Gauge& last_pass_gauge() {
  static prometheus::Gauge& g =
      prometheus::BuildGauge()
          .Name("leadflow_retention_last_pass_timestamp_seconds")
          .Help("When the retention pass last went through every lead past the retention period")
          .Register(*metrics_registry())
          .Add({});
  return g;
}

}  // namespace

RetentionPass::RetentionPass(IntakeStore& leads, ErasureStore& store, const Clock& clock,
                             Options options)
    : leads_(leads), store_(store), clock_(clock), options_(options) {}

RetentionPass::~RetentionPass() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::optional<std::int64_t> RetentionPass::run_once() {
  if (options_.days <= 0) return 0;
  const std::int64_t cut_ms = clock_.now_ms() - std::int64_t{options_.days} * 86'400'000;
  const ChangeActor by = retention_actor();
  std::int64_t erased = 0;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return erased;
    }
    const auto batch = store_.erasable_leads(cursor_ms_, cut_ms, options_.batch);
    if (!batch) {
      log(LogLevel::kWarn, "retention_pass_failed", {{"erased", erased}});
      return std::nullopt;
    }
    std::vector<std::string> done;
    for (const ErasableLead& l : *batch) {
      const EraseStatus s = erase_lead(leads_, store_, clock_, l.id, by, ErasureCause::kRetention);
      if (s == EraseStatus::kUnavailable) {
        log(LogLevel::kWarn, "retention_pass_failed", {{"erased", erased}});
        return std::nullopt;
      }
      if (s == EraseStatus::kErased) {
        ++erased;
        done.push_back(l.id);
      }
      // Every lead before this one is erased now (or was pending, or erased by someone else).
      cursor_ms_ = l.received_at_ms;
    }
    // The queue's records of the batch in one pass over its segments.
    if (options_.queue != nullptr && !done.empty())
      erase_queued(*options_.queue, options_.topics, done);
    if (batch->size() < static_cast<std::size_t>(options_.batch)) break;
  }
  last_pass_gauge().Set(static_cast<double>(clock_.now_ms()) / 1000.0);
  if (erased > 0)
    log(LogLevel::kInfo, "retention_pass", {{"erased", erased}, {"days", options_.days}});
  return erased;
}

void RetentionPass::start(std::chrono::milliseconds every) {
  thread_ = std::thread([this, every] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      run_once();
      lock.lock();
      cv_.wait_for(lock, every, [this] { return stopping_; });
    }
  });
}

}  // namespace leadflow
