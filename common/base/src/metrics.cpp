#include "leadflow/base/metrics.hpp"

#include <prometheus/text_serializer.h>

namespace leadflow {

std::shared_ptr<prometheus::Registry> metrics_registry() {
  static auto registry = std::make_shared<prometheus::Registry>();
  return registry;
}

std::string render_metrics() {
  return prometheus::TextSerializer{}.Serialize(metrics_registry()->Collect());
}

const std::vector<double>& latency_buckets() {
  static const std::vector<double> buckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                              0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return buckets;
}

}  // namespace leadflow
