#include "leadflow/base/metrics.hpp"

#include <cstdint>
#include <map>
#include <mutex>

#include <prometheus/text_serializer.h>

#include "leadflow/base/process_metrics.hpp"

namespace leadflow {

namespace {

struct Hooks {
  // Held while hooks run, so that a handle's destructor waits for its hook to finish.
  std::mutex mu;
  std::map<std::uint64_t, ScrapeHook::Collect> collect;
  std::uint64_t next = 0;
};

Hooks& hooks() {
  static Hooks h;
  return h;
}

}  // namespace

std::shared_ptr<prometheus::Registry> metrics_registry() {
  static auto registry = std::make_shared<prometheus::Registry>();
  return registry;
}

std::string render_metrics() {
  auto families = metrics_registry()->Collect();
  collect_process_metrics(families);
  {
    Hooks& h = hooks();
    std::lock_guard lock(h.mu);
    for (auto& [id, collect] : h.collect) collect(families);
  }
  return prometheus::TextSerializer{}.Serialize(families);
}

const std::vector<double>& latency_buckets() {
  static const std::vector<double> buckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                              0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return buckets;
}

ScrapeHook::ScrapeHook(Collect collect) {
  Hooks& h = hooks();
  std::lock_guard lock(h.mu);
  id_ = h.next++;
  h.collect.emplace(id_, std::move(collect));
}

ScrapeHook::~ScrapeHook() {
  Hooks& h = hooks();
  std::lock_guard lock(h.mu);
  h.collect.erase(id_);
}

prometheus::MetricFamily gauge_family(std::string name, std::string help,
                                      const std::vector<GaugeSample>& samples) {
  prometheus::MetricFamily f{std::move(name), std::move(help), prometheus::MetricType::Gauge, {}};
  for (const auto& s : samples) {
    prometheus::ClientMetric m;
    for (const auto& [k, v] : s.labels) m.label.push_back({k, v});
    m.gauge.value = s.value;
    f.metric.push_back(std::move(m));
  }
  return f;
}

prometheus::MetricFamily gauge_family(std::string name, std::string help, double value) {
  return gauge_family(std::move(name), std::move(help), std::vector<GaugeSample>{{{}, value}});
}

}  // namespace leadflow
