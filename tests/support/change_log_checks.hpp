#pragma once
// The change log as the operator meets it, over real HTTPS: a buyer changed through the API is
// read back from GET /v1/audit with each field's before and after, and never a secret.
// Header-only checks, run by change_log_test on a SQLite file and by pg_change_log_test on
// PostgreSQL.
#include <gtest/gtest.h>

#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "service_fixture.hpp"

namespace leadflow::testing {

inline void check_buyer_change_in_log(ServiceFixture& svc) {
  using nlohmann::json;
  auto sim = start_buyer("Logged buyer", 2.0);
  const std::string id = svc.add_buyer(*sim);
  const std::string secret = "hdr-secret-value-qqxw-qqxw";
  auto changed = svc.https()->Put(("/v1/buyers/" + id).c_str(),
                                  {{"Authorization", "Bearer " + svc.operator_key()}},
                                  json{{"name", "Logged buyer renamed"},
                                       {"delivery",
                                        {{"mode", "ping_post"},
                                         {"ping_url", sim->ping_url()},
                                         {"post_url", sim->post_url()},
                                         {"timeout_ms", 1500},
                                         {"headers", {{"Authorization", secret}}}}}}
                                      .dump(),
                                  "application/json");
  ASSERT_EQ(changed->status, 200) << changed->body;

  auto read = svc.get("/v1/audit?object_kind=buyer&q=LOGGED%20buyer", svc.operator_key());
  ASSERT_EQ(read->status, 200) << read->body;
  EXPECT_EQ(read->body.find(secret), std::string::npos) << "a secret in the change log";
  EXPECT_EQ(read->body.find("qqxw"), std::string::npos) << "a part of a secret in the log";
  const json body = json::parse(read->body);
  const json data = body["data"];
  ASSERT_EQ(data.size(), 2u) << read->body;
  EXPECT_EQ(body["has_more"], false);
  const json& update = data[0];
  EXPECT_EQ(update["action"], "updated");
  EXPECT_EQ(update["object"]["kind"], "buyer");
  EXPECT_EQ(update["object"]["id"], id);
  EXPECT_EQ(update["object"]["name"], "Logged buyer renamed");
  EXPECT_EQ(update["actor"]["name"], "bootstrap");  // the operator key of the service
  EXPECT_EQ(update["actor"]["surface"], "api");
  json by_field = json::object();
  for (const auto& c : update["changes"]) by_field[c["field"].get<std::string>()] = c;
  EXPECT_EQ(by_field["name"]["before"], "Logged buyer");
  EXPECT_EQ(by_field["name"]["after"], "Logged buyer renamed");
  EXPECT_EQ(by_field["delivery.timeout_ms"]["before"], 1000);
  EXPECT_EQ(by_field["delivery.timeout_ms"]["after"], 1500);
  EXPECT_TRUE(by_field["delivery.headers.Authorization"]["before"].is_null());
  EXPECT_EQ(by_field["delivery.headers.Authorization"]["after"], "(secret)");
  EXPECT_EQ(data[1]["action"], "created");

  // Paged: one at a time, the cursor leads to the creation.
  auto first = svc.get("/v1/audit?object_kind=buyer&limit=1&q=" + id, svc.operator_key());
  ASSERT_EQ(first->status, 200) << first->body;
  const json one = json::parse(first->body);
  ASSERT_EQ(one["has_more"], true);
  auto second = svc.get("/v1/audit?object_kind=buyer&limit=1&q=" + id +
                            "&cursor=" + one["next_cursor"].get<std::string>(),
                        svc.operator_key());
  ASSERT_EQ(second->status, 200) << second->body;
  EXPECT_EQ(json::parse(second->body)["data"][0]["action"], "created");

  // The operator's alone; a bad filter is named.
  const std::string seller_key =
      svc.add_api_key({{"name", "a seller"}, {"seller_id", svc.add_seller()}});
  EXPECT_EQ(svc.get("/v1/audit", seller_key)->status, 403);
  auto bad = svc.get("/v1/audit?object_kind=invoice", svc.operator_key());
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("object_kind"), std::string::npos) << bad->body;
}

}  // namespace leadflow::testing
