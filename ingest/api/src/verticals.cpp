// The verticals' settings as each party reads them, and the operator's changes of their re-offer
// policies. The settings are the registry this process loaded at start, but for the re-offer
// policies the operator set, read from the store; a buyer's own record says which it buys. What
// a reader sees of each is the visibility model's (leadflow/visibility/verticals.hpp).
#include "verticals.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/visibility/verticals.hpp"
#include "pages.hpp"
#include "versions.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

// The verticals a buyer buys (none asked of another reader), or nullopt with the refusal sent.
std::optional<std::vector<std::string>> buyer_verticals(const VerticalPorts& ports,
                                                        const Viewer& viewer, http::Response& res) {
  if (!viewer.is_buyer()) return std::vector<std::string>{};
  Lookup<Buyer> found = ports.accounts.get_buyer(viewer.buyer_id);
  if (found.status == StoreStatus::kUnavailable) {
    send_problem(res, refusal_for(found.status, StoreStep::kRead));
    return std::nullopt;
  }
  if (!found.value) {
    send_problem(res, refusal_for(AccountRefused::kNoBuyer));
    return std::nullopt;
  }
  return std::move(found.value->verticals);
}

// The re-offer policies the operator set, or nullopt with the 503 sent.
std::optional<std::vector<VerticalReoffer>> policies_set(const VerticalPorts& ports,
                                                         http::Response& res) {
  auto set = ports.accounts.list_vertical_reoffers();
  if (!set) send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  return set;
}

// The vertical's whole view (the operator's) with its setting, if any.
json view_of(const VerticalPorts& ports, const Vertical& v,
             const std::vector<VerticalReoffer>& set) {
  return ports.verticals.to_json(v, vertical_setting(set, v.name));
}

bool refuse_params(const http::Request& req, http::Response& res) {
  FieldErrors errors;
  unknown_params(req, {}, errors);
  if (errors.empty()) return false;
  http::send_problem(res, 400, "invalid query parameters", errors);
  return true;
}

}  // namespace

void answer_verticals(const VerticalPorts& ports, const Viewer& viewer, const http::Request& req,
                      http::Response& res) {
  if (refuse_params(req, res)) return;
  const auto bought = buyer_verticals(ports, viewer, res);
  if (!bought) return;
  const auto set = policies_set(ports, res);
  if (!set) return;
  json data = json::array();
  for (const std::string& name : ports.verticals.names()) {
    json seen =
        project_vertical(viewer, view_of(ports, *ports.verticals.find(name), *set), *bought);
    if (!seen.is_null()) data.push_back(std::move(seen));
  }
  http::send_json(res, 200, {{"success", true}, {"data", std::move(data)}});
}

void answer_vertical(const VerticalPorts& ports, const Viewer& viewer, std::string_view name,
                     const http::Request& req, http::Response& res) {
  if (refuse_params(req, res)) return;
  const Vertical* v = ports.verticals.find(name);
  if (!v) return send_problem(res, refusal_for(VerticalRefused::kNoSuchVertical));
  const auto bought = buyer_verticals(ports, viewer, res);
  if (!bought) return;
  const auto set = policies_set(ports, res);
  if (!set) return;
  const json view = view_of(ports, *v, *set);
  json seen = project_vertical(viewer, view, *bought);
  if (seen.is_null()) return send_problem(res, refusal_for(VerticalRefused::kNoSuchVertical));
  // The setting's version is the operator's, who alone may change it (docs/versions.md).
  if (viewer.is_operator()) set_etag(res, view.value("reoffer_version", std::int64_t{0}));
  http::send_json(res, 200, {{"success", true}, {"data", std::move(seen)}});
}

void answer_vertical_change(const Management::Created& changed, http::Response& res) {
  if (!changed.errors.empty())
    return http::send_problem(res, 400, "the re-offer policy is invalid", changed.errors);
  if (changed.status == StoreStatus::kNotFound)
    return send_problem(res, refusal_for(VerticalRefused::kNoSuchVertical));
  if (refuse_version(res, changed, "vertical's re-offer policy")) return;
  if (changed.status != StoreStatus::kOk)
    return send_problem(res, refusal_for(changed.status, StoreStep::kWrite));
  set_etag(res, changed.version);
  http::send_json(res, 200, {{"success", true}, {"data", changed.body}});
}

void register_verticals(Routes& routes, IngestContext& ctx) {
  // Any scope: a seller's posting key needs the fields as much as its reading key does.
  routes.get("/v1/verticals", [&ctx](const http::Request& q, http::Response& r) {
    if (const auto key = authorise(ctx, q, r, kScopeAll))
      answer_verticals(VerticalPorts{ctx.verticals, ctx.accounts}, Viewer::of(*key), q, r);
  });
  routes.get("/v1/verticals/{name}", [&ctx](const http::Request& q, http::Response& r) {
    if (const auto key = authorise(ctx, q, r, kScopeAll))
      answer_vertical(VerticalPorts{ctx.verticals, ctx.accounts}, Viewer::of(*key), q.match(1), q,
                      r);
  });
  // The operator's alone: a vertical's re-offer policy set, or back to the configured one.
  routes.put("/v1/verticals/{name}/reoffer", [&ctx](const http::Request& q, http::Response& r) {
    auto key = authorise(ctx, q, r, kScopeAdmin, true);
    if (!key || !http::require_json(q, r)) return;
    auto body = http::parse_body(q, r);
    if (!body) return;
    answer_vertical_change(
        ctx.management.set_vertical_reoffer(q.match(1), *body, if_match_of(q), actor_of(*key)), r);
  });
  routes.remove("/v1/verticals/{name}/reoffer", [&ctx](const http::Request& q, http::Response& r) {
    if (auto key = authorise(ctx, q, r, kScopeAdmin, true))
      answer_vertical_change(
          ctx.management.reset_vertical_reoffer(q.match(1), if_match_of(q), actor_of(*key)), r);
  });
}

}  // namespace leadflow
