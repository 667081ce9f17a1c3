#include "leadflow/delivery/buyer_protocol.hpp"

#include <cctype>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "leadflow/base/text.hpp"
#include "leadflow/domain/lead_codec.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

const json& mapping_part(const Buyer& b, const char* part) {
  static const json kNull;
  if (!b.mapping.is_object()) return kNull;
  auto it = b.mapping.find(part);
  return it == b.mapping.end() ? kNull : *it;
}

std::string form_escape(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (is_alnum(static_cast<char>(c)) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

// Applies the buyer's mapping (renames, constants, format) to our default body and builds the
// request. The default protocol is JSON with our names.
HttpRequest build(const Buyer& b, const std::string& url, json body) {
  const json& req = mapping_part(b, "request");
  bool form = false;
  if (req.is_object()) {
    form = req.value("format", "json") == "form";
    if (form && body.contains("custom_fields")) {
      // Form bodies are flat: the custom fields join the top level.
      json custom = std::move(body["custom_fields"]);
      body.erase("custom_fields");
      for (auto& [k, v] : custom.items())
        if (!body.contains(k)) body[k] = v;
    }
    if (auto it = req.find("rename"); it != req.end() && it->is_object()) {
      json renamed = json::object();
      for (auto& [k, v] : body.items()) {
        auto r = it->find(k);
        renamed[r != it->end() && r->is_string() ? r->get<std::string>() : k] = v;
      }
      body = std::move(renamed);
    }
    if (auto it = req.find("constants"); it != req.end() && it->is_object())
      for (auto& [k, v] : it->items()) body[k] = v;
  }
  HttpRequest r;
  r.method = "POST";
  r.url = url;
  r.timeout = std::chrono::milliseconds(b.timeout_ms);
  r.headers = b.headers;
  if (form) {
    r.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    std::string out;
    for (auto& [k, v] : body.items()) {
      if (!out.empty()) out.push_back('&');
      out += form_escape(k);
      out.push_back('=');
      out += form_escape(scalar_text(v));
    }
    r.body = std::move(out);
  } else {
    r.headers.emplace_back("Content-Type", "application/json");
    r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  r.headers.emplace_back("Accept", "application/json");
  return r;
}

const json* pointer(const json& doc, const Buyer& b, const char* name, const char* fallback) {
  std::string ptr = fallback;
  const json& resp = mapping_part(b, "response");
  if (resp.is_object()) {
    auto it = resp.find(name);
    if (it != resp.end() && it->is_string()) ptr = it->get<std::string>();
  }
  try {
    const json::json_pointer p(ptr);
    if (!doc.contains(p)) return nullptr;
    return &doc.at(p);
  } catch (const json::exception&) {
    return nullptr;
  }
}

std::optional<double> number_of(const json* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_number()) return v->get<double>();
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return d;
  }
  return std::nullopt;
}

bool truthy(const json* v) {
  if (v == nullptr) return false;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_number()) return v->get<double>() != 0;
  if (v->is_string()) {
    const std::string s = v->get<std::string>();
    return s == "true" || s == "1" || s == "accepted" || s == "yes" || s == "ok" || s == "success";
  }
  return false;
}

}  // namespace

HttpRequest make_ping_request(const Buyer& buyer, const Lead& lead, const std::string& ping_id,
                              bool aged) {
  json body = {{"ping_id", ping_id},
               {"lead_id", lead.id},
               {"vertical", lead.vertical},
               {"zip_code", lead.zip_code},
               {"state", lead.state},
               {"source", lead.source},
               {"custom_fields", custom_fields_to_json(lead.custom_fields)}};
  if (aged) body["aged"] = true;
  return build(buyer, buyer.ping_url, std::move(body));
}

HttpRequest make_post_request(const Buyer& buyer, const Lead& lead, const std::string& ping_id,
                              Cents price, bool shared) {
  json body = {{"lead_id", lead.id},
               {"ping_id", ping_id},
               {"price", cents_to_decimal(price)},
               {"first_name", lead.first_name},
               {"last_name", lead.last_name},
               {"email", lead.email},
               {"phone", lead.phone},
               {"zip_code", lead.zip_code},
               {"state", lead.state},
               {"vertical", lead.vertical},
               {"source", lead.source},
               {"landing_page", lead.landing_page},
               {"ip_address", lead.ip_address},
               {"user_agent", lead.user_agent},
               {"custom_fields", custom_fields_to_json(lead.custom_fields)}};
  if (!lead.zip4.empty()) body["zip4"] = lead.zip4;
  if (!lead.trustedform_cert_url.empty()) body["trustedform_cert_url"] = lead.trustedform_cert_url;
  if (!lead.jornaya_leadid.empty()) body["jornaya_leadid"] = lead.jornaya_leadid;
  if (lead.tcpa_consent) body["tcpa_consent"] = *lead.tcpa_consent;
  if (!lead.tcpa_consent_text.empty()) body["tcpa_consent_text"] = lead.tcpa_consent_text;
  HttpRequest r = build(buyer, buyer.post_url, std::move(body));
  r.headers.emplace_back("Idempotency-Key", shared ? lead.id + ":" + buyer.id : lead.id);
  return r;
}

PingAnswer read_ping_answer(const Buyer& buyer, const HttpResponse& response) {
  if (response.timed_out) return {std::nullopt, "timeout", std::nullopt, std::nullopt};
  if (response.status == 0)
    return {std::nullopt, "transport: " + response.error, std::nullopt, std::nullopt};
  if (response.status < 200 || response.status > 299)
    return {std::nullopt, "http " + std::to_string(response.status), std::nullopt, std::nullopt};
  const json doc = json::parse(response.body, nullptr, false);
  if (doc.is_discarded()) return {std::nullopt, "bad json", std::nullopt, std::nullopt};
  // Each amount: nullopt when absent, else its cents or the reason it is no bid.
  struct Amount {
    std::optional<Cents> cents;
    const char* why = nullptr;
  };
  auto amount = [&](const char* name, const char* fallback) -> Amount {
    const auto value = number_of(pointer(doc, buyer, name, fallback));
    if (!value) return {std::nullopt, "no bid field"};
    if (*value <= 0) return {std::nullopt, "no bid"};
    const auto cents = cents_from_decimal(*value);
    if (!cents) return {std::nullopt, "bid out of range"};
    // 0.004 is more than nothing but rounds to no money: not a bid anyone can be charged.
    if (*cents == 0) return {std::nullopt, "bid under one cent"};
    return {cents, nullptr};
  };
  const Amount exclusive = amount("bid", "/bid");
  const Amount shared = amount("shared_bid", "/shared_bid");
  const Amount aged = amount("aged_bid", "/aged_bid");
  if (!exclusive.cents && !shared.cents && !aged.cents)
    return {std::nullopt, exclusive.why, std::nullopt, std::nullopt};
  return {exclusive.cents, "", shared.cents, aged.cents};
}

PostAnswer read_post_answer(const Buyer& buyer, const HttpResponse& response) {
  PostAnswer a;
  if (response.timed_out) {
    a.reason = "timeout";
    return a;
  }
  if (response.status == 0) {
    a.reason = "transport: " + response.error;
    return a;
  }
  const json doc = json::parse(response.body, nullptr, false);
  if (response.status < 200 || response.status > 299) {
    a.reason = "http " + std::to_string(response.status);
    return a;
  }
  if (doc.is_discarded()) {
    a.reason = "bad json";
    return a;
  }
  a.accepted = truthy(pointer(doc, buyer, "accepted", "/accepted"));
  if (const json* ref = pointer(doc, buyer, "reference", "/buyer_lead_id"); ref && !ref->is_null())
    a.buyer_lead_id = scalar_text(*ref).substr(0, 200);
  if (const json* why = pointer(doc, buyer, "reason", "/reason"); why && !why->is_null())
    a.reason = scalar_text(*why).substr(0, 200);
  if (!a.accepted && a.reason.empty()) a.reason = "rejected";
  return a;
}

}  // namespace leadflow
