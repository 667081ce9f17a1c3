// The small holes of docs/hardening.md, over real HTTPS: wrong JSON types on every management
// field, the return-window oracle, free text, custom-field numbers, failed leads' attempts.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Wrong JSON types: 400 naming the field, never a 5xx, on every route that creates or changes a
// user, buyer, campaign, seller or API key.

// The JSON kinds a field may hold. A field is sent every kind it may not hold.
enum Kind : unsigned {
  kNull = 1,
  kInt = 2,
  kFloat = 4,
  kString = 8,
  kBool = 16,
  kArray = 32,
  kObject = 64,
  kNumber = kInt | kFloat,
};

struct Field {
  std::string path;  // "payout.model": a member of a member
  unsigned kinds;    // what it may hold
};

struct Route {
  std::string method;  // POST or PUT
  std::string path;
  json base;  // a valid body the field is set into
  std::vector<Field> fields;
};

json& at_path(json& body, const std::string& path) {
  json* at = &body;
  std::size_t from = 0;
  for (;;) {
    const std::size_t dot = path.find('.', from);
    at = &(*at)[path.substr(from, dot - from)];
    if (dot == std::string::npos) return *at;
    from = dot + 1;
  }
}

std::vector<json> wrong_values(unsigned kinds) {
  std::vector<json> out;
  const std::pair<unsigned, json> all[] = {
      {kNull, json(nullptr)},
      {kInt, json(7)},
      {kFloat, json(1.5)},
      {kString, json("x")},
      {kBool, json(true)},
      {kArray, json::array({1})},
      {kObject, json::object({{"a", 1}})},
  };
  for (const auto& [kind, value] : all)
    if ((kinds & kind) == 0) out.push_back(value);
  return out;
}

httplib::Result send(const ServiceFixture& svc, const Route& r, const json& body) {
  const httplib::Headers auth{{"Authorization", "Bearer " + svc.operator_key()}};
  if (r.method == "PUT")
    return svc.https()->Put(r.path.c_str(), auth, body.dump(), "application/json");
  return svc.https()->Post(r.path.c_str(), auth, body.dump(), "application/json");
}

bool names_field(const json& answer, const std::string& field) {
  for (const auto& e : answer.value("errors", json::array()))
    if (e.value("field", "") == field) return true;
  return false;
}

TEST(WrongTypes, EveryManagementFieldOfEveryRouteIs400NamingTheField) {
  ServiceFixture svc;
  auto sim = start_buyer("types", 5.0);
  const std::string seller = svc.add_seller();
  const auto [campaign, campaign_key] = svc.add_campaign(seller);
  const std::string buyer = svc.add_buyer(*sim);
  auto user = svc.post("/v1/users",
                       {{"email", "typed@example.com"},
                        {"name", "Typed"},
                        {"password", "a long enough password"},
                        {"account", "operator"}},
                       svc.operator_key());
  ASSERT_EQ(user->status, 201) << user->body;
  const std::string user_id = json::parse(user->body)["data"]["id"];

  const json payout = {{"model", "revshare"}, {"value", 70}};
  const std::vector<Field> seller_fields = {{"name", kString},
                                            {"status", kString},
                                            {"payout", kObject},
                                            {"payout.model", kString},
                                            {"payout.value", kNumber}};
  std::vector<Field> seller_update = seller_fields;
  seller_update.push_back({"seller_id", kString});
  seller_update.push_back({"created_at", kString});

  const std::vector<Field> campaign_fields = {{"name", kString},
                                              {"status", kString},
                                              {"mode", kString},
                                              {"sync_timeout_ms", kInt | kNull},
                                              {"rate_limit_per_minute", kInt | kNull},
                                              {"payout", kObject},
                                              {"payout.model", kString},
                                              {"payout.value", kNumber}};
  std::vector<Field> campaign_create = campaign_fields;
  campaign_create.push_back({"seller_id", kString});
  campaign_create.push_back({"vertical", kString});
  std::vector<Field> campaign_update = campaign_create;
  for (const char* f : {"campaign_id", "created_at", "campaign_key_hint", "campaign_key"})
    campaign_update.push_back({f, kString});

  const json buyer_body = {{"name", "Typed buyer"},
                           {"verticals", {"auto_insurance"}},
                           {"delivery",
                            {{"mode", "ping_post"},
                             {"ping_url", sim->ping_url()},
                             {"post_url", sim->post_url()},
                             {"timeout_ms", 1000}}},
                           {"pricing", {{"model", "bid"}, {"min_bid", 1.0}}}};
  const std::vector<Field> buyer_fields = {{"name", kString},
                                           {"status", kString | kNull},
                                           {"verticals", kArray},
                                           {"delivery", kObject},
                                           {"delivery.mode", kString},
                                           {"delivery.ping_url", kString},
                                           {"delivery.post_url", kString},
                                           {"delivery.timeout_ms", kInt | kNull},
                                           {"delivery.headers", kObject | kNull},
                                           {"delivery.mapping", kObject | kNull},
                                           {"pricing", kObject | kNull},
                                           {"pricing.model", kString},
                                           {"pricing.min_bid", kNumber | kNull},
                                           {"filters", kObject | kNull},
                                           {"filters.states", kArray | kNull},
                                           {"filters.sources", kArray | kNull},
                                           {"filters.zip_prefixes", kArray | kNull},
                                           {"filters.custom", kArray | kNull},
                                           {"schedule", kObject | kNull},
                                           {"caps", kObject | kNull},
                                           {"caps.daily", kInt | kNull},
                                           {"caps.daily_budget", kNumber | kNull},
                                           {"priority", kInt | kNull},
                                           {"weight", kInt | kNull},
                                           {"tier", kInt | kNull},
                                           {"max_concurrency", kInt | kNull},
                                           {"duplicate_lookback_days", kInt | kNull},
                                           {"return_window_days", kInt | kNull},
                                           {"max_return_rate", kNumber | kNull},
                                           {"buyer_id", kString},
                                           {"created_at", kString},
                                           {"updated_at", kString},
                                           {"returns", kObject | kNull}};
  std::vector<Field> buyer_update = buyer_fields;
  buyer_update.push_back({"health", kObject | kNull});

  const std::vector<Route> routes = {
      {"POST",
       "/v1/sellers",
       {{"name", "S"}, {"status", "active"}, {"payout", payout}},
       seller_fields},
      {"PUT", "/v1/sellers/" + seller, {{"payout", payout}}, seller_update},
      {"POST",
       "/v1/campaigns",
       {{"seller_id", seller},
        {"name", "C"},
        {"vertical", "auto_insurance"},
        {"status", "active"},
        {"mode", "async"},
        {"payout", payout}},
       campaign_create},
      {"PUT", "/v1/campaigns/" + campaign, {{"payout", payout}}, campaign_update},
      {"POST", "/v1/buyers", buyer_body, buyer_fields},
      {"PUT", "/v1/buyers/" + buyer, buyer_body, buyer_update},
      {"POST",
       "/v1/api-keys",
       {{"name", "k"}, {"seller_id", seller}, {"plan", "standard"}, {"scopes", {"leads:write"}}},
       {{"name", kString | kNull},
        {"seller_id", kString | kNull},
        {"buyer_id", kString | kNull},
        {"plan", kString},
        {"scopes", kArray}}},
      {"POST",
       "/v1/users",
       {{"email", "new@example.com"},
        {"name", "N"},
        {"password", "a long enough password"},
        {"account", "operator"},
        {"active", true}},
       {{"email", kString},
        {"name", kString},
        {"password", kString},
        {"account", kString},
        {"seller_id", kString | kNull},
        {"buyer_id", kString | kNull},
        {"active", kBool | kNull}}},
      {"PUT",
       "/v1/users/" + user_id,
       json::object(),
       {{"name", kString}, {"active", kBool | kNull}, {"password", kString}}},
  };

  int sent = 0;
  for (const Route& route : routes) {
    for (const Field& field : route.fields) {
      for (const json& wrong : wrong_values(field.kinds)) {
        json body = route.base;
        at_path(body, field.path) = wrong;
        auto r = send(svc, route, body);
        ++sent;
        ASSERT_TRUE(r) << route.method << " " << route.path;
        const std::string what =
            route.method + " " + route.path + " " + field.path + "=" + wrong.dump();
        EXPECT_EQ(r->status, 400) << what << ": " << r->body;
        if (r->status == 400) {
          EXPECT_TRUE(names_field(json::parse(r->body), field.path)) << what << ": " << r->body;
        }
      }
    }
  }
  EXPECT_GT(sent, 200);
}

// ---------------------------------------------------------------------------------------------
// The return-window oracle: a buyer that may not return anything (window 0) learns nothing of a
// lead it did not buy, whatever its state.

TEST(ReturnWindowOracle, ALeadTheBuyerDidNotBuyAnswersAsALeadThatDoesNotExist) {
  ServiceFixture svc;
  auto high = start_buyer("high", 15.00), low = start_buyer("low", 10.00);
  const std::string high_id = svc.add_buyer(*high);
  const std::string low_id = svc.add_buyer(
      *low, "auto_insurance",
      {{"return_window_days", 0}, {"verticals", {"auto_insurance", "home_insurance"}}});
  const std::string low_key = svc.add_api_key({{"name", "low's key"}, {"buyer_id", low_id}});
  const auto lead_of = [&](const json& body) {
    auto r = svc.post("/v1/leads", body, svc.operator_key());
    EXPECT_EQ(r->status, 201) << r->body;
    return json::parse(r->body);
  };
  const json sold_to_high = lead_of(sample_lead(1));
  ASSERT_EQ(sold_to_high["distribution"]["buyer_id"], high_id);
  const json unsold = lead_of(sample_lead(2, "life_insurance"));  // no buyer of that vertical
  const json ret = {{"reason", "invalid_phone"}};

  const auto none = svc.post("/v1/leads/ld_00000000000000000000000000/return", ret, low_key);
  ASSERT_EQ(none->status, 404) << none->body;
  const json nothing = json::parse(none->body);
  for (const json& lead : {sold_to_high, unsold}) {
    const auto r =
        svc.post("/v1/leads/" + lead["lead_id"].get<std::string>() + "/return", ret, low_key);
    EXPECT_EQ(r->status, 404) << lead["status"] << ": " << r->body;
    EXPECT_EQ(json::parse(r->body).value("detail", ""), nothing.value("detail", "")) << r->body;
    EXPECT_EQ(json::parse(r->body).value("title", ""), nothing.value("title", "")) << r->body;
  }

  // Its own purchase (a vertical only it buys) is told the window is closed.
  const json bought = lead_of(sample_lead(3, "home_insurance"));
  ASSERT_EQ(bought["distribution"]["buyer_id"], low_id);
  const auto own =
      svc.post("/v1/leads/" + bought["lead_id"].get<std::string>() + "/return", ret, low_key);
  EXPECT_EQ(own->status, 422) << own->body;
}

// ---------------------------------------------------------------------------------------------
// Custom-field numbers as the seller wrote them, at every hop: the API's read-back, the buyer's
// ping and post.

TEST(CustomFieldNumbers, IntegersStayIntegersFromTheSellerToTheBuyer) {
  ServiceFixture svc;
  auto sim = start_buyer("numbers", 12.0);
  svc.add_buyer(*sim);
  json lead = sample_lead(1);
  lead["custom_fields"] = {{"vehicle_year", 2019}, {"account", 9007199254740993}, {"rate", 2.5}};
  auto posted = svc.post("/v1/leads", lead, svc.operator_key());
  ASSERT_EQ(posted->status, 201) << posted->body;
  const std::string id = json::parse(posted->body)["lead_id"];

  auto read = svc.get("/v1/leads/" + id, svc.operator_key());
  ASSERT_EQ(read->status, 200) << read->body;
  EXPECT_NE(read->body.find(R"("vehicle_year":2019)"), std::string::npos) << read->body;
  EXPECT_EQ(read->body.find(R"("vehicle_year":2019.0)"), std::string::npos) << read->body;
  EXPECT_NE(read->body.find(R"("account":9007199254740993)"), std::string::npos) << read->body;
  EXPECT_NE(read->body.find(R"("rate":2.5)"), std::string::npos) << read->body;

  ASSERT_FALSE(sim->pings().empty());
  ASSERT_FALSE(sim->posts().empty());
  for (const auto& r : {sim->pings().front(), sim->posts().front()}) {
    EXPECT_NE(r.body.find(R"("vehicle_year":2019)"), std::string::npos) << r.path << r.body;
    EXPECT_EQ(r.body.find(R"("vehicle_year":2019.0)"), std::string::npos) << r.path << r.body;
    EXPECT_NE(r.body.find(R"("account":9007199254740993)"), std::string::npos) << r.path << r.body;
  }

  // Past int64's range: a clear 400 naming the field.
  lead = sample_lead(2);
  lead["custom_fields"] = {{"account", 9223372036854775808u}};
  auto beyond = svc.post("/v1/leads", lead, svc.operator_key());
  EXPECT_EQ(beyond->status, 400) << beyond->body;
  EXPECT_NE(beyond->body.find("custom_fields.account"), std::string::npos) << beyond->body;
}

// ---------------------------------------------------------------------------------------------
// Free text: control and hidden formatting characters refused in every field a person writes,
// lengths counted in characters.

std::string repeated(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(FreeText, ControlAndBidiCharactersAreRefusedInEveryFreeTextField) {
  ServiceFixture svc;
  auto sim = start_buyer("text", 10.0);
  const std::string buyer = svc.add_buyer(*sim);
  const std::string buyer_key = svc.add_api_key({{"name", "buyer key"}, {"buyer_id", buyer}});
  const std::string seller = svc.add_seller();
  const auto [campaign, campaign_key] = svc.add_campaign(seller);
  auto user = svc.post("/v1/users",
                       {{"email", "text@example.com"},
                        {"name", "Text"},
                        {"password", "a long enough password"},
                        {"account", "operator"}},
                       svc.operator_key());
  ASSERT_EQ(user->status, 201) << user->body;
  const std::string user_id = json::parse(user->body)["data"]["id"];
  auto sold = svc.post("/v1/leads", sample_lead(1), svc.operator_key());
  ASSERT_EQ(sold->status, 201) << sold->body;
  const std::string lead_id = json::parse(sold->body)["lead_id"];
  const httplib::Headers auth{{"Authorization", "Bearer " + svc.operator_key()}};
  const auto put = [&](const std::string& path, const json& body) {
    return svc.https()->Put(path.c_str(), auth, body.dump(), "application/json");
  };

  // {how to send a value, the field named in the answer}.
  using Send = std::function<httplib::Result(const std::string&)>;
  const std::vector<std::pair<Send, std::string>> fields = {
      {[&](const std::string& v) {
         return svc.post("/v1/sellers", {{"name", v}}, svc.operator_key());
       },
       "name"},
      {[&](const std::string& v) {
         return put("/v1/sellers/" + seller, {{"name", v}});
       },
       "name"},
      {[&](const std::string& v) {
         return svc.post("/v1/campaigns",
                         {{"seller_id", seller}, {"name", v}, {"vertical", "auto_insurance"}},
                         svc.operator_key());
       },
       "name"},
      {[&](const std::string& v) {
         return put("/v1/campaigns/" + campaign, {{"name", v}});
       },
       "name"},
      {[&](const std::string& v) {
         return svc.post("/v1/api-keys", {{"name", v}}, svc.operator_key());
       },
       "name"},
      {[&](const std::string& v) {
         return put("/v1/users/" + user_id, {{"name", v}});
       },
       "name"},
      {[&](const std::string& v) {
         return put("/v1/buyers/" + buyer, {{"name", v}});
       },
       "name"},
      {[&](const std::string& v) {
         return svc.post("/v1/leads/" + lead_id + "/return", {{"reason", "other"}, {"note", v}},
                         buyer_key);
       },
       "note"},
      {[&](const std::string& v) {
         return svc.post("/v1/leads/" + lead_id + "/settle", {{"sold", true}, {"note", v}},
                         svc.operator_key());
       },
       "note"},
      {[&](const std::string& v) {
         return svc.post("/v1/leads/" + lead_id + "/settle", {{"sold", true}, {"buyer_lead_id", v}},
                         svc.operator_key());
       },
       "buyer_lead_id"},
      {[&](const std::string& v) {
         json lead = sample_lead(2);
         lead["first_name"] = v;
         return svc.post("/v1/leads", lead, svc.operator_key());
       },
       "first_name"},
  };
  const std::vector<std::string> bad = {std::string("nul \0 here", 10),
                                        "esc \x1b[2J",
                                        "del \x7f",
                                        "c1 \xc2\x9b",
                                        "rlo \xe2\x80\xae",
                                        "lri \xe2\x81\xa6",
                                        "zwsp \xe2\x80\x8b",
                                        "ls \xe2\x80\xa8"};
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& [send_value, name] = fields[i];
    for (const std::string& value : bad) {
      auto r = send_value(value);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 400) << "field #" << i << " " << json(value).dump() << ": " << r->body;
      if (r->status == 400) {
        EXPECT_TRUE(names_field(json::parse(r->body), name)) << i << ": " << r->body;
      }
    }
  }

  // Characters, not bytes: 600 "é" are 1,200 bytes and fit the 1,000 of a note; a note may run
  // on several lines.
  const std::string e600 = repeated("\xc3\xa9", 600);
  auto note = svc.post("/v1/leads/" + lead_id + "/return",
                       {{"reason", "other"}, {"note", "line one\r\nline two\n" + e600}}, buyer_key);
  EXPECT_EQ(note->status, 201) << note->body;
  auto name = svc.post("/v1/sellers", {{"name", repeated("\xc3\xa9", 200)}}, svc.operator_key());
  EXPECT_EQ(name->status, 201) << name->body;
}

// ---------------------------------------------------------------------------------------------
// A lead failed because its posts were never answered keeps them, for the operator to settle it.

TEST(FailedLeads, KeepTheAttemptsOfThePostsNeverAnswered) {
  ServiceOptions o;
  o.auction_timeout_ms = 1000;
  o.wait_ms = 0;
  ServiceFixture svc(o);
  auto silent = start_buyer("silent", 0.0, /*latency_ms=*/60'000);  // answers nothing in time
  const std::string buyer = svc.add_buyer(
      *silent, "auto_insurance",
      {{"pricing", {{"model", "fixed"}, {"price", 20.0}}},
       {"delivery", {{"mode", "direct_post"}, {"ping_url", nullptr}, {"timeout_ms", 200}}}});
  auto posted = svc.post("/v1/leads", sample_lead(1), svc.operator_key());
  ASSERT_TRUE(posted->status == 201 || posted->status == 202) << posted->body;
  const std::string id = json::parse(posted->body)["lead_id"];

  json lead;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = svc.get("/v1/leads/" + id, svc.operator_key());
    // Answered 202 before the worker recorded it: the lead reads 404 until then (docs/api.md).
    if (r->status == 404) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    ASSERT_EQ(r->status, 200) << r->body;
    lead = json::parse(r->body);
    if (r->body.find("\"failed\"") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const std::string text = lead.dump();
  ASSERT_NE(text.find("\"failed\""), std::string::npos) << text;
  // Its posts: to whom, when, at what price.
  std::vector<json> posts;
  const std::function<void(const json&)> collect = [&](const json& j) {
    if (j.is_object()) {
      if (j.contains("attempts") && j["attempts"].is_array())
        for (const auto& a : j["attempts"])
          if (a.value("kind", "") == "post") posts.push_back(a);
      for (const auto& [k, v] : j.items()) collect(v);
    } else if (j.is_array()) {
      for (const auto& v : j) collect(v);
    }
  };
  collect(lead);
  ASSERT_FALSE(posts.empty()) << text;
  for (const auto& p : posts) {
    EXPECT_EQ(p["buyer_id"], buyer) << p;
    EXPECT_EQ(p["bid"], 20.0) << p;
    EXPECT_TRUE(p["started_at"].is_string()) << p;
    EXPECT_EQ(p["outcome"], "timeout") << p;
  }
}

}  // namespace
}  // namespace leadflow::testing
