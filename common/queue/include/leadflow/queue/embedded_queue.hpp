#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "leadflow/queue/queue.hpp"

namespace leadflow {

struct EmbeddedQueueOptions {
  std::string dir;  // created if missing; one process owns it (flock)
  int partitions = 8;
  std::int64_t max_backlog = 1'000'000;  // produced but uncommitted records; beyond: kQueueFull
  std::size_t segment_bytes = 64u << 20;
  std::chrono::milliseconds offsets_flush_interval{100};
};

/// The embedded default's durable queue: an append-only, CRC-checked segment log on local disk.
/// A record is acknowledged only after fsync; concurrent producers share one fsync (group commit).
/// Consumer groups keep committed offsets in a file written atomically; on restart every record
/// above them is delivered again. Memory holds only a small index entry per unconsumed record;
/// payloads are read back from the file. Thread-safe.
std::unique_ptr<LeadQueue> open_embedded_queue(const EmbeddedQueueOptions& options,
                                               std::string& error);

}  // namespace leadflow
