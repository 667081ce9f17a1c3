#include "leadflow/visibility/postback.hpp"

#include <nlohmann/json.hpp>

#include "leadflow/base/money.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/visibility/projections.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

namespace {

using nlohmann::json;

// Each field goes in only when the model lets the event's seller see a field of its class.
class SellerFields {
 public:
  explicit SellerFields(const PostbackFacts& f) : viewer_(Viewer::seller(f.seller_id)), f_(f) {}
  SellerFields& put(FieldClass c, const char* name, json value) {
    if (may_see(viewer_, c, f_.seller_id, "")) out_[name] = std::move(value);
    return *this;
  }
  json take() { return std::move(out_); }

 private:
  Viewer viewer_;
  const PostbackFacts& f_;
  json out_ = json::object();
};

}  // namespace

std::string postback_body(const PostbackFacts& f) {
  SellerFields data(f);
  data.put(FieldClass::kLeadState, "lead_id", f.lead_id)
      .put(FieldClass::kSellerIdentity, "campaign_id",
           f.campaign_id.empty() ? json(nullptr) : json(f.campaign_id))
      .put(FieldClass::kLeadState, "status", f.status)
      .put(FieldClass::kLeadState, "currency", "USD");
  if (f.kind == "lead.sold") {
    data.put(FieldClass::kSellerMoney, "payout", cents_to_decimal(f.payout));
  } else if (f.kind == "lead.unsold") {
    // The operator's reason may name a buyer: the seller is told it in its own words.
    const DeliveryStatus status = parse_delivery_status(f.status).value_or(DeliveryStatus::kUnsold);
    data.put(FieldClass::kUnsoldReason, "reason", seller_reason(status, f.reason));
  } else if (f.kind == "lead.returned") {
    // As a return is shown to its seller (project_return): the reason code, the payout reversed.
    data.put(FieldClass::kLeadState, "reason", f.reason)
        .put(FieldClass::kSellerMoney, "payout_reversed", cents_to_decimal(f.payout));
  } else if (f.kind == "lead.settled") {
    data.put(FieldClass::kLeadState, "sold", f.sold)
        .put(FieldClass::kSellerMoney, "payout",
             f.sold ? json(cents_to_decimal(f.payout)) : json(nullptr));
  }
  json body = {{"id", f.event_id},
               {"type", f.kind},
               {"created_at", format_rfc3339_ms(f.occurred_at_ms)},
               {"data", data.take()}};
  return body.dump();
}

}  // namespace leadflow
