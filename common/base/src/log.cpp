#include "leadflow/base/log.hpp"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/time_format.hpp"

namespace leadflow {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::mutex g_write_mu;

const char* name_of(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void set_log_level(LogLevel level) { g_level = static_cast<int>(level); }

bool parse_log_level(std::string_view s, LogLevel& out) {
  for (auto l : {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn, LogLevel::kError}) {
    if (s == name_of(l)) {
      out = l;
      return true;
    }
  }
  return false;
}

bool log_enabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

namespace {

nlohmann::json line_head(LogLevel level, std::string_view event) {
  return {{"ts", format_rfc3339_ms(SystemClock::instance().now_ms())},
          {"level", name_of(level)},
          {"event", event}};
}

void write_line(const nlohmann::json& line) {
  std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  text.push_back('\n');
  std::lock_guard lock(g_write_mu);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace

void log(LogLevel level, std::string_view event,
         std::initializer_list<std::pair<const char*, nlohmann::json>> fields) {
  if (!log_enabled(level)) return;
  nlohmann::json line = line_head(level, event);
  for (const auto& [k, v] : fields) line[k] = v;
  write_line(line);
}

void log_record(std::string_view event, const nlohmann::json& fields) {
  nlohmann::json line = line_head(LogLevel::kInfo, event);
  if (fields.is_object())
    for (const auto& [k, v] : fields.items()) line[k] = v;
  write_line(line);
}

}  // namespace leadflow
