#include "leadflow/visibility/projections.hpp"

#include <algorithm>
#include <set>

#include "leadflow/base/money.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/domain/lead_codec.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

/// One answer object, built field by field: a field goes in only when the model lets the viewer
/// see a field of its class belonging to `seller_id` and `buyer_id`. Every projection below
/// writes through it, so no field reaches an answer without its class being asked.
class Fields {
 public:
  Fields(const Viewer& viewer, std::string_view seller_id, std::string_view buyer_id)
      : viewer_(viewer), seller_id_(seller_id), buyer_id_(buyer_id) {}

  bool visible(FieldClass c) const { return may_see(viewer_, c, seller_id_, buyer_id_); }

  Fields& put(FieldClass c, const char* name, json value) {
    if (visible(c)) out_[name] = std::move(value);
    return *this;
  }

  json take() { return std::move(out_); }

 private:
  const Viewer& viewer_;
  std::string_view seller_id_;
  std::string_view buyer_id_;
  json out_ = json::object();
};

// The buyer's own purchase of the lead, or nullptr if it bought none.
const Sale* sale_of(const Distribution& d, std::string_view buyer_id) {
  for (const auto& s : d.sales)
    if (s.buyer_id == buyer_id) return &s;
  // An outcome with no sales but delivered stands for one sale made of the summary.
  return nullptr;
}

// Whose buyer-side fields the viewer reads of this lead: the operator the lead's first buyer,
// a buyer its own purchase (and nothing else), a seller none.
struct BuyerSide {
  std::string buyer_id;
  Cents price = 0;
  std::string buyer_lead_id;
};

BuyerSide buyer_side(const Viewer& viewer, const Distribution& d) {
  if (viewer.is_buyer()) {
    if (const Sale* s = sale_of(d, viewer.buyer_id))
      return {s->buyer_id, s->price, s->buyer_lead_id};
    if (d.sales.empty() && d.buyer_id == viewer.buyer_id)
      return {d.buyer_id, d.price, d.buyer_lead_id};
    return {};
  }
  return {d.buyer_id, d.price, d.buyer_lead_id};
}

bool has_price(DeliveryStatus s) {
  return s == DeliveryStatus::kDelivered || s == DeliveryStatus::kReturned;
}

}  // namespace

bool may_see_lead(const Viewer& viewer, const LeadRecord& record) {
  switch (viewer.party) {
    case Party::kOperator:
      return true;
    case Party::kSeller:
      return !record.lead.seller_id.empty() && record.lead.seller_id == viewer.seller_id;
    case Party::kBuyer:
      return !buyer_side(viewer, record.distribution).buyer_id.empty();
  }
  return false;
}

json project_would_have(std::optional<bool> vertical_has_active_buyers) {
  return {{"valid", true},
          {"stored_as_test", true},
          {"offered_to_buyers", false},
          {"vertical_has_active_buyers",
           vertical_has_active_buyers ? json(*vertical_has_active_buyers) : json(nullptr)}};
}

json project_distribution(const Viewer& viewer, const Distribution& d, std::string_view seller_id) {
  const BuyerSide mine = buyer_side(viewer, d);
  const bool priced = has_price(d.status);
  Fields f(viewer, seller_id, mine.buyer_id);
  f.put(FieldClass::kLeadState, "accepted", d.status == DeliveryStatus::kDelivered)
      .put(FieldClass::kLeadState, "delivery_status", to_string(d.status))
      .put(FieldClass::kLeadState, "currency", "USD")
      .put(FieldClass::kBuyerIdentity, "buyer_id", or_null(mine.buyer_id))
      .put(FieldClass::kSellerMoney, "payout",
           priced ? json(cents_to_decimal(d.payout)) : json(nullptr));
  // The interface names buyer_id in every distribution (the answer of POST /v1/leads): a reader
  // who may not know the buyer reads it withheld, as null, rather than missing.
  if (!f.visible(FieldClass::kBuyerIdentity)) f.put(FieldClass::kLeadState, "buyer_id", nullptr);
  if (d.decided_at_ms)
    f.put(FieldClass::kLeadState, "decided_at", format_rfc3339_ms(d.decided_at_ms));
  if (!mine.buyer_lead_id.empty())
    f.put(FieldClass::kBuyerIdentity, "buyer_lead_id", mine.buyer_lead_id);
  if (f.visible(FieldClass::kBuyerMoney))
    f.put(FieldClass::kBuyerMoney, "price",
          priced ? json(cents_to_decimal(mine.price)) : json(nullptr));
  else
    // The seller's "price" is what the lead fetched for it: its payout (as on Surface B).
    f.put(FieldClass::kSellerMoney, "price",
          priced ? json(cents_to_decimal(d.payout)) : json(nullptr));
  if (!d.reason.empty()) {
    const bool raw = access(viewer, FieldClass::kUnsoldReason) == Access::kAll;
    f.put(FieldClass::kUnsoldReason, "reason", raw ? d.reason : seller_reason(d.status, d.reason));
  }
  // Every buyer's purchase: only for a reader who may see every buyer (a buyer's own purchase
  // is the distribution itself).
  if (!d.sales.empty() && access(viewer, FieldClass::kBuyerIdentity) == Access::kAll) {
    json sales = json::array();
    for (const auto& s : d.sales) {
      Fields sale(viewer, seller_id, s.buyer_id);
      sale.put(FieldClass::kBuyerIdentity, "buyer_id", s.buyer_id)
          .put(FieldClass::kBuyerMoney, "price", cents_to_decimal(s.price))
          .put(FieldClass::kSellerMoney, "payout", cents_to_decimal(s.payout))
          .put(FieldClass::kBuyerIdentity, "buyer_lead_id", or_null(s.buyer_lead_id));
      sales.push_back(sale.take());
    }
    f.put(FieldClass::kBuyerIdentity, "sales", std::move(sales));
  }
  return f.take();
}

json project_attempts(const Viewer& viewer, const std::vector<Attempt>& attempts,
                      std::string_view seller_id) {
  if (access(viewer, FieldClass::kBuyerIdentity) == Access::kNone) {
    // A reader who may see no buyer (a seller) learns when its lead was offered and how often,
    // never to whom or at what bid: one attempt's timing and outcome would let it tell buyers
    // apart.
    if (!may_see(viewer, FieldClass::kLeadState, seller_id, "")) return nullptr;
    int pings = 0, posts = 0, reoffers = 0;
    std::int64_t first = 0, last = 0;
    for (const auto& a : attempts) {
      (a.kind == AttemptKind::kPing ? pings : posts)++;
      reoffers = std::max(reoffers, a.reoffer);
      if (first == 0 || a.started_at_ms < first) first = a.started_at_ms;
      last = std::max(last, a.started_at_ms);
    }
    return {{"pings", pings},
            {"posts", posts},
            {"reoffers", reoffers},
            {"first_offered_at", first ? json(format_rfc3339_ms(first)) : json(nullptr)},
            {"last_offered_at", last ? json(format_rfc3339_ms(last)) : json(nullptr)}};
  }
  json out = json::array();
  for (const auto& a : attempts) {
    Fields f(viewer, seller_id, a.buyer_id);
    // An attempt is a buyer's: a reader sees it only if it may see that buyer.
    if (!f.visible(FieldClass::kBuyerIdentity)) continue;
    f.put(FieldClass::kBuyerIdentity, "buyer_id", a.buyer_id)
        .put(FieldClass::kLeadState, "kind", to_string(a.kind))
        .put(FieldClass::kLeadState, "started_at", format_rfc3339_ms(a.started_at_ms))
        .put(FieldClass::kLeadState, "duration_ms", a.duration_ms)
        .put(FieldClass::kLeadState, "outcome", to_string(a.outcome))
        .put(FieldClass::kBuyerMoney, "bid", a.bid ? json(cents_to_decimal(*a.bid)) : json(nullptr))
        .put(FieldClass::kBuyerIdentity, "http_status",
             a.http_status == 0 ? json(nullptr) : json(a.http_status))
        .put(FieldClass::kBuyerIdentity, "reason", or_null(a.reason))
        .put(FieldClass::kLeadState, "tier", a.tier == 0 ? json(nullptr) : json(a.tier))
        .put(FieldClass::kLeadState, "reoffer", a.reoffer);
    out.push_back(f.take());
  }
  return out;
}

json project_ineligibility(const Viewer& viewer, const std::vector<Ineligibility>& v,
                           std::string_view seller_id) {
  if (access(viewer, FieldClass::kBuyerIdentity) == Access::kAll) {
    json out = json::array();
    for (const auto& i : v) out.push_back({{"buyer_id", i.buyer_id}, {"reason", i.reason}});
    return out;
  }
  if (!may_see(viewer, FieldClass::kUnsoldReason, seller_id, "")) return nullptr;
  // Distinct and sorted: neither the number of buyers nor their order is the seller's to know.
  std::set<std::string> words;
  for (const auto& i : v) words.insert(seller_ineligibility(i.reason));
  return json(std::vector<std::string>(words.begin(), words.end()));
}

json project_lead(const Viewer& viewer, const LeadRecord& record, const SellerLabels& labels,
                  LeadDetail detail) {
  const Lead& l = record.lead;
  const Distribution& d = record.distribution;
  const BuyerSide mine = buyer_side(viewer, d);
  Fields f(viewer, l.seller_id, mine.buyer_id);
  f.put(FieldClass::kLeadState, "lead_id", l.id)
      .put(FieldClass::kLeadState, "status", to_string(d.status))
      .put(FieldClass::kLeadState, "test", l.test)
      .put(FieldClass::kLeadState, "created_at", format_rfc3339_ms(l.received_at_ms))
      .put(FieldClass::kLeadState, "vertical", l.vertical)
      .put(FieldClass::kLeadState, "source", or_null(l.source))
      .put(FieldClass::kPerson, "first_name", l.first_name)
      .put(FieldClass::kPerson, "last_name", l.last_name)
      .put(FieldClass::kPerson, "email", l.email)
      .put(FieldClass::kPerson, "phone", l.phone)
      .put(FieldClass::kPerson, "zip_code", l.zip4.empty() ? l.zip_code : l.zip_code + "-" + l.zip4)
      .put(FieldClass::kPerson, "state", or_null(l.state))
      .put(FieldClass::kPerson, "landing_page", or_null(l.landing_page))
      .put(FieldClass::kPerson, "ip_address", or_null(l.ip_address))
      .put(FieldClass::kPerson, "user_agent", or_null(l.user_agent))
      .put(FieldClass::kPerson, "custom_fields", custom_fields_to_json(l.custom_fields));
  if (!l.trustedform_cert_url.empty())
    f.put(FieldClass::kPerson, "trustedform_cert_url", l.trustedform_cert_url);
  if (!l.jornaya_leadid.empty()) f.put(FieldClass::kPerson, "jornaya_leadid", l.jornaya_leadid);
  if (l.tcpa_consent) f.put(FieldClass::kPerson, "tcpa_consent", *l.tcpa_consent);
  if (!l.tcpa_consent_text.empty())
    f.put(FieldClass::kPerson, "tcpa_consent_text", l.tcpa_consent_text);

  // An erased lead's person fields hold its tombstone (docs/erasure.md); when, is the lead's state.
  if (record.erased_at_ms != 0)
    f.put(FieldClass::kLeadState, "erased_at", format_rfc3339_ms(record.erased_at_ms));
  f.put(FieldClass::kSellerIdentity, "seller_id", or_null(l.seller_id))
      .put(FieldClass::kSellerIdentity, "campaign_id", or_null(l.campaign_id));
  if (viewer.is_buyer()) {
    // In place of the seller: a code stable for this buyer and seller, meaningless to others.
    f.put(FieldClass::kLeadState, "source_code",
          l.seller_id.empty() ? json(nullptr)
                              : json(source_code(labels.secret, viewer.buyer_id, l.seller_id)));
    if (f.visible(FieldClass::kSellerIdentity) && labels.name_of && !l.seller_id.empty())
      f.put(FieldClass::kSellerIdentity, "seller_name", or_null(labels.name_of(l.seller_id)));
  }
  f.put(FieldClass::kLeadState, "distribution", project_distribution(viewer, d, l.seller_id));
  json out = f.take();
  if (detail == LeadDetail::kFull) {
    if (json a = project_attempts(viewer, d.attempts, l.seller_id); a.is_array())
      out["attempts"] = std::move(a);
    else if (a.is_object())
      out["offers"] = std::move(a);
    // Per buyer for a reader who may see every buyer; reasons only for a seller.
    const bool per_buyer = access(viewer, FieldClass::kBuyerIdentity) == Access::kAll;
    if (json i = project_ineligibility(viewer, d.ineligible, l.seller_id); !i.is_null())
      out[per_buyer ? "ineligible_buyers" : "ineligible_reasons"] = std::move(i);
  }
  return out;
}

json project_return(const Viewer& viewer, const LeadReturn& r, std::string_view lead_seller_id) {
  Fields f(viewer, lead_seller_id, r.buyer_id);
  // A return is the buyer's act and the seller's payout reversal: nothing of it for anyone else.
  if (!f.visible(FieldClass::kBuyerIdentity) && !f.visible(FieldClass::kSellerMoney))
    return nullptr;
  f.put(FieldClass::kLeadState, "lead_id", r.lead_id)
      .put(FieldClass::kLeadState, "reason", r.reason)
      .put(FieldClass::kLeadState, "currency", "USD")
      .put(FieldClass::kLeadState, "sold_at", format_rfc3339_ms(r.sold_at_ms))
      .put(FieldClass::kLeadState, "returned_at", format_rfc3339_ms(r.returned_at_ms))
      .put(FieldClass::kBuyerIdentity, "buyer_id", r.buyer_id)
      // The buyer's own words may name it: the buyer's side, as its key.
      .put(FieldClass::kBuyerIdentity, "note", or_null(r.note))
      .put(FieldClass::kBuyerIdentity, "key_id", r.by_key_id)
      .put(FieldClass::kBuyerMoney, "price", cents_to_decimal(r.price))
      .put(FieldClass::kSellerMoney, "payout", cents_to_decimal(r.payout));
  return f.take();
}

json project_returns(const Viewer& viewer, const std::vector<LeadReturn>& returns,
                     std::string_view lead_seller_id) {
  json out = json::array();
  for (const auto& r : returns)
    if (json j = project_return(viewer, r, lead_seller_id); !j.is_null())
      out.push_back(std::move(j));
  return out;
}

json project_settlement(const Viewer& viewer, const Settlement& s,
                        std::string_view lead_seller_id) {
  Fields f(viewer, lead_seller_id, s.buyer_id);
  if (!f.visible(FieldClass::kBuyerIdentity) && !f.visible(FieldClass::kSellerMoney))
    return nullptr;
  f.put(FieldClass::kLeadState, "lead_id", s.lead_id)
      .put(FieldClass::kLeadState, "sold", s.sold)
      .put(FieldClass::kLeadState, "currency", "USD")
      .put(FieldClass::kLeadState, "settled_at", format_rfc3339_ms(s.at_ms))
      .put(FieldClass::kBuyerIdentity, "buyer_id", s.buyer_id)
      .put(FieldClass::kBuyerIdentity, "buyer_lead_id", or_null(s.buyer_lead_id))
      .put(FieldClass::kBuyerMoney, "price",
           s.sold ? json(cents_to_decimal(s.price)) : json(nullptr))
      .put(FieldClass::kSellerMoney, "payout",
           s.sold ? json(cents_to_decimal(s.payout)) : json(nullptr));
  // The operator's own record of it: its note (which may name either party) and its key.
  f.put(FieldClass::kOperatorRecord, "note", or_null(s.note))
      .put(FieldClass::kOperatorRecord, "key_id", s.by_key_id);
  return f.take();
}

json project_settlements(const Viewer& viewer, const std::vector<Settlement>& v,
                         std::string_view lead_seller_id) {
  json out = json::array();
  for (const auto& s : v)
    if (json j = project_settlement(viewer, s, lead_seller_id); !j.is_null())
      out.push_back(std::move(j));
  return out;
}

json project_ledger_entry(const Viewer& viewer, const LedgerEntry& e) {
  Fields f(viewer, e.seller_id, e.buyer_id);
  const bool buyer_side = f.visible(FieldClass::kBuyerMoney);
  const bool seller_side = f.visible(FieldClass::kSellerMoney);
  if (!buyer_side && !seller_side) return nullptr;
  f.put(FieldClass::kLeadState, "entry_id", e.id)
      .put(FieldClass::kLeadState, "kind", e.kind)
      .put(FieldClass::kLeadState, "lead_id", e.lead_id)
      .put(FieldClass::kLeadState, "currency", "USD")
      .put(FieldClass::kLeadState, "at", format_rfc3339_ms(e.at_ms))
      .put(FieldClass::kBuyerIdentity, "buyer_id", e.buyer_id)
      .put(FieldClass::kSellerIdentity, "seller_id", or_null(e.seller_id))
      .put(FieldClass::kSellerIdentity, "campaign_id", or_null(e.campaign_id))
      .put(FieldClass::kSellerMoney, "payout", cents_to_decimal(e.payout))
      .put(FieldClass::kMargin, "margin", cents_to_decimal(e.revenue - e.payout));
  // The operator reads the entry's revenue as such; its buyer reads it as what it paid.
  if (access(viewer, FieldClass::kBuyerMoney) == Access::kAll)
    f.put(FieldClass::kBuyerMoney, "revenue", cents_to_decimal(e.revenue));
  else
    f.put(FieldClass::kBuyerMoney, "price", cents_to_decimal(e.revenue));
  return f.take();
}

json project_ledger(const Viewer& viewer, const std::vector<LedgerEntry>& entries) {
  json out = json::array();
  for (const auto& e : entries)
    if (json j = project_ledger_entry(viewer, e); !j.is_null()) out.push_back(std::move(j));
  return out;
}

}  // namespace leadflow
