#include "leadflow/domain/lead_codec.hpp"

#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

#include "leadflow/base/json_text.hpp"
#include "leadflow/base/time_format.hpp"

namespace leadflow {

using nlohmann::json;

json custom_fields_to_json(const CustomFields& fields) {
  json out = json::object();
  for (const auto& [name, value] : fields) {
    if (const auto* s = std::get_if<std::string>(&value))
      out[name] = *s;
    else if (const auto* i = std::get_if<std::int64_t>(&value))
      out[name] = *i;
    else
      out[name] = std::get<double>(value);
  }
  return out;
}

CustomFields custom_fields_from_json(const json& j) {
  CustomFields out;
  if (!j.is_object()) return out;
  for (const auto& [name, value] : j.items()) {
    if (value.is_string())
      out.emplace_back(name, value.get<std::string>());
    else if (value.is_number_unsigned() &&
             value.get<std::uint64_t>() <=
                 static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      out.emplace_back(name, static_cast<std::int64_t>(value.get<std::uint64_t>()));
    else if (value.is_number_integer() && !value.is_number_unsigned())
      out.emplace_back(name, value.get<std::int64_t>());
    else if (value.is_number())
      out.emplace_back(name, value.get<double>());
  }
  return out;
}

json attempt_to_json(const Attempt& a) {
  json j = {{"buyer_id", a.buyer_id},
            {"kind", to_string(a.kind)},
            {"started_at", format_rfc3339_ms(a.started_at_ms)},
            {"duration_ms", a.duration_ms},
            {"outcome", to_string(a.outcome)},
            {"bid", a.bid ? json(cents_to_decimal(*a.bid)) : json(nullptr)},
            {"http_status", a.http_status == 0 ? json(nullptr) : json(a.http_status)},
            {"reason", a.reason.empty() ? json(nullptr) : json(a.reason)},
            {"tier", a.tier == 0 ? json(nullptr) : json(a.tier)},
            {"reoffer", a.reoffer}};
  return j;
}

json attempts_to_json(const std::vector<Attempt>& attempts) {
  json out = json::array();
  for (const auto& a : attempts) {
    // Storage form: compact, exact (cents, ms), round-trips through attempts_from_json. b buyer,
    // k kind, t started at, d duration, o outcome, h HTTP status, p bid, r reason, n tier. A key
    // added later is absent from older rows and reads back as its default (n: 0, not recorded).
    json j = {{"b", a.buyer_id},    {"k", to_string(a.kind)},    {"t", a.started_at_ms},
              {"d", a.duration_ms}, {"o", to_string(a.outcome)}, {"h", a.http_status}};
    if (a.bid) j["p"] = *a.bid;
    if (!a.reason.empty()) j["r"] = a.reason;
    if (a.tier != 0) j["n"] = a.tier;
    if (a.reoffer != 0) j["a"] = a.reoffer;  // a: the re-offer (aged) it was asked in
    out.push_back(std::move(j));
  }
  return out;
}

std::vector<Attempt> attempts_from_json(const json& j) {
  std::vector<Attempt> out;
  if (!j.is_array()) return out;
  for (const auto& e : j) {
    Attempt a;
    a.buyer_id = e.value("b", "");
    a.kind = parse_attempt_kind(e.value("k", "ping")).value_or(AttemptKind::kPing);
    a.started_at_ms = e.value("t", std::int64_t{0});
    a.duration_ms = e.value("d", 0);
    a.outcome = parse_attempt_outcome(e.value("o", "error")).value_or(AttemptOutcome::kError);
    a.http_status = e.value("h", 0);
    if (e.contains("p")) a.bid = e["p"].get<Cents>();
    a.reason = e.value("r", "");
    a.tier = e.value("n", 0);
    a.reoffer = e.value("a", 0);
    out.push_back(std::move(a));
  }
  return out;
}

json ineligible_to_json(const std::vector<Ineligibility>& v) {
  json out = json::array();
  for (const auto& i : v) out.push_back({{"buyer_id", i.buyer_id}, {"reason", i.reason}});
  return out;
}

std::vector<Ineligibility> ineligible_from_json(const json& j) {
  std::vector<Ineligibility> out;
  if (!j.is_array()) return out;
  for (const auto& e : j) out.push_back({e.value("buyer_id", ""), e.value("reason", "")});
  return out;
}

json distribution_to_json(const Distribution& d) {
  const bool accepted = d.status == DeliveryStatus::kDelivered;
  return {
      {"accepted", accepted},
      {"buyer_id", d.buyer_id.empty() ? json(nullptr) : json(d.buyer_id)},
      {"price", accepted || d.status == DeliveryStatus::kReturned ? json(cents_to_decimal(d.price))
                                                                  : json(nullptr)},
      {"currency", "USD"},
      {"delivery_status", to_string(d.status)}};
}

json lead_record_to_json(const LeadRecord& r, bool with_attempts) {
  const Lead& l = r.lead;
  json j = {{"lead_id", l.id},
            {"seller_id", l.seller_id.empty() ? json(nullptr) : json(l.seller_id)},
            {"campaign_id", l.campaign_id.empty() ? json(nullptr) : json(l.campaign_id)},
            {"status", to_string(r.distribution.status)},
            {"test", l.test},
            {"created_at", format_rfc3339_ms(l.received_at_ms)},
            {"first_name", l.first_name},
            {"last_name", l.last_name},
            {"email", l.email},
            {"phone", l.phone},
            {"zip_code", l.zip4.empty() ? l.zip_code : l.zip_code + "-" + l.zip4},
            {"state", l.state.empty() ? json(nullptr) : json(l.state)},
            {"vertical", l.vertical},
            {"source", l.source.empty() ? json(nullptr) : json(l.source)},
            {"landing_page", l.landing_page.empty() ? json(nullptr) : json(l.landing_page)},
            {"ip_address", l.ip_address.empty() ? json(nullptr) : json(l.ip_address)},
            {"user_agent", l.user_agent.empty() ? json(nullptr) : json(l.user_agent)},
            {"custom_fields", custom_fields_to_json(l.custom_fields)}};
  if (!l.trustedform_cert_url.empty()) j["trustedform_cert_url"] = l.trustedform_cert_url;
  if (!l.jornaya_leadid.empty()) j["jornaya_leadid"] = l.jornaya_leadid;
  if (l.tcpa_consent) j["tcpa_consent"] = *l.tcpa_consent;
  if (!l.tcpa_consent_text.empty()) j["tcpa_consent_text"] = l.tcpa_consent_text;
  json dist = distribution_to_json(r.distribution);
  if (r.distribution.decided_at_ms)
    dist["decided_at"] = format_rfc3339_ms(r.distribution.decided_at_ms);
  if (!r.distribution.reason.empty()) dist["reason"] = r.distribution.reason;
  if (!r.distribution.buyer_lead_id.empty()) dist["buyer_lead_id"] = r.distribution.buyer_lead_id;
  if (!r.distribution.sales.empty()) {
    // Each buyer's purchase: one for an exclusive sale, several for a shared one.
    json sales = json::array();
    for (const auto& s : r.distribution.sales)
      sales.push_back(
          {{"buyer_id", s.buyer_id},
           {"price", cents_to_decimal(s.price)},
           {"buyer_lead_id", s.buyer_lead_id.empty() ? json(nullptr) : json(s.buyer_lead_id)}});
    dist["sales"] = std::move(sales);
  }
  j["distribution"] = std::move(dist);
  if (with_attempts) {
    json attempts = json::array();
    for (const auto& a : r.distribution.attempts) attempts.push_back(attempt_to_json(a));
    j["attempts"] = std::move(attempts);
    j["ineligible_buyers"] = ineligible_to_json(r.distribution.ineligible);
  }
  return j;
}

namespace {
// A double as JSON that reads back as a double: 2019.0 is written "2019.0", not "2019" (which
// would come back an integer).
void append_decimal(std::string& out, double d) {
  const std::size_t from = out.size();
  append_json_number(out, d);
  if (out.find_first_not_of("-0123456789", from) == std::string::npos) out += ".0";
}
}  // namespace

std::string encode_lead(const Lead& l) {
  // Hand-written: this runs once per accepted lead on the request thread, and building a JSON
  // tree first costs more than the rest of the request's own work.
  std::string out;
  out.reserve(512 + l.user_agent.size() + l.tcpa_consent_text.size() + 32 * l.custom_fields.size());
  out.push_back('{');
  bool first = true;
  auto key = [&](const char* name) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, name);
    out.push_back(':');
  };
  auto text = [&](const char* name, std::string_view value) {
    key(name);
    append_json_string(out, value);
  };
  text("id", l.id);
  text("seller_id", l.seller_id);
  text("campaign_id", l.campaign_id);
  text("api_key_id", l.api_key_id);
  text("surface", l.surface == Surface::kApi ? "api" : "campaign");
  text("first_name", l.first_name);
  text("last_name", l.last_name);
  text("email", l.email);
  text("phone", l.phone);
  text("zip_code", l.zip_code);
  text("zip4", l.zip4);
  text("state", l.state);
  text("vertical", l.vertical);
  text("source", l.source);
  text("landing_page", l.landing_page);
  text("ip_address", l.ip_address);
  text("user_agent", l.user_agent);
  text("trustedform_cert_url", l.trustedform_cert_url);
  text("jornaya_leadid", l.jornaya_leadid);
  key("tcpa_consent");
  out += l.tcpa_consent ? (*l.tcpa_consent ? "true" : "false") : "null";
  text("tcpa_consent_text", l.tcpa_consent_text);
  key("custom_fields");
  out.push_back('{');
  for (std::size_t i = 0; i < l.custom_fields.size(); ++i) {
    if (i) out.push_back(',');
    append_json_string(out, l.custom_fields[i].first);
    out.push_back(':');
    if (const auto* sv = std::get_if<std::string>(&l.custom_fields[i].second))
      append_json_string(out, *sv);
    else if (const auto* iv = std::get_if<std::int64_t>(&l.custom_fields[i].second))
      out += std::to_string(*iv);
    else
      append_decimal(out, std::get<double>(l.custom_fields[i].second));
  }
  out.push_back('}');
  key("received_at_ms");
  out += std::to_string(l.received_at_ms);
  key("sync_wait_ms");
  out += std::to_string(l.sync_wait_ms);
  // Only a test lead carries the mark: a real lead's record is as it always was.
  if (l.test) {
    key("test");
    out += "true";
  }
  out.push_back('}');
  return out;
}

namespace {

// The integer at `key` (0 when absent), or nullopt when it is not a whole number within [lo, hi].
// encode_lead writes integers there; a payload with a float (1e30) or a value out of range is not
// one of ours, and converting such a number to an integer would be undefined behaviour.
std::optional<std::int64_t> integer_member(const json& j, const char* key, std::int64_t lo,
                                           std::int64_t hi) {
  const auto it = j.find(key);
  if (it == j.end()) return 0;
  if (it->is_number_unsigned()) {
    const auto v = it->get<std::uint64_t>();
    if (hi < 0 || v > static_cast<std::uint64_t>(hi)) return std::nullopt;
    return static_cast<std::int64_t>(v);
  }
  if (!it->is_number_integer()) return std::nullopt;
  const auto v = it->get<std::int64_t>();
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

}  // namespace

std::optional<Lead> decode_lead(std::string_view payload) {
  json j = json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("id") || !j["id"].is_string()) return std::nullopt;
  const auto received_at_ms =
      integer_member(j, "received_at_ms", std::numeric_limits<std::int64_t>::min(),
                     std::numeric_limits<std::int64_t>::max());
  const auto sync_wait_ms = integer_member(j, "sync_wait_ms", std::numeric_limits<int>::min(),
                                           std::numeric_limits<int>::max());
  if (!received_at_ms || !sync_wait_ms) return std::nullopt;
  try {
    Lead l;
    l.id = j.value("id", "");
    l.seller_id = j.value("seller_id", "");
    l.campaign_id = j.value("campaign_id", "");
    l.api_key_id = j.value("api_key_id", "");
    l.surface = j.value("surface", "api") == "api" ? Surface::kApi : Surface::kCampaign;
    l.first_name = j.value("first_name", "");
    l.last_name = j.value("last_name", "");
    l.email = j.value("email", "");
    l.phone = j.value("phone", "");
    l.zip_code = j.value("zip_code", "");
    l.zip4 = j.value("zip4", "");
    l.state = j.value("state", "");
    l.vertical = j.value("vertical", "");
    l.source = j.value("source", "");
    l.landing_page = j.value("landing_page", "");
    l.ip_address = j.value("ip_address", "");
    l.user_agent = j.value("user_agent", "");
    l.trustedform_cert_url = j.value("trustedform_cert_url", "");
    l.jornaya_leadid = j.value("jornaya_leadid", "");
    if (j.contains("tcpa_consent") && j["tcpa_consent"].is_boolean())
      l.tcpa_consent = j["tcpa_consent"].get<bool>();
    l.tcpa_consent_text = j.value("tcpa_consent_text", "");
    l.custom_fields = custom_fields_from_json(j.value("custom_fields", json::object()));
    l.received_at_ms = *received_at_ms;
    l.sync_wait_ms = static_cast<int>(*sync_wait_ms);
    l.test = j.contains("test") && j["test"].is_boolean() && j["test"].get<bool>();
    return l;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace leadflow
