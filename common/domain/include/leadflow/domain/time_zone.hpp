#pragma once
// The time zone an account is kept in (docs/time-zones.md): a buyer's schedule's `timezone` and
// a seller's `time_zone` are checked by this one rule before they are stored.
#include <cstddef>
#include <string_view>

namespace leadflow {

/// The longest zone name an account may name.
inline constexpr std::size_t kMaxTimeZoneName = 64;

/// What a refused zone is told, under the field's own name.
inline constexpr std::string_view kTimeZoneRule =
    "must be an IANA time zone name (\"America/New_York\")";

/// Whether `name` is an IANA zone of this server's zone database ("America/New_York", "UTC"):
/// letters, digits and "/_+-" only, no path tricks, not one of the files of /usr/share/zoneinfo
/// that is no zone (a directory, "localtime", "posix/…", "right/…"), and a TZif file there.
bool valid_time_zone(std::string_view name);

}  // namespace leadflow
