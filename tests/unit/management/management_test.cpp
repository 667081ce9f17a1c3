// Operator records (sellers, campaigns, API keys) from JSON bodies: a value of the wrong JSON
// type in any field is a field error naming it, never an exception (which the front would turn
// into a 500), and names are text a person can read: no control characters, bounded length.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_store.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/management/management.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

class ManagementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seller_id = management.create_seller({{"name", "Acme"}}).body["seller_id"];
  }

  json campaign(json overrides = json::object()) const {
    json body = {{"seller_id", seller_id}, {"name", "Auto"}, {"vertical", "auto_insurance"}};
    body.merge_patch(overrides);
    return body;
  }

  ManualClock clock;
  testing::FakeStore store{clock};
  VerticalRegistry verticals = VerticalRegistry::defaults();
  Management management{store, verticals, clock, store};
  std::string seller_id;
};

// Whether an error names `field` or a member of it ("payout" is named by "payout.value").
bool names(const FieldErrors& errors, const std::string& field) {
  for (const auto& e : errors)
    if (e.field == field || e.field.rfind(field + ".", 0) == 0 ||
        e.field.rfind(field + "[", 0) == 0)
      return true;
  return false;
}

std::string list(const FieldErrors& errors) {
  std::string out;
  for (const auto& e : errors) out += e.field + ":" + e.code + " ";
  return out;
}

// A value of every JSON type but the one a field takes.
const std::vector<json>& every_type() {
  static const std::vector<json> values = {
      json(5),
      json(-1),
      json(1.5),
      json(true),
      json(false),
      json::array(),
      json::array({1, "a"}),
      json::object(),
      json({{"a", 1}}),
      json("text"),
      json(""),
  };
  return values;
}

struct FieldCase {
  std::string path;            // "payout.model"
  json::json_pointer at;       // where the value goes in the body
  std::vector<json> accepted;  // values of a wrong-looking type that are nevertheless valid
};

// Puts `value` at `at` in `body` (creating objects on the way).
json with(json body, const json::json_pointer& at, const json& value) {
  body[at] = value;
  return body;
}

void expect_refused_per_type(const std::function<Management::Created(const json&)>& create,
                             const json& base, const FieldCase& c) {
  for (const json& value : every_type()) {
    bool ok = false;
    for (const json& a : c.accepted) ok = ok || a == value;
    if (ok) continue;
    const json body = with(base, c.at, value);
    Management::Created out;
    ASSERT_NO_THROW(out = create(body)) << c.path << " = " << value.dump();
    EXPECT_TRUE(names(out.errors, c.path))
        << c.path << " = " << value.dump() << " gave " << list(out.errors);
  }
  // null: absent for optional fields, an error for required ones; never an exception.
  ASSERT_NO_THROW(create(with(base, c.at, nullptr))) << c.path << " = null";
}

TEST_F(ManagementTest, CampaignFieldsOfTheWrongTypeAreFieldErrors) {
  const auto create = [&](const json& b) { return management.create_campaign(b); };
  const json base = campaign({{"payout", {{"model", "fixed"}, {"value", 5}}}});
  ASSERT_TRUE(create(base).errors.empty()) << list(create(base).errors);
  const std::vector<FieldCase> cases = {
      {"seller_id", json::json_pointer("/seller_id"), {}},
      {"name", json::json_pointer("/name"), {json("text")}},
      {"vertical", json::json_pointer("/vertical"), {}},
      {"status", json::json_pointer("/status"), {}},
      {"mode", json::json_pointer("/mode"), {}},
      {"sync_timeout_ms", json::json_pointer("/sync_timeout_ms"), {}},
      {"rate_limit_per_minute", json::json_pointer("/rate_limit_per_minute"), {json(5)}},
      {"payout", json::json_pointer("/payout"), {}},
      {"payout.model", json::json_pointer("/payout/model"), {}},
      {"payout.value", json::json_pointer("/payout/value"), {json(5), json(1.5)}},
      {"test_mode", json::json_pointer("/test_mode"), {json(true), json(false)}},
  };
  for (const auto& c : cases) expect_refused_per_type(create, base, c);
}

// The probe that found the 500: payout.model of every type but a string.
TEST_F(ManagementTest, PayoutModelThatIsNotAStringIsAFieldError) {
  for (const json& model : {json(5), json(true), json(nullptr), json::array(), json::object()}) {
    json body = campaign();
    body["payout"] = {{"model", model}, {"value", 5}};  // not merge_patch: it would drop a null
    Management::Created out;
    ASSERT_NO_THROW(out = management.create_campaign(body)) << model.dump();
    ASSERT_FALSE(out.errors.empty()) << model.dump();
    EXPECT_TRUE(names(out.errors, "payout.model")) << model.dump() << ": " << list(out.errors);
  }
}

TEST_F(ManagementTest, SellerFieldsOfTheWrongTypeAreFieldErrors) {
  const auto create = [&](const json& b) { return management.create_seller(b); };
  const json base = {{"name", "Beta"}};
  const std::vector<FieldCase> cases = {
      {"name", json::json_pointer("/name"), {json("text")}},
      {"status", json::json_pointer("/status"), {}},
      {"test_mode", json::json_pointer("/test_mode"), {json(true), json(false)}},
      {"time_zone", json::json_pointer("/time_zone"), {}},
  };
  for (const auto& c : cases) expect_refused_per_type(create, base, c);
}

// A seller's zone meets the rule a buyer's schedule's does (leadflow/domain/time_zone.hpp): an
// IANA zone of the server's database; anything else is a field error, and nothing is changed.
TEST_F(ManagementTest, ASellersTimeZoneIsAZoneOfTheDatabaseOrAFieldError) {
  EXPECT_EQ(store.get_seller(seller_id).value->time_zone, "UTC");  // the default
  const auto made = management.create_seller({{"name", "NY"}, {"time_zone", "America/New_York"}});
  ASSERT_TRUE(made.errors.empty()) << list(made.errors);
  EXPECT_EQ(made.body["time_zone"], "America/New_York");
  EXPECT_EQ(store.get_seller(made.body["seller_id"].get<std::string>()).value->time_zone,
            "America/New_York");
  for (const char* bad : {"Mars/Olympus", "America", "../etc/passwd", "/UTC", "localtime",
                          "posix/America/New_York", "right/UTC", "America/New York", ""}) {
    const auto refused = management.create_seller({{"name", "X"}, {"time_zone", bad}});
    ASSERT_EQ(refused.errors.size(), 1u) << bad;
    EXPECT_EQ(refused.errors[0].field, "time_zone") << bad;
    EXPECT_EQ(refused.errors[0].code, "invalid_format") << bad;
    const auto kept = management.update_seller(seller_id, {{"time_zone", bad}});
    EXPECT_TRUE(names(kept.errors, "time_zone")) << bad;
    EXPECT_EQ(store.get_seller(seller_id).value->time_zone, "UTC") << bad;
  }
  const auto changed = management.update_seller(seller_id, {{"time_zone", "Asia/Kolkata"}});
  ASSERT_TRUE(changed.errors.empty()) << list(changed.errors);
  EXPECT_EQ(changed.body["time_zone"], "Asia/Kolkata");
  EXPECT_EQ(store.get_seller(seller_id).value->time_zone, "Asia/Kolkata");
}

// A campaign's own re-offer policy: checked as a vertical's (the member at fault named, nothing
// changed), none by default, set, made none and given back to the vertical by null, each change
// in the change log.
TEST_F(ManagementTest, ACampaignsOwnReofferPolicyIsCheckedAsAVerticalsAndLogged) {
  const auto made = management.create_campaign(campaign());
  ASSERT_TRUE(made.errors.empty()) << list(made.errors);
  EXPECT_TRUE(made.body["reoffer"].is_null());
  const std::string id = made.body["campaign_id"];
  const std::vector<std::pair<json, std::string>> refused = {
      {json::parse(R"({"delays_seconds": [3600, 60]})"), "reoffer.delays_seconds"},
      {json::parse(R"({"delays_seconds": [0]})"), "reoffer.delays_seconds"},
      {json::parse(R"({"delays_seconds": [60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 660]})"),
       "reoffer.delays_seconds"},
      {json::parse(R"({"delays_seconds": [60], "window_hours": 0})"), "reoffer.window_hours"},
      {json::parse(R"({"delays_seconds": [60], "window_hours": "2"})"), "reoffer.window_hours"},
      {json::parse(R"({"delays_seconds": [60], "after": 1})"), "reoffer"},
      {json("900"), "reoffer"},
      {json::array({900}), "reoffer"}};
  for (const auto& [bad, field] : refused) {
    const auto create = management.create_campaign(campaign({{"reoffer", bad}}));
    ASSERT_EQ(create.errors.size(), 1u) << bad.dump() << ": " << list(create.errors);
    EXPECT_EQ(create.errors[0].field, field) << bad.dump();
    const auto update = management.update_campaign(id, {{"reoffer", bad}});
    ASSERT_EQ(update.errors.size(), 1u) << bad.dump();
    EXPECT_EQ(update.errors[0].field, field) << bad.dump();
    EXPECT_FALSE(store.get_campaign(id).value->reoffer.has_value()) << bad.dump();
  }
  const json own = json::parse(R"({"delays_seconds": [60, 3600], "window_hours": 48})");
  const auto set = management.update_campaign(id, {{"reoffer", own}});
  ASSERT_TRUE(set.errors.empty()) << list(set.errors);
  EXPECT_EQ(set.body["reoffer"], own);
  EXPECT_EQ(store.get_campaign(id).value->reoffer->delays_s, (std::vector<std::int64_t>{60, 3600}));
  const auto none =
      management.update_campaign(id, {{"reoffer", {{"delays_seconds", json::array()}}}});
  ASSERT_TRUE(none.errors.empty()) << list(none.errors);
  EXPECT_TRUE(store.get_campaign(id).value->reoffer->delays_s.empty());
  // Another change keeps it; null gives the campaign back to its vertical's.
  ASSERT_TRUE(management.update_campaign(id, {{"name", "Renamed"}}).errors.empty());
  EXPECT_TRUE(store.get_campaign(id).value->reoffer.has_value());
  ASSERT_TRUE(management.update_campaign(id, {{"reoffer", nullptr}}).errors.empty());
  EXPECT_FALSE(store.get_campaign(id).value->reoffer.has_value());
  ChangeQuery q;
  q.object_kind = "campaign";
  const auto log = store.list_changes(q);
  ASSERT_TRUE(log);
  int policy_changes = 0;
  for (const ChangeEntry& e : *log)
    for (const FieldChange& f : e.changes)
      if (f.field.rfind("reoffer", 0) == 0) ++policy_changes;
  EXPECT_GE(policy_changes, 3) << "each change of the policy is in the change log";
  const auto with_own = management.create_campaign(campaign({{"reoffer", own}}));
  ASSERT_TRUE(with_own.errors.empty()) << list(with_own.errors);
  EXPECT_EQ(with_own.body["reoffer"], own);
}

// A vertical's policy set by the operator is checked as a campaign's (the same refusals, nothing
// stored), stored, replaced, reset to the configured one (again: nothing to log), and logged.
TEST_F(ManagementTest, AVerticalsReofferPolicyIsCheckedAsACampaignsAndLogged) {
  const ChangeActor by{"key_op", "ops", "api"};
  for (const json& bad : {json::parse(R"({"delays_seconds": [3600, 60]})"),
                          json::parse(R"({"delays_seconds": [60], "window_hours": 0})"),
                          json::parse(R"({"delays_seconds": [60], "after": 1})"), json("900")}) {
    const auto set = management.set_vertical_reoffer("solar", {{"reoffer", bad}}, {}, by);
    const auto campaign_refusal = management.create_campaign(campaign({{"reoffer", bad}}));
    ASSERT_EQ(set.errors.size(), 1u) << bad.dump() << ": " << list(set.errors);
    ASSERT_EQ(campaign_refusal.errors.size(), 1u) << bad.dump();
    EXPECT_EQ(set.errors[0].field, campaign_refusal.errors[0].field) << bad.dump();
    EXPECT_EQ(set.errors[0].code, campaign_refusal.errors[0].code) << bad.dump();
  }
  EXPECT_EQ(management.set_vertical_reoffer("solar", json::object(), {}, by).errors[0].field,
            "reoffer");
  EXPECT_EQ(management.set_vertical_reoffer("solar", {{"reoffer", nullptr}, {"x", 1}}, {}, by)
                .errors[0]
                .field,
            "x");
  EXPECT_EQ(store.list_vertical_reoffers()->size(), 0u) << "nothing stored for a refusal";
  EXPECT_EQ(
      management.set_vertical_reoffer("no_such", {{"reoffer", {{"delays_seconds", {60}}}}}, {}, by)
          .status,
      StoreStatus::kNotFound);

  const json own = json::parse(R"({"delays_seconds": [60, 3600], "window_hours": 48})");
  const auto set = management.set_vertical_reoffer("solar", {{"reoffer", own}}, {}, by);
  ASSERT_TRUE(set.errors.empty()) << list(set.errors);
  ASSERT_EQ(set.status, StoreStatus::kOk);
  EXPECT_EQ(set.body["reoffer"], own);
  EXPECT_EQ(set.body["reoffer_source"], "operator");
  EXPECT_EQ(store.list_vertical_reoffers()->at(0).policy.delays_s,
            (std::vector<std::int64_t>{60, 3600}));
  clock.advance(std::chrono::seconds(1));  // the log's order is its entries' time
  const auto reset = management.set_vertical_reoffer("solar", {{"reoffer", nullptr}}, {}, by);
  ASSERT_EQ(reset.status, StoreStatus::kOk);
  EXPECT_EQ(reset.body["reoffer_source"], "configured");
  EXPECT_EQ(operator_policy(*store.list_vertical_reoffers(), "solar"), nullptr);
  EXPECT_EQ(management.reset_vertical_reoffer("solar", {}, by).status, StoreStatus::kOk);
  ChangeQuery q;
  q.object_kind = "vertical";
  const auto log = store.list_changes(q);
  ASSERT_TRUE(log);
  ASSERT_EQ(log->size(), 2u) << "set and reset; the second reset changed nothing";
  EXPECT_EQ((*log)[0].action, "reset");
  EXPECT_EQ((*log)[1].action, "updated");
  EXPECT_EQ((*log)[1].object_id, "solar");
  EXPECT_EQ((*log)[1].object_name, "solar");
  EXPECT_EQ((*log)[1].actor.id, "key_op");

  store.unavailable_for(std::chrono::minutes(1));
  EXPECT_EQ(management.set_vertical_reoffer("solar", {{"reoffer", own}}, {}, by).status,
            StoreStatus::kUnavailable);
  EXPECT_EQ(management.reset_vertical_reoffer("solar", {}, by).status, StoreStatus::kUnavailable);
}

// A vertical's policy is changed as a record is (docs/versions.md): at a version If-Match allows
// (0 for one never set), its version moving with each set and reset, a stale change refused with
// the current version and nothing written or logged.
TEST_F(ManagementTest, AVerticalsReofferPolicyIsChangedOnlyAtTheVersionItWasRead) {
  const ChangeActor by{"key_op", "ops", "api"};
  const json sixty = {{"reoffer", {{"delays_seconds", {60}}}}};
  const json hour = {{"reoffer", {{"delays_seconds", {3600}}}}};
  const IfMatch at0{false, {0}}, at1{false, {1}}, at2{false, {2}};
  const auto first = management.set_vertical_reoffer("solar", sixty, at0, by);
  ASSERT_EQ(first.status, StoreStatus::kOk);
  EXPECT_EQ(first.version, 1);
  EXPECT_EQ(first.body["reoffer_version"], 1);
  EXPECT_EQ(first.before["reoffer_version"], 0);

  const auto stale = management.set_vertical_reoffer("solar", hour, at0, by);
  EXPECT_EQ(stale.status, StoreStatus::kConflict);
  EXPECT_TRUE(stale.stale);
  EXPECT_EQ(stale.version, 1) << "the current version, for the 412";
  EXPECT_EQ(management.reset_vertical_reoffer("solar", at2, by).status, StoreStatus::kConflict);

  const auto reset = management.reset_vertical_reoffer("solar", at1, by);
  ASSERT_EQ(reset.status, StoreStatus::kOk);
  EXPECT_EQ(reset.version, 2);
  EXPECT_EQ(reset.body["reoffer_source"], "configured");
  EXPECT_EQ(reset.body["reoffer_version"], 2);
  // Read at version 1, before the reset: refused, though a policy was in force then as now.
  EXPECT_TRUE(management.set_vertical_reoffer("solar", hour, at1, by).stale);
  const auto again = management.set_vertical_reoffer("solar", hour, at2, by);
  ASSERT_EQ(again.status, StoreStatus::kOk);
  EXPECT_EQ(again.version, 3);
  EXPECT_EQ(operator_policy(*store.list_vertical_reoffers(), "solar")->policy.delays_s,
            (std::vector<std::int64_t>{3600}));
  // Without If-Match, any version: a reset of a vertical none is set for changes nothing.
  EXPECT_EQ(management.reset_vertical_reoffer("mortgage", {}, by).version, 0);
  ChangeQuery q;
  q.object_kind = "vertical";
  EXPECT_EQ(store.list_changes(q)->size(), 3u) << "set, reset, set: nothing of the refused ones";
}

TEST_F(ManagementTest, ApiKeyFieldsOfTheWrongTypeAreFieldErrors) {
  const auto create = [&](const json& b) { return management.create_api_key(b); };
  const json base = {{"name", "ops"}, {"plan", "standard"}, {"scopes", {"leads:read"}}};
  ASSERT_TRUE(create(base).errors.empty());
  const std::vector<FieldCase> cases = {
      {"name", json::json_pointer("/name"), {json("text"), json("")}},
      {"seller_id", json::json_pointer("/seller_id"), {}},
      {"plan", json::json_pointer("/plan"), {}},
      {"scopes", json::json_pointer("/scopes"), {}},
      {"scopes[0]", json::json_pointer("/scopes/0"), {}},
  };
  for (const auto& c : cases) expect_refused_per_type(create, base, c);
}

// Names that would garble a terminal or a log, or cut a C string short.
const std::vector<std::string>& hostile_names() {
  static const std::vector<std::string> names = {
      std::string("Acme\0Evil", 9),
      "Acme\nINFO forged log line",
      "Acme\r\n",
      "Acme\tLeads",
      "\x1b[31mred\x1b[0m",
      "bell\x07",
      "del\x7f",
      "next line \xc2\x85",  // U+0085 NEL (C1)
      "csi \xc2\x9b"
      "31m",  // U+009B CSI (C1)
  };
  return names;
}

TEST_F(ManagementTest, NamesRefuseControlCharacters) {
  for (const std::string& name : hostile_names()) {
    const auto seller = management.create_seller({{"name", name}});
    EXPECT_TRUE(names(seller.errors, "name")) << json(name).dump();
    const auto camp = management.create_campaign(campaign({{"name", name}}));
    EXPECT_TRUE(names(camp.errors, "name")) << json(name).dump();
    const auto key = management.create_api_key({{"name", name}});
    EXPECT_TRUE(names(key.errors, "name")) << json(name).dump();
  }
}

TEST_F(ManagementTest, NamesKeepUnicodeLettersAndAreBoundedInCharacters) {
  const std::string unicode = "Zoë Ünïcødé 李明 Ελληνικά";
  EXPECT_TRUE(management.create_seller({{"name", unicode}}).errors.empty());
  EXPECT_TRUE(management.create_campaign(campaign({{"name", unicode}})).errors.empty());
  EXPECT_TRUE(management.create_api_key({{"name", unicode}}).errors.empty());
  // 200 characters of two bytes each are 200 characters; 201 are too many.
  std::string longest;
  for (int i = 0; i < 200; ++i) longest += "é";
  EXPECT_TRUE(management.create_seller({{"name", longest}}).errors.empty());
  EXPECT_TRUE(names(management.create_seller({{"name", longest + "é"}}).errors, "name"));
  EXPECT_TRUE(
      names(management.create_campaign(campaign({{"name", longest + "x"}})).errors, "name"));
}

// A seller the store cannot read is our outage, not the caller's mistake: kUnavailable (a 503)
// with nothing created or changed, never a "no such seller" field error or a 404.
TEST_F(ManagementTest, ASellerTheStoreCannotReadIsUnavailableNotAFieldError) {
  store.fail_next_account_reads(1);
  const auto camp = management.create_campaign(campaign());
  EXPECT_EQ(camp.status, StoreStatus::kUnavailable);
  EXPECT_TRUE(camp.errors.empty()) << list(camp.errors);
  EXPECT_TRUE(store.list_campaigns("").value().empty());
  store.fail_next_account_reads(1);
  const auto key = management.create_api_key({{"name", "k"}, {"seller_id", seller_id}});
  EXPECT_EQ(key.status, StoreStatus::kUnavailable);
  EXPECT_TRUE(key.errors.empty()) << list(key.errors);
  EXPECT_TRUE(store.list_api_keys().value().empty());
  store.fail_next_account_reads(1);
  EXPECT_EQ(management.update_seller(seller_id, {{"name", "Other"}}).status,
            StoreStatus::kUnavailable);
  EXPECT_EQ(store.get_seller(seller_id).value->name, "Acme");
  // Answered, an unknown seller is still the caller's field error.
  const auto unknown = management.create_campaign(campaign({{"seller_id", "sl_missing"}}));
  EXPECT_TRUE(names(unknown.errors, "seller_id")) << list(unknown.errors);
  EXPECT_TRUE(management.create_campaign(campaign()).errors.empty());
}

}  // namespace
}  // namespace leadflow
