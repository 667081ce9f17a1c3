// The vertical registry: the eleven default verticals of SPEC §2 and the operator's overrides.
//
// Operator file (LEADFLOW_VERTICALS), merged over the defaults by load_json():
//   {"verticals": [{"name": "solar",                      // [a-z0-9_]{1,64}
//                   "fields": [{"name": "home_owner", "required": true}, ...],
//                   "replace_fields": false,              // true: "fields" is the whole new list
//                   "duplicate_lookback_days": 30,        // 0..3650
//                   "max_sales": 1,                       // 1..20
//                   "consent_days": 30,                   // 1..3650
//                   "reoffer": {"delays_seconds": [900, 7200], "window_hours": 48}}]}
// - A vertical not among the defaults is added; one that exists is updated key by key.
// - Fields merge by name: a listed field that exists keeps every property the entry does not
//   name (so {"name": "home_owner", "required": true} only makes it required); a new field needs
//   no more than a name (type defaults to "string"). "replace_fields": true drops the old list.
// - Field keys: name ([A-Za-z0-9_.-]{1,64}, not a standard lead field), type (string | number |
//   integer | boolean | enum), required, min, max (null clears), values (enum only), description.
// - Unknown keys, wrong types and inconsistent fields (enum without values, min > max) are
//   errors naming their path; on error nothing is changed.
#include "leadflow/domain/verticals.hpp"

#include "leadflow/domain/accounts.hpp"

#include <fstream>
#include <sstream>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "leadflow/base/text.hpp"
#include "leadflow/base/time_format.hpp"

namespace leadflow {
namespace {

using Type = VerticalField::Type;
using json = nlohmann::json;

constexpr std::size_t kMaxFieldsPerVertical = 100;
constexpr std::size_t kMaxEnumValues = 100;
constexpr std::size_t kMaxNameLength = 64;
constexpr std::size_t kMaxDescription = 500;
constexpr int kMaxLookbackDays = 3650;
constexpr int kMaxSales = 20;

// Names a vertical field may not take: they are top-level lead fields on Surface A or B.
constexpr std::string_view kReservedNames[] = {
    "SELLER_CAMPAIGN_KEY",
    "first_name",
    "last_name",
    "email",
    "email_address",
    "phone",
    "phone_home",
    "zip_code",
    "vertical",
    "source",
    "landing_page",
    "ip_address",
    "user_agent",
    "custom_fields",
    "trustedform_cert_url",
    "jornaya_leadid",
    "tcpa_consent",
    "tcpa_consent_text",
};

const std::vector<std::string> kCreditRatings = {"excellent", "good", "fair", "poor"};
const std::vector<std::string> kPropertyTypes = {"single_family", "condo", "townhouse",
                                                 "multi_family", "mobile_home"};
const std::vector<std::string> kEmploymentStatuses = {"employed", "self_employed", "unemployed",
                                                      "retired", "student"};

VerticalField str(std::string name, double max_len, std::string description) {
  VerticalField f;
  f.name = std::move(name);
  f.type = Type::kString;
  f.max = max_len;
  f.description = std::move(description);
  return f;
}

VerticalField num(std::string name, Type type, double min, double max, std::string description) {
  VerticalField f;
  f.name = std::move(name);
  f.type = type;
  f.min = min;
  f.max = max;
  f.description = std::move(description);
  return f;
}

VerticalField boolean(std::string name, std::string description) {
  VerticalField f;
  f.name = std::move(name);
  f.type = Type::kBoolean;
  f.description = std::move(description);
  return f;
}

VerticalField enumeration(std::string name, std::vector<std::string> values,
                          std::string description) {
  VerticalField f;
  f.name = std::move(name);
  f.type = Type::kEnum;
  f.values = std::move(values);
  f.description = std::move(description);
  return f;
}

Vertical make_vertical(std::string name, std::vector<VerticalField> fields) {
  Vertical v;
  v.name = std::move(name);
  v.fields = std::move(fields);
  return v;
}

std::string_view type_name(Type t) {
  switch (t) {
    case Type::kString:
      return "string";
    case Type::kNumber:
      return "number";
    case Type::kInteger:
      return "integer";
    case Type::kBoolean:
      return "boolean";
    case Type::kEnum:
      return "enum";
  }
  return "string";
}

bool parse_type(std::string_view s, Type& out) {
  static constexpr std::pair<std::string_view, Type> kTypes[] = {
      {"string", Type::kString},   {"number", Type::kNumber}, {"integer", Type::kInteger},
      {"boolean", Type::kBoolean}, {"enum", Type::kEnum},
  };
  for (const auto& [name, type] : kTypes) {
    if (s == name) {
      out = type;
      return true;
    }
  }
  return false;
}

bool valid_vertical_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || is_digit(c) || c == '_'; });
}

// The same syntax custom_fields keys must have (validation's field_checks.cpp), so every field is
// postable.
bool valid_field_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameLength) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; });
}

bool is_reserved(std::string_view s) {
  return std::find(std::begin(kReservedNames), std::end(kReservedNames), s) !=
         std::end(kReservedNames);
}

// Reads an optional bound: absent keeps `out`, null clears it, a finite number sets it.
std::string read_bound(const json& obj, const char* key, std::optional<double>& out,
                       const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end()) return {};
  if (it->is_null()) {
    out.reset();
    return {};
  }
  if (!it->is_number()) return path + "." + key + ": must be a number or null";
  const double d = it->get<double>();
  if (!std::isfinite(d)) return path + "." + key + ": must be finite";
  out = d;
  return {};
}

std::string merge_field(const json& j, VerticalField& f, bool is_new, const std::string& path) {
  static constexpr std::string_view kKeys[] = {"name", "type",   "required",   "min",
                                               "max",  "values", "description"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(std::begin(kKeys), std::end(kKeys), it.key()) == std::end(kKeys)) {
      return path + ": unknown key \"" + it.key() + "\"";
    }
  }
  if (auto it = j.find("type"); it != j.end()) {
    if (!it->is_string() || !parse_type(it->get_ref<const std::string&>(), f.type)) {
      return path + ".type: must be one of string, number, integer, boolean, enum";
    }
  } else if (is_new) {
    f.type = Type::kString;
  }
  if (auto it = j.find("required"); it != j.end()) {
    if (!it->is_boolean()) return path + ".required: must be a boolean";
    f.required = it->get<bool>();
  }
  if (auto err = read_bound(j, "min", f.min, path); !err.empty()) return err;
  if (auto err = read_bound(j, "max", f.max, path); !err.empty()) return err;
  if (auto it = j.find("values"); it != j.end()) {
    if (!it->is_array()) return path + ".values: must be an array of strings";
    if (it->size() > kMaxEnumValues)
      return path + ".values: at most " + std::to_string(kMaxEnumValues) + " values";
    std::vector<std::string> values;
    std::set<std::string> seen;
    for (const auto& v : *it) {
      if (!v.is_string() || v.get_ref<const std::string&>().empty() ||
          v.get_ref<const std::string&>().size() > 100) {
        return path + ".values: each value must be a non-empty string of at most 100 characters";
      }
      if (!seen.insert(v.get<std::string>()).second) {
        return path + ".values: duplicate value \"" + v.get<std::string>() + "\"";
      }
      values.push_back(v.get<std::string>());
    }
    f.values = std::move(values);
  }
  if (auto it = j.find("description"); it != j.end()) {
    if (!it->is_string() || it->get_ref<const std::string&>().size() > kMaxDescription) {
      return path + ".description: must be a string of at most " + std::to_string(kMaxDescription) +
             " characters";
    }
    f.description = it->get<std::string>();
  }
  // Consistency of the merged result.
  if (f.type == Type::kEnum) {
    if (f.values.empty()) return path + ".values: an enum field needs at least one value";
    if (f.min || f.max) return path + ": min/max do not apply to an enum field";
  } else {
    if (j.contains("values") && !f.values.empty())
      return path + ".values: only an enum field has values";
    f.values.clear();  // a type change away from enum drops the old list
  }
  if (f.type == Type::kBoolean && (f.min || f.max))
    return path + ": min/max do not apply to a boolean field";
  if (f.type == Type::kString && ((f.min && *f.min < 0) || (f.max && *f.max < 0))) {
    return path + ": string length bounds must not be negative";
  }
  if (f.min && f.max && *f.min > *f.max) return path + ": min is greater than max";
  return {};
}

std::string merge_fields(const json& arr, Vertical& v, bool replace, const std::string& path) {
  if (!arr.is_array()) return path + ": must be an array";
  if (arr.size() > kMaxFieldsPerVertical) {
    return path + ": at most " + std::to_string(kMaxFieldsPerVertical) + " fields";
  }
  if (replace) v.fields.clear();
  std::set<std::string, std::less<>> names_in_doc;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string fpath = path + "[" + std::to_string(i) + "]";
    const json& j = arr[i];
    if (!j.is_object()) return fpath + ": must be an object";
    auto name_it = j.find("name");
    if (name_it == j.end() || !name_it->is_string()) return fpath + ".name: required string";
    const std::string& name = name_it->get_ref<const std::string&>();
    if (!valid_field_name(name)) return fpath + ".name: must match [A-Za-z0-9_.-]{1,64}";
    if (is_reserved(name)) return fpath + ".name: \"" + name + "\" is a standard lead field";
    if (!names_in_doc.insert(name).second) return fpath + ".name: duplicate field \"" + name + "\"";
    auto existing = std::find_if(v.fields.begin(), v.fields.end(),
                                 [&](const VerticalField& f) { return f.name == name; });
    if (existing != v.fields.end()) {
      if (auto err = merge_field(j, *existing, false, fpath); !err.empty()) return err;
    } else {
      VerticalField f;
      f.name = name;
      if (auto err = merge_field(j, f, true, fpath); !err.empty()) return err;
      v.fields.push_back(std::move(f));
    }
  }
  if (v.fields.size() > kMaxFieldsPerVertical) {
    return path + ": at most " + std::to_string(kMaxFieldsPerVertical) + " fields per vertical";
  }
  return {};
}

std::string read_int(const json& obj, const char* key, int lo, int hi, int& out,
                     const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end()) return {};
  if (!it->is_number_integer()) return path + "." + key + ": must be an integer";
  const auto value = it->get<std::int64_t>();
  if (value < lo || value > hi) {
    return path + "." + key + ": must be between " + std::to_string(lo) + " and " +
           std::to_string(hi);
  }
  out = static_cast<int>(value);
  return {};
}

}  // namespace

// {"delays_seconds": [900, 7200, 86400], "window_hours": 48}; null: no re-offers. With
// `allow_none`, {"delays_seconds": []} is a policy of no re-offer (a campaign's "none").
std::string read_reoffer_policy(const json& j, ReofferPolicy& out, const std::string& path,
                                bool allow_none) {
  out = {};
  if (j.is_null()) return {};
  if (!j.is_object()) return path + ": must be an object";
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "delays_seconds" && it.key() != "window_hours")
      return path + ": unknown key \"" + it.key() + "\"";
  auto delays = j.find("delays_seconds");
  if (allow_none && delays != j.end() && delays->is_array() && delays->empty()) {
    if (j.contains("window_hours"))
      return path + ".window_hours: a policy of no re-offer has no window";
    return {};
  }
  if (delays == j.end() || !delays->is_array() || delays->empty() || delays->size() > 10)
    return path + ".delays_seconds: required, an array of " + (allow_none ? "0" : "1") +
           " to 10 delays";
  for (const auto& d : *delays) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 1 ||
        d.get<std::int64_t>() > 365LL * 86'400)
      return path + ".delays_seconds: each is an integer between 1 and 31536000";
    if (!out.delays_s.empty() && d.get<std::int64_t>() <= out.delays_s.back())
      return path + ".delays_seconds: must increase";
    out.delays_s.push_back(d.get<std::int64_t>());
  }
  int hours = 0;
  if (auto err = read_int(j, "window_hours", 1, 24 * kMaxLookbackDays, hours, path); !err.empty())
    return err;
  out.window_s = hours * 3600LL;
  return {};
}

json reoffer_policy_json(const ReofferPolicy& p) {
  json out = {{"delays_seconds", p.delays_s}};
  if (p.window_s > 0) out["window_hours"] = p.window_s / 3600;
  return out;
}

const ReofferPolicy& reoffer_policy_of(const Vertical& v, const Campaign* c,
                                       const ReofferPolicy* operators) {
  if (c && c->reoffer) return *c->reoffer;
  return operators ? *operators : v.reoffer;
}

namespace {

std::string merge_vertical(const json& j, std::map<std::string, Vertical, std::less<>>& into,
                           const std::string& path) {
  static constexpr std::string_view kKeys[] = {
      "name",      "fields",       "replace_fields", "duplicate_lookback_days",
      "max_sales", "consent_days", "reoffer"};
  if (!j.is_object()) return path + ": must be an object";
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(std::begin(kKeys), std::end(kKeys), it.key()) == std::end(kKeys)) {
      return path + ": unknown key \"" + it.key() + "\"";
    }
  }
  auto name_it = j.find("name");
  if (name_it == j.end() || !name_it->is_string()) return path + ".name: required string";
  const std::string& name = name_it->get_ref<const std::string&>();
  if (!valid_vertical_name(name)) return path + ".name: must match [a-z0-9_]{1,64}";

  Vertical v;
  if (auto it = into.find(name); it != into.end()) {
    v = it->second;
  } else {
    v.name = name;
  }
  bool replace = false;
  if (auto it = j.find("replace_fields"); it != j.end()) {
    if (!it->is_boolean()) return path + ".replace_fields: must be a boolean";
    replace = it->get<bool>();
  }
  if (auto it = j.find("fields"); it != j.end()) {
    if (auto err = merge_fields(*it, v, replace, path + ".fields"); !err.empty()) return err;
  } else if (replace) {
    v.fields.clear();
  }
  if (auto err = read_int(j, "duplicate_lookback_days", 0, kMaxLookbackDays,
                          v.duplicate_lookback_days, path);
      !err.empty()) {
    return err;
  }
  if (auto err = read_int(j, "max_sales", 1, kMaxSales, v.max_sales, path); !err.empty())
    return err;
  if (auto err = read_int(j, "consent_days", 1, kMaxLookbackDays, v.consent_days, path);
      !err.empty())
    return err;
  if (auto it = j.find("reoffer"); it != j.end())
    if (auto err = read_reoffer_policy(*it, v.reoffer, path + ".reoffer", false); !err.empty())
      return err;
  into.insert_or_assign(name, std::move(v));
  return {};
}

// Integral bounds are published as integers (1900, not 1900.0).
json reoffer_json(const ReofferPolicy& p) {
  return p.delays_s.empty() ? json(nullptr) : reoffer_policy_json(p);
}

json bound_json(const std::optional<double>& b) {
  if (!b) return nullptr;
  if (std::trunc(*b) == *b && std::fabs(*b) < 9007199254740992.0)
    return static_cast<std::int64_t>(*b);
  return *b;
}

}  // namespace

const VerticalField* Vertical::field(std::string_view field_name) const {
  for (const auto& f : fields) {
    if (f.name == field_name) return &f;
  }
  return nullptr;
}

VerticalRegistry VerticalRegistry::defaults() {
  std::vector<Vertical> all;
  all.push_back(make_vertical(
      "auto_insurance",
      {
          num("vehicle_year", Type::kInteger, 1900, 2100, "Model year of the primary vehicle"),
          str("vehicle_make", 50, "Make of the primary vehicle, e.g. Toyota"),
          str("vehicle_model", 50, "Model of the primary vehicle, e.g. Camry"),
          num("vehicle_count", Type::kInteger, 1, 10, "Number of vehicles to insure"),
          num("driver_age", Type::kInteger, 16, 120, "Age of the primary driver in years"),
          boolean("currently_insured", "Whether the driver holds auto insurance now"),
          str("current_insurer", 100, "Name of the current insurance carrier"),
          num("accidents_last_3_years", Type::kInteger, 0, 20,
              "At-fault accidents in the last three years"),
          enumeration("credit_rating", kCreditRatings, "Self-reported credit rating"),
          boolean("home_owner", "Whether the driver owns a home"),
      }));
  all.push_back(make_vertical(
      "home_insurance",
      {
          enumeration("property_type", kPropertyTypes, "Kind of dwelling"),
          num("year_built", Type::kInteger, 1700, 2100, "Year the home was built"),
          num("square_feet", Type::kInteger, 100, 100000, "Living area in square feet"),
          num("home_value", Type::kNumber, 0, 1000000000, "Estimated home value in USD"),
          boolean("currently_insured", "Whether the home is insured now"),
          str("current_insurer", 100, "Name of the current insurance carrier"),
          num("claims_last_5_years", Type::kInteger, 0, 50, "Claims filed in the last five years"),
          enumeration("credit_rating", kCreditRatings, "Self-reported credit rating"),
      }));
  all.push_back(make_vertical(
      "health_insurance",
      {
          num("age", Type::kInteger, 0, 120, "Age of the primary applicant in years"),
          num("household_size", Type::kInteger, 1, 20, "People in the household"),
          num("household_income", Type::kNumber, 0, 100000000, "Yearly household income in USD"),
          enumeration(
              "coverage_type",
              {"individual", "family", "medicare", "medicare_supplement", "short_term", "dental"},
              "Coverage wanted"),
          boolean("currently_insured", "Whether the applicant has health coverage now"),
          boolean("tobacco_use", "Whether the applicant uses tobacco"),
          boolean("qualifying_life_event",
                  "Whether a qualifying life event opens special enrollment"),
      }));
  all.push_back(make_vertical(
      "life_insurance",
      {
          num("age", Type::kInteger, 18, 100, "Age of the insured in years"),
          num("coverage_amount", Type::kNumber, 1000, 100000000, "Face amount wanted in USD"),
          enumeration("policy_type", {"term", "whole", "universal", "final_expense"},
                      "Kind of policy"),
          enumeration("term_length", {"10", "15", "20", "25", "30"},
                      "Term in years, for term policies"),
          boolean("tobacco_use", "Whether the insured uses tobacco"),
          enumeration("health_rating", {"excellent", "good", "fair", "poor"},
                      "Self-reported health"),
      }));
  all.push_back(make_vertical(
      "mortgage",
      {
          num("loan_amount", Type::kNumber, 0, 100000000, "Loan amount wanted in USD"),
          num("property_value", Type::kNumber, 0, 1000000000, "Estimated property value in USD"),
          enumeration("loan_type",
                      {"purchase", "refinance", "cash_out_refinance", "heloc", "reverse"},
                      "Purpose of the loan"),
          enumeration("property_type", kPropertyTypes, "Kind of property"),
          enumeration("occupancy", {"primary", "secondary", "investment"},
                      "How the property is used"),
          enumeration("credit_rating", kCreditRatings, "Self-reported credit rating"),
          num("current_rate", Type::kNumber, 0, 30,
              "Current interest rate in percent, for refinances"),
          boolean("va_eligible", "Whether the borrower is eligible for a VA loan"),
          boolean("first_time_buyer", "Whether the borrower is buying a first home"),
      }));
  all.push_back(make_vertical(
      "personal_loans",
      {
          num("loan_amount", Type::kNumber, 100, 1000000, "Loan amount wanted in USD"),
          enumeration("loan_purpose",
                      {"debt_consolidation", "home_improvement", "medical", "auto",
                       "major_purchase", "business", "other"},
                      "What the loan is for"),
          enumeration("credit_rating", kCreditRatings, "Self-reported credit rating"),
          num("annual_income", Type::kNumber, 0, 100000000, "Yearly income in USD"),
          enumeration("employment_status", kEmploymentStatuses, "Employment status"),
          boolean("home_owner", "Whether the applicant owns a home"),
      }));
  all.push_back(make_vertical(
      "solar", {
                   num("monthly_electric_bill", Type::kNumber, 0, 100000,
                       "Average monthly electric bill in USD"),
                   boolean("home_owner", "Whether the lead owns the home"),
                   enumeration("roof_shade", {"no_shade", "partial_shade", "full_shade"},
                               "Shade on the roof"),
                   num("roof_age", Type::kInteger, 0, 200, "Age of the roof in years"),
                   str("utility_provider", 100, "Electric utility serving the home"),
                   enumeration("property_type", kPropertyTypes, "Kind of dwelling"),
                   enumeration("credit_rating", kCreditRatings, "Self-reported credit rating"),
               }));
  all.push_back(make_vertical(
      "home_services",
      {
          enumeration("service_type",
                      {"roofing", "hvac", "plumbing", "electrical", "windows", "siding", "flooring",
                       "remodeling", "landscaping", "pest_control", "security", "other"},
                      "Service wanted"),
          enumeration("project_timeline",
                      {"immediately", "within_1_month", "1_3_months", "3_6_months", "flexible"},
                      "When the work should start"),
          boolean("home_owner", "Whether the lead owns the home"),
          enumeration("property_type", kPropertyTypes, "Kind of dwelling"),
          str("project_description", 1000, "Short description of the project"),
      }));
  all.push_back(make_vertical(
      "legal", {
                   enumeration("case_type",
                               {"personal_injury", "auto_accident", "workers_compensation",
                                "medical_malpractice", "family", "criminal_defense", "bankruptcy",
                                "immigration", "employment", "estate_planning", "other"},
                               "Kind of legal matter"),
                   str("incident_date", 10, "Date of the incident, YYYY-MM-DD"),
                   boolean("has_attorney", "Whether the lead already has an attorney"),
                   boolean("injured", "Whether the lead was injured"),
                   str("case_description", 1000, "Short description of the matter"),
               }));
  all.push_back(make_vertical(
      "education",
      {
          enumeration("degree_level",
                      {"certificate", "associate", "bachelor", "master", "doctorate"},
                      "Degree sought"),
          str("area_of_interest", 100, "Program or subject of interest"),
          enumeration("highest_education",
                      {"high_school", "ged", "some_college", "associate", "bachelor", "master",
                       "doctorate"},
                      "Highest education completed"),
          num("graduation_year", Type::kInteger, 1900, 2100, "Year of high-school graduation"),
          enumeration("learning_preference", {"online", "campus", "either"},
                      "Preferred way of studying"),
          boolean("military_affiliation", "Whether the lead is military-affiliated"),
      }));
  all.push_back(make_vertical(
      "debt_relief",
      {
          num("debt_amount", Type::kNumber, 0, 10000000, "Total unsecured debt in USD"),
          enumeration("debt_type",
                      {"credit_card", "medical", "personal_loan", "student_loan", "tax", "other"},
                      "Main kind of debt"),
          num("monthly_income", Type::kNumber, 0, 10000000, "Monthly income in USD"),
          boolean("behind_on_payments", "Whether the lead is behind on payments"),
          enumeration("employment_status", kEmploymentStatuses, "Employment status"),
      }));

  VerticalRegistry r;
  for (auto& v : all) {
    std::string name = v.name;
    r.verticals_.emplace(std::move(name), std::move(v));
  }
  return r;
}

std::string VerticalRegistry::load_json(const nlohmann::json& doc) {
  try {
    if (!doc.is_object()) return "verticals document: must be a JSON object";
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      if (it.key() != "verticals") return "verticals document: unknown key \"" + it.key() + "\"";
    }
    auto list = doc.find("verticals");
    if (list == doc.end() || !list->is_array()) return "verticals: required array";
    auto merged = verticals_;  // applied only when the whole document is valid
    std::set<std::string, std::less<>> seen;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const std::string path = "verticals[" + std::to_string(i) + "]";
      const json& j = (*list)[i];
      if (j.is_object()) {
        if (auto n = j.find("name");
            n != j.end() && n->is_string() && !seen.insert(n->get<std::string>()).second) {
          return path + ".name: duplicate vertical \"" + n->get<std::string>() + "\"";
        }
      }
      if (auto err = merge_vertical(j, merged, path); !err.empty()) return err;
    }
    verticals_ = std::move(merged);
    return {};
  } catch (const std::exception& e) {
    return std::string("verticals document: ") + e.what();
  }
}

const Vertical* VerticalRegistry::find(std::string_view name) const {
  auto it = verticals_.find(name);
  return it == verticals_.end() ? nullptr : &it->second;
}

std::vector<std::string> VerticalRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(verticals_.size());
  for (const auto& [name, v] : verticals_) out.push_back(name);
  return out;  // std::map keeps them sorted
}

nlohmann::json VerticalRegistry::to_json(const Vertical& v) const {
  json fields = json::array();
  for (const auto& f : v.fields) {
    json jf = {
        {"name", f.name},
        {"type", type_name(f.type)},
        {"required", f.required},
        {"min", bound_json(f.min)},
        {"max", bound_json(f.max)},
        {"values", f.values},
        {"description", f.description},
    };
    fields.push_back(std::move(jf));
  }
  return json{{"vertical", v.name},
              {"fields", std::move(fields)},
              {"duplicate_lookback_days", v.duplicate_lookback_days},
              {"max_sales", v.max_sales},
              {"consent_days", v.consent_days},
              {"reoffer", reoffer_json(v.reoffer)}};
}

const VerticalReoffer* vertical_setting(const std::vector<VerticalReoffer>& rows,
                                        std::string_view vertical) {
  for (const VerticalReoffer& r : rows)
    if (r.vertical == vertical) return &r;
  return nullptr;
}

const VerticalReoffer* operator_policy(const std::vector<VerticalReoffer>& rows,
                                       std::string_view vertical) {
  const VerticalReoffer* r = vertical_setting(rows, vertical);
  return r && r->active ? r : nullptr;
}

nlohmann::json VerticalRegistry::to_json(const Vertical& v, const VerticalReoffer* setting) const {
  const VerticalReoffer* set = setting && setting->active ? setting : nullptr;
  json out = to_json(v);
  out["reoffer"] = reoffer_json(reoffer_policy_of(v, nullptr, set ? &set->policy : nullptr));
  out["reoffer_source"] = set ? "operator" : "configured";
  out["configured_reoffer"] = reoffer_json(v.reoffer);
  out["reoffer_set_at"] = set ? json(format_rfc3339_ms(set->set_at_ms)) : json(nullptr);
  out["reoffer_version"] = setting ? setting->version : 0;
  return out;
}

std::string VerticalRegistry::load_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (!in || doc.is_discarded()) return "cannot read JSON from " + path;
  return load_json(doc);
}

}  // namespace leadflow
