// The query checks Surface A's lists share (pages.hpp).
#include "pages.hpp"

#include <charconv>
#include <string>

namespace leadflow {

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

}  // namespace leadflow
