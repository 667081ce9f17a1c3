#include "leadflow/base/process_metrics.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "leadflow/base/metrics.hpp"

#ifndef LEADFLOW_VERSION
#define LEADFLOW_VERSION "unknown"
#endif
#ifndef LEADFLOW_COMMIT
#define LEADFLOW_COMMIT "unknown"
#endif

namespace leadflow {

namespace {

template <class T>
bool parse_number(std::string_view s, T& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> split_spaces(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\n') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string read_file(const char* path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Counting /proc/self/fd's entries includes the descriptor the listing itself holds open.
std::optional<double> open_fds() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/fd", ec);
  if (ec) return std::nullopt;
  double n = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return std::nullopt;
    ++n;
  }
  return n > 0 ? n - 1 : 0;
}

void add_stat_families(std::vector<prometheus::MetricFamily>& families) {
  const auto stat = parse_proc_stat(read_file("/proc/self/stat"));
  const long ticks = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  if (!stat || ticks <= 0 || page <= 0) return;
  const double tick_seconds = 1.0 / static_cast<double>(ticks);
  families.push_back(
      gauge_family("process_resident_memory_bytes", "Resident memory size in bytes",
                   static_cast<double>(stat->resident_pages) * static_cast<double>(page)));
  families.push_back(gauge_family("process_virtual_memory_bytes", "Virtual memory size in bytes",
                                  static_cast<double>(stat->virtual_bytes)));
  families.push_back(gauge_family("process_threads", "Threads of the process",
                                  static_cast<double>(stat->threads)));
  auto cpu =
      gauge_family("process_cpu_seconds_total", "User and system CPU time spent in seconds",
                   static_cast<double>(stat->utime_ticks + stat->stime_ticks) * tick_seconds);
  cpu.type = prometheus::MetricType::Counter;
  cpu.metric[0].counter.value = cpu.metric[0].gauge.value;
  families.push_back(std::move(cpu));
  if (const auto boot = parse_boot_time(read_file("/proc/stat"))) {
    families.push_back(gauge_family(
        "process_start_time_seconds", "Start time of the process since the epoch in seconds",
        static_cast<double>(*boot) + static_cast<double>(stat->start_ticks) * tick_seconds));
  }
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  const auto close = text.rfind(')');
  if (close == std::string_view::npos || text.find('(') > close) return std::nullopt;
  // After the name: field 3 (state) is fields[0], so field n is fields[n - 3].
  const auto fields = split_spaces(text.substr(close + 1));
  if (fields.size() < 22) return std::nullopt;
  ProcStat s;
  const bool ok =
      parse_number(fields[11], s.utime_ticks) && parse_number(fields[12], s.stime_ticks) &&
      parse_number(fields[17], s.threads) && parse_number(fields[19], s.start_ticks) &&
      parse_number(fields[20], s.virtual_bytes) && parse_number(fields[21], s.resident_pages);
  if (!ok) return std::nullopt;
  return s;
}

std::optional<std::int64_t> parse_boot_time(std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    auto end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const auto line = text.substr(at, end - at);
    if (line.rfind("btime ", 0) == 0) {
      std::int64_t t = 0;
      const auto parts = split_spaces(line);
      if (parts.size() == 2 && parse_number(parts[1], t)) return t;
      return std::nullopt;
    }
    at = end + 1;
  }
  return std::nullopt;
}

void collect_process_metrics(std::vector<prometheus::MetricFamily>& families) {
  add_stat_families(families);
  if (const auto fds = open_fds())
    families.push_back(gauge_family("process_open_fds", "Open file descriptors", *fds));
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    families.push_back(gauge_family("process_max_fds", "Soft limit on open file descriptors",
                                    static_cast<double>(lim.rlim_cur)));
  }
  families.push_back(gauge_family(
      "leadflow_build_info", "Always 1: the version and commit this binary was built from",
      std::vector<GaugeSample>{{{{"version", LEADFLOW_VERSION}, {"commit", LEADFLOW_COMMIT}}, 1}}));
}

}  // namespace leadflow
