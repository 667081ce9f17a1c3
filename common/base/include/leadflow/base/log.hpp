#pragma once
#include <initializer_list>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace leadflow {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

/// Structured logs: one JSON object a line on stderr ({"ts","level","event",...fields}).
/// Never pass PII or secrets as fields. Thread-safe.
void set_log_level(LogLevel level);
bool parse_log_level(std::string_view s, LogLevel& out);
bool log_enabled(LogLevel level);
void log(LogLevel level, std::string_view event,
         std::initializer_list<std::pair<const char*, nlohmann::json>> fields = {});
/// A record rather than a diagnostic (the audit log): written at level "info" whatever the log
/// level, so that turning diagnostics down never loses one. `fields` is a JSON object.
void log_record(std::string_view event, const nlohmann::json& fields);

}  // namespace leadflow
