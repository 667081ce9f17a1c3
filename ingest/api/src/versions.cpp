#include "versions.hpp"

#include <charconv>

#include "leadflow/api/http_util.hpp"

namespace leadflow {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

// The version of one entity-tag of our own form ("v7", quoted, strong; "v0" is a vertical's
// re-offer setting never made, and matches no other record); nullopt for any other.
std::optional<std::int64_t> version_of_tag(std::string_view tag) {
  if (tag.size() < 4 || tag.front() != '"' || tag.back() != '"' || tag[1] != 'v')
    return std::nullopt;
  const std::string_view digits = tag.substr(2, tag.size() - 3);
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size() || v < 0) return std::nullopt;
  return v;
}

// Adds the tags of one If-Match field to `out`. Tags are read whole, quotes and all, so a comma
// inside another server's tag does not split it.
void read_field(std::string_view field, IfMatch& out) {
  std::size_t i = 0;
  while (i < field.size()) {
    while (i < field.size() && (is_space(field[i]) || field[i] == ',')) ++i;
    if (i >= field.size()) break;
    std::size_t start = i;
    if (field[i] == '*') {
      out.any = true;
      ++i;
      continue;
    }
    if (field.substr(i, 2) == "W/") i += 2;  // weak: never matches under strong comparison
    if (i < field.size() && field[i] == '"') {
      const std::size_t close = field.find('"', i + 1);
      i = close == std::string_view::npos ? field.size() : close + 1;
    } else {
      while (i < field.size() && field[i] != ',') ++i;  // not a tag: matches nothing
    }
    if (field[start] == '"')
      if (auto v = version_of_tag(field.substr(start, i - start))) out.versions.push_back(*v);
  }
}

}  // namespace

std::string etag_of(std::int64_t version) { return "\"v" + std::to_string(version) + "\""; }

void set_etag(http::Response& res, std::int64_t version) {
  res.set_header("ETag", etag_of(version));
}

IfMatch if_match_of(const http::Request& req) {
  IfMatch out;
  const std::size_t fields = req.header_count("If-Match");
  if (fields == 0) return out;
  out.any = false;
  for (std::size_t i = 0; i < fields; ++i) read_field(req.header("If-Match", i), out);
  return out;
}

bool refuse_version(http::Response& res, const Management::Created& change, std::string_view what) {
  if (change.status != StoreStatus::kConflict) return false;
  if (change.stale) {
    set_etag(res, change.version);
    http::send_problem_with(res, 412,
                            "someone else changed this " + std::string(what) +
                                " since you read it: read it again (its current ETag is " +
                                etag_of(change.version) + ") and make your change to that",
                            {{"etag", etag_of(change.version)}, {"version", change.version}});
    return true;
  }
  http::send_problem(
      res, 409, "the " + std::string(what) + " kept changing while this change was applied; retry");
  return true;
}

}  // namespace leadflow
