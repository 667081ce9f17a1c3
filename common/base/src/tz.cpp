#include "leadflow/base/tz.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "leadflow/base/log.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/base/time_format.hpp"
#include "tzif.hpp"

// IANA time zones read from TZif files (RFC 8536, RFC 9636) by hand: libstdc++ 12 has no
// std::chrono::tzdb, and setenv("TZ") + localtime_r is process-wide state, unsafe with workers.
//
// What a loaded TimeZone holds:
// - transitions_/offsets_: the file's transitions, then the footer's DST rule unrolled up to
//   kUnrollUntilYear, so the usual lookup is a single binary search. Debian may ship "slim" files
//   whose transitions stop in 2007 (New York): without the footer they would freeze DST forever.
// - posix_tail_: the footer, kept only when it has DST rules, evaluated (parsed again, it is a few
//   dozen bytes) for instants after the last entry of transitions_, or for every instant when the
//   file has no transitions at all (RFC 8536 §3.2). A footer without DST ("IST-5:30") only
//   repeats the last transition's offset, so it is dropped (for a file without transitions it
//   becomes initial_offset_).
//
// Reading and decoding the files is tzif.cpp; this file is the zone logic.
//
// Zone files are looked up under $TZDIR when it is set (as glibc and tzcode do; the tests point it
// at generated files), else /usr/share/zoneinfo.

namespace leadflow {
namespace {

using nlohmann::json;

constexpr std::int64_t kSecondsPerDay = 86'400;
// 400 Gregorian years are exactly 146097 days, a whole number of weeks: the calendar, weekdays
// included, repeats, and so does any POSIX TZ rule.
constexpr std::int64_t kSecondsPer400Years = 146'097 * kSecondsPerDay;
constexpr int kUnrollUntilYear = 2200;
constexpr int kUnrollFromYear = 1900;
constexpr std::size_t kMaxCachedZones = 1024;  // tzdata has about 600 names
// The civil arithmetic uses int years: instants are clamped to about +-1 million years.
constexpr std::int64_t kMaxAbsInstant = 31'556'952LL * 1'000'000;
constexpr const char* kDefaultZoneDir = "/usr/share/zoneinfo";

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if (a % b != 0 && (a < 0) != (b < 0)) --q;
  return q;
}

std::int64_t clamp_instant(std::int64_t unix_s) {
  return std::clamp(unix_s, -kMaxAbsInstant, kMaxAbsInstant);
}

// 0 = Sunday .. 6 = Saturday; 1970-01-01 was a Thursday.
int weekday_from_days(std::int64_t days) { return static_cast<int>((days % 7 + 11) % 7); }

// ---------------------------------------------------------------------------------------------
// POSIX TZ strings (the TZif footer), with the RFC 8536 §3.3.1 extension: rule times from -167 to
// 167 hours. "EST5EDT,M3.2.0,M11.1.0", "<+0330>-3:30", "<-02>2<-01>,M3.5.0/-1,M10.5.0/0".

/// One "date[/time]" of a rule: when a change happens, in the local time in force before it.
struct RuleDate {
  enum class Kind { kJulian, kZeroBased, kMonthWeekDay };  // "Jn", "n", "Mm.w.d"
  Kind kind = Kind::kMonthWeekDay;
  int day = 0;    // Jn: 1..365, February 29 never counted; n: 0..365; Mm.w.d: weekday 0..6
  int month = 0;  // Mm.w.d only
  int week = 0;   // Mm.w.d only; 5 = the last such weekday of the month
  int time = 2 * 3600;
};

struct PosixTz {
  int std_offset = 0;  // seconds east of UTC (the string itself counts west)
  bool has_dst = false;
  int dst_offset = 0;
  RuleDate start, end;  // DST starts, DST ends
};

class PosixTzParser {
 public:
  explicit PosixTzParser(std::string_view s) : s_(s) {}

  std::optional<PosixTz> parse() {
    PosixTz tz;
    if (!name()) return std::nullopt;
    const auto std_west = duration(24);
    if (!std_west) return std::nullopt;
    tz.std_offset = -*std_west;
    if (done()) return tz;
    if (!name()) return std::nullopt;
    tz.has_dst = true;
    tz.dst_offset = tz.std_offset + 3600;
    if (!done() && peek() != ',') {
      const auto dst_west = duration(24);
      if (!dst_west) return std::nullopt;
      tz.dst_offset = -*dst_west;
    }
    if (done()) {
      // No rule: POSIX leaves it to the implementation; glibc and tzcode use the US rules.
      tz.start = {RuleDate::Kind::kMonthWeekDay, 0, 3, 2, 2 * 3600};
      tz.end = {RuleDate::Kind::kMonthWeekDay, 0, 11, 1, 2 * 3600};
      return tz;
    }
    if (!eat(',') || !rule_date(tz.start) || !eat(',') || !rule_date(tz.end) || !done())
      return std::nullopt;
    return tz;
  }

 private:
  bool done() const { return i_ == s_.size(); }
  char peek() const { return done() ? '\0' : s_[i_]; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }

  // "EST" (three or more letters) or "<+0330>" (three or more of [A-Za-z0-9+-]).
  bool name() {
    const bool quoted = eat('<');
    const std::size_t begin = i_;
    while (!done() &&
           (is_alpha(s_[i_]) || (quoted && (is_digit(s_[i_]) || s_[i_] == '+' || s_[i_] == '-'))))
      ++i_;
    if (i_ - begin < 3) return false;
    return !quoted || eat('>');
  }

  std::optional<int> number(int max_digits, int max_value) {
    const std::size_t begin = i_;
    int value = 0;
    while (!done() && is_digit(s_[i_]) && i_ - begin < static_cast<std::size_t>(max_digits))
      value = value * 10 + (s_[i_++] - '0');
    if (i_ == begin || value > max_value) return std::nullopt;
    return value;
  }

  // [+-]hh[:mm[:ss]] in seconds.
  std::optional<int> duration(int max_hours) {
    int sign = 1;
    if (eat('-'))
      sign = -1;
    else
      eat('+');
    const auto hours = number(3, max_hours);
    if (!hours) return std::nullopt;
    int seconds = *hours * 3600;
    if (eat(':')) {
      const auto minutes = number(2, 59);
      if (!minutes) return std::nullopt;
      seconds += *minutes * 60;
      if (eat(':')) {
        const auto secs = number(2, 59);
        if (!secs) return std::nullopt;
        seconds += *secs;
      }
    }
    return sign * seconds;
  }

  bool rule_date(RuleDate& out) {
    if (eat('J')) {
      const auto n = number(3, 365);
      if (!n || *n < 1) return false;
      out.kind = RuleDate::Kind::kJulian;
      out.day = *n;
    } else if (eat('M')) {
      const auto m = number(2, 12);
      if (!m || *m < 1 || !eat('.')) return false;
      const auto w = number(1, 5);
      if (!w || *w < 1 || !eat('.')) return false;
      const auto d = number(1, 6);
      if (!d) return false;
      out.kind = RuleDate::Kind::kMonthWeekDay;
      out.month = *m;
      out.week = *w;
      out.day = *d;
    } else {
      const auto n = number(3, 365);
      if (!n) return false;
      out.kind = RuleDate::Kind::kZeroBased;
      out.day = *n;
    }
    if (eat('/')) {
      const auto t = duration(167);
      if (!t) return false;
      out.time = *t;
    }
    return true;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

// Days since 1970-01-01 of the rule's date in `year`.
std::int64_t rule_day(const RuleDate& r, int year) {
  const std::int64_t jan1 = days_from_civil(year, 1, 1);
  switch (r.kind) {
    case RuleDate::Kind::kJulian:
      return jan1 + r.day - 1 + (is_leap_year(year) && r.day >= 60 ? 1 : 0);
    case RuleDate::Kind::kZeroBased:
      return jan1 + r.day;
    case RuleDate::Kind::kMonthWeekDay: {
      const std::int64_t first = days_from_civil(year, static_cast<unsigned>(r.month), 1);
      std::int64_t day = first + (r.day - weekday_from_days(first) + 7) % 7 + (r.week - 1) * 7LL;
      const std::int64_t next_month = first + days_in_month(year, static_cast<unsigned>(r.month));
      while (day >= next_month) day -= 7;  // week 5: the last one
      return day;
    }
  }
  return jan1;
}

/// A change of offset produced by a rule: from `at` on, `offset` is in force.
struct RuleEvent {
  std::int64_t at;
  int offset;
};

// The rule's two changes of `year`, DST start first. Each time is local time before the change.
std::array<RuleEvent, 2> rule_events(const PosixTz& tz, int year) {
  return {RuleEvent{rule_day(tz.start, year) * kSecondsPerDay + tz.start.time - tz.std_offset,
                    tz.dst_offset},
          RuleEvent{rule_day(tz.end, year) * kSecondsPerDay + tz.end.time - tz.dst_offset,
                    tz.std_offset}};
}

// Rule events of years [first, last], ascending. A stable sort keeps rule order on ties, so a rule
// with DST all year ("EST5EDT,0/0,J365/25": DST ends exactly when next year's starts) stays DST.
std::vector<RuleEvent> rule_events(const PosixTz& tz, int first, int last) {
  std::vector<RuleEvent> events;
  for (int year = first; year <= last; ++year)
    for (const RuleEvent& e : rule_events(tz, year)) events.push_back(e);
  std::stable_sort(events.begin(), events.end(),
                   [](const RuleEvent& a, const RuleEvent& b) { return a.at < b.at; });
  return events;
}

int posix_offset_at(const PosixTz& tz, std::int64_t unix_s) {
  if (!tz.has_dst) return tz.std_offset;
  // Into 1970..2369: the answer only depends on the position in the 400-year cycle.
  std::int64_t t = unix_s % kSecondsPer400Years;
  if (t < 0) t += kSecondsPer400Years;
  const int year = civil_from_days(t / kSecondsPerDay).year;
  // A year's changes lie within a week or so of its own dates (rule times reach +-167 h), so the
  // last change at or before t is among those of the years year-2 .. year+1, and year-2's are all
  // before t.
  int offset = tz.std_offset;
  for (const RuleEvent& e : rule_events(tz, year - 2, year + 1))
    if (e.at <= t) offset = e.offset;
  return offset;
}

}  // namespace

/// Builds TimeZone objects from TZif bytes or nothing (UTC); the only writer of their fields.
struct TzParser {
  static std::shared_ptr<const TimeZone> utc(std::string_view name) {
    auto zone = std::make_shared<TimeZone>();
    zone->name_ = std::string(name);
    return zone;
  }

  static std::shared_ptr<const TimeZone> parse(std::string_view name, std::string_view data) {
    auto file = parse_tzif(data);
    if (!file) return nullptr;
    auto zone = std::make_shared<TimeZone>();
    zone->name_ = std::string(name);
    zone->transitions_ = std::move(file->transitions);
    zone->offsets_ = std::move(file->offsets);
    zone->initial_offset_ = file->initial_offset;
    zone->posix_tail_ = std::move(file->footer);
    if (!zone->posix_tail_.empty() && !apply_footer(*zone)) return nullptr;
    return zone;
  }

 private:
  static bool apply_footer(TimeZone& zone) {
    const auto rule = PosixTzParser(zone.posix_tail_).parse();
    if (!rule) return false;
    auto& transitions = zone.transitions_;
    auto& offsets = zone.offsets_;
    // After the last transition its offset stays until the footer's next change, as tzcode's
    // localtime.c does. That only matters when a file contradicts its own footer, as Ojinaga's
    // does when an older zic writes it "slim": CST from 2022-10-30, while "CST6CDT,M3.2.0,M11.1.0"
    // alone would say CDT until 2022-11-06. CST is what the clocks there showed.
    if (!rule->has_dst) {
      if (transitions.empty()) zone.initial_offset_ = rule->std_offset;
      zone.posix_tail_.clear();
      return true;
    }
    // With no transitions the footer governs every instant; offset_at evaluates it directly.
    if (transitions.empty()) return true;
    const std::int64_t last = transitions.back();
    const std::int64_t until = days_from_civil(kUnrollUntilYear, 1, 1) * kSecondsPerDay;
    // Files ending outside these years (none in tzdata) get the footer evaluated directly.
    if (last < days_from_civil(kUnrollFromYear, 1, 1) * kSecondsPerDay || last >= until)
      return true;
    const int last_year = civil_from_days(floor_div(last, kSecondsPerDay)).year;
    // Years around the ends too: a change can fall up to a week into the neighbouring year.
    const std::size_t from_file = transitions.size();
    for (const RuleEvent& e : rule_events(*rule, last_year - 1, kUnrollUntilYear + 1)) {
      if (e.at <= last || e.at >= until) continue;
      if (transitions.size() > from_file && transitions.back() == e.at) {
        transitions.pop_back();  // two changes at one instant: the later in rule order wins
        offsets.pop_back();
      }
      if (offsets.back() == e.offset) continue;
      transitions.push_back(e.at);
      offsets.push_back(e.offset);
    }
    return true;
  }
};

namespace {

// The instant, at or before `limit`, when the zone's clock last read `wall` (local seconds counted
// as if local time were UTC). If the clock jumped over `wall` — New York has no 02:30 on
// 2026-03-08, Santiago no midnight on 2026-09-06 — the instant of that jump, when the first local
// time after `wall` began. Callers pass a `wall` at or before the local time at `limit`.
std::int64_t utc_of_wall(const TimeZone& tz, std::int64_t wall, std::int64_t limit) {
  std::array<int, 4> tried{};
  std::size_t n_tried = 0;
  int offset = tz.offset_at(limit);
  while (n_tried < tried.size()) {
    tried[n_tried++] = offset;
    const std::int64_t u = wall - offset;
    const int actual = tz.offset_at(u);
    if (actual == offset && u <= limit) return u;
    if (std::find(tried.begin(), tried.begin() + n_tried, actual) != tried.begin() + n_tried)
      break;  // back to an offset already tried: `wall` is in a gap
    offset = actual;
  }
  // Gap: the first instant whose local time is at or after `wall`. With the offsets on both sides
  // of the jump, wall - larger maps before `wall` and wall - smaller after it; fall back to the
  // widest possible bracket if a zone manages something stranger.
  const auto local_at = [&](std::int64_t s) { return s + tz.offset_at(s); };
  const auto [lo_off, hi_off] = std::minmax_element(tried.begin(), tried.begin() + n_tried);
  std::int64_t lo = wall - *hi_off;
  std::int64_t hi = std::min(limit, wall - *lo_off);
  if (!(local_at(lo) < wall && local_at(hi) >= wall)) {
    lo = wall - kMaxUtoff - 1;
    hi = limit;
  }
  while (hi - lo > 1) {  // local_at(lo) < wall <= local_at(hi)
    const std::int64_t mid = lo + (hi - lo) / 2;
    (local_at(mid) < wall ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace

std::shared_ptr<const TimeZone> TimeZone::load(std::string_view name) {
  if (!valid_zone_name(name)) return nullptr;
  if (name == "UTC" || name == "Etc/UTC") return TzParser::utc(name);
  const char* dir = std::getenv("TZDIR");
  const std::string path =
      std::string(dir != nullptr && *dir != '\0' ? dir : kDefaultZoneDir) + "/" + std::string(name);
  const auto data = read_zone_file(path);
  // No such zone, or a directory ("America") or other non-zone file: an ordinary answer.
  if (!data || !data->starts_with("TZif")) return nullptr;
  auto zone = TzParser::parse(name, *data);
  if (!zone) log(LogLevel::kWarn, "tz_file_invalid", {{"zone", std::string(name)}});
  return zone;
}

std::shared_ptr<const TimeZone> TimeZone::cached(std::string_view name) {
  struct Cache {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<const TimeZone>, std::less<>> zones;
  };
  static Cache* const cache = new Cache;  // never destroyed: workers may still ask during exit
  {
    std::lock_guard lock(cache->mutex);
    if (auto it = cache->zones.find(name); it != cache->zones.end()) return it->second;
  }
  auto zone = load(name);  // outside the lock, so a file read never stalls other lookups
  std::lock_guard lock(cache->mutex);
  if (cache->zones.size() >= kMaxCachedZones)
    std::erase_if(cache->zones, [](const auto& entry) { return entry.second == nullptr; });
  if (cache->zones.size() >= kMaxCachedZones) return zone;  // more real zones than tzdata has
  return cache->zones.try_emplace(std::string(name), std::move(zone)).first->second;
}

int TimeZone::offset_at(std::int64_t unix_s) const {
  const auto footer = [&] {
    const auto rule = PosixTzParser(posix_tail_).parse();  // validated by load()
    return rule ? posix_offset_at(*rule, unix_s) : initial_offset_;
  };
  if (transitions_.empty()) return posix_tail_.empty() ? initial_offset_ : footer();
  if (unix_s < transitions_.front()) return initial_offset_;
  if (unix_s > transitions_.back() && !posix_tail_.empty()) return footer();
  const auto it = std::upper_bound(transitions_.begin(), transitions_.end(), unix_s);
  return offsets_[static_cast<std::size_t>(it - transitions_.begin()) - 1];
}

TimeZone::LocalTime TimeZone::local(std::int64_t unix_s) const {
  unix_s = clamp_instant(unix_s);
  const std::int64_t wall = unix_s + offset_at(unix_s);
  const std::int64_t days = floor_div(wall, kSecondsPerDay);
  const CivilDate date = civil_from_days(days);
  return {date.year, static_cast<int>(date.month), static_cast<int>(date.day),
          weekday_from_days(days), static_cast<int>((wall - days * kSecondsPerDay) / 60)};
}

// An hour is a local-clock hour at one offset: it starts where the clock read hh:00 at the offset
// in force at `unix_s`, or, if that offset came into force later than that, where it did. So where
// a zone falls back by half an hour (Lord Howe, 2026-04-05: 02:00 +11:00 becomes 01:30 +10:30),
// the repeated 01:30-02:00 is an hour of its own, 01:30+10:30, not the second half of 01:00+11:00;
// where it springs forward by half an hour (02:00 +10:30 becomes 02:30 +11:00), 02:30-03:00 +11:00
// is one. A whole-hour change (New York) and a zone half or three quarters of an hour off UTC
// (Kolkata, Eucla) only ever start hours at hh:00.
std::int64_t TimeZone::start_of_hour(std::int64_t unix_s) const {
  unix_s = clamp_instant(unix_s);
  const int offset = offset_at(unix_s);
  const std::int64_t on_the_hour = floor_div(unix_s + offset, 3600) * 3600 - offset;
  if (offset_at(on_the_hour) == offset) return on_the_hour;
  // The offset changed within the hour (at most once: zones change clocks months apart): find
  // the first instant of the current one. offset_at(lo) != offset == offset_at(hi).
  std::int64_t lo = on_the_hour, hi = unix_s;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (offset_at(mid) == offset ? hi : lo) = mid;
  }
  return hi;
}

std::int64_t TimeZone::start_of_day(std::int64_t unix_s) const {
  unix_s = clamp_instant(unix_s);
  const std::int64_t wall = unix_s + offset_at(unix_s);
  return utc_of_wall(*this, floor_div(wall, kSecondsPerDay) * kSecondsPerDay, unix_s);
}

std::int64_t TimeZone::start_of_week(std::int64_t unix_s) const {
  unix_s = clamp_instant(unix_s);
  const std::int64_t days = floor_div(unix_s + offset_at(unix_s), kSecondsPerDay);
  const int since_monday = (weekday_from_days(days) + 6) % 7;
  return utc_of_wall(*this, (days - since_monday) * kSecondsPerDay, unix_s);
}

std::int64_t TimeZone::start_of_month(std::int64_t unix_s) const {
  unix_s = clamp_instant(unix_s);
  const CivilDate date = civil_from_days(floor_div(unix_s + offset_at(unix_s), kSecondsPerDay));
  return utc_of_wall(*this, days_from_civil(date.year, date.month, 1) * kSecondsPerDay, unix_s);
}

bool schedule_open(const json& schedule, std::int64_t unix_s) {
  if (!schedule.is_object()) return true;
  const auto hours = schedule.find("hours");
  if (hours == schedule.end() || hours->is_null() || (hours->is_object() && hours->empty()))
    return true;
  if (!hours->is_object()) return false;  // malformed: the validator never lets this through
  // Hours without a zone mean nothing; like an unknown zone, closed (the validator requires one).
  const auto zone_name = schedule.find("timezone");
  if (zone_name == schedule.end() || !zone_name->is_string()) return false;
  const auto zone = TimeZone::cached(zone_name->get_ref<const std::string&>());
  if (!zone) return false;

  static constexpr const char* kDayKeys[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};
  const TimeZone::LocalTime now = zone->local(unix_s);
  const auto ranges = hours->find(kDayKeys[now.weekday]);
  if (ranges == hours->end() || !ranges->is_array()) return false;
  for (const json& range : *ranges) {
    if (!range.is_array() || range.size() != 2) continue;
    const auto start = parse_hhmm_json(range[0], false);
    const auto end = parse_hhmm_json(range[1], true);
    if (start && end && *start <= now.minute_of_day && now.minute_of_day < *end) return true;
  }
  return false;
}

}  // namespace leadflow
