#pragma once
// Private: what Surface A's lists share: their query's checks and one page of rows answered.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/validation/validation.hpp"

namespace leadflow {

/// Reads `limit` from the query into `limit` (unchanged when absent); false, with the error
/// added to `errors`, for anything but an integer from 1 to 100.
bool parse_limit(const http::Request& req, int& limit, FieldErrors& errors);

/// Whether an export answers CSV: `format=csv`, or `Accept: text/csv` without `format`. A
/// `format` other than csv or json adds its error to `errors`.
bool asks_csv(const http::Request& req, FieldErrors& errors);

/// Adds an error to `errors` for each query parameter not in `allowed`.
void unknown_params(const http::Request& req, std::initializer_list<const char*> allowed,
                    FieldErrors& errors);

/// The zone a list's whole days are read in: `tz` when asked, else `fallback` (a dashboard
/// session's user's zone; UTC for an API key). A `tz` that is no IANA zone adds an error to
/// `errors` and reads UTC, so the other bounds are still checked.
std::shared_ptr<const TimeZone> list_zone(const http::Request& req, std::string_view fallback,
                                          FieldErrors& errors);

/// Reads the time bound `name` of a list's query into `out` (unchanged when absent): an RFC 3339
/// date-time is its instant; a bare date is a whole day in `tz`, both ends of a range included:
/// its local midnight as a start, the next local midnight as an `end` (the stores' end bound is
/// exclusive), so "from=2026-11-01&to=2026-11-01" is that one day, 23 or 25 hours long where
/// the clocks change in it. Anything else adds an error to `errors`.
void parse_day_bound(const http::Request& req, const char* name, bool end, const TimeZone& tz,
                     std::int64_t& out, FieldErrors& errors);

/// A row's encoding as send_page's `view` gives it: the JSON, or none when a read it needed failed.
inline nlohmann::json* page_row(nlohmann::json& row) { return &row; }
inline nlohmann::json* page_row(std::optional<nlohmann::json>& row) {
  return row ? &*row : nullptr;
}

/// Answers one page of a list, newest or oldest first as the query says: asks `fetch` for one
/// row more than the page holds, which tells whether another page follows; `view` encodes a
/// row, `id_of` names the row the next page's cursor starts after. A page the store could not
/// read (`fetch` answers nullopt), or a row whose `view` answers nullopt, is a 503: an outage is
/// never an empty or shortened page.
template <typename Query, typename Fetch, typename IdOf, typename View>
void send_page(http::Response& res, Query q, Fetch fetch, IdOf id_of, View view) {
  using nlohmann::json;
  const int limit = q.limit;
  q.limit = limit + 1;
  auto fetched = fetch(q);
  if (!fetched) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  auto& rows = *fetched;
  const bool has_more = static_cast<int>(rows.size()) > limit;
  if (has_more) rows.resize(limit);
  json data = json::array();
  for (const auto& r : rows) {
    auto encoded = view(r);
    json* row = page_row(encoded);
    if (row == nullptr)
      return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    data.push_back(std::move(*row));
  }
  http::send_json(
      res, 200,
      {{"success", true},
       {"data", std::move(data)},
       {"has_more", has_more},
       {"next_cursor", has_more ? json(http::encode_cursor(id_of(rows.back()))) : json(nullptr)}});
}

}  // namespace leadflow
