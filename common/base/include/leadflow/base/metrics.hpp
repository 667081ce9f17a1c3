#pragma once
#include <memory>
#include <string>

#include <prometheus/registry.h>

namespace leadflow {

/// The process's one Prometheus registry. Components register their families once, at start.
std::shared_ptr<prometheus::Registry> metrics_registry();
/// Text exposition format of everything registered.
std::string render_metrics();

/// Histogram buckets in seconds for request and buyer latency.
const std::vector<double>& latency_buckets();

}  // namespace leadflow
