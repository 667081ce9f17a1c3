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

constexpr std::array<std::string_view, 9> kObjectKinds = {
    "seller", "campaign",          "api_key",          "buyer",   "user",
    "lead",   "postback_endpoint", "suppression_list", "vertical"};

ChangeQuery decode_change_query(const http::Request& req, std::string_view default_zone,
                                FieldErrors& errors) {
  unknown_params(req, {"q", "object_kind", "actor", "from", "to", "tz", "limit", "cursor"}, errors);
  ChangeQuery q;
  parse_limit(req, q.limit, errors);
  q.q = req.param("q");
  if (q.q.size() > 200) errors.push_back({"q", "too_long", "must be at most 200 characters"});
  q.object_kind = req.param("object_kind");
  if (!q.object_kind.empty() &&
      std::find(kObjectKinds.begin(), kObjectKinds.end(), q.object_kind) == kObjectKinds.end())
    errors.push_back({"object_kind", "not_allowed",
                      "one of seller, campaign, api_key, buyer, user, lead, postback_endpoint, "
                      "suppression_list, vertical"});
  q.actor = req.param("actor");
  // Whole days in the reader's zone, as the lead list's created_from/created_to.
  const auto tz = list_zone(req, default_zone, errors);
  parse_day_bound(req, "from", false, *tz, q.from_ms, errors);
  parse_day_bound(req, "to", true, *tz, q.to_ms, errors);
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

void answer_change_log(AuditStore& changes, const http::Request& req, http::Response& res,
                       std::string_view default_zone) {
  FieldErrors errors;
  const ChangeQuery q = decode_change_query(req, default_zone, errors);
  if (!errors.empty()) return http::send_problem(res, 400, "invalid query parameters", errors);
  // send_page asks for one row more than the page, and learns from it whether more follow; a
  // page the store cannot read is a 503.
  send_page(
      res, q, [&](const ChangeQuery& ask) { return changes.list_changes(ask); },
      [](const ChangeEntry& e) { return e.id; }, entry_view);
}

void register_change_log(Routes& routes, IngestContext& ctx) {
  routes.get("/v1/audit", [&ctx](const http::Request& q, http::Response& r) {
    const auto key = authorise(ctx, q, r, kScopeAdmin, true);
    if (!key) return;  // 401, 403, 429 or 503 sent
    answer_change_log(ctx.changes, q, r, key->time_zone.empty() ? "UTC" : key->time_zone);
  });
}

}  // namespace leadflow
