#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace leadflow {

/// An IANA time zone read from the system's TZif files (/usr/share/zoneinfo), for buyer schedules
/// and cap windows in the buyer's own time. Immutable after load, so safe to share between threads.
class TimeZone {
 public:
  /// nullptr if the name is not a readable zone ("UTC" always works, even without tzdata).
  static std::shared_ptr<const TimeZone> load(std::string_view name);
  /// Cached load: each zone's file is read once per process. Thread-safe.
  static std::shared_ptr<const TimeZone> cached(std::string_view name);

  const std::string& name() const { return name_; }
  /// Seconds east of UTC in force at `unix_s`.
  int offset_at(std::int64_t unix_s) const;

  struct LocalTime {
    int year, month, day;  // civil date
    int weekday;           // 0 = Sunday .. 6 = Saturday
    int minute_of_day;     // 0..1439
  };
  LocalTime local(std::int64_t unix_s) const;

  /// Unix seconds of the start of the local hour / day / week (Monday) / month containing `unix_s`.
  /// An hour is a local-clock hour at one offset: where a change of offset falls inside an hour
  /// (a half-hour DST change), the hour is cut there, so each piece has one offset of its own.
  std::int64_t start_of_hour(std::int64_t unix_s) const;
  std::int64_t start_of_day(std::int64_t unix_s) const;
  std::int64_t start_of_week(std::int64_t unix_s) const;
  std::int64_t start_of_month(std::int64_t unix_s) const;

 private:
  std::string name_;
  std::vector<std::int64_t> transitions_;  // ascending Unix seconds
  std::vector<int> offsets_;               // offset in force from transitions_[i]
  int initial_offset_ = 0;                 // before the first transition
  std::string posix_tail_;  // TZif v2+ footer rule for times after the last transition
  friend struct TzParser;
};

/// Whether a buyer's schedule ({"timezone": "...", "hours": {"mon": [["09:00","17:00"]], ...}})
/// is open at `unix_s`. A null schedule is always open; a day absent from "hours" is closed when
/// "hours" names any day. Unknown zones count as closed (validated at config time).
bool schedule_open(const nlohmann::json& schedule, std::int64_t unix_s);

}  // namespace leadflow
