#include "leadflow/domain/time_zone.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>

#include "leadflow/base/text.hpp"

namespace leadflow {

bool valid_time_zone(std::string_view name) {
  if (name.empty() || name.size() > kMaxTimeZoneName || name.find("..") != std::string_view::npos ||
      name.front() == '/' || name.back() == '/')
    return false;
  // IANA names use letters, digits and "/_+-" only; this also keeps out zone.tab and friends.
  if (!std::all_of(name.begin(), name.end(), [](char c) {
        return is_alpha(c) || is_digit(c) || c == '/' || c == '_' || c == '+' || c == '-';
      }))
    return false;
  // Files in zoneinfo that are not IANA names: the host's own zone, and the leap-second variants.
  if (name == "localtime" || name == "posixrules" || name.starts_with("posix/") ||
      name.starts_with("right/"))
    return false;
  // A directory ("America") or a non-zone file ("leapseconds") is not a zone: require TZif data.
  std::ifstream in("/usr/share/zoneinfo/" + std::string(name), std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && std::memcmp(magic, "TZif", 4) == 0;
}

}  // namespace leadflow
