// The operator's buyer routes: a page of buyers, one buyer, a buyer made and a buyer changed,
// each view with the buyer's health. The handlers decode, call and encode; the routes authorise
// (buyers:read or buyers:write, the operator's alone).
#include "buyer_routes.hpp"

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "buyer_health.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/management/management.hpp"
#include "leadflow/validation/validation.hpp"
#include "pages.hpp"
#include "returns.hpp"
#include "versions.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

void check_verticals(const BuyerPorts& ports, const Buyer& b, FieldErrors& errors) {
  for (std::size_t i = 0; i < b.verticals.size(); ++i)
    if (!ports.verticals.find(b.verticals[i]))
      errors.push_back({"verticals[" + std::to_string(i) + "]", "not_allowed", "unknown vertical"});
}

// A buyer as the API shows it: its configuration (secrets masked) and its version.
json buyer_config_view(const Buyer& b) {
  json j = buyer_to_json(b, true);
  j["version"] = b.version;
  return j;
}

json return_summary(const BuyerPorts& ports, const Buyer& b) {
  return buyer_return_summary(ports.money, ports.clock, b);
}

}  // namespace

void answer_buyer_list(const BuyerPorts& ports, const http::Request& req, http::Response& res) {
  FieldErrors errors;
  unknown_params(req, {"status", "vertical", "limit", "cursor"}, errors);
  BuyerQuery q;
  parse_limit(req, q.limit, errors);
  if (req.has_param("status")) {
    const std::string s = req.param("status");
    if (s == "active")
      q.active = true;
    else if (s == "paused")
      q.active = false;
    else
      errors.push_back({"status", "not_allowed", "must be active or paused"});
  }
  q.vertical = req.param("vertical");
  if (req.has_param("cursor")) {
    q.after_id = http::decode_cursor(req.param("cursor"));
    if (!is_valid_id(q.after_id, kBuyerPrefix))
      errors.push_back({"cursor", "invalid_format", "not a cursor of this list"});
  }
  if (!errors.empty()) {
    http::send_problem(res, 400, "invalid query parameters", errors);
    return;
  }
  // One rollup question answers the traffic of every buyer of the page.
  const std::optional<BuyerTraffic> traffic = buyer_traffic_24h(ports.reporting, ports.clock);
  send_page(
      res, q, [&](const BuyerQuery& page) { return ports.accounts.list_buyers(page); },
      [](const Buyer& b) { return b.id; },
      [&ports, &traffic](const Buyer& b) {
        json j = buyer_config_view(b);
        j["health"] = buyer_health_json(traffic, b.id, return_summary(ports, b));
        return j;
      });
}

void answer_buyer_create(const BuyerPorts& ports, const ChangeActor& by, const http::Request& req,
                         http::Response& res) {
  if (!http::require_json(req, res)) return;
  auto body = http::parse_body(req, res);
  if (!body) return;
  FieldErrors errors;
  Buyer b = buyer_from_json(*body, nullptr, ports.allow_private_buyers, errors);
  if (errors.empty()) check_verticals(ports, b, errors);
  if (!errors.empty()) {
    http::send_problem(res, 400, "the buyer configuration is invalid", errors);
    return;
  }
  b.created_at_ms = b.updated_at_ms = ports.clock.now_ms();
  b.id = new_id(kBuyerPrefix, b.created_at_ms);
  if (auto s = ports.accounts.insert_buyer(b); s != StoreStatus::kOk)
    return send_problem(res, refusal_for(s, StoreStep::kWrite));
  log(LogLevel::kInfo, "buyer_created", {{"buyer_id", b.id}});
  record_change(ports.changes, ports.clock, by, "created", "buyer", b.id, {}, buyer_config_view(b));
  res.set_header("Location", "/v1/buyers/" + b.id);
  set_etag(res, b.version);
  http::send_json(res, 201, {{"success", true}, {"data", buyer_config_view(b)}});
}

void answer_buyer(const BuyerPorts& ports, std::string_view buyer_id, http::Response& res) {
  const Lookup<Buyer> found = ports.accounts.get_buyer(buyer_id);
  if (found.status == StoreStatus::kUnavailable)
    return send_problem(res, refusal_for(found.status, StoreStep::kRead));
  const std::optional<Buyer>& b = found.value;
  if (!b) return http::send_problem(res, 404, "no such buyer");
  json data = buyer_config_view(*b);
  data["returns"] = return_summary(ports, *b);
  data["health"] = buyer_health_json(buyer_traffic_24h(ports.reporting, ports.clock, b->id), b->id,
                                     data["returns"]);
  set_etag(res, b->version);
  http::send_json(res, 200, {{"success", true}, {"data", std::move(data)}});
}

void answer_buyer_update(const BuyerPorts& ports, const ChangeActor& by, std::string_view buyer_id,
                         const http::Request& req, http::Response& res) {
  if (!http::require_json(req, res)) return;
  const std::string id(buyer_id);
  const StoreStatus exists = ports.accounts.get_buyer(id).status;
  if (exists == StoreStatus::kUnavailable)
    return send_problem(res, refusal_for(exists, StoreStep::kWrite));
  if (exists != StoreStatus::kOk) return http::send_problem(res, 404, "no such buyer");
  auto body = http::parse_body(req, res);
  if (!body) return;
  // `version` is read-only, a figure of the view: a client may send back what it read (the
  // version a change expects is If-Match's to say), of the view's type. (`health` and the other
  // read-only fields are buyer_from_json's to check.)
  if (auto v = body->find("version"); v != body->end()) {
    if (!v->is_number_integer())
      return http::send_problem(res, 400, "the buyer configuration is invalid",
                                {{"version", "invalid_type", "must be an integer"}});
    body->erase(v);
  }
  // The body applied to the buyer as it is when written (docs/versions.md): the fields it does
  // not name keep what another change wrote meanwhile.
  const Management::Created changed = change_record<Buyer>(
      if_match_of(req), [&] { return ports.accounts.get_buyer(id); },
      [&](Buyer& b, FieldErrors& errors) {
        const Buyer base = b;
        b = buyer_from_json(*body, &base, ports.allow_private_buyers, errors);
        if (errors.empty()) check_verticals(ports, b, errors);
        b.id = base.id;
        b.created_at_ms = base.created_at_ms;
        b.updated_at_ms = ports.clock.now_ms();
        b.version = base.version;
      },
      [&](Buyer& b) { return ports.accounts.update_buyer(b); }, buyer_config_view);
  if (!changed.errors.empty())
    return http::send_problem(res, 400, "the buyer configuration is invalid", changed.errors);
  if (refuse_version(res, changed, "buyer")) return;
  if (changed.status == StoreStatus::kNotFound)
    return http::send_problem(res, 404, "no such buyer");
  if (changed.status != StoreStatus::kOk)
    return send_problem(res, refusal_for(changed.status, StoreStep::kWrite));
  ports.visibility.forget(id);  // this replica shows the change at once, others within 1 s
  log(LogLevel::kInfo, "buyer_updated", {{"buyer_id", id}});
  record_change(ports.changes, ports.clock, by, "updated", "buyer", id, changed.before,
                changed.body);
  set_etag(res, changed.version);
  http::send_json(res, 200, {{"success", true}, {"data", changed.body}});
}

}  // namespace leadflow
