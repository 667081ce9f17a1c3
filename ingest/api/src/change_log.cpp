// The change log's route: decode the query, ask the audit port, encode the page.
#include "change_log.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/time_format.hpp"
#include "pages.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

constexpr std::int64_t kOneDayMs = 86'400'000;
constexpr std::array<std::string_view, 5> kObjectKinds = {"seller", "campaign", "api_key", "buyer",
                                                          "user"};

ChangeQuery decode_change_query(const http::Request& req, FieldErrors& errors) {
  unknown_params(req, {"q", "object_kind", "actor", "from", "to", "limit", "cursor"}, errors);
  ChangeQuery q;
  parse_limit(req, q.limit, errors);
  q.q = req.param("q");
  if (q.q.size() > 200) errors.push_back({"q", "too_long", "must be at most 200 characters"});
  q.object_kind = req.param("object_kind");
  if (!q.object_kind.empty() &&
      std::find(kObjectKinds.begin(), kObjectKinds.end(), q.object_kind) == kObjectKinds.end())
    errors.push_back(
        {"object_kind", "not_allowed", "one of seller, campaign, api_key, buyer, user"});
  q.actor = req.param("actor");
  for (auto [name, out] : {std::pair{"from", &q.from_ms}, std::pair{"to", &q.to_ms}}) {
    if (!req.has_param(name)) continue;
    const std::string& text = req.param(name);
    const auto ms = parse_rfc3339_ms(text);
    if (!ms) {
      errors.push_back({name, "invalid_format", "must be an RFC 3339 date-time or a date"});
      continue;
    }
    // A bare date as `to` is that whole UTC day, as with the lead list's created_to.
    const bool bare_date = text.size() == 10 && text[4] == '-' && text[7] == '-';
    *out = bare_date && out == &q.to_ms ? *ms + kOneDayMs : *ms;
  }
  if (req.has_param("cursor")) {
    q.before_id = http::decode_cursor(req.param("cursor"));
    if (!is_valid_id(q.before_id, kChangePrefix))
      errors.push_back({"cursor", "invalid_format", "not a cursor of this list"});
  }
  return q;
}

json entry_view(const ChangeEntry& e) {
  return {{"id", e.id},
          {"at", format_rfc3339_ms(e.at_ms)},
          {"actor",
           {{"id", e.actor.id.empty() ? json(nullptr) : json(e.actor.id)},
            {"name", e.actor.name},
            {"surface", e.actor.surface}}},
          {"action", e.action},
          {"object", {{"kind", e.object_kind}, {"id", e.object_id}, {"name", e.object_name}}},
          {"changes", changes_to_json(e.changes)}};
}

}  // namespace

void answer_change_log(AuditStore& changes, const http::Request& req, http::Response& res) {
  FieldErrors errors;
  const ChangeQuery q = decode_change_query(req, errors);
  if (!errors.empty()) return http::send_problem(res, 400, "invalid query parameters", errors);
  // send_page asks for one row more than the page, and learns from it whether more follow; a
  // page the store cannot read is a 503.
  send_page(
      res, q, [&](const ChangeQuery& ask) { return changes.list_changes(ask); },
      [](const ChangeEntry& e) { return e.id; }, entry_view);
}

void register_change_log(Routes& routes, IngestContext& ctx) {
  routes.get("/v1/audit", [&ctx](const http::Request& q, http::Response& r) {
    if (authorise(ctx, q, r, kScopeAdmin, true)) answer_change_log(ctx.changes, q, r);
  });
}

}  // namespace leadflow
