// Surface A: the key-authenticated REST surface under /v1 (HTTPS only).
#include <algorithm>

#include "account.hpp"
#include "auth.hpp"
#include "buyer_routes.hpp"
#include "campaign_spec.hpp"
#include "change_log.hpp"
#include "erasure_routes.hpp"
#include "errors.hpp"
#include "intake.hpp"
#include "lead_post.hpp"
#include "lead_reads.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/validation/validation.hpp"
#include "leadflow/visibility/seller.hpp"
#include "ledger_routes.hpp"
#include "pages.hpp"
#include "postback_routes.hpp"
#include "reports.hpp"
#include "returns.hpp"
#include "statements.hpp"
#include "suppression_routes.hpp"
#include "test_leads.hpp"
#include "versions.hpp"
#include "verticals.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

using http::parse_body;
using http::require_json;

void send_store_failure(http::Response& res, StoreStatus s) {
  send_problem(res, refusal_for(s, StoreStep::kWrite));
}

void created(http::Response& res, const Management::Created& c, const char* what) {
  if (!c.errors.empty())
    return http::send_problem(res, 400, std::string("the ") + what + " is invalid", c.errors);
  if (c.status != StoreStatus::kOk) return send_store_failure(res, c.status);
  http::send_json(res, 201, {{"success", true}, {"data", c.body}});
}

std::string string_member(const json& body, const char* name) {
  const auto it = body.find(name);
  return it != body.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The audit record of a key made or revoked through the API: which key, whose, by which
// operator key, from where. The secret itself is never part of it.
// Who may manage API keys: the operator (admin), every key; a signed-in seller or buyer user,
// its own account's keys (Settings, then API Keys). A seller's or buyer's API key may not make
// keys: one leaked key must not be able to mint others.
std::optional<ApiKey> key_manager(IngestContext& ctx, const http::Request& req,
                                  http::Response& res) {
  // An API key: the operator's, with admin, as before. A session: any signed-in user; an
  // operator user holds admin, a seller or buyer user its own account's scopes.
  const bool by_key = !req.header("Authorization").empty();
  auto key = authorise(ctx, req, res, by_key ? kScopeAdmin : kScopeLeadsRead, by_key);
  if (!key) return std::nullopt;
  if (key->is_operator() && !key->has(kScopeAdmin)) {
    http::send_problem(res, 403, "API keys are managed with the admin scope");
    return std::nullopt;
  }
  return key;
}

bool owns_key(const ApiKey& manager, const ApiKey& k) {
  if (manager.is_operator()) return true;
  return manager.is_buyer() ? k.buyer_id == manager.buyer_id
                            : k.seller_id == manager.seller_id && k.buyer_id.empty();
}

void audit_key(IngestContext& ctx, const http::Request& req, const ApiKey& actor, AuditEvent event,
               std::string_view kind, const json& record) {
  const std::string key_id = string_member(record, "key_id");
  const std::string campaign_id = string_member(record, "campaign_id");
  const std::string seller_id = string_member(record, "seller_id");
  AuditRecord r;
  r.event = event;
  r.surface = "api";
  r.kind = kind;
  r.key_id = key_id;
  r.campaign_id = campaign_id;
  r.seller_id = seller_id;
  r.actor_key_id = actor.id;
  audit_request(ctx, req, r);
}

// Who may read campaigns: the operator with `admin`, and a seller (key or user) with
// `leads:read`, its own campaigns only; a buyer never. Returns the key, or `res` is the answer.
std::optional<ApiKey> campaign_reader(IngestContext& ctx, const http::Request& req,
                                      http::Response& res) {
  auto key = authorise(ctx, req, res, static_cast<Scope>(kScopeAdmin | kScopeLeadsRead));
  if (!key) return std::nullopt;
  if (key->is_buyer() || (key->is_operator() && !key->has(kScopeAdmin)) ||
      (!key->is_operator() && !key->has(kScopeLeadsRead))) {
    http::send_problem(res, 403, "this account lacks permission for the operation");
    return std::nullopt;
  }
  return key;
}

// A campaign as its reader sees it (the visibility model's): a seller gets no part of its key.
json campaign_view(const ApiKey& reader, const Campaign& c) {
  return project_campaign(Viewer::of(reader), campaign_to_json(c));
}

// The campaign `id` if `reader` may read it; else answered: 404 for none or another seller's
// (its existence is not theirs to know), 503 when the store could not say.
std::optional<Campaign> readable_campaign(IngestContext& ctx, const ApiKey& reader,
                                          const std::string& id, http::Response& res) {
  Lookup<Campaign> found = ctx.accounts.get_campaign(id);
  if (found.status == StoreStatus::kUnavailable) {
    send_problem(res, refusal_for(found.status, StoreStep::kRead));
    return std::nullopt;
  }
  if (!found.value || (!reader.is_operator() && found.value->seller_id != reader.seller_id)) {
    http::send_problem(res, 404, "no such campaign");
    return std::nullopt;
  }
  return std::move(found.value);
}

}  // namespace

void register_surface_a(Routes& routes, IngestContext& ctx) {
  auto& c = ctx;
  routes.post("/v1/leads", [&c](const http::Request& req, http::Response& res) {
    const auto key = authorise(c, req, res, kScopeLeadsWrite);
    if (!key) return;  // 401, 403, 429 or 503 sent
    const LeadPostPorts ports{
        c.intake,
        c.verticals,
        c.clock,
        c.config.wait_ms,
        c.config.max_wait_ms,
        [&c](const Lead& lead, int wait_ms) { return accept_lead(c, lead, wait_ms); },
        [&c](std::string_view seller_id) { return c.accounts.get_seller(seller_id); },
        [&c](std::string_view vertical) {
          return vertical_has_active_buyers(c.accounts, vertical);
        },
        c.suppression};
    answer_lead_post(ports, *key, viewer_of(c, *key), req, res);
  });
  register_returns(routes, c);
  register_account(routes, c);
  register_settlements(routes, c);
  register_erasure(routes, c);
  register_statements(routes, c);
  register_reports(routes, c);
  register_change_log(routes, c);
  register_ledger(routes, c);
  if (c.suppression_store) register_suppression_lists(routes, c);
  register_postback_endpoints(routes, c);
  register_verticals(routes, c);
  routes.get("/v1/leads", [&c](const http::Request& q, http::Response& r) {
    const auto key = authorise(c, q, r, kScopeLeadsRead);
    if (!key) return;  // 401, 403, 429 or 503 sent
    const Viewer viewer = viewer_of(c, *key);
    const SellerLabels labels = seller_labels(c, viewer);
    const std::string zone = key->time_zone.empty() ? "UTC" : key->time_zone;
    answer_lead_list(LeadReadPorts{c.intake, c.money, labels, c.visibility_secret, zone,
                                   &c.accounts, &c.clock, &c.config.return_reasons},
                     viewer, q, r);
  });
  routes.get("/v1/leads/{id}", [&c](const http::Request& q, http::Response& r) {
    const auto key = authorise(c, q, r, kScopeLeadsRead);
    if (!key) return;  // 401, 403, 429 or 503 sent
    const Viewer viewer = viewer_of(c, *key);
    const SellerLabels labels = seller_labels(c, viewer);
    answer_lead(LeadReadPorts{c.intake, c.money, labels, c.visibility_secret, "UTC", &c.accounts,
                              &c.clock, &c.config.return_reasons},
                viewer, q.match(1), r);
  });
  const auto buyer_ports = [&c] {
    return BuyerPorts{c.accounts,         c.money,  c.reporting,
                      c.verticals,        c.clock,  c.config.allow_private_buyers,
                      c.buyer_visibility, c.changes};
  };
  routes.get("/v1/buyers", [&c, buyer_ports](const http::Request& q, http::Response& r) {
    if (authorise(c, q, r, kScopeBuyersRead, true)) answer_buyer_list(buyer_ports(), q, r);
  });
  routes.post("/v1/buyers", [&c, buyer_ports](const http::Request& q, http::Response& r) {
    if (auto key = authorise(c, q, r, kScopeBuyersWrite, true))
      answer_buyer_create(buyer_ports(), actor_of(*key), q, r);
  });
  routes.get("/v1/buyers/{id}", [&c, buyer_ports](const http::Request& q, http::Response& r) {
    if (authorise(c, q, r, kScopeBuyersRead, true)) answer_buyer(buyer_ports(), q.match(1), r);
  });
  routes.put("/v1/buyers/{id}", [&c, buyer_ports](const http::Request& q, http::Response& r) {
    if (auto key = authorise(c, q, r, kScopeBuyersWrite, true))
      answer_buyer_update(buyer_ports(), actor_of(*key), q.match(1), q, r);
  });

  routes.post("/v1/sellers", [&c](const http::Request& q, http::Response& r) {
    auto key = authorise(c, q, r, kScopeAdmin, true);
    if (!key || !require_json(q, r)) return;
    if (auto body = parse_body(q, r))
      created(r, c.management.create_seller(*body, actor_of(*key)), "seller");
  });
  routes.put("/v1/sellers/{id}", [&c](const http::Request& q, http::Response& r) {
    auto key = authorise(c, q, r, kScopeAdmin, true);
    if (!key || !require_json(q, r)) return;
    auto body = parse_body(q, r);
    if (!body) return;
    const Management::Created changed =
        c.management.update_seller(std::string(q.match(1)), *body, if_match_of(q), actor_of(*key));
    if (!changed.errors.empty())
      return http::send_problem(r, 400, "the seller is invalid", changed.errors);
    if (refuse_version(r, changed, "seller")) return;
    if (changed.status != StoreStatus::kOk) return send_store_failure(r, changed.status);
    set_etag(r, changed.version);
    http::send_json(r, 200, {{"success", true}, {"data", changed.body}});
  });
  routes.get("/v1/sellers/{id}", [&c](const http::Request& q, http::Response& r) {
    if (!authorise(c, q, r, kScopeAdmin, true)) return;
    const Lookup<Seller> found = c.accounts.get_seller(std::string(q.match(1)));
    if (found.status == StoreStatus::kUnavailable)
      return send_problem(r, refusal_for(found.status, StoreStep::kRead));
    const auto& s = found.value;
    if (!s) return http::send_problem(r, 404, "no such seller");
    set_etag(r, s->version);
    http::send_json(r, 200, {{"success", true}, {"data", seller_to_json(*s)}});
  });
  routes.get("/v1/sellers", [&c](const http::Request& q, http::Response& r) {
    if (!authorise(c, q, r, kScopeAdmin, true)) return;
    const auto sellers = c.accounts.list_sellers();
    if (!sellers) return send_problem(r, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    json data = json::array();
    for (const auto& s : *sellers) data.push_back(seller_to_json(s));
    http::send_json(r, 200, {{"success", true}, {"data", data}});
  });
  routes.post("/v1/campaigns", [&c](const http::Request& q, http::Response& r) {
    auto key = authorise(c, q, r, kScopeAdmin, true);
    if (!key || !require_json(q, r)) return;
    auto body = parse_body(q, r);
    if (!body) return;
    const Management::Created made = c.management.create_campaign(*body, actor_of(*key));
    created(r, made, "campaign");
    if (r.status == 201) audit_key(c, q, *key, AuditEvent::kKeyCreated, "campaign_key", made.body);
  });
  routes.get("/v1/campaigns", [&c](const http::Request& q, http::Response& r) {
    auto key = campaign_reader(c, q, r);
    if (!key) return;
    FieldErrors errors;
    unknown_params(q, {"seller_id"}, errors);
    if (!key->is_operator() && q.has_param("seller_id") && q.param("seller_id") != key->seller_id)
      errors.push_back({"seller_id", "not_allowed", "a seller lists its own campaigns"});
    if (!errors.empty()) return http::send_problem(r, 400, "invalid query parameters", errors);
    const auto campaigns =
        c.accounts.list_campaigns(key->is_operator() ? q.param("seller_id") : key->seller_id);
    if (!campaigns)
      return send_problem(r, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    json data = json::array();
    for (const auto& cp : *campaigns) data.push_back(campaign_view(*key, cp));
    http::send_json(r, 200, {{"success", true}, {"data", data}});
  });
  routes.get("/v1/campaigns/{id}", [&c](const http::Request& q, http::Response& r) {
    auto key = campaign_reader(c, q, r);
    if (!key) return;
    const auto cp = readable_campaign(c, *key, std::string(q.match(1)), r);
    if (!cp) return;
    set_etag(r, cp->version);
    http::send_json(r, 200, {{"success", true}, {"data", campaign_view(*key, *cp)}});
  });
  routes.get("/v1/campaigns/{id}/specification", [&c](const http::Request& q, http::Response& r) {
    auto key = campaign_reader(c, q, r);
    if (!key) return;
    const auto cp = readable_campaign(c, *key, std::string(q.match(1)), r);
    if (!cp) return;
    http::send_json(
        r, 200,
        {{"success", true},
         {"data", campaign_specification(campaign_view(*key, *cp), *cp,
                                         c.verticals.find(cp->vertical), c.verticals)}});
  });
  routes.put("/v1/campaigns/{id}", [&c](const http::Request& q, http::Response& r) {
    auto key = authorise(c, q, r, kScopeAdmin, true);
    if (!key || !require_json(q, r)) return;
    auto body = parse_body(q, r);
    if (!body) return;
    const Management::Created changed = c.management.update_campaign(
        std::string(q.match(1)), *body, if_match_of(q), actor_of(*key));
    if (!changed.errors.empty())
      return http::send_problem(r, 400, "the campaign is invalid", changed.errors);
    if (refuse_version(r, changed, "campaign")) return;
    if (changed.status == StoreStatus::kNotFound)
      return http::send_problem(r, 404, "no such campaign");
    if (changed.status != StoreStatus::kOk) return send_store_failure(r, changed.status);
    log(LogLevel::kInfo, "campaign_updated", {{"campaign_id", std::string(q.match(1))}});
    set_etag(r, changed.version);
    http::send_json(r, 200, {{"success", true}, {"data", changed.body}});
  });
  routes.post("/v1/api-keys", [&c](const http::Request& q, http::Response& r) {
    auto key = key_manager(c, q, r);
    if (!key || !require_json(q, r)) return;
    auto body = parse_body(q, r);
    if (!body) return;
    if (!key->is_operator()) {
      // A seller's or buyer's own key, on the standard plan: the operator sets other plans.
      FieldErrors errors;
      if (!body->is_object()) errors.push_back({"body", "invalid_type", "must be a JSON object"});
      const std::string own_field = key->is_buyer() ? "buyer_id" : "seller_id";
      const std::string& own = key->is_buyer() ? key->buyer_id : key->seller_id;
      if (errors.empty()) {
        for (const char* field : {"seller_id", "buyer_id"})
          if (body->contains(field) && !(*body)[field].is_null() &&
              !(field == own_field && (*body)[field] == own))
            errors.push_back({field, "not_allowed", "a key of your own account only"});
        if (body->contains("plan") && (*body)["plan"] != "standard")
          errors.push_back({"plan", "not_allowed", "the operator sets plans other than standard"});
      }
      if (!errors.empty()) return http::send_problem(r, 400, "the API key is invalid", errors);
      (*body)[own_field] = own;
    }
    const Management::Created made = c.management.create_api_key(*body, actor_of(*key));
    created(r, made, "API key");
    if (r.status == 201) audit_key(c, q, *key, AuditEvent::kKeyCreated, "api_key", made.body);
  });
  routes.get("/v1/api-keys", [&c](const http::Request& q, http::Response& r) {
    auto key = key_manager(c, q, r);
    if (!key) return;
    const auto keys = c.accounts.list_api_keys();
    if (!keys) return send_problem(r, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    json data = json::array();
    for (const auto& k : *keys)
      if (owns_key(*key, k)) data.push_back(api_key_to_json(k));
    http::send_json(r, 200, {{"success", true}, {"data", data}});
  });
  routes.get("/v1/api-keys/{id}", [&c](const http::Request& q, http::Response& r) {
    auto key = key_manager(c, q, r);
    if (!key) return;
    const Lookup<ApiKey> target = c.accounts.get_api_key(std::string(q.match(1)));
    if (target.status == StoreStatus::kUnavailable)
      return send_problem(r, refusal_for(target.status, StoreStep::kRead));
    // Another account's key is no key of yours: 404, as an unknown one.
    if (!target.value || !owns_key(*key, *target.value))
      return send_store_failure(r, StoreStatus::kNotFound);
    set_etag(r, target.value->version);
    http::send_json(r, 200, {{"success", true}, {"data", api_key_to_json(*target.value)}});
  });
  routes.remove("/v1/api-keys/{id}", [&c](const http::Request& q, http::Response& r) {
    auto key = key_manager(c, q, r);
    if (!key) return;
    const std::string id(q.match(1));
    const Lookup<ApiKey> found = c.accounts.get_api_key(id);
    if (found.status == StoreStatus::kUnavailable) return send_store_failure(r, found.status);
    const std::optional<ApiKey>& target = found.value;
    // Another account's key is no key of yours: 404, as an unknown one.
    if (!target || !owns_key(*key, *target)) return send_store_failure(r, StoreStatus::kNotFound);
    const Management::Created revoked_key =
        c.management.revoke_api_key(id, if_match_of(q), actor_of(*key));
    if (refuse_version(r, revoked_key, "API key")) return;
    if (revoked_key.status != StoreStatus::kOk) return send_store_failure(r, revoked_key.status);
    c.api_keys.forget_all();  // refused here from now on; in other replicas within a second
    set_etag(r, revoked_key.version);
    json revoked = {{"key_id", id}};
    if (!target->seller_id.empty()) revoked["seller_id"] = target->seller_id;
    audit_key(c, q, *key, AuditEvent::kKeyRevoked, "api_key", revoked);
    http::send_json(r, 200, {{"success", true}, {"key_id", id}, {"revoked", true}});
  });
}

}  // namespace leadflow
