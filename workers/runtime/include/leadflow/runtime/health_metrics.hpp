#pragma once
#include <memory>

#include "leadflow/base/metrics.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// leadflow_store_up and leadflow_queue_up, asked of the store and the queue at each scrape with
/// the same calls /readyz makes. Both processes export them; `store` and `queue` must outlive the
/// returned hook.
std::unique_ptr<ScrapeHook> scrape_store_and_queue_up(StorePort& store, LeadQueue& queue);

}  // namespace leadflow
