#pragma once
// Suppression lists in the change log (docs/suppression.md, "In the change log"): the operator's
// list and a buyer's own, each made, replaced and deleted through the API, read back from
// GET /v1/audit as the operator reads it: the list's id and name, the action, how many entries,
// who did it (a buyer's key said to act for the buyer), never an entry. A refused upload writes
// nothing; a buyer and a seller read no change log. Header-only checks, run by suppression_test
// on a SQLite file and by pg_suppression_test on PostgreSQL.
#include <gtest/gtest.h>

#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "service_fixture.hpp"

namespace leadflow::testing {

inline void check_suppression_change_log(ServiceFixture& svc) {
  using nlohmann::json;
  auto buyer = start_buyer("Listing buyer", 5.0);
  const std::string buyer_id = svc.add_buyer(*buyer);
  const std::string buyer_key = svc.add_api_key({{"name", "crm sync"}, {"buyer_id", buyer_id}});
  const std::string seller = svc.add_seller();
  const std::string seller_key = svc.add_api_key({{"name", "seller"}, {"seller_id", seller}});
  const std::string op = svc.operator_key();
  auto cli = svc.https();
  const auto auth = [](const std::string& key) {
    return httplib::Headers{{"Authorization", "Bearer " + key}};
  };
  const auto put = [&](const std::string& id, const std::string& csv, const std::string& key) {
    return cli->Put("/v1/suppression-lists/" + id + "/entries", auth(key), csv, "text/csv");
  };
  const auto make = [&](const std::string& name, const std::string& key) {
    auto r = svc.post("/v1/suppression-lists", {{"name", name}}, key);
    EXPECT_EQ(r->status, 201) << r->body;
    return json::parse(r->body)["data"]["list_id"].get<std::string>();
  };

  // The operator's list: made, filled with three e-mails, refused a bad line, deleted.
  const std::string dnc = make("Do not contact", op);
  ASSERT_EQ(put(dnc, "secret.one@example.com\nsecret.two@example.com\n+12125550199\n", op)->status,
            200);
  ASSERT_EQ(put(dnc, "email\nnot an entry\n", op)->status, 422);  // refused: no entry
  ASSERT_EQ(cli->Delete("/v1/suppression-lists/" + dnc, auth(op))->status, 204);
  // The buyer's own, with its key: made, filled with a SHA-256 and an e-mail, replaced by one.
  const std::string own = make("Customers", buyer_key);
  ASSERT_EQ(put(own, std::string(64, 'a') + "\nhidden.customer@example.com\n", buyer_key)->status,
            200);
  ASSERT_EQ(put(own, "hidden.customer@example.com\n", buyer_key)->status, 200);

  auto log = svc.get("/v1/audit?object_kind=suppression_list", op);
  ASSERT_EQ(log->status, 200) << log->body;
  const json entries = json::parse(log->body)["data"];
  ASSERT_EQ(entries.size(), 6u) << entries.dump(2);
  // Newest first: the buyer's three, then the operator's three.
  const auto field = [](const json& entry, const std::string& name) {
    for (const json& c : entry["changes"])
      if (c["field"] == name) return c;
    return json();
  };
  const struct {
    std::string action, id, name;
    json entries_before, entries_after;
    bool by_buyer;
  } expected[] = {
      {"replaced", own, "Customers", 2, 1, true},
      {"replaced", own, "Customers", 0, 2, true},
      {"created", own, "Customers", nullptr, 0, true},
      {"deleted", dnc, "Do not contact", 3, nullptr, false},
      {"replaced", dnc, "Do not contact", 0, 3, false},
      {"created", dnc, "Do not contact", nullptr, 0, false},
  };
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const json& e = entries[i];
    SCOPED_TRACE(e.dump());
    EXPECT_EQ(e["action"], expected[i].action);
    EXPECT_EQ(e["object"]["kind"], "suppression_list");
    EXPECT_EQ(e["object"]["id"], expected[i].id);
    EXPECT_EQ(e["object"]["name"], expected[i].name);
    EXPECT_EQ(field(e, "entries")["before"], expected[i].entries_before);
    EXPECT_EQ(field(e, "entries")["after"], expected[i].entries_after);
    EXPECT_EQ(e["actor"]["surface"], "api");
    const std::string actor = e["actor"]["name"];
    if (expected[i].by_buyer) {
      EXPECT_NE(actor.find("(buyer " + buyer_id + ")"), std::string::npos);
    } else {
      EXPECT_EQ(actor.find("(buyer"), std::string::npos);
    }
  }
  // Whose list it is, on its creation: the buyer's id, or the operator's.
  EXPECT_EQ(field(entries[2], "buyer_id")["after"], buyer_id);
  EXPECT_EQ(field(entries[5], "buyer_id")["after"], "operator");
  EXPECT_EQ(field(entries[5], "name")["after"], "Do not contact");
  // A replacement says when; a deletion what the list was.
  EXPECT_TRUE(field(entries[1], "uploaded_at")["before"].is_null());
  EXPECT_TRUE(field(entries[1], "uploaded_at")["after"].is_string());
  EXPECT_EQ(field(entries[3], "name")["before"], "Do not contact");
  EXPECT_TRUE(field(entries[3], "name")["after"].is_null());
  // Never an entry, clear or hashed.
  for (const char* value :
       {"secret.one", "secret.two", "2125550199", "hidden.customer", "aaaaaaaa"})
    EXPECT_EQ(log->body.find(value), std::string::npos) << value;
  // Found by the list's name in the log's search, as any record.
  auto found = svc.get("/v1/audit?q=customers", op);
  ASSERT_EQ(found->status, 200) << found->body;
  EXPECT_EQ(json::parse(found->body)["data"].size(), 3u) << found->body;

  // The change log is the operator's: the buyer whose list it is and a seller read none of it.
  EXPECT_EQ(svc.get("/v1/audit", buyer_key)->status, 403);
  EXPECT_EQ(svc.get("/v1/audit?object_kind=suppression_list", seller_key)->status, 403);
}

}  // namespace leadflow::testing
