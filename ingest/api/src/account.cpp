// A buyer's own account: what it reads of itself, its pause and resume, and the changes the
// operator opened to it; and what a seller reads of its own account. The rules are the domain's
// (leadflow/domain/buyer_self_service.hpp) and the money component's (limit_windows); what the
// buyer reads of itself is the visibility model's (leadflow/visibility/account.hpp). The handlers
// decode, call and encode.
#include "account.hpp"

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "auth.hpp"
#include "buyer_health.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/money.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/domain/buyer_self_service.hpp"
#include "leadflow/management/management.hpp"
#include "leadflow/money/budget.hpp"
#include "leadflow/visibility/account.hpp"
#include "leadflow/visibility/seller.hpp"
#include "returns.hpp"
#include "versions.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

json config_view(const Buyer& b) {
  json j = buyer_to_json(b, true);
  j["version"] = b.version;
  return j;
}

// Each cap and budget with what the buyer bought in its current period (leads, or dollars of
// their prices net of returns) and when that period ends. nullopt when the store cannot count.
std::optional<json> limits_of(const AccountPorts& ports, const Buyer& b) {
  json out = json::array();
  const std::int64_t now_ms = ports.clock.now_ms();
  for (const money::LimitWindow& w : money::limit_windows(b, now_ms / 1000)) {
    json limit = {{"period", w.name},
                  {"kind", w.budget ? "budget" : "cap"},
                  {"since", format_rfc3339_ms(w.since_ms)},
                  {"resets_at", format_rfc3339_ms(w.until_ms)}};
    if (w.budget) {
      const auto spent = ports.distribution.sales_cents(b.id, w.since_ms);
      if (!spent) return std::nullopt;
      limit["limit"] = cents_to_decimal(w.limit);
      limit["used"] = cents_to_decimal(*spent);
    } else {
      const auto sold = ports.distribution.count_sales(b.id, w.since_ms);
      if (!sold) return std::nullopt;
      limit["limit"] = w.limit;
      limit["used"] = *sold;
    }
    out.push_back(std::move(limit));
  }
  return out;
}

// The buyer the reader is, or the refusal sent.
std::optional<Buyer> own_buyer(const AccountPorts& ports, const Viewer& viewer,
                               http::Response& res) {
  if (!viewer.is_buyer()) {
    send_problem(res, refusal_for(AccountRefused::kNotBuyer));
    return std::nullopt;
  }
  Lookup<Buyer> found = ports.accounts.get_buyer(viewer.buyer_id);
  if (found.status == StoreStatus::kUnavailable) {
    send_problem(res, refusal_for(found.status, StoreStep::kRead));
    return std::nullopt;
  }
  if (!found.value) send_problem(res, refusal_for(AccountRefused::kNoBuyer));
  return std::move(found.value);
}

void send_account(const AccountPorts& ports, const Viewer& viewer, const Buyer& b,
                  http::Response& res) {
  const auto limits = limits_of(ports, b);
  if (!limits) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  json data = project_buyer_account(viewer, config_view(b));
  const json returns = buyer_return_summary(ports.money, ports.clock, b);
  data["limits"] = *limits;
  data["returns"] = project_return_summary(viewer, returns);
  data["health"] =
      buyer_health_json(buyer_traffic_24h(ports.reporting, ports.clock, b.id), b.id, returns);
  data["return_reasons"] = ports.reasons;
  set_etag(res, b.version);
  http::send_json(res, 200, {{"success", true}, {"data", std::move(data)}});
}

// The buyer changed as `apply` says, at the version If-Match allows, then noted in the change
// log as `by`'s and answered as GET /v1/account; a field `apply` refuses is a 400 naming it.
void change_own(const AccountPorts& ports, const Viewer& viewer, const ChangeActor& by,
                const IfMatch& if_match, const std::function<void(Buyer&, FieldErrors&)>& apply,
                http::Response& res) {
  const std::string id = viewer.buyer_id;
  const Management::Created changed = change_record<Buyer>(
      if_match, [&] { return ports.accounts.get_buyer(id); },
      [&](Buyer& b, FieldErrors& errors) {
        apply(b, errors);
        b.updated_at_ms = ports.clock.now_ms();
      },
      [&](Buyer& b) { return ports.accounts.update_buyer(b); }, config_view);
  if (!changed.errors.empty())
    return http::send_problem(res, 400, "the buyer configuration is invalid", changed.errors);
  if (refuse_version(res, changed, "buyer")) return;
  if (changed.status == StoreStatus::kNotFound)
    return send_problem(res, refusal_for(AccountRefused::kNoBuyer));
  if (changed.status != StoreStatus::kOk)
    return send_problem(res, refusal_for(changed.status, StoreStep::kWrite));
  ports.visibility.forget(id);
  log(LogLevel::kInfo, "buyer_updated", {{"buyer_id", id}, {"by", "buyer"}});
  record_change(ports.changes, ports.clock, by, "updated", "buyer", id, changed.before,
                changed.body);
  const Lookup<Buyer> now = ports.accounts.get_buyer(id);
  if (!now.value) return send_problem(res, refusal_for(now.status, StoreStep::kRead));
  send_account(ports, viewer, *now.value, res);
}

// A seller's own account: its record as it may read it, and how many campaigns it has (all,
// and active). 404 when its record is gone, 503 when the store cannot say.
void send_seller_account(const AccountPorts& ports, const Viewer& viewer, http::Response& res) {
  const Lookup<Seller> found = ports.accounts.get_seller(viewer.seller_id);
  if (found.status == StoreStatus::kUnavailable)
    return send_problem(res, refusal_for(found.status, StoreStep::kRead));
  if (!found.value) return send_problem(res, refusal_for(AccountRefused::kNoSeller));
  const auto campaigns = ports.accounts.list_campaigns(viewer.seller_id);
  if (!campaigns)
    return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  std::int64_t active = 0;
  for (const Campaign& c : *campaigns) active += c.active ? 1 : 0;
  json data = project_seller_account(viewer, seller_to_json(*found.value));
  data["campaigns"] = {{"count", campaigns->size()}, {"active", active}};
  set_etag(res, found.value->version);
  http::send_json(res, 200, {{"success", true}, {"data", std::move(data)}});
}

}  // namespace

void answer_account(const AccountPorts& ports, const Viewer& viewer, http::Response& res) {
  if (viewer.is_seller()) return send_seller_account(ports, viewer, res);
  if (viewer.is_operator()) return send_problem(res, refusal_for(AccountRefused::kNoAccount));
  if (const auto b = own_buyer(ports, viewer, res)) send_account(ports, viewer, *b, res);
}

void answer_account_buying(const AccountPorts& ports, const Viewer& viewer, const ChangeActor& by,
                           bool active, http::Response& res) {
  const auto b = own_buyer(ports, viewer, res);
  if (!b) return;
  if (b->active == active) return send_account(ports, viewer, *b, res);  // nothing to change
  change_own(
      ports, viewer, by, IfMatch{}, [active](Buyer& x, FieldErrors&) { set_buying(x, active); },
      res);
}

void answer_account_update(const AccountPorts& ports, const Viewer& viewer, const ChangeActor& by,
                           const http::Request& req, http::Response& res) {
  if (!http::require_json(req, res)) return;
  const auto b = own_buyer(ports, viewer, res);
  if (!b) return;
  auto body = http::parse_body(req, res);
  if (!body) return;
  FieldErrors errors;
  const SelfChangeVerdict verdict = judge_self_change(*body, *b, errors);
  if (verdict.verdict == SelfChange::kReadOnly)
    return http::send_problem(res, 400, "only caps and filters are a buyer's to change", errors);
  if (verdict.verdict == SelfChange::kNotAllowed)
    return send_problem(res, refusal_for(verdict.field == "caps" ? AccountRefused::kCapsClosed
                                                                 : AccountRefused::kFiltersClosed));
  body->erase("version");
  change_own(
      ports, viewer, by, if_match_of(req),
      [&](Buyer& x, FieldErrors& errs) {
        // Judged again on the buyer as it is when written: the operator may have closed a field
        // since the first look.
        if (const auto now = judge_self_change(*body, x, errs);
            now.verdict == SelfChange::kNotAllowed)
          return errs.push_back({now.field, "not_allowed", "the operator closed it meanwhile"});
        const Buyer base = x;
        x = buyer_from_json(*body, &base, ports.allow_private_buyers, errs);
        x.id = base.id;
        x.created_at_ms = base.created_at_ms;
        x.version = base.version;
      },
      res);
}

void register_account(Routes& routes, IngestContext& ctx) {
  const auto ports = [&ctx] {
    return AccountPorts{ctx.accounts,         ctx.money,   ctx.reporting,
                        ctx.distribution,     ctx.clock,   ctx.config.allow_private_buyers,
                        ctx.buyer_visibility, ctx.changes, ctx.config.return_reasons};
  };
  routes.get("/v1/account", [&ctx, ports](const http::Request& q, http::Response& r) {
    if (const auto key = authorise(ctx, q, r, kScopeLeadsRead))
      answer_account(ports(), viewer_of(ctx, *key), r);
  });
  for (const bool active : {false, true})
    routes.post(active ? "/v1/account/resume" : "/v1/account/pause",
                [&ctx, ports, active](const http::Request& q, http::Response& r) {
                  if (const auto key = authorise(ctx, q, r, kScopeBuyersWrite))
                    answer_account_buying(ports(), viewer_of(ctx, *key), buyer_actor(*key), active,
                                          r);
                });
  routes.put("/v1/account", [&ctx, ports](const http::Request& q, http::Response& r) {
    if (const auto key = authorise(ctx, q, r, kScopeBuyersWrite))
      answer_account_update(ports(), viewer_of(ctx, *key), buyer_actor(*key), q, r);
  });
}

}  // namespace leadflow
