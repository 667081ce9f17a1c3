#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

namespace leadflow {

/// The process's one Prometheus registry. Components register their families once, at start.
std::shared_ptr<prometheus::Registry> metrics_registry();
/// Text exposition format of everything registered, the scrape hooks' families included.
std::string render_metrics();

/// Histogram buckets in seconds for request and buyer latency.
const std::vector<double>& latency_buckets();

/// Adds families read when /metrics is scraped, for values another part owns and a counter or
/// gauge updated as things happen cannot follow (a store's health, a queue's offsets, a file in
/// /proc). The hook runs on the scraping thread while the returned handle lives; destroying the
/// handle waits for a hook that is running, so the hook may use what its owner destroys next.
class ScrapeHook {
 public:
  using Collect = std::function<void(std::vector<prometheus::MetricFamily>&)>;
  explicit ScrapeHook(Collect collect);
  ~ScrapeHook();
  ScrapeHook(const ScrapeHook&) = delete;
  ScrapeHook& operator=(const ScrapeHook&) = delete;

 private:
  std::uint64_t id_;
};

/// A gauge family with one sample per label set: {{labels}, value}.
struct GaugeSample {
  using Labels = std::vector<std::pair<std::string, std::string>>;
  Labels labels;
  double value = 0;
};
prometheus::MetricFamily gauge_family(std::string name, std::string help,
                                      const std::vector<GaugeSample>& samples);
/// A single unlabelled gauge.
prometheus::MetricFamily gauge_family(std::string name, std::string help, double value);

}  // namespace leadflow
