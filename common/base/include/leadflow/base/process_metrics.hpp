#pragma once
// The standard process_* metrics (the names Prometheus's own client libraries export), read from
// /proc/self at each scrape, and leadflow_build_info.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

namespace leadflow {

/// What /proc/self/stat says about the process, in its own units.
struct ProcStat {
  std::uint64_t utime_ticks = 0;    // field 14: user CPU, in clock ticks
  std::uint64_t stime_ticks = 0;    // field 15: system CPU, in clock ticks
  std::int64_t threads = 0;         // field 20
  std::uint64_t start_ticks = 0;    // field 22: start time after boot, in clock ticks
  std::uint64_t virtual_bytes = 0;  // field 23
  std::int64_t resident_pages = 0;  // field 24
};

/// Parses the text of /proc/PID/stat. The command name (field 2) is in parentheses and may hold
/// spaces and parentheses itself, so the fields are counted from the last ')'. nullopt when the
/// text is not a stat line.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

/// The boot time in seconds since the epoch: the `btime` line of /proc/stat's text.
std::optional<std::int64_t> parse_boot_time(std::string_view proc_stat_text);

/// Appends process_cpu_seconds_total, process_resident_memory_bytes,
/// process_virtual_memory_bytes, process_open_fds, process_max_fds, process_threads,
/// process_start_time_seconds and leadflow_build_info{version,commit}. A value /proc cannot
/// give is left out rather than reported as 0.
void collect_process_metrics(std::vector<prometheus::MetricFamily>& families);

}  // namespace leadflow
