// Settlement: a lead whose post outcome stayed unknown (no answer from the buyer to the post,
// through every attempt) ends failed with its post intent, dead-lettered for the operator. The
// operator asks the buyer, then records its answer here: sold at a price (the lead is delivered,
// its sale enters the ledger like any other) or not (the lead is unsold). A lead posted to several
// buyers at once (a shared sale) is settled buyer by buyer, naming each; the seller's payout
// follows its rule on the lead's total. Once per lead and buyer, audited.
#include <optional>

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/money.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/money/payout.hpp"
#include "returns.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

constexpr double kMaxPrice = 100'000.0;  // dollars: a settlement is a lead's price, not a transfer

void post_settlement(IngestContext& ctx, const http::Request& req, http::Response& res) {
  auto key = authorise(ctx, req, res, kScopeAdmin, /*operator_only=*/true);
  if (!key) return;
  if (!http::require_json(req, res)) return;
  const auto parsed = http::parse_body(req, res);
  if (!parsed) return;
  const json& body = *parsed;
  FieldErrors errors;
  for (const auto& [name, value] : body.items())
    if (name != "sold" && name != "price" && name != "buyer_lead_id" && name != "note" &&
        name != "buyer_id")
      errors.push_back({name, "unknown_field", "is not a field of a settlement"});
  Settlement s;
  const auto sold = body.find("sold");
  if (sold == body.end() || !sold->is_boolean())
    errors.push_back({"sold", sold == body.end() ? "required" : "invalid_type",
                      "true if the buyer took the lead, false if not"});
  else
    s.sold = sold->get<bool>();
  std::optional<Cents> price;
  if (auto it = body.find("price"); it != body.end()) {
    const auto cents = it->is_number() && it->get<double>() <= kMaxPrice
                           ? cents_from_decimal(it->get<double>())
                           : std::nullopt;
    if (!cents || *cents <= 0)
      errors.push_back({"price", "out_of_range", "a price in dollars, above 0 and at most 100000"});
    else if (!s.sold)
      errors.push_back({"price", "not_allowed", "an unsold lead has no price"});
    else
      price = cents;
  }
  const auto text = [&](const char* name, std::size_t max, TextLines lines, std::string& out) {
    const auto it = body.find(name);
    if (it == body.end() || it->is_null()) return;
    if (!it->is_string())
      errors.push_back({name, "invalid_type", "a string of at most " + std::to_string(max)});
    else if (auto refused = refuse_free_text(it->get_ref<const std::string&>(), max, lines))
      errors.push_back({name, refused->code, refused->message});
    else
      out = it->get<std::string>();
  };
  text("buyer_id", 64, TextLines::kSingle, s.buyer_id);
  text("buyer_lead_id", 200, TextLines::kSingle, s.buyer_lead_id);
  text("note", 1000, TextLines::kMulti, s.note);  // a note may run on lines
  if (!s.sold && !s.buyer_lead_id.empty())
    errors.push_back({"buyer_lead_id", "not_allowed", "an unsold lead has no buyer reference"});
  if (!errors.empty()) {
    http::send_problem(res, 400, "the settlement is invalid", errors);
    return;
  }

  const std::string id(req.match(1));
  if (!is_valid_id(id, kLeadPrefix)) return http::send_problem(res, 404, "no such lead");
  const auto record = ctx.intake.get_lead(id);
  if (!record) return http::send_problem(res, 404, "no such lead");
  const auto intents = ctx.distribution.get_post_intents(id);
  if (!intents) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  const auto not_unknown = [&res] {
    http::send_problem(res, 409,
                       "only a failed lead whose post outcome stayed unknown can be settled");
  };
  const PostIntent* intent = nullptr;
  for (const auto& i : *intents)
    if (s.buyer_id.empty() ? intents->size() == 1 : i.buyer_id == s.buyer_id) intent = &i;
  if (intents->size() > 1 && s.buyer_id.empty()) {
    http::send_problem(res, 400, "the settlement is invalid",
                       {{"buyer_id", "required",
                         "the lead was posted to several buyers: name the one settled with"}});
    return;
  }
  if (intent == nullptr) return not_unknown();
  s.buyer_id = intent->buyer_id;
  if (s.sold) s.price = price.value_or(intent->price);
  std::optional<Campaign> campaign;
  std::optional<Seller> seller;
  if (!record->lead.campaign_id.empty())
    campaign = ctx.accounts.get_campaign(record->lead.campaign_id);
  else if (!record->lead.seller_id.empty())
    seller = ctx.accounts.get_seller(record->lead.seller_id);
  // The seller's payout by its rule on the lead's total: a share settled after others adds
  // what the total's payout grows by.
  const PayoutRule payout = [model = money::payout_model_of(campaign ? &*campaign : nullptr,
                                                            seller ? &*seller : nullptr)](
                                Cents total) { return money::payout_of(model, total); };
  s.lead_id = id;
  s.by_key_id = key->id;
  s.at_ms = ctx.clock.now_ms();
  const SettleResult result = ctx.money.settle_lead(s, payout);
  switch (result.status) {
    case SettleStatus::kSettled:
      break;
    case SettleStatus::kNoSuchLead:
      return http::send_problem(res, 404, "no such lead");
    case SettleStatus::kNotUnknown:
      return not_unknown();
    case SettleStatus::kBuyerNeeded:
      http::send_problem(res, 400, "the settlement is invalid",
                         {{"buyer_id", "required",
                           "the lead was posted to several buyers: name the one settled with"}});
      return;
    case SettleStatus::kAlreadySettled:
      http::send_problem_with(
          res, 409, "the lead was already settled with this buyer",
          {{"settlement",
            project_settlement(viewer_of(ctx, *key), result.settlement, record->lead.seller_id)}});
      return;
    case SettleStatus::kUnavailable:
      return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kWrite));
  }
  AuditRecord audit;
  audit.event = AuditEvent::kLeadSettled;
  audit.surface = "api";
  audit.kind = s.sold ? "sold" : "not_sold";
  audit.lead_id = id;
  audit.buyer_id = result.settlement.buyer_id;
  audit.seller_id = record->lead.seller_id;
  audit.actor_key_id = key->id;
  audit_request(ctx, req, audit);
  http::send_json(res, 201,
                  {{"success", true},
                   {"data", project_settlement(viewer_of(ctx, *key), result.settlement,
                                               record->lead.seller_id)}});
}

}  // namespace

void register_settlements(Routes& routes, IngestContext& ctx) {
  routes.post("/v1/leads/{id}/settle",
              [&ctx](const http::Request& q, http::Response& r) { post_settlement(ctx, q, r); });
}

}  // namespace leadflow
