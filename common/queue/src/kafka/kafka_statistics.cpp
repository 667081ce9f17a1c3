#include <nlohmann/json.hpp>

#include "leadflow/queue/kafka_queue.hpp"

namespace leadflow {

namespace {

// A member's integer, or -1. librdkafka says -1 (unknown) or -1001 (OFFSET_INVALID: nothing
// committed) where it has no offset.
std::int64_t offset_of(const nlohmann::json& p, const char* name) {
  const auto it = p.find(name);
  return it != p.end() && it->is_number_integer() ? it->get<std::int64_t>() : -1;
}

void add_partitions(const std::string& topic, const nlohmann::json& partitions,
                    std::vector<PartitionLag>& out) {
  for (const auto& [key, p] : partitions.items()) {
    if (!p.is_object()) continue;
    const auto desired = p.find("desired");
    if (desired == p.end() || !desired->is_boolean() || !desired->get<bool>()) continue;
    const std::int64_t partition = offset_of(p, "partition");
    if (partition < 0) continue;  // librdkafka's internal "unassigned" partition
    const std::int64_t end = offset_of(p, "hi_offset");
    std::int64_t committed = offset_of(p, "committed_offset");
    if (committed < 0) committed = offset_of(p, "lo_offset");
    if (end < 0 || committed < 0) continue;
    out.push_back({topic, static_cast<int>(partition), end, committed});
  }
}

}  // namespace

std::vector<PartitionLag> lag_from_kafka_statistics(std::string_view json) {
  const auto stats = nlohmann::json::parse(json, nullptr, false);
  std::vector<PartitionLag> out;
  if (!stats.is_object()) return out;
  const auto topics = stats.find("topics");
  if (topics == stats.end() || !topics->is_object()) return out;
  for (const auto& [name, t] : topics->items()) {
    if (!t.is_object()) continue;
    const auto partitions = t.find("partitions");
    if (partitions != t.end() && partitions->is_object()) add_partitions(name, *partitions, out);
  }
  return out;
}

}  // namespace leadflow
