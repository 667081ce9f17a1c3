#pragma once
// What the SQLite and PostgreSQL adapters share: the column lists their statements name, and the
// decoding of a result row into domain types. The schemas differ (types, DDL); the columns and
// their order do not. Readers are templates over the adapter's row type, which offers
// text(i), int64(i), int32(i), boolean(i) and is_null(i).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "leadflow/base/log.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/money/returns.hpp"
#include "leadflow/store/store.hpp"

// Column lists shared by the statements that read and write rows; the readers below depend on
// their order.
#define LF_LEAD_COLUMNS                                                                    \
  "id, seller_id, campaign_id, api_key_id, surface, first_name, last_name, email, phone, " \
  "zip_code, zip4, state, vertical, source, landing_page, ip_address, user_agent, "        \
  "trustedform_cert_url, jornaya_leadid, tcpa_consent, tcpa_consent_text, custom_fields, " \
  "received_at, sync_wait_ms, test"
// (read beside the lead's own columns: erased_at, when its personal fields were erased)
#define LF_DISTRIBUTION_COLUMNS \
  "status, buyer_id, price_cents, payout_cents, buyer_lead_id, reason, decided_at, erased_at"
#define LF_CAMPAIGN_COLUMNS                                                                     \
  "id, seller_id, name, vertical, active, async_mode, sync_timeout_ms, rate_limit_per_minute, " \
  "payout_fixed, payout_value, key_hash, key_hint, created_at, test_mode, reoffer"
#define LF_API_KEY_COLUMNS \
  "id, seller_id, name, plan, scopes, key_hash, key_hint, created_at, revoked_at, buyer_id"
// What a key's reads add: its last use, written apart from the key (Store::touch_api_key), and
// its version (every write of a record's own sets it, never an insert: it starts at 1).
#define LF_API_KEY_READ_COLUMNS \
  LF_API_KEY_COLUMNS            \
  ", last_used_at, version,"    \
  " COALESCE((SELECT test_mode FROM sellers WHERE sellers.id = api_keys.seller_id), FALSE)"
#define LF_RETURN_COLUMNS \
  "lead_id, buyer_id, reason, note, by_key_id, price_cents, payout_cents, sold_at, returned_at"
#define LF_SELLER_COLUMNS \
  "id, name, active, created_at, payout_fixed, payout_value, test_mode, time_zone"
// The reads of sellers, campaigns, buyers and users add the version, as a key's do.
#define LF_SELLER_READ_COLUMNS LF_SELLER_COLUMNS ", version"
// A campaign's and a key's reads add their seller's test mode (leadflow/domain/test_mode.hpp).
#define LF_CAMPAIGN_READ_COLUMNS                                                                 \
  LF_CAMPAIGN_COLUMNS                                                                            \
  ", version, COALESCE((SELECT test_mode FROM sellers WHERE sellers.id = campaigns.seller_id), " \
  "FALSE)"
#define LF_SETTLEMENT_COLUMNS \
  "lead_id, buyer_id, sold, price_cents, payout_cents, buyer_lead_id, note, by_key_id, at"
#define LF_LEDGER_COLUMNS \
  "id, kind, lead_id, buyer_id, seller_id, campaign_id, revenue_cents, payout_cents, at"
#define LF_BUYER_COLUMNS "id, active, doc, created_at, updated_at"
#define LF_BUYER_READ_COLUMNS LF_BUYER_COLUMNS ", version"

namespace leadflow::store_rows {

using json = nlohmann::json;

inline std::string dump(const json& j) {
  // replace: a stray invalid UTF-8 byte must not make a lead unstorable.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

inline json parse_json(const std::string& text) {
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

inline std::string_view surface_name(Surface s) {
  return s == Surface::kCampaign ? "campaign" : "api";
}

template <typename Row>
Seller read_seller(const Row& q) {
  Seller s;
  s.id = q.text(0);
  s.name = q.text(1);
  s.active = q.boolean(2);
  s.created_at_ms = q.int64(3);
  s.payout_fixed = q.boolean(4);
  s.payout_value = q.int64(5);
  s.test_mode = q.boolean(6);
  s.time_zone = q.text(7);
  s.version = q.int64(8);
  return s;
}

/// The columns of post_intents, in the order the stores select them.
#define LF_POST_INTENT_COLUMNS "lead_id, buyer_id, price_cents, ping_id, at, shared"

template <typename Row>
PostIntent read_post_intent(const Row& q) {
  PostIntent p;
  p.lead_id = q.text(0);
  p.buyer_id = q.text(1);
  p.price = q.int64(2);
  p.ping_id = q.text(3);
  p.at_ms = q.int64(4);
  p.shared = q.boolean(5);
  return p;
}

#define LF_SALE_COLUMNS "buyer_id, price_cents, payout_cents, buyer_lead_id"

template <typename Row>
Sale read_sale(const Row& q) {
  Sale s;
  s.buyer_id = q.text(0);
  s.price = q.int64(1);
  s.payout = q.int64(2);
  s.buyer_lead_id = q.text(3);
  return s;
}

/// The sales an outcome records: its `sales`, or for one built with none, the one its summary
/// describes. Empty unless delivered.
inline std::vector<Sale> sales_of(const Distribution& d) {
  if (d.status != DeliveryStatus::kDelivered) return {};
  if (!d.sales.empty()) return d.sales;
  return {Sale{d.buyer_id, d.price, d.payout, d.buyer_lead_id}};
}

/// A stored lead's sales, read beside it: an old sale with no reference of its own has the
/// lead's.
inline void attach_sales(LeadRecord& r, std::vector<Sale> sales) {
  if (sales.size() == 1 && sales[0].buyer_lead_id.empty())
    sales[0].buyer_lead_id = r.distribution.buyer_lead_id;
  r.distribution.sales = std::move(sales);
}

// A campaign's own re-offer policy as its column holds it: the policy's JSON
// (reoffer_policy_json), NULL ("") for its vertical's. Written and read by the domain's functions,
// so the column holds only what the API accepted.
inline std::string reoffer_column(const Campaign& c) {
  return c.reoffer ? reoffer_policy_json(*c.reoffer).dump() : std::string();
}
inline std::optional<ReofferPolicy> reoffer_of_column(const std::string& campaign_id,
                                                      const std::string& text) {
  if (text.empty()) return std::nullopt;
  ReofferPolicy p;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !read_reoffer_policy(j, p, "reoffer", true).empty()) {
    // Only an edit behind the adapters' back could store one: the vertical's applies, said once.
    log(LogLevel::kError, "campaign_reoffer_unreadable", {{"campaign_id", campaign_id}});
    return std::nullopt;
  }
  return p;
}

// A vertical's re-offer setting (vertical_reoffers: vertical, reoffer, set_at_ms, version,
// active), its policy read back by the domain's function. One it cannot read (only an edit
// behind the adapters' back could store one) reads as reset, its version kept so that the next
// change replaces it: the configured policy applies, said once.
template <typename Row>
VerticalReoffer read_vertical_reoffer(const Row& q) {
  VerticalReoffer v;
  v.vertical = q.text(0);
  v.set_at_ms = q.int64(2);
  v.version = q.int64(3);
  v.active = q.boolean(4);
  const nlohmann::json j = nlohmann::json::parse(q.text(1), nullptr, false);
  if (j.is_discarded() || !read_reoffer_policy(j, v.policy, "reoffer", true).empty()) {
    if (v.active) log(LogLevel::kError, "vertical_reoffer_unreadable", {{"vertical", v.vertical}});
    v.policy = {};
    v.active = false;
  }
  return v;
}
#define LF_VERTICAL_REOFFER_COLUMNS "vertical, reoffer, set_at_ms, version, active"
// What a conditional write of a vertical's setting at `v.version` says (`changed`: kOk, or
// kNotFound when no row was at that version): kConflict for none, else `v` as written.
inline StoreStatus vertical_reoffer_written(StoreStatus changed, VerticalReoffer& v) {
  if (changed == StoreStatus::kNotFound) return StoreStatus::kConflict;
  if (changed == StoreStatus::kOk) {
    ++v.version;
    v.active = true;
  }
  return changed;
}

template <typename Row>
Campaign read_campaign(const Row& q) {
  Campaign c;
  c.id = q.text(0);
  c.seller_id = q.text(1);
  c.name = q.text(2);
  c.vertical = q.text(3);
  c.active = q.boolean(4);
  c.async_mode = q.boolean(5);
  c.sync_timeout_ms = q.int32(6);
  c.rate_limit_per_minute = q.int32(7);
  c.payout_fixed = q.boolean(8);
  c.payout_value = q.int64(9);
  c.key_hash = q.text(10);
  c.key_hint = q.text(11);
  c.created_at_ms = q.int64(12);
  c.test_mode = q.boolean(13);
  c.reoffer = reoffer_of_column(c.id, q.text(14));
  c.version = q.int64(15);
  c.seller_test_mode = q.boolean(16);
  return c;
}

template <typename Row>
ApiKey read_api_key(const Row& q) {
  ApiKey k;
  k.id = q.text(0);
  k.seller_id = q.text(1);  // NULL (operator) reads as ""
  k.name = q.text(2);
  k.plan = parse_plan(q.text(3)).value_or(Plan::kStandard);
  k.scopes = static_cast<std::uint32_t>(q.int64(4));
  k.key_hash = q.text(5);
  k.key_hint = q.text(6);
  k.created_at_ms = q.int64(7);
  k.revoked_at_ms = q.int64(8);
  k.buyer_id = q.text(9);  // NULL (not a buyer's key) reads as ""
  k.last_used_at_ms = q.int64(10);
  k.version = q.int64(11);
  k.seller_test_mode = q.boolean(12);
  return k;
}

#define LF_USER_COLUMNS \
  "id, email, name, seller_id, buyer_id, password_hash, active, created_at, last_login_at"
#define LF_USER_READ_COLUMNS LF_USER_COLUMNS ", version, time_zone"
#define LF_SESSION_COLUMNS "token_hash, user_id, csrf_token, created_at, expires_at, last_seen_at"

template <typename Row>
User read_user(const Row& q) {
  User u;
  u.id = q.text(0);
  u.email = q.text(1);
  u.name = q.text(2);
  u.seller_id = q.text(3);  // NULL reads as ""
  u.buyer_id = q.text(4);
  u.password_hash = q.text(5);
  u.active = q.boolean(6);
  u.created_at_ms = q.int64(7);
  u.last_login_at_ms = q.int64(8);
  u.version = q.int64(9);
  u.time_zone = q.text(10);
  return u;
}

// The second factor with its unused recovery codes counted (a subquery both dialects read).
#define LF_USER_TOTP_SELECT                                                        \
  "SELECT user_id, sealed_secret, enabled, last_step, created_at, challenge_hash," \
  " challenge_expires_at, (SELECT COUNT(*) FROM user_recovery_codes r"             \
  " WHERE r.user_id = user_totp.user_id AND r.used_at = 0) FROM user_totp"

template <typename Row>
UserTotp read_user_totp(const Row& q) {
  UserTotp t;
  t.user_id = q.text(0);
  t.sealed_secret = q.text(1);
  t.enabled = q.boolean(2);
  t.last_step = q.int64(3);
  t.created_at_ms = q.int64(4);
  t.challenge_hash = q.text(5);
  t.challenge_expires_at_ms = q.int64(6);
  t.recovery_codes_left = static_cast<int>(q.int64(7));
  return t;
}

template <typename Row>
UserSession read_session(const Row& q) {
  UserSession s;
  s.token_hash = q.text(0);
  s.user_id = q.text(1);
  s.csrf_token = q.text(2);
  s.created_at_ms = q.int64(3);
  s.expires_at_ms = q.int64(4);
  s.last_seen_at_ms = q.int64(5);
  return s;
}

template <typename Row>
LeadReturn read_return(const Row& q) {
  LeadReturn r;
  r.lead_id = q.text(0);
  r.buyer_id = q.text(1);
  r.reason = q.text(2);
  r.note = q.text(3);
  r.by_key_id = q.text(4);
  r.price = q.int64(5);
  r.payout = q.int64(6);
  r.sold_at_ms = q.int64(7);
  r.returned_at_ms = q.int64(8);
  return r;
}

/// The step both adapters take once they know the sale (`out.ret`'s price, payout, sold_at) and
/// that it was not returned yet: false (with `out` the answer) when the window has closed
/// (money::return_window_open), else `out.ret` is completed with the return asked for, taking
/// back what money::reverse says.
inline bool admit_return(const ReturnRequest& r, ReturnResult& out) {
  LeadReturn& ret = out.ret;
  if (!money::return_window_open(ret.sold_at_ms, r.window_ms, r.at_ms)) {
    out.status = ReturnStatus::kWindowClosed;
    out.sold_at_ms = ret.sold_at_ms;
    return false;
  }
  const money::Reversal back = money::reverse({ret.price, ret.payout, ret.sold_at_ms});
  ret.price = back.price;
  ret.payout = back.payout;
  ret.lead_id = r.lead_id;
  ret.buyer_id = r.buyer_id;
  ret.reason = r.reason;
  ret.note = r.note;
  ret.by_key_id = r.by_key_id;
  ret.returned_at_ms = r.at_ms;
  return true;
}

/// The lead's reason after a settlement.
inline const char* settled_reason(bool sold) {
  return sold ? "settled by the operator: the buyer took the lead"
              : "settled by the operator: the buyer did not take the lead";
}

template <typename Row>
Settlement read_settlement(const Row& q) {
  Settlement s;
  s.lead_id = q.text(0);
  s.buyer_id = q.text(1);
  s.sold = q.boolean(2);
  s.price = q.int64(3);
  s.payout = q.int64(4);
  s.buyer_lead_id = q.text(5);
  s.note = q.text(6);
  s.by_key_id = q.text(7);
  s.at_ms = q.int64(8);
  return s;
}

template <typename Row>
LedgerEntry read_ledger_entry(const Row& q) {
  LedgerEntry e;
  e.id = q.int64(0);
  e.kind = q.text(1);
  e.lead_id = q.text(2);
  e.buyer_id = q.text(3);
  e.seller_id = q.text(4);
  e.campaign_id = q.text(5);
  e.revenue = q.int64(6);
  e.payout = q.int64(7);
  e.at_ms = q.int64(8);
  return e;
}

/// Fields of the API view that are not configuration: removed before re-reading the document.
inline constexpr const char* kBuyerViewOnlyFields[] = {"id", "buyer_id", "created_at",
                                                       "updated_at"};

/// The stored buyer, or nullopt when its document no longer decodes (logged: a buyer that cannot
/// be read exactly is kept out of distribution rather than used half-understood).
template <typename Row>
std::optional<Buyer> read_buyer(const Row& q) {
  const std::string id = q.text(0);
  json doc = parse_json(q.text(2));
  if (!doc.is_object()) {
    log(LogLevel::kError, "store_buyer_unreadable",
        {{"buyer_id", id}, {"detail", "not a JSON object"}});
    return std::nullopt;
  }
  for (const char* field : kBuyerViewOnlyFields) doc.erase(field);
  FieldErrors errors;
  Buyer b = buyer_from_json(doc, nullptr, /*allow_private_urls=*/true, errors);
  if (!errors.empty()) {
    log(LogLevel::kError, "store_buyer_unreadable",
        {{"buyer_id", id}, {"field", errors.front().field}, {"code", errors.front().code}});
    return std::nullopt;
  }
  b.id = id;
  b.active = q.boolean(1);
  b.created_at_ms = q.int64(3);
  b.updated_at_ms = q.int64(4);
  b.version = q.int64(5);
  return b;
}

/// Reads LF_LEAD_COLUMNS, LF_DISTRIBUTION_COLUMNS and, with `with_attempts`, attempts and
/// ineligible, in that order.
template <typename Row>
LeadRecord read_lead(const Row& q, bool with_attempts) {
  LeadRecord r;
  Lead& l = r.lead;
  int c = 0;
  l.id = q.text(c++);
  l.seller_id = q.text(c++);
  l.campaign_id = q.text(c++);
  l.api_key_id = q.text(c++);
  l.surface = q.text(c++) == "campaign" ? Surface::kCampaign : Surface::kApi;
  l.first_name = q.text(c++);
  l.last_name = q.text(c++);
  l.email = q.text(c++);
  l.phone = q.text(c++);
  l.zip_code = q.text(c++);
  l.zip4 = q.text(c++);
  l.state = q.text(c++);
  l.vertical = q.text(c++);
  l.source = q.text(c++);
  l.landing_page = q.text(c++);
  l.ip_address = q.text(c++);
  l.user_agent = q.text(c++);
  l.trustedform_cert_url = q.text(c++);
  l.jornaya_leadid = q.text(c++);
  if (!q.is_null(c)) l.tcpa_consent = q.boolean(c);
  ++c;
  l.tcpa_consent_text = q.text(c++);
  l.custom_fields = custom_fields_from_json(parse_json(q.text(c++)));
  l.received_at_ms = q.int64(c++);
  l.sync_wait_ms = q.int32(c++);
  l.test = q.boolean(c++);

  Distribution& d = r.distribution;
  d.status = parse_delivery_status(q.text(c++)).value_or(DeliveryStatus::kPending);
  d.buyer_id = q.text(c++);
  d.price = q.int64(c++);
  d.payout = q.int64(c++);
  d.buyer_lead_id = q.text(c++);
  d.reason = q.text(c++);
  d.decided_at_ms = q.int64(c++);
  r.erased_at_ms = q.int64(c++);
  if (with_attempts) {
    d.attempts = attempts_from_json(parse_json(q.text(c++)));
    d.ineligible = ineligible_from_json(parse_json(q.text(c++)));
  }
  return r;
}

/// The column of a report key in the rollups.
inline const char* rollup_column(ReportKey k) {
  switch (k) {
    case ReportKey::kSeller:
      return "seller_id";
    case ReportKey::kCampaign:
      return "campaign_id";
    case ReportKey::kBuyer:
      return "buyer_id";
    case ReportKey::kVertical:
      return "vertical";
    case ReportKey::kSource:
      return "source";
    case ReportKey::kReason:
      return "reason";
  }
  return "seller_id";
}

#define LF_REVENUE_SUMS                                                           \
  "COALESCE(SUM(sales), 0), COALESCE(SUM(revenue), 0), COALESCE(SUM(payout), 0)," \
  " COALESCE(SUM(returns), 0), COALESCE(SUM(returned_revenue), 0),"               \
  " COALESCE(SUM(returned_payout), 0)"

/// A revenue cell from a row summing LF_REVENUE_SUMS: the bucket (with by_bucket), the group
/// keys, the sums.
template <typename Row>
RevenueCell read_revenue_cell(const Row& r, const RollupQuery& q) {
  RevenueCell c;
  int col = 0;
  if (q.by_bucket) c.bucket_ms = r.int64(col++);
  for (std::size_t k = 0; k < q.group.size(); ++k) c.keys.push_back(r.text(col++));
  c.sales = r.int64(col++);
  c.revenue = r.int64(col++);
  c.payout = r.int64(col++);
  c.returns = r.int64(col++);
  c.returned_revenue = r.int64(col++);
  c.returned_payout = r.int64(col++);
  return c;
}

/// An unsold cell from a row summing the leads, as read_revenue_cell reads one.
template <typename Row>
UnsoldCell read_unsold_cell(const Row& r, const RollupQuery& q) {
  UnsoldCell c;
  int col = 0;
  if (q.by_bucket) c.bucket_ms = r.int64(col++);
  for (std::size_t k = 0; k < q.group.size(); ++k) c.keys.push_back(r.text(col++));
  c.leads = r.int64(col++);
  return c;
}

}  // namespace leadflow::store_rows
