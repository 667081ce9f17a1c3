// The vertical registry: defaults, lookup, the published field spec and the operator file.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "leadflow/domain/verticals.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

const std::vector<std::string> kDefaultNames = {
    "auto_insurance", "debt_relief",    "education", "health_insurance",
    "home_insurance", "home_services",  "legal",     "life_insurance",
    "mortgage",       "personal_loans", "solar",
};

TEST(VerticalRegistryTest, DefaultsAreTheElevenVerticalsSorted) {
  const VerticalRegistry r = VerticalRegistry::defaults();
  EXPECT_EQ(r.names(), kDefaultNames);
}

TEST(VerticalRegistryTest, DefaultFieldsAreTypedOptionalAndConsistent) {
  const VerticalRegistry r = VerticalRegistry::defaults();
  for (const auto& name : r.names()) {
    SCOPED_TRACE(name);
    const Vertical* v = r.find(name);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->name, name);
    EXPECT_EQ(v->duplicate_lookback_days, 30);
    EXPECT_EQ(v->max_sales, 1);
    EXPECT_GE(v->fields.size(), 4u);
    std::set<std::string> seen;
    for (const auto& f : v->fields) {
      SCOPED_TRACE(f.name);
      EXPECT_TRUE(seen.insert(f.name).second) << "duplicate field";
      EXPECT_FALSE(f.required);
      EXPECT_FALSE(f.description.empty());
      EXPECT_TRUE(std::all_of(f.name.begin(), f.name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      }));
      if (f.type == VerticalField::Type::kEnum) {
        EXPECT_FALSE(f.values.empty());
      } else {
        EXPECT_TRUE(f.values.empty());
      }
      if (f.min && f.max) {
        EXPECT_LE(*f.min, *f.max);
      }
      if (f.type == VerticalField::Type::kBoolean) {
        EXPECT_FALSE(f.min || f.max);
      }
    }
  }
}

TEST(VerticalRegistryTest, DefaultsHaveTheAdvertisedFields) {
  const VerticalRegistry r = VerticalRegistry::defaults();
  const Vertical* autos = r.find("auto_insurance");
  ASSERT_NE(autos, nullptr);
  const VerticalField* year = autos->field("vehicle_year");
  ASSERT_NE(year, nullptr);
  EXPECT_EQ(year->type, VerticalField::Type::kInteger);
  EXPECT_EQ(year->min, 1900);
  EXPECT_EQ(year->max, 2100);
  ASSERT_NE(autos->field("credit_rating"), nullptr);
  EXPECT_EQ(autos->field("credit_rating")->values,
            (std::vector<std::string>{"excellent", "good", "fair", "poor"}));
  EXPECT_EQ(autos->field("currently_insured")->type, VerticalField::Type::kBoolean);
  EXPECT_EQ(autos->field("vehicle_make")->type, VerticalField::Type::kString);
  EXPECT_EQ(autos->field("nope"), nullptr);

  const Vertical* mortgage = r.find("mortgage");
  ASSERT_NE(mortgage, nullptr);
  EXPECT_EQ(mortgage->field("loan_amount")->type, VerticalField::Type::kNumber);
  EXPECT_EQ(mortgage->field("property_value")->type, VerticalField::Type::kNumber);
  const auto& loan_types = mortgage->field("loan_type")->values;
  EXPECT_NE(std::find(loan_types.begin(), loan_types.end(), "purchase"), loan_types.end());
  EXPECT_NE(std::find(loan_types.begin(), loan_types.end(), "refinance"), loan_types.end());

  const Vertical* solar = r.find("solar");
  ASSERT_NE(solar, nullptr);
  EXPECT_EQ(solar->field("monthly_electric_bill")->type, VerticalField::Type::kNumber);
  EXPECT_EQ(solar->field("home_owner")->type, VerticalField::Type::kBoolean);
  EXPECT_EQ(solar->field("roof_shade")->type, VerticalField::Type::kEnum);
}

TEST(VerticalRegistryTest, FindIsExact) {
  const VerticalRegistry r = VerticalRegistry::defaults();
  EXPECT_NE(r.find("solar"), nullptr);
  EXPECT_EQ(r.find("Solar"), nullptr);
  EXPECT_EQ(r.find(""), nullptr);
  EXPECT_EQ(r.find("solar "), nullptr);
  EXPECT_EQ(r.find("timeshares"), nullptr);
}

TEST(VerticalRegistryTest, ToJsonPublishesFieldSpecs) {
  const VerticalRegistry r = VerticalRegistry::defaults();
  const json j = r.to_json(*r.find("auto_insurance"));
  EXPECT_EQ(j.at("vertical"), "auto_insurance");
  EXPECT_EQ(j.at("duplicate_lookback_days"), 30);
  EXPECT_EQ(j.at("max_sales"), 1);
  ASSERT_TRUE(j.at("fields").is_array());
  EXPECT_EQ(j.at("fields").size(), r.find("auto_insurance")->fields.size());
  for (const auto& f : j.at("fields")) {
    for (const char* key : {"name", "type", "required", "min", "max", "values", "description"}) {
      EXPECT_TRUE(f.contains(key)) << key << " in " << f.dump();
    }
  }
  const json& year = j.at("fields").at(0);
  EXPECT_EQ(year.at("name"), "vehicle_year");
  EXPECT_EQ(year.at("type"), "integer");
  EXPECT_EQ(year.at("required"), false);
  EXPECT_TRUE(year.at("min").is_number_integer());  // 1900, not 1900.0
  EXPECT_EQ(year.at("min"), 1900);
  EXPECT_EQ(year.at("max"), 2100);
  EXPECT_EQ(year.at("values"), json::array());

  auto field = [&](std::string_view name) {
    for (const auto& f : j.at("fields")) {
      if (f.at("name") == name) return f;
    }
    return json();
  };
  EXPECT_EQ(field("credit_rating").at("type"), "enum");
  EXPECT_EQ(field("credit_rating").at("values"),
            json::array({"excellent", "good", "fair", "poor"}));
  EXPECT_TRUE(field("credit_rating").at("min").is_null());
  EXPECT_EQ(field("currently_insured").at("type"), "boolean");
  EXPECT_EQ(field("vehicle_make").at("type"), "string");
  EXPECT_EQ(r.to_json(*r.find("mortgage")).at("fields").at(0).at("type"), "number");
}

TEST(VerticalRegistryTest, LoadJsonMergesFieldProperties) {
  VerticalRegistry r = VerticalRegistry::defaults();
  const std::size_t before = r.find("auto_insurance")->fields.size();
  ASSERT_EQ(r.load_json(json::parse(R"({"verticals": [
      {"name": "auto_insurance", "duplicate_lookback_days": 45, "max_sales": 3,
       "fields": [{"name": "vehicle_year", "required": true},
                  {"name": "garaging_zip", "description": "Where the car is kept"},
                  {"name": "mileage", "type": "integer", "min": 0, "max": null}]}]})")),
            "");
  const Vertical* v = r.find("auto_insurance");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->duplicate_lookback_days, 45);
  EXPECT_EQ(v->max_sales, 3);
  EXPECT_EQ(v->fields.size(), before + 2);
  const VerticalField* year = v->field("vehicle_year");
  ASSERT_NE(year, nullptr);
  EXPECT_TRUE(year->required);
  EXPECT_EQ(year->type, VerticalField::Type::kInteger);  // kept
  EXPECT_EQ(year->min, 1900);                            // kept
  const VerticalField* zip = v->field("garaging_zip");
  ASSERT_NE(zip, nullptr);
  EXPECT_EQ(zip->type, VerticalField::Type::kString);
  EXPECT_FALSE(zip->required);
  const VerticalField* mileage = v->field("mileage");
  ASSERT_NE(mileage, nullptr);
  EXPECT_EQ(mileage->min, 0);
  EXPECT_FALSE(mileage->max.has_value());
  // Other verticals are untouched.
  EXPECT_EQ(r.find("solar")->duplicate_lookback_days, 30);
  EXPECT_EQ(r.names().size(), 11u);
}

TEST(VerticalRegistryTest, LoadJsonAddsAndReplaces) {
  VerticalRegistry r = VerticalRegistry::defaults();
  ASSERT_EQ(r.load_json(json::parse(R"({"verticals": [
      {"name": "pet_insurance", "fields": [{"name": "pet_type", "type": "enum", "values": ["dog", "cat"], "required": true}]},
      {"name": "solar", "replace_fields": true, "fields": [{"name": "panels", "type": "integer", "min": 1}]}]})")),
            "");
  EXPECT_EQ(r.names().size(), 12u);
  const Vertical* pets = r.find("pet_insurance");
  ASSERT_NE(pets, nullptr);
  EXPECT_EQ(pets->duplicate_lookback_days, 30);
  EXPECT_EQ(pets->max_sales, 1);
  ASSERT_EQ(pets->fields.size(), 1u);
  EXPECT_TRUE(pets->fields[0].required);
  EXPECT_EQ(pets->fields[0].values, (std::vector<std::string>{"dog", "cat"}));
  const Vertical* solar = r.find("solar");
  ASSERT_EQ(solar->fields.size(), 1u);
  EXPECT_EQ(solar->fields[0].name, "panels");
  EXPECT_EQ(r.to_json(*pets).at("fields").at(0).at("required"), true);
}

TEST(VerticalRegistryTest, LoadJsonChangesTypeAwayFromEnum) {
  VerticalRegistry r = VerticalRegistry::defaults();
  ASSERT_EQ(
      r.load_json(json::parse(
          R"({"verticals": [{"name": "solar", "fields": [{"name": "roof_shade", "type": "string"}]}]})")),
      "");
  const VerticalField* f = r.find("solar")->field("roof_shade");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type, VerticalField::Type::kString);
  EXPECT_TRUE(f->values.empty());
}

TEST(VerticalRegistryTest, LoadJsonRejectsBadDocumentsAndChangesNothing) {
  const std::pair<const char*, const char*> cases[] = {
      {R"([])", "must be a JSON object"},
      {R"({})", "verticals: required array"},
      {R"({"verticals": {}})", "verticals: required array"},
      {R"({"verticals": [], "extra": 1})", "unknown key \"extra\""},
      {R"({"verticals": [5]})", "verticals[0]: must be an object"},
      {R"({"verticals": [{}]})", "verticals[0].name"},
      {R"({"verticals": [{"name": "Bad Name"}]})", "verticals[0].name"},
      {R"({"verticals": [{"name": "solar", "colour": "red"}]})", "unknown key \"colour\""},
      {R"({"verticals": [{"name": "solar"}, {"name": "solar"}]})",
       "verticals[1].name: duplicate vertical"},
      {R"({"verticals": [{"name": "solar", "max_sales": 0}]})", "verticals[0].max_sales"},
      {R"({"verticals": [{"name": "solar", "max_sales": 1.5}]})", "verticals[0].max_sales"},
      {R"({"verticals": [{"name": "solar", "duplicate_lookback_days": -1}]})",
       "duplicate_lookback_days"},
      {R"({"verticals": [{"name": "solar", "duplicate_lookback_days": "30"}]})",
       "duplicate_lookback_days"},
      {R"({"verticals": [{"name": "solar", "fields": {}}]})",
       "verticals[0].fields: must be an array"},
      {R"({"verticals": [{"name": "solar", "replace_fields": "yes"}]})", "replace_fields"},
      {R"({"verticals": [{"name": "solar", "fields": [{"type": "string"}]}]})",
       "verticals[0].fields[0].name"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "a b"}]}]})",
       "verticals[0].fields[0].name"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "email"}]}]})",
       "standard lead field"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x"}, {"name": "x"}]}]})",
       "duplicate field"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x", "type": "date"}]}]})",
       "fields[0].type"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x", "type": "enum"}]}]})",
       "needs at least one value"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x", "type": "enum", "values": [1]}]}]})",
       "values"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x", "type": "enum", "values": ["a", "a"]}]}]})",
       "duplicate value"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x", "values": ["a"]}]}]})",
       "only an enum"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x", "type": "number", "min": 5, "max": 1}]}]})",
       "min is greater than max"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x", "type": "boolean", "min": 0}]}]})",
       "do not apply to a boolean"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x", "min": "1"}]}]})",
       "fields[0].min"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x", "required": "yes"}]}]})",
       "fields[0].required"},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "x", "hint": "?"}]}]})",
       "unknown key \"hint\""},
      {R"({"verticals": [{"name": "solar", "fields": [{"name": "roof_shade", "min": 1}]}]})",
       "do not apply to an enum"},
  };
  for (const auto& [doc, expected] : cases) {
    SCOPED_TRACE(doc);
    VerticalRegistry r = VerticalRegistry::defaults();
    const std::string err = r.load_json(json::parse(doc));
    EXPECT_NE(err.find(expected), std::string::npos) << "got: " << err;
    EXPECT_EQ(r.names(), kDefaultNames);
    EXPECT_EQ(r.to_json(*r.find("solar")), VerticalRegistry::defaults().to_json(*r.find("solar")));
  }
}

TEST(VerticalRegistryTest, LoadJsonIsAtomic) {
  VerticalRegistry r = VerticalRegistry::defaults();
  const std::string err = r.load_json(json::parse(R"({"verticals": [
      {"name": "pet_insurance"},
      {"name": "solar", "max_sales": 2},
      {"name": "legal", "max_sales": 99}]})"));
  EXPECT_NE(err.find("verticals[2].max_sales"), std::string::npos) << err;
  EXPECT_EQ(r.find("pet_insurance"), nullptr);
  EXPECT_EQ(r.find("solar")->max_sales, 1);
}

TEST(VerticalRegistryTest, LoadJsonOfAnEmptyListKeepsDefaults) {
  VerticalRegistry r = VerticalRegistry::defaults();
  EXPECT_EQ(r.load_json(json::parse(R"({"verticals": []})")), "");
  EXPECT_EQ(r.names(), kDefaultNames);
}

}  // namespace
}  // namespace leadflow
