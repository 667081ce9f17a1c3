#pragma once
// A vertical's re-offer policy set live by the operator (docs/reoffers.md), end to end over real
// HTTPS with simulated buyers, on whichever store the ServiceFixture was given: reoffers_test
// runs it on a SQLite file, pg_reoffers_test on PostgreSQL.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "reoffer_checks.hpp"

namespace leadflow::testing {

/// solar offers nothing again by its configuration and auto_insurance after 1 s and 2 s
/// (reoffering_vertical). The operator gives solar a policy of 1 s and auto_insurance one of
/// none: the leads decided after the workers' cache took the change follow them, a lead decided
/// before keeps its schedule (none); reset, auto_insurance is back to its configured policy.
/// Refusals: a bad policy (400 naming its member), no such vertical (404), a seller or a buyer
/// (403). Each party reads the policy in force; only the operator where it comes from. Each
/// change is in the change log.
inline void check_vertical_policy_set_live(ServiceFixture& svc) {
  auto aged = start_buyer("aged", 9.00);
  aged->set_no_bid_rate(1.0);  // bids nothing live; buys aged at its aged price, without a ping
  const std::string aged_id =
      svc.add_buyer(*aged, "auto_insurance",
                    {{"verticals", {"auto_insurance", "solar"}},
                     {"accepts_aged", true},
                     {"pricing", {{"model", "bid"}, {"aged_price", 3.00}}}});
  const std::string buyer_key = svc.add_api_key({{"name", "aged"}, {"buyer_id", aged_id}});
  const std::string seller_key =
      svc.add_api_key({{"name", "seller"}, {"seller_id", svc.add_seller("Live Policies")}});
  const auto put = [&](const std::string& vertical, const json& body, const std::string& key) {
    return svc.https()->Put("/v1/verticals/" + vertical + "/reoffer",
                            {{"Authorization", "Bearer " + key}}, body.dump(), "application/json");
  };
  const auto reset = [&](const std::string& vertical, const std::string& key) {
    return svc.https()->Delete("/v1/verticals/" + vertical + "/reoffer",
                               {{"Authorization", "Bearer " + key}});
  };
  const auto view = [&](const std::string& vertical, const std::string& key) {
    const auto r = svc.get("/v1/verticals/" + vertical, key);
    EXPECT_EQ(r->status, 200) << r->body;
    return reoffer_body_of(r)["data"];
  };
  const auto unsold_lead = [&](int salt, const std::string& vertical) {
    auto r = svc.post("/v1/leads", sample_lead(salt, vertical), seller_key);
    EXPECT_EQ(r->status, 201) << r->body;
    EXPECT_EQ(reoffer_body_of(r)["distribution"]["delivery_status"], "unsold") << r->body;
    return reoffer_body_of(r)["lead_id"].get<std::string>();
  };

  // As configured; a solar lead decided now is final (its workers have read the policies).
  json solar = view("solar", svc.operator_key());
  EXPECT_TRUE(solar["reoffer"].is_null()) << solar.dump();
  EXPECT_EQ(solar["reoffer_source"], "configured") << solar.dump();
  const std::string before = unsold_lead(41, "solar");
  EXPECT_EQ(svc.app().store().scheduled_reoffer(before).status, StoreStatus::kNotFound);

  // Refused, nothing changed.
  const auto bad =
      put("solar", {{"reoffer", {{"delays_seconds", {7200, 60}}}}}, svc.operator_key());
  ASSERT_EQ(bad->status, 400) << bad->body;
  EXPECT_EQ(reoffer_body_of(bad)["errors"][0]["field"], "reoffer.delays_seconds") << bad->body;
  EXPECT_EQ(put("solar", {{"reoffer", 5}}, svc.operator_key())->status, 400);
  EXPECT_EQ(put("solar", {{"delays_seconds", {60}}}, svc.operator_key())->status, 400);
  EXPECT_EQ(put("no_such", {{"reoffer", {{"delays_seconds", {60}}}}}, svc.operator_key())->status,
            404);
  const json one_second = json::parse(R"({"delays_seconds": [1], "window_hours": 1})");
  for (const std::string& key : {seller_key, buyer_key}) {
    EXPECT_EQ(put("solar", {{"reoffer", one_second}}, key)->status, 403);
    EXPECT_EQ(reset("auto_insurance", key)->status, 403);
  }
  EXPECT_EQ(view("solar", svc.operator_key())["reoffer_source"], "configured");

  // Set: solar 1 s, auto_insurance none.
  const auto set = put("solar", {{"reoffer", one_second}}, svc.operator_key());
  ASSERT_EQ(set->status, 200) << set->body;
  solar = reoffer_body_of(set)["data"];
  EXPECT_EQ(solar["reoffer"], one_second) << solar.dump();
  EXPECT_EQ(solar["reoffer_source"], "operator") << solar.dump();
  EXPECT_TRUE(solar["configured_reoffer"].is_null()) << solar.dump();
  EXPECT_TRUE(solar["reoffer_set_at"].is_string()) << solar.dump();
  const auto none =
      put("auto_insurance", {{"reoffer", {{"delays_seconds", json::array()}}}}, svc.operator_key());
  ASSERT_EQ(none->status, 200) << none->body;
  EXPECT_EQ(reoffer_body_of(none)["data"]["reoffer"], nullptr) << none->body;
  EXPECT_EQ(reoffer_body_of(none)["data"]["configured_reoffer"]["delays_seconds"], json({1, 2}));
  // Each party reads the policy in force; where it comes from is the operator's.
  for (const std::string& key : {seller_key, buyer_key}) {
    const json seen = view("solar", key);
    EXPECT_EQ(seen["reoffer"], one_second) << seen.dump();
    EXPECT_FALSE(seen.contains("reoffer_source") || seen.contains("configured_reoffer") ||
                 seen.contains("reoffer_set_at"))
        << seen.dump();
  }
  // And so does the open field specification, with no key at all.
  const auto open = svc.https()->Get("/api/v1/fields/solar");
  ASSERT_TRUE(open);
  EXPECT_EQ(open->status, 200) << open->body;
  EXPECT_EQ(json::parse(open->body)["reoffer"], one_second) << open->body;
  EXPECT_FALSE(json::parse(open->body).contains("reoffer_source")) << open->body;
  bool listed = false;
  const json all = reoffer_body_of(svc.get("/v1/verticals", svc.operator_key()))["data"];
  for (const json& v : all)
    if (v["vertical"] == "solar") listed = v["reoffer_source"] == "operator";
  EXPECT_TRUE(listed);

  // The workers take it within their cache's 5 s: the leads decided after follow it.
  std::this_thread::sleep_for(std::chrono::milliseconds(5200));
  const std::string after = unsold_lead(42, "solar");
  const std::string kept = unsold_lead(43, "auto_insurance");
  const json sold = lead_when(svc, after, [](const json& l) { return l["status"] == "delivered"; });
  EXPECT_EQ(sold["status"], "delivered") << sold.dump();
  EXPECT_EQ(sold["distribution"]["price"], 3.0) << sold.dump();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // past auto_insurance's 2 s
  EXPECT_EQ(svc.app().store().scheduled_reoffer(kept).status, StoreStatus::kNotFound);
  const json still = reoffer_body_of(svc.get("/v1/leads/" + kept, svc.operator_key()))["data"];
  EXPECT_EQ(still["status"], "unsold") << still.dump();
  // The solar lead decided before the change keeps what was written then: no schedule.
  EXPECT_EQ(svc.app().store().scheduled_reoffer(before).status, StoreStatus::kNotFound);
  EXPECT_EQ(aged->posts().size(), 1u) << "only the solar lead decided after the change";

  // Reset: back to the configured policy (twice: the second changes nothing).
  const auto back = reset("auto_insurance", svc.operator_key());
  ASSERT_EQ(back->status, 200) << back->body;
  const json configured = reoffer_body_of(back)["data"];
  EXPECT_EQ(configured["reoffer_source"], "configured") << configured.dump();
  EXPECT_EQ(configured["reoffer"]["delays_seconds"], json({1, 2})) << configured.dump();
  EXPECT_EQ(reset("auto_insurance", svc.operator_key())->status, 200);
  EXPECT_EQ(view("auto_insurance", svc.operator_key())["reoffer_source"], "configured");
  std::this_thread::sleep_for(std::chrono::milliseconds(5200));
  const std::string again = unsold_lead(44, "auto_insurance");
  EXPECT_EQ(
      lead_when(svc, again, [](const json& l) { return l["status"] == "delivered"; })["status"],
      "delivered");

  // The change log: three changes of verticals (solar set, auto_insurance set and reset).
  const auto log = svc.get("/v1/audit?object_kind=vertical", svc.operator_key());
  ASSERT_EQ(log->status, 200) << log->body;
  const json entries = reoffer_body_of(log)["data"];
  ASSERT_EQ(entries.size(), 3u) << log->body;
  EXPECT_EQ(entries[0]["action"], "reset") << log->body;  // newest first
  EXPECT_EQ(entries[0]["object"]["id"], "auto_insurance") << log->body;
  EXPECT_EQ(entries[2]["action"], "updated") << log->body;
  EXPECT_EQ(entries[2]["object"]["id"], "solar") << log->body;
  // Each member of the policy from what to what, and where it comes from.
  bool says_policy = false;
  for (const json& c : entries[2]["changes"])
    says_policy = says_policy || (c["field"] == "reoffer.delays_seconds" &&
                                  c["after"] == json({1}) && c["before"].is_null());
  EXPECT_TRUE(says_policy) << entries[2].dump();
  EXPECT_EQ(svc.get("/v1/audit?object_kind=vertical", seller_key)->status, 403);
}

/// A vertical's setting changed only at the version it was read (docs/versions.md): the
/// operator's GET names it in an ETag ("v0" never set; no ETag for a seller), PUT and DELETE
/// honour If-Match (412 naming the current version, nothing changed), and a reset moves the
/// version, so a change read before a reset and a new setting is refused rather than written
/// over the new one. Nothing refused is in the change log.
inline void check_vertical_policy_versions(ServiceFixture& svc) {
  const std::string seller_key =
      svc.add_api_key({{"name", "seller"}, {"seller_id", svc.add_seller("Versions")}});
  const std::string op = "Bearer " + svc.operator_key();
  const auto put = [&](const json& body, const std::string& if_match) {
    httplib::Headers h{{"Authorization", op}};
    if (!if_match.empty()) h.emplace("If-Match", if_match);
    return svc.https()->Put("/v1/verticals/legal/reoffer", h, body.dump(), "application/json");
  };
  const auto reset = [&](const std::string& if_match) {
    return svc.https()->Delete("/v1/verticals/legal/reoffer",
                               {{"Authorization", op}, {"If-Match", if_match}});
  };
  const json minute = {{"reoffer", {{"delays_seconds", {60}}}}};
  const json hour = {{"reoffer", {{"delays_seconds", {3600}}}}};

  const auto read = svc.get("/v1/verticals/legal", svc.operator_key());
  ASSERT_EQ(read->status, 200) << read->body;
  EXPECT_EQ(read->get_header_value("ETag"), "\"v0\"");
  EXPECT_EQ(reoffer_body_of(read)["data"]["reoffer_version"], 0);
  const auto seen = svc.get("/v1/verticals/legal", seller_key);
  EXPECT_FALSE(seen->has_header("ETag")) << "the setting's version is the operator's";
  EXPECT_FALSE(reoffer_body_of(seen)["data"].contains("reoffer_version")) << seen->body;

  const auto set = put(minute, "\"v0\"");
  ASSERT_EQ(set->status, 200) << set->body;
  EXPECT_EQ(set->get_header_value("ETag"), "\"v1\"");
  EXPECT_EQ(reoffer_body_of(set)["data"]["reoffer_version"], 1);

  const auto stale = put(hour, "\"v0\"");  // read before the set above
  ASSERT_EQ(stale->status, 412) << stale->body;
  EXPECT_EQ(stale->get_header_value("ETag"), "\"v1\"");
  EXPECT_EQ(reoffer_body_of(stale)["etag"], "\"v1\"") << stale->body;
  EXPECT_EQ(reset("\"v0\"")->status, 412);
  EXPECT_EQ(reset("W/\"v1\"")->status, 412) << "a weak tag matches nothing";
  json now = reoffer_body_of(svc.get("/v1/verticals/legal", svc.operator_key()))["data"];
  EXPECT_EQ(now["reoffer"]["delays_seconds"], json({60})) << now.dump();

  const auto back = reset("\"v1\"");
  ASSERT_EQ(back->status, 200) << back->body;
  EXPECT_EQ(back->get_header_value("ETag"), "\"v2\"");
  EXPECT_EQ(reoffer_body_of(back)["data"]["reoffer_source"], "configured");
  const auto after_reset = put(hour, "\"v1\"");  // read while the minute was in force
  EXPECT_EQ(after_reset->status, 412) << after_reset->body;
  const auto any = put(hour, "");  // a client that sends no If-Match: any version
  ASSERT_EQ(any->status, 200) << any->body;
  EXPECT_EQ(any->get_header_value("ETag"), "\"v3\"");
  now = reoffer_body_of(svc.get("/v1/verticals/legal", svc.operator_key()))["data"];
  EXPECT_EQ(now["reoffer"]["delays_seconds"], json({3600})) << now.dump();
  EXPECT_EQ(now["reoffer_version"], 3);

  const auto log = svc.get("/v1/audit?object_kind=vertical&q=legal", svc.operator_key());
  ASSERT_EQ(log->status, 200) << log->body;
  EXPECT_EQ(reoffer_body_of(log)["data"].size(), 3u) << "set, reset, set: " << log->body;
}

}  // namespace leadflow::testing
