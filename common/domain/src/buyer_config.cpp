#include "leadflow/domain/buyer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <string_view>
#include <utility>

#include "buyer_fields.hpp"
#include "http_url.hpp"
#include "json_field_reader.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/domain/address_policy.hpp"
#include "leadflow/domain/time_zone.hpp"

// Buyer configuration: parse and validate (POST and PUT) (SPEC §2 "Buyers", §5, §6). The API
// view is buyer_json.cpp, the outbound-URL safety check address_policy.cpp, the readers of one
// JSON value (type, range, length, the error under its path) json_field_reader.cpp.
//
// Internal representation notes that other components rely on:
// - `Buyer::schedule` is null or {"timezone": "<IANA>", "hours": {"mon": [["09:00","17:00"]],
//   ..., "sun": []}} with all seven days present (a day with no range is closed). Times are
//   "HH:MM"; an end may be "24:00"; start < end always (overnight is two ranges on two days).
// - `Buyer::caps` is null or an object with any of "hourly", "daily", "weekly", "monthly"
//   (integers) and "daily_budget_cents", "monthly_budget_cents" (integer cents: money is never a
//   double inside). buyer_to_json turns the budgets back into dollars under the API names.
// - `Buyer::mapping` is null or the validated mapping object with only the documented keys.

namespace leadflow {
namespace {

using json_fields::at_index;
using json_fields::has_control_chars;
using json_fields::join;
using json_fields::member;
using nlohmann::json;

constexpr std::size_t kMaxName = 200;
constexpr std::size_t kMaxVerticals = 50;
constexpr std::size_t kMaxVerticalName = 64;
constexpr std::size_t kMaxHeaders = 20;
constexpr std::size_t kMaxHeaderName = 128;
constexpr std::size_t kMaxHeaderValue = 4096;
constexpr std::size_t kMaxMappingEntries = 100;
constexpr std::size_t kMaxMappingName = 128;
constexpr std::size_t kMaxMappingString = 1024;
constexpr std::size_t kMaxPointer = 256;
constexpr std::size_t kMaxStates = 100;
constexpr std::size_t kMaxZipPrefixes = 10'000;
constexpr std::size_t kMaxSources = 200;
constexpr std::size_t kMaxSource = 512;
constexpr std::size_t kMaxCustomRules = 50;
constexpr std::size_t kMaxRuleField = 128;
constexpr std::size_t kMaxRuleValues = 1000;
constexpr std::size_t kMaxRuleString = 1024;
constexpr std::size_t kMaxRangesPerDay = 24;
constexpr std::size_t kMaxTimezone = kMaxTimeZoneName;
constexpr std::int64_t kMaxCapCount = 1'000'000'000;

constexpr int kDefaultTimeoutMs = 1000;
constexpr int kDefaultWeight = 1;
constexpr int kDefaultTier = 1;
constexpr int kMaxTier = 10;
constexpr int kMaxConcurrency = 100'000;
constexpr int kDefaultLookbackDays = 30;
constexpr int kDefaultReturnWindowDays = 7;

constexpr std::array<std::string_view, 7> kDays = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};

// USPS codes: 50 states, DC, territories, freely associated states, armed forces.
constexpr std::array<std::string_view, 62> kUspsCodes = {
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS",
    "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY",
    "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV",
    "WI", "WY", "DC", "PR", "VI", "GU", "AS", "MP", "FM", "MH", "PW", "AA", "AE", "AP"};

// Headers the HTTP client owns: letting a buyer config set them would break framing or the
// per-lead Idempotency-Key (SPEC §4.6).
constexpr std::array<std::string_view, 11> kReservedHeaders = {"host",
                                                               "content-length",
                                                               "transfer-encoding",
                                                               "connection",
                                                               "keep-alive",
                                                               "upgrade",
                                                               "te",
                                                               "trailer",
                                                               "expect",
                                                               "proxy-connection",
                                                               "idempotency-key"};

// RFC 7230 tchar.
bool is_token(std::string_view s) {
  if (s.empty()) return false;
  static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return std::all_of(s.begin(), s.end(), [](char c) {
    return is_alpha(c) || is_digit(c) || kExtra.find(c) != std::string_view::npos;
  });
}

// ---------------------------------------------------------------------------------------------
// Parsing

bool valid_json_pointer(const std::string& p) {
  if (p.empty() || p.front() != '/' || p.size() > kMaxPointer || has_control_chars(p)) return false;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] == '~' && (i + 1 == p.size() || (p[i + 1] != '0' && p[i + 1] != '1'))) return false;
  return true;
}

/// Collects every offending field of one buyer body; never stops at the first.
class BuyerParser : json_fields::Reader {
 public:
  BuyerParser(const Buyer* base, bool allow_private_urls, FieldErrors& errors)
      : Reader(errors), base_(base), allow_private_urls_(allow_private_urls) {}

  void parse(const json& body, Buyer& out) {
    if (base_ == nullptr)
      for (const char* key : {"name", "verticals", "delivery"})
        if (!body.contains(key)) fail(key, "required", "is required");
    for (const auto& [key, v] : body.items()) {
      if (key == "id") {
        if (base_ == nullptr || !v.is_string() || v.get_ref<const std::string&>() != base_->id)
          fail(key, "not_allowed", "the buyer id is assigned by the service");
      } else if (key == "buyer_id" || key == "created_at" || key == "updated_at") {
        // Read-only fields of the API view: a client may send back what it read, which is text.
        if (!v.is_string()) fail(key, "invalid_type", "must be a string (it is read-only)");
      } else if (key == "returns" || key == "health") {
        // Read-only figures of the API view (null when there are none yet).
        if (!v.is_null() && !v.is_object())
          fail(key, "invalid_type", "must be an object (it is read-only)");
      } else if (key == "name") {
        if (auto s = text(v, key, kMaxName, true)) out.name = *s;
      } else if (key == "status") {
        if (v.is_null()) {
          out.active = true;
        } else if (auto s = one_of(v, key, {"active", "paused"})) {
          out.active = *s == 0;
        }
      } else if (key == "verticals") {
        parse_verticals(v, out);
      } else if (key == "delivery") {
        parse_delivery(v, out);
      } else if (key == "pricing") {
        parse_pricing(v, out);
      } else if (key == "filters") {
        parse_filters(v, out);
      } else if (key == "schedule") {
        parse_schedule(v, out);
      } else if (key == "caps") {
        parse_caps(v, out);
      } else if (key == "priority") {
        out.priority = v.is_null() ? 0 : static_cast<int>(integer(v, key, -1000, 1000).value_or(0));
      } else if (key == "weight") {
        out.weight = v.is_null()
                         ? kDefaultWeight
                         : static_cast<int>(integer(v, key, 1, 1000).value_or(kDefaultWeight));
      } else if (key == "tier") {
        out.tier = v.is_null()
                       ? kDefaultTier
                       : static_cast<int>(integer(v, key, 1, kMaxTier).value_or(kDefaultTier));
      } else if (key == "max_concurrency") {
        out.max_concurrency =
            v.is_null() ? 0 : static_cast<int>(integer(v, key, 0, kMaxConcurrency).value_or(0));
      } else if (key == "duplicate_lookback_days") {
        out.duplicate_lookback_days =
            v.is_null() ? kDefaultLookbackDays
                        : static_cast<int>(integer(v, key, 0, 365).value_or(kDefaultLookbackDays));
      } else if (key == "return_window_days") {
        out.return_window_days =
            v.is_null()
                ? kDefaultReturnWindowDays
                : static_cast<int>(integer(v, key, 0, 365).value_or(kDefaultReturnWindowDays));
      } else if (key == "max_return_rate") {
        out.max_return_rate = v.is_null() ? 0.0 : number(v, key, 0.0, 1.0).value_or(0.0);
      } else if (key == "accepts_aged") {
        if (v.is_null())
          out.accepts_aged = false;
        else if (v.is_boolean())
          out.accepts_aged = v.get<bool>();
        else
          fail(key, "invalid_type", "must be true or false");
      } else if (key == "visibility") {
        parse_visibility(v, out);
      } else if (key == "self_service") {
        parse_self_service(v, out);
      } else {
        fail(key, "unknown_field", "is not a buyer field");
      }
    }
  }

 private:
  std::optional<std::string> url(const json& v, const std::string& path) {
    auto s = text(v, path, kMaxUrl, true);
    if (!s) return std::nullopt;
    std::string why;
    if (!parse_http_url(*s, &why)) {
      fail(path, "invalid_format", why);
      return std::nullopt;
    }
    if (!allow_private_urls_ && !is_public_http_url(*s, &why)) {
      fail(path, "not_allowed", why);
      return std::nullopt;
    }
    return s;
  }

  void parse_verticals(const json& v, Buyer& out) {
    const std::string path = "verticals";
    if (v.is_null()) return fail(path, "required", "is required");
    if (!array(v, path, kMaxVerticals)) return;
    if (v.empty()) return fail(path, "required", "must name at least one vertical");
    std::vector<std::string> verticals;
    for (std::size_t i = 0; i < v.size(); ++i)
      if (auto s = text(v[i], at_index(path, i), kMaxVerticalName, true))
        if (std::find(verticals.begin(), verticals.end(), *s) == verticals.end())
          verticals.push_back(*s);
    out.verticals = std::move(verticals);
  }

  // A named "delivery" replaces the whole object: absent members take their defaults.
  void parse_delivery(const json& v, Buyer& out) {
    const std::string path = "delivery";
    if (v.is_null()) return fail(path, "required", "is required");
    if (!object(v, path)) return;
    reject_unknown(v, path, {"mode", "ping_url", "post_url", "timeout_ms", "headers", "mapping"});
    out.mode = DeliveryMode::kPingPost;
    out.ping_url.clear();
    out.post_url.clear();
    out.timeout_ms = kDefaultTimeoutMs;
    out.headers.clear();
    out.mapping = nullptr;

    std::optional<std::size_t> mode;
    if (const json* m = present(v, "mode")) {
      mode = one_of(*m, join(path, "mode"), {"ping_post", "direct_post"});
      if (mode) out.mode = *mode == 0 ? DeliveryMode::kPingPost : DeliveryMode::kDirectPost;
    } else {
      fail(join(path, "mode"), "required", "is required (ping_post or direct_post)");
    }
    if (const json* u = present(v, "ping_url")) {
      if (auto s = url(*u, join(path, "ping_url"))) out.ping_url = *s;
    } else if (mode == 0) {
      fail(join(path, "ping_url"), "required", "is required for ping_post");
    }
    if (const json* u = present(v, "post_url")) {
      if (auto s = url(*u, join(path, "post_url"))) out.post_url = *s;
    } else {
      fail(join(path, "post_url"), "required", "is required");
    }
    if (const json* t = present(v, "timeout_ms"))
      out.timeout_ms = static_cast<int>(
          integer(*t, join(path, "timeout_ms"), 50, 30'000).value_or(kDefaultTimeoutMs));
    if (const json* h = present(v, "headers")) parse_headers(*h, join(path, "headers"), out);
    if (const json* m = present(v, "mapping"))
      out.mapping = parse_mapping(*m, join(path, "mapping"));
  }

  void parse_headers(const json& v, const std::string& path, Buyer& out) {
    if (!object(v, path)) return;
    if (v.size() > kMaxHeaders)
      return fail(path, "too_long", "at most " + std::to_string(kMaxHeaders) + " headers");
    for (const auto& [name, value] : v.items()) {
      const std::string field = join(path, name);
      const std::string lname = ascii_lower(name);
      if (!is_token(name) || name.size() > kMaxHeaderName) {
        fail(field, "invalid_format", "header names use HTTP token characters (at most 128)");
        continue;
      }
      if (std::find(kReservedHeaders.begin(), kReservedHeaders.end(), lname) !=
          kReservedHeaders.end()) {
        fail(field, "not_allowed", "this header is set by the service");
        continue;
      }
      if (std::any_of(out.headers.begin(), out.headers.end(),
                      [&](const auto& h) { return ascii_lower(h.first) == lname; })) {
        fail(field, "invalid_format", "duplicate header name (names are case-insensitive)");
        continue;
      }
      if (!value.is_string()) {
        fail(field, "invalid_type", "header values are strings");
        continue;
      }
      std::string s = value.get<std::string>();
      if (s.size() > kMaxHeaderValue) {
        fail(field, "too_long", "at most " + std::to_string(kMaxHeaderValue) + " bytes");
        continue;
      }
      if (s.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
        fail(field, "invalid_format", "header values must not contain CR, LF or NUL");
        continue;
      }
      // A client that GETs a buyer and PUTs it back sends the masked secret: keep the real one.
      if (is_secret_header(name) && s.rfind("****", 0) == 0) {
        const std::string* kept = nullptr;
        if (base_ != nullptr)
          for (const auto& [bn, bv] : base_->headers)
            if (ascii_lower(bn) == lname && mask_secret(bv) == s) kept = &bv;
        if (kept == nullptr) {
          fail(field, "invalid_format", "looks like a masked value; send the full secret");
          continue;
        }
        s = *kept;
      }
      out.headers.emplace_back(name, std::move(s));
    }
  }

  json parse_mapping(const json& v, const std::string& path) {
    if (!object(v, path)) return nullptr;
    reject_unknown(v, path, {"request", "response"});
    json out = json::object();
    if (const json* req = present(v, "request")) {
      const std::string rpath = join(path, "request");
      if (object(*req, rpath)) {
        reject_unknown(*req, rpath, {"format", "rename", "constants"});
        json r = json::object();
        if (const json* f = present(*req, "format"))
          if (auto i = one_of(*f, join(rpath, "format"), {"json", "form"}))
            r["format"] = *i == 0 ? "json" : "form";
        if (const json* ren = present(*req, "rename")) {
          const std::string npath = join(rpath, "rename");
          if (object(*ren, npath)) {
            if (ren->size() > kMaxMappingEntries) {
              fail(npath, "too_long", "at most " + std::to_string(kMaxMappingEntries) + " entries");
            } else {
              json names = json::object();
              for (const auto& [ours, theirs] : ren->items()) {
                if (!mapping_name(ours, join(npath, ours))) continue;
                if (auto s = text(theirs, join(npath, ours), kMaxMappingName, true))
                  names[ours] = *s;
              }
              r["rename"] = std::move(names);
            }
          }
        }
        if (const json* con = present(*req, "constants")) {
          const std::string cpath = join(rpath, "constants");
          if (object(*con, cpath)) {
            if (con->size() > kMaxMappingEntries) {
              fail(cpath, "too_long", "at most " + std::to_string(kMaxMappingEntries) + " entries");
            } else {
              json constants = json::object();
              for (const auto& [name, value] : con->items()) {
                const std::string field = join(cpath, name);
                if (!mapping_name(name, field)) continue;
                if (value.is_number()) {
                  if (number(value, field, -1e15, 1e15)) constants[name] = value;
                } else if (value.is_string()) {
                  if (text(value, field, kMaxMappingString, false)) constants[name] = value;
                } else {
                  fail(field, "invalid_type", "constants are strings or numbers");
                }
              }
              r["constants"] = std::move(constants);
            }
          }
        }
        out["request"] = std::move(r);
      }
    }
    if (const json* resp = present(v, "response")) {
      const std::string rpath = join(path, "response");
      if (object(*resp, rpath)) {
        reject_unknown(*resp, rpath,
                       {"accepted", "bid", "shared_bid", "aged_bid", "reference", "reason"});
        json r = json::object();
        for (const char* key :
             {"accepted", "bid", "shared_bid", "aged_bid", "reference", "reason"}) {
          const json* p = present(*resp, key);
          if (p == nullptr) continue;
          const std::string field = join(rpath, key);
          if (!p->is_string()) {
            fail(field, "invalid_type", "must be a JSON pointer string");
          } else if (!valid_json_pointer(p->get_ref<const std::string&>())) {
            fail(field, "invalid_format", "must be a JSON pointer starting with \"/\" (RFC 6901)");
          } else {
            r[key] = *p;
          }
        }
        out["response"] = std::move(r);
      }
    }
    return out;
  }

  bool mapping_name(const std::string& name, const std::string& field) {
    if (name.empty() || name.size() > kMaxMappingName || has_control_chars(name)) {
      fail(field, "invalid_format",
           "field names are 1 to 128 characters without control characters");
      return false;
    }
    return true;
  }

  void parse_pricing(const json& v, Buyer& out) {
    const std::string path = "pricing";
    out.pricing = PricingModel::kBid;
    out.price = 0;
    out.min_bid = 0;
    out.shared_price = 0;
    out.aged_price = 0;
    if (v.is_null()) return;
    if (!object(v, path)) return;
    reject_unknown(v, path, {"model", "price", "min_bid", "shared_price", "aged_price"});
    std::optional<std::size_t> model;
    if (const json* m = present(v, "model")) {
      model = one_of(*m, join(path, "model"), {"fixed", "bid"});
      if (model) out.pricing = *model == 0 ? PricingModel::kFixed : PricingModel::kBid;
    } else {
      fail(join(path, "model"), "required", "is required (fixed or bid)");
    }
    if (const json* p = present(v, "price")) {
      if (model == 1)
        fail(join(path, "price"), "not_allowed", "only a fixed-price buyer has a price");
      else if (auto c = money(*p, join(path, "price"), true))
        out.price = *c;
    } else if (model == 0) {
      fail(join(path, "price"), "required", "is required for the fixed model");
    }
    if (const json* b = present(v, "min_bid"))
      out.min_bid = money(*b, join(path, "min_bid"), false).value_or(0);
    if (const json* s = present(v, "shared_price"))
      out.shared_price = money(*s, join(path, "shared_price"), false).value_or(0);
    if (const json* a = present(v, "aged_price"))
      out.aged_price = money(*a, join(path, "aged_price"), false).value_or(0);
  }

  void parse_filters(const json& v, Buyer& out) {
    const std::string path = "filters";
    out.states.clear();
    out.exclude_states.clear();
    out.zip_prefixes.clear();
    out.sources.clear();
    out.custom_rules.clear();
    if (v.is_null()) return;
    if (!object(v, path)) return;
    reject_unknown(v, path, {"states", "exclude_states", "zip_prefixes", "sources", "custom"});
    if (const json* s = present(v, "states")) out.states = parse_states(*s, join(path, "states"));
    if (const json* s = present(v, "exclude_states"))
      out.exclude_states = parse_states(*s, join(path, "exclude_states"));
    if (const json* z = present(v, "zip_prefixes")) {
      const std::string zpath = join(path, "zip_prefixes");
      if (array(*z, zpath, kMaxZipPrefixes)) {
        for (std::size_t i = 0; i < z->size(); ++i) {
          const json& e = (*z)[i];
          if (!e.is_string()) {
            fail(at_index(zpath, i), "invalid_type", "ZIP prefixes are strings (\"021\")");
            continue;
          }
          const auto& p = e.get_ref<const std::string&>();
          if (p.empty() || p.size() > 5 || !std::all_of(p.begin(), p.end(), is_digit)) {
            fail(at_index(zpath, i), "invalid_format", "must be 1 to 5 digits");
            continue;
          }
          if (std::find(out.zip_prefixes.begin(), out.zip_prefixes.end(), p) ==
              out.zip_prefixes.end())
            out.zip_prefixes.push_back(p);
        }
      }
    }
    if (const json* s = present(v, "sources")) {
      const std::string spath = join(path, "sources");
      if (array(*s, spath, kMaxSources))
        for (std::size_t i = 0; i < s->size(); ++i)
          if (auto src = text((*s)[i], at_index(spath, i), kMaxSource, true))
            if (std::find(out.sources.begin(), out.sources.end(), *src) == out.sources.end())
              out.sources.push_back(*src);
    }
    if (const json* c = present(v, "custom")) {
      const std::string cpath = join(path, "custom");
      if (array(*c, cpath, kMaxCustomRules))
        for (std::size_t i = 0; i < c->size(); ++i)
          if (auto rule = parse_rule((*c)[i], at_index(cpath, i)))
            out.custom_rules.push_back(*rule);
    }
  }

  std::vector<std::string> parse_states(const json& v, const std::string& path) {
    std::vector<std::string> states;
    if (!array(v, path, kMaxStates)) return states;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        fail(at_index(path, i), "invalid_type", "must be a string");
        continue;
      }
      const std::string code = ascii_upper(v[i].get_ref<const std::string&>());
      if (std::find(kUspsCodes.begin(), kUspsCodes.end(), code) == kUspsCodes.end()) {
        fail(at_index(path, i), "invalid_format", "must be a two-letter USPS state code");
        continue;
      }
      if (std::find(states.begin(), states.end(), code) == states.end()) states.push_back(code);
    }
    return states;
  }

  static bool scalar(const json& v) { return v.is_string() || v.is_number() || v.is_boolean(); }

  std::optional<CustomRule> parse_rule(const json& v, const std::string& path) {
    if (!object(v, path)) return std::nullopt;
    reject_unknown(v, path, {"field", "op", "value"});
    const std::size_t before = errors_.size();
    CustomRule rule;
    if (const json* f = member(v, "field")) {
      if (auto s = text(*f, join(path, "field"), kMaxRuleField, true)) rule.field = *s;
    } else {
      fail(join(path, "field"), "required", "is required");
    }
    std::optional<std::size_t> op;
    if (const json* o = present(v, "op")) {
      op = one_of(*o, join(path, "op"),
                  {"eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "exists"});
      if (op) rule.op = static_cast<CustomRule::Op>(*op);
    } else {
      fail(join(path, "op"), "required", "is required");
    }
    const json* value = present(v, "value");
    const std::string vpath = join(path, "value");
    if (op) {
      switch (rule.op) {
        case CustomRule::Op::kEq:
        case CustomRule::Op::kNe:
          if (value == nullptr)
            fail(vpath, "required", "is required");
          else if (!scalar(*value))
            fail(vpath, "invalid_type", "must be a string, number or boolean");
          else if (value->is_string() &&
                   value->get_ref<const std::string&>().size() > kMaxRuleString)
            fail(vpath, "too_long", "at most " + std::to_string(kMaxRuleString) + " bytes");
          break;
        case CustomRule::Op::kIn:
        case CustomRule::Op::kNin:
          if (value == nullptr) {
            fail(vpath, "required", "is required");
          } else if (array(*value, vpath, kMaxRuleValues)) {
            if (value->empty()) fail(vpath, "required", "must list at least one value");
            for (std::size_t i = 0; i < value->size(); ++i) {
              const json& e = (*value)[i];
              if (!scalar(e))
                fail(at_index(vpath, i), "invalid_type", "must be a string, number or boolean");
              else if (e.is_string() && e.get_ref<const std::string&>().size() > kMaxRuleString)
                fail(at_index(vpath, i), "too_long",
                     "at most " + std::to_string(kMaxRuleString) + " bytes");
            }
          }
          break;
        case CustomRule::Op::kGt:
        case CustomRule::Op::kGte:
        case CustomRule::Op::kLt:
        case CustomRule::Op::kLte:
          if (value == nullptr)
            fail(vpath, "required", "is required");
          else
            number(*value, vpath, -1e15, 1e15);
          break;
        case CustomRule::Op::kExists:
          // No value: the field must be present. A boolean says which way (false: absent).
          if (value != nullptr && !value->is_boolean())
            fail(vpath, "invalid_type", "must be a boolean or absent");
          break;
      }
    }
    if (errors_.size() != before) return std::nullopt;
    rule.value = value == nullptr ? json(nullptr) : *value;
    return rule;
  }

  void parse_schedule(const json& v, Buyer& out) {
    const std::string path = "schedule";
    out.schedule = nullptr;
    if (v.is_null()) return;
    if (!object(v, path)) return;
    reject_unknown(v, path, {"timezone", "hours"});
    json schedule = json::object();
    if (const json* tz = present(v, "timezone")) {
      if (auto s = text(*tz, join(path, "timezone"), kMaxTimezone, true)) {
        if (valid_time_zone(*s))
          schedule["timezone"] = *s;
        else
          fail(join(path, "timezone"), "invalid_format", std::string(kTimeZoneRule));
      }
    } else {
      fail(join(path, "timezone"), "required", "is required");
    }
    const json* hours = present(v, "hours");
    const std::string hpath = join(path, "hours");
    if (hours == nullptr) {
      fail(hpath, "required", "is required (weekday -> [[\"09:00\", \"17:00\"], ...])");
    } else if (object(*hours, hpath)) {
      json normal = json::object();
      for (std::string_view day : kDays) normal[std::string(day)] = json::array();
      for (const auto& [day, ranges] : hours->items()) {
        const std::string dpath = join(hpath, day);
        if (std::find(kDays.begin(), kDays.end(), day) == kDays.end()) {
          fail(dpath, "unknown_field", "days are mon, tue, wed, thu, fri, sat, sun");
          continue;
        }
        if (ranges.is_null()) continue;
        if (!array(ranges, dpath, kMaxRangesPerDay)) continue;
        for (std::size_t i = 0; i < ranges.size(); ++i) {
          const json& r = ranges[i];
          std::optional<int> start;
          std::optional<int> end;
          if (r.is_array() && r.size() == 2) {
            start = parse_hhmm_json(r[0], false);
            end = parse_hhmm_json(r[1], true);
          }
          if (!start || !end || *start >= *end) {
            fail(at_index(dpath, i), "invalid_format",
                 "must be [\"HH:MM\", \"HH:MM\"] with start before end (end may be \"24:00\")");
            continue;
          }
          normal[day].push_back(r);
        }
      }
      schedule["hours"] = std::move(normal);
    }
    out.schedule = std::move(schedule);
  }

  // What the buyer may see of the sellers: {"seller_names": bool}; null or absent members are
  // the default (source codes only).
  void parse_visibility(const json& v, Buyer& out) {
    const std::string path = "visibility";
    out.show_seller_names = false;
    if (v.is_null()) return;
    if (!object(v, path)) return;
    reject_unknown(v, path, {"seller_names"});
    if (const json* names = present(v, "seller_names")) {
      if (names->is_boolean())
        out.show_seller_names = names->get<bool>();
      else
        fail(join(path, "seller_names"), "invalid_type", "must be true or false");
    }
  }

  // What the buyer may change itself: {"caps": bool, "filters": bool}; null or absent members
  // are false (nothing).
  void parse_self_service(const json& v, Buyer& out) {
    const std::string path = "self_service";
    out.self_caps = out.self_filters = false;
    if (v.is_null()) return;
    if (!object(v, path)) return;
    reject_unknown(v, path, {"caps", "filters"});
    for (auto [name, flag] :
         {std::pair{"caps", &out.self_caps}, std::pair{"filters", &out.self_filters}})
      if (const json* f = present(v, name)) {
        if (f->is_boolean())
          *flag = f->get<bool>();
        else
          fail(join(path, name), "invalid_type", "must be true or false");
      }
  }

  void parse_caps(const json& v, Buyer& out) {
    const std::string path = "caps";
    out.caps = nullptr;
    if (v.is_null()) return;
    if (!object(v, path)) return;
    reject_unknown(v, path,
                   {"hourly", "daily", "weekly", "monthly", "daily_budget", "monthly_budget"});
    json caps = json::object();
    for (const char* key : {"hourly", "daily", "weekly", "monthly"})
      if (const json* n = present(v, key))
        if (auto count = integer(*n, join(path, key), 0, kMaxCapCount)) caps[key] = *count;
    for (const char* key : {"daily_budget", "monthly_budget"})
      if (const json* m = present(v, key))
        if (auto cents = money(*m, join(path, key), false))
          caps[std::string(key) + "_cents"] = *cents;
    out.caps = std::move(caps);
  }

  const Buyer* base_;
  bool allow_private_urls_;
};

}  // namespace

Buyer buyer_from_json(const nlohmann::json& body, const Buyer* base, bool allow_private_urls,
                      FieldErrors& errors) {
  Buyer out = base != nullptr ? *base : Buyer{};
  if (!body.is_object()) {
    errors.push_back(FieldError{"body", "invalid_type", "the body must be a JSON object"});
    return out;
  }
  BuyerParser(base, allow_private_urls, errors).parse(body, out);
  return out;
}

}  // namespace leadflow
