#pragma once
#include <memory>
#include <string>

#include "leadflow/base/config.hpp"
#include "leadflow/queue/queue.hpp"

namespace leadflow {

/// The topic names of a deployment: LEADFLOW_TOPIC_PREFIX + ".leads", ".results", ".leads.retry",
/// ".leads.dead".
Topics topics_for(const Config& config);

/// Opens the queue named by LEADFLOW_QUEUE: the embedded queue in $LEADFLOW_DATA_DIR/queue, or
/// Kafka (creating missing topics). nullptr and `error` ("LEADFLOW_...: why") when it cannot.
std::unique_ptr<LeadQueue> open_queue(const Config& config, std::string& error);

}  // namespace leadflow
