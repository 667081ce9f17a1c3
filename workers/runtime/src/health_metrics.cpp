#include "leadflow/runtime/health_metrics.hpp"

namespace leadflow {

std::unique_ptr<ScrapeHook> scrape_store_and_queue_up(StorePort& store, LeadQueue& queue) {
  return std::make_unique<ScrapeHook>([&store, &queue](auto& families) {
    families.push_back(gauge_family("leadflow_store_up",
                                    "1 when the store answers this process, else 0",
                                    store.healthy() ? 1 : 0));
    families.push_back(gauge_family(
        "leadflow_queue_up",
        "1 when the queue is reachable from this process (Kafka: a broker answers), else 0",
        queue.healthy() ? 1 : 0));
  });
}

}  // namespace leadflow
