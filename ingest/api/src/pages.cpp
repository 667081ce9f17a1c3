// The query checks Surface A's lists share (pages.hpp).
#include "pages.hpp"

#include <charconv>
#include <string>

#include "leadflow/base/time_format.hpp"
#include "leadflow/reports/stretches.hpp"

namespace leadflow {

bool asks_csv(const http::Request& req, FieldErrors& errors) {
  const std::string& format = req.param("format");
  if (req.has_param("format") && format != "csv" && format != "json")
    errors.push_back({"format", "not_allowed", "csv or json"});
  return format == "csv" || (!req.has_param("format") &&
                             req.header("Accept").find("text/csv") != std::string_view::npos);
}

bool parse_limit(const http::Request& req, int& limit, FieldErrors& errors) {
  if (!req.has_param("limit")) return true;
  const std::string v = req.param("limit");
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), limit);
  if (ec != std::errc{} || ptr != v.data() + v.size() || limit < 1 || limit > 100) {
    errors.push_back({"limit", "out_of_range", "must be an integer from 1 to 100"});
    return false;
  }
  return true;
}

void unknown_params(const http::Request& req, std::initializer_list<const char*> allowed,
                    FieldErrors& errors) {
  for (const auto& [name, value] : req.params()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || name == a;
    if (!ok) errors.push_back({name, "unknown_parameter", "unknown query parameter"});
  }
}

std::shared_ptr<const TimeZone> list_zone(const http::Request& req, std::string_view fallback,
                                          FieldErrors& errors) {
  auto tz = TimeZone::cached(req.has_param("tz") ? std::string_view(req.param("tz")) : fallback);
  if (tz) return tz;
  if (req.has_param("tz"))
    errors.push_back({"tz", "not_allowed", "an IANA time zone, such as America/New_York"});
  return TimeZone::cached("UTC");
}

void parse_day_bound(const http::Request& req, const char* name, bool end, const TimeZone& tz,
                     std::int64_t& out, FieldErrors& errors) {
  constexpr std::int64_t kOneDayMs = 86'400'000;
  if (!req.has_param(name)) return;
  const std::string& text = req.param(name);
  const auto ms = parse_rfc3339_ms(text);
  if (!ms) {
    errors.push_back({name, "invalid_format", "must be an RFC 3339 date-time or a date"});
    return;
  }
  // A person choosing "to the 27th" means through the end of the 27th.
  const bool bare_date = text.size() == 10 && text[4] == '-' && text[7] == '-';
  out = bare_date ? reports::local_midnight_ms(tz, *ms / kOneDayMs + (end ? 1 : 0)) : *ms;
}

}  // namespace leadflow
