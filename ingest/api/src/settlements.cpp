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
#include "leadflow/money/payout.hpp"
#include "returns.hpp"
#include "settlements.hpp"
#include "viewer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

constexpr double kMaxPrice = 100'000.0;  // dollars: a settlement is a lead's price, not a transfer

// The body of a settlement: whether the buyer took the lead, at what price (its post intent's
// unless another was agreed), which buyer (of a lead posted to several) and the buyer's own
// reference and a note. Each field at fault is added to `errors`.
SettleAsk decode_settlement(const json& body, FieldErrors& errors) {
  for (const auto& [name, value] : body.items())
    if (name != "sold" && name != "price" && name != "buyer_lead_id" && name != "note" &&
        name != "buyer_id")
      errors.push_back({name, "unknown_field", "is not a field of a settlement"});
  SettleAsk ask;
  const auto sold = body.find("sold");
  if (sold == body.end() || !sold->is_boolean())
    errors.push_back({"sold", sold == body.end() ? "required" : "invalid_type",
                      "true if the buyer took the lead, false if not"});
  else
    ask.sold = sold->get<bool>();
  if (auto it = body.find("price"); it != body.end()) {
    const auto cents = it->is_number() && it->get<double>() <= kMaxPrice
                           ? cents_from_decimal(it->get<double>())
                           : std::nullopt;
    if (!cents || *cents <= 0)
      errors.push_back({"price", "out_of_range", "a price in dollars, above 0 and at most 100000"});
    else if (!ask.sold)
      errors.push_back({"price", "not_allowed", "an unsold lead has no price"});
    else
      ask.price = cents;
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
  text("buyer_id", 64, TextLines::kSingle, ask.buyer_id);
  text("buyer_lead_id", 200, TextLines::kSingle, ask.buyer_lead_id);
  text("note", 1000, TextLines::kMulti, ask.note);  // a note may run on lines
  if (!ask.sold && !ask.buyer_lead_id.empty())
    errors.push_back({"buyer_lead_id", "not_allowed", "an unsold lead has no buyer reference"});
  return ask;
}

}  // namespace

SettleDone make_settlement(const SettlePorts& ports, const ApiKey& key, const SettleAsk& ask) {
  SettleDone done;
  const auto refuse = [&done](SettleRefused why) {
    done.refused = why;
    return done;
  };
  if (!key.is_operator()) return refuse(SettleRefused::kNotOperator);
  if (!is_valid_id(ask.lead_id, kLeadPrefix)) return refuse(SettleRefused::kNoSuchLead);
  const auto found = ports.intake.get_lead(ask.lead_id);
  if (found.status == StoreStatus::kUnavailable) return refuse(SettleRefused::kUnavailable);
  if (!found.value) return refuse(SettleRefused::kNoSuchLead);
  const auto& record = found.value;
  done.seller_id = record->lead.seller_id;
  const auto intents = ports.distribution.get_post_intents(ask.lead_id);
  if (!intents) return refuse(SettleRefused::kIntentsUnreadable);
  // The intent settled: the named buyer's, or the lead's only one.
  const PostIntent* intent = nullptr;
  for (const auto& i : *intents)
    if (ask.buyer_id.empty() ? intents->size() == 1 : i.buyer_id == ask.buyer_id) intent = &i;
  if (intents->size() > 1 && ask.buyer_id.empty()) return refuse(SettleRefused::kBuyerNeeded);
  if (intent == nullptr) return refuse(SettleRefused::kNotUnknown);

  Settlement s;
  s.lead_id = ask.lead_id;
  s.buyer_id = intent->buyer_id;
  s.sold = ask.sold;
  if (s.sold) s.price = ask.price.value_or(intent->price);
  s.buyer_lead_id = ask.buyer_lead_id;
  s.note = ask.note;
  s.by_key_id = key.id;
  s.at_ms = ports.clock.now_ms();
  Lookup<Campaign> campaign{StoreStatus::kNotFound, std::nullopt};
  Lookup<Seller> seller{StoreStatus::kNotFound, std::nullopt};
  if (!record->lead.campaign_id.empty())
    campaign = ports.accounts.get_campaign(record->lead.campaign_id);
  else if (!record->lead.seller_id.empty())
    seller = ports.accounts.get_seller(record->lead.seller_id);
  // A payout rule the store cannot read now is not the default one: nothing is settled.
  if (campaign.status == StoreStatus::kUnavailable || seller.status == StoreStatus::kUnavailable)
    return refuse(SettleRefused::kUnavailable);
  // The seller's payout by its rule on the lead's total: a share settled after others adds
  // what the total's payout grows by.
  const PayoutRule payout =
      [model = money::payout_model_of(campaign.value ? &*campaign.value : nullptr,
                                      seller.value ? &*seller.value : nullptr)](Cents total) {
        return money::payout_of(model, total);
      };
  SettleResult result = ports.money.settle_lead(s, payout);
  switch (result.status) {
    case SettleStatus::kSettled:
      break;
    case SettleStatus::kNoSuchLead:
      return refuse(SettleRefused::kNoSuchLead);
    case SettleStatus::kNotUnknown:
      return refuse(SettleRefused::kNotUnknown);
    case SettleStatus::kBuyerNeeded:
      return refuse(SettleRefused::kBuyerNeeded);
    case SettleStatus::kAlreadySettled:
      done.settlement = std::move(result.settlement);
      return refuse(SettleRefused::kAlreadySettled);
    case SettleStatus::kUnavailable:
      return refuse(SettleRefused::kUnavailable);
  }
  done.settlement = std::move(result.settlement);
  AuditRecord audit;
  audit.event = AuditEvent::kLeadSettled;
  audit.surface = "api";
  audit.kind = s.sold ? "sold" : "not_sold";
  audit.lead_id = ask.lead_id;
  audit.buyer_id = done.settlement->buyer_id;
  audit.seller_id = done.seller_id;
  audit.actor_key_id = key.id;
  ports.audit(audit);
  return done;
}

void answer_settlement(const SettlePorts& ports, const ApiKey& key, const Viewer& viewer,
                       std::string_view lead_id, const http::Request& req, http::Response& res) {
  if (!key.is_operator()) return send_problem(res, refusal_for(SettleRefused::kNotOperator));
  if (!http::require_json(req, res)) return;
  const auto body = http::parse_body(req, res);
  if (!body) return;
  FieldErrors errors;
  SettleAsk ask = decode_settlement(*body, errors);
  if (!errors.empty()) return http::send_problem(res, 400, "the settlement is invalid", errors);
  ask.lead_id = lead_id;

  const SettleDone done = make_settlement(ports, key, ask);
  json settlement =
      done.settlement ? project_settlement(viewer, *done.settlement, done.seller_id) : json();
  if (done.refused)
    return send_problem(res, refusal_for(*done.refused),
                        done.settlement ? json{{"settlement", std::move(settlement)}} : json());
  http::send_json(res, 201, {{"success", true}, {"data", std::move(settlement)}});
}

void register_settlements(Routes& routes, IngestContext& ctx) {
  routes.post("/v1/leads/{id}/settle", [&ctx](const http::Request& req, http::Response& res) {
    const auto key = authorise(ctx, req, res, kScopeAdmin, /*operator_only=*/true);
    if (!key) return;  // 401, 403, 429 or 503 sent
    const SettlePorts ports{
        ctx.intake,   ctx.distribution,
        ctx.accounts, ctx.money,
        ctx.clock,    [&ctx, &req](const AuditRecord& r) { audit_request(ctx, req, r); }};
    answer_settlement(ports, *key, viewer_of(ctx, *key), req.match(1), req, res);
  });
}

}  // namespace leadflow
