#pragma once
// The reader's hours, days, weeks and months: the zone-local stretches a report's quarter hours
// are folded into, where they begin and how they are labelled. Where a stretch begins is
// TimeZone's to say (start_of_hour and the others, docs/time-zones.md): an hour is a local-clock
// hour at one offset, so an hour a DST change repeats is two stretches, and a half hour repeated
// by a half-hour change (Lord Howe) is a stretch of its own labelled with its offset; a day runs
// from local midnight to local midnight, 23 or 25 hours long across a change.
#include <cstdint>
#include <string>
#include <vector>

#include "leadflow/base/tz.hpp"

namespace leadflow::reports {

/// What a report is cut by in time: nothing (one sum), or the reader's hours, days, weeks
/// (from Monday) or months.
enum class TimeCut { kNone, kHour, kDay, kWeek, kMonth };

/// A stretch: the instant it starts (Unix ms; orders rows) and its label in the reader's zone:
/// "2026-04-05T01:30+10:30" for an hour (with the offset: a repeated hour is two hours),
/// "2026-04-05" for a day or the week starting that day, "2026-04" for a month.
struct Stretch {
  std::int64_t start_ms = 0;
  std::string label;
};

/// The stretch of `cut` in `tz` holding the instant `at_ms`. `cut` is not kNone.
Stretch stretch_of(const TimeZone& tz, TimeCut cut, std::int64_t at_ms);

/// The quarter hours in (from_ms, to_ms) where a new stretch of `cut` begins: the cuts a
/// RollupQuery is given so no sum spans two stretches. Rollup buckets are quarter hours, so a
/// change of offset is found on one: exact for every offset in use (multiples of 15 minutes).
std::vector<std::int64_t> stretch_cuts(const TimeZone& tz, TimeCut cut, std::int64_t from_ms,
                                       std::int64_t to_ms);

/// The local midnight, as Unix ms, of the civil date `days` (days since 1970-01-01) in `tz`;
/// where a jump skips midnight, the jump.
std::int64_t local_midnight_ms(const TimeZone& tz, std::int64_t days);

/// The local date holding `at_ms` in `tz`: "2026-04-05".
std::string local_date(const TimeZone& tz, std::int64_t at_ms);

/// An offset east of UTC as a label shows it: "+10:30", "-05:00".
std::string offset_text(int seconds);

}  // namespace leadflow::reports
