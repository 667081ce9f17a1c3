#pragma once
// Suppression lists as sellers and buyers meet them, over real HTTPS against buyer simulators:
// a lead on the operator's list is refused at intake on both surfaces (422, nothing queued), a
// lead on a buyer's list is never offered to that buyer (another buyer gets it; the lead names
// the buyer `suppressed`), and a list replaced or deleted applies within seconds. The lists are
// made as leadflow-admin makes them (management's rules, the store's port). Header-only checks,
// run by suppression_test on a SQLite file and by pg_suppression_test on PostgreSQL.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "leadflow/base/crypto.hpp"
#include "leadflow/management/suppression_lists.hpp"
#include "leadflow/store/store.hpp"
#include "leadflow/validation/validation.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {

// A list made and filled as `leadflow-admin create-suppression-list` and
// `import-suppression-list` do; its id.
inline std::string make_suppression_list(Store& store, const std::string& name,
                                         const std::string& buyer_id, std::string_view csv) {
  nlohmann::json body = {{"name", name}};
  if (!buyer_id.empty()) body["buyer_id"] = buyer_id;
  NewSuppressionList made = suppression_list_from_json(body, store, 1'700'000'000'000);
  EXPECT_TRUE(made.errors.empty());
  EXPECT_EQ(store.create_suppression_list(made.list), StoreStatus::kOk);
  SuppressionUpload upload;
  upload.add(csv);
  upload.finish();
  EXPECT_EQ(upload.rejected(), 0u);
  EXPECT_EQ(store.replace_suppression_entries(made.list.id, upload.take_sorted(), 1),
            StoreStatus::kOk);
  return made.list.id;
}

// Waits (up to 10 s) for the service to hold `entries` entries of suppression lists: it reads
// them every second.
inline bool wait_for_suppression_entries(ServiceFixture& svc, int entries) {
  const std::string line = "leadflow_suppression_entries " + std::to_string(entries) + "\n";
  for (int i = 0; i < 50; ++i) {
    if (svc.get("/metrics", svc.operator_key())->body.find(line) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

inline void check_suppression_lists(ServiceFixture& svc) {
  using nlohmann::json;
  Store& store = svc.app().store();
  auto rich = start_buyer("Rich buyer", 9.0);
  auto modest = start_buyer("Modest buyer", 4.0);
  const std::string rich_id = svc.add_buyer(*rich);
  const std::string modest_id = svc.add_buyer(*modest);
  const std::string seller = svc.add_seller();
  const std::string key = svc.add_api_key({{"name", "seller"}, {"seller_id", seller}});
  const auto [campaign_id, campaign_key] = svc.add_campaign(seller);

  // The operator's list: one phone written as people write it, one e-mail as its SHA-256.
  const json listed_by_phone = sample_lead(9101);
  const json listed_by_email = sample_lead(9102);
  const std::string email_hash =
      sha256_hex(normalize_email(listed_by_email["email"].get<std::string>()));
  make_suppression_list(
      store, "Do not contact", "",
      "entry\n\"" + listed_by_phone["phone"].get<std::string>() + "\"\n" + email_hash + "\n");
  // The rich buyer's customers: one e-mail, in capitals.
  const json customer = sample_lead(9103);
  std::string upper = customer["email"].get<std::string>();
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  make_suppression_list(store, "Customers", rich_id, upper + ",a note\n");

  // Refused at intake, naming the field, once the lists are read (within a second or two).
  ASSERT_TRUE(wait_for_suppression_entries(svc, 3));
  auto refused = svc.post("/v1/leads", listed_by_phone, key);
  ASSERT_EQ(refused->status, 422) << refused->body;
  const json problem = json::parse(refused->body);
  EXPECT_EQ(problem["errors"][0]["field"], "phone") << refused->body;
  EXPECT_EQ(problem["errors"][0]["code"], "suppressed");
  auto by_hash = svc.post("/v1/leads", listed_by_email, key);
  ASSERT_EQ(by_hash->status, 422) << by_hash->body;
  EXPECT_EQ(json::parse(by_hash->body)["errors"][0]["field"], "email");
  // Surface B: the same person through a campaign.
  json b = sample_campaign_lead(1, campaign_key);
  b["phone_home"] = listed_by_phone["phone"];
  auto refused_b = svc.https()->Post("/api/v1/lead", b.dump(), "application/json");
  ASSERT_EQ(refused_b->status, 422) << refused_b->body;
  EXPECT_EQ(json::parse(refused_b->body)["status"], "suppressed");
  EXPECT_EQ(rich->stats().pings + modest->stats().pings, 0u) << "a refused lead was offered";
  auto m = svc.get("/metrics", svc.operator_key());
  EXPECT_NE(m->body.find("leadflow_leads_received_total{result=\"suppressed\",surface=\"api\"} 2"),
            std::string::npos);

  // The rich buyer never gets its own customer: the modest buyer buys the lead.
  auto sold = svc.post("/v1/leads", customer, key);
  ASSERT_EQ(sold->status, 201) << sold->body;
  const std::string lead_id = json::parse(sold->body)["lead_id"];
  const json lead = json::parse(svc.get("/v1/leads/" + lead_id, svc.operator_key())->body)["data"];
  EXPECT_EQ(lead["distribution"]["buyer_id"], modest_id) << lead.dump();
  bool suppressed = false;
  for (const auto& i : lead["ineligible_buyers"])
    suppressed = suppressed || (i["buyer_id"] == rich_id && i["reason"] == "suppressed");
  EXPECT_TRUE(suppressed) << lead.dump();
  EXPECT_EQ(rich->stats().pings, 0u);
  // The seller reads why in its words, never the buyer.
  const json seen = json::parse(svc.get("/v1/leads/" + lead_id, key)->body)["data"];
  EXPECT_EQ(seen.dump().find(rich_id), std::string::npos) << seen.dump();

  // Anyone else goes to the rich buyer.
  auto other = svc.post("/v1/leads", sample_lead(9104), key);
  ASSERT_EQ(other->status, 201) << other->body;
  EXPECT_EQ(rich->stats().posts, 1u) << other->body;

  // Its list replaced by another person's, in one step: that person is kept from it now.
  const json next_customer = sample_lead(9105);
  const auto lists = store.list_suppression_lists(rich_id);
  ASSERT_TRUE(lists && lists->size() == 1u);
  // Two entries now (the e-mail and the phone), so the service's count says when it read them.
  SuppressionUpload upload;
  upload.add(next_customer["email"].get<std::string>() + "\n" +
             next_customer["phone"].get<std::string>() + "\n");
  upload.finish();
  ASSERT_EQ(store.replace_suppression_entries(lists->front().id, upload.take_sorted(), 2),
            StoreStatus::kOk);
  ASSERT_TRUE(wait_for_suppression_entries(svc, 4));
  const auto rich_posts = rich->stats().posts, modest_posts = modest->stats().posts;
  auto kept = svc.post("/v1/leads", next_customer, key);
  ASSERT_EQ(kept->status, 201) << kept->body;
  EXPECT_EQ(rich->stats().posts, rich_posts) << "the replaced list let its customer through";
  EXPECT_GT(modest->stats().posts, modest_posts);
}

// The lists' routes as each party meets them: the operator makes a list and uploads a CSV, and a
// lead on it is refused; a buyer uploads its customers as SHA-256 with its own key, and the next
// lead of one of them is kept from it (`suppressed` as the operator reads the lead); a seller is
// refused every route, a buyer reads none but its own; bad lines are named, a body past the
// front's 64 KiB is an upload's alone, and a list deleted is gone.
inline void check_suppression_routes(ServiceFixture& svc) {
  using nlohmann::json;
  auto rich = start_buyer("Rich buyer", 9.0);
  auto modest = start_buyer("Modest buyer", 4.0);
  const std::string rich_id = svc.add_buyer(*rich);
  const std::string modest_id = svc.add_buyer(*modest);
  const std::string seller = svc.add_seller();
  const std::string seller_key = svc.add_api_key({{"name", "seller"}, {"seller_id", seller}});
  const std::string rich_key = svc.add_api_key({{"name", "rich"}, {"buyer_id", rich_id}});
  const std::string modest_key = svc.add_api_key({{"name", "modest"}, {"buyer_id", modest_id}});
  const std::string op = svc.operator_key();
  auto cli = svc.https();
  const auto auth = [](const std::string& key) {
    return httplib::Headers{{"Authorization", "Bearer " + key}};
  };
  const auto put = [&](const std::string& id, const std::string& csv, const std::string& key) {
    return cli->Put("/v1/suppression-lists/" + id + "/entries", auth(key), csv, "text/csv");
  };

  // The operator's list, made and filled through the API.
  auto made = svc.post("/v1/suppression-lists", {{"name", "Do not contact"}}, op);
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string dnc = json::parse(made->body)["data"]["list_id"];
  const json listed = sample_lead(9201);
  auto filled = put(dnc, "email,reason\n" + listed["email"].get<std::string>() + ",asked\n", op);
  ASSERT_EQ(filled->status, 200) << filled->body;
  EXPECT_EQ(json::parse(filled->body)["data"]["entries"], 1);
  ASSERT_TRUE(wait_for_suppression_entries(svc, 1));
  auto refused = svc.post("/v1/leads", listed, seller_key);
  ASSERT_EQ(refused->status, 422) << refused->body;
  EXPECT_EQ(json::parse(refused->body)["errors"][0]["code"], "suppressed");

  // The rich buyer's customers, hashed, with its own key.
  const json customer = sample_lead(9202);
  auto own = svc.post("/v1/suppression-lists", {{"name", "Customers"}}, rich_key);
  ASSERT_EQ(own->status, 201) << own->body;
  const std::string customers = json::parse(own->body)["data"]["list_id"];
  EXPECT_EQ(json::parse(own->body)["data"]["buyer_id"], rich_id);
  const std::string hashed = sha256_hex(normalize_email(customer["email"].get<std::string>()));
  auto hashed_up = put(customers, hashed + "\n", rich_key);
  ASSERT_EQ(hashed_up->status, 200) << hashed_up->body;
  ASSERT_TRUE(wait_for_suppression_entries(svc, 2));
  auto sold = svc.post("/v1/leads", customer, seller_key);
  ASSERT_EQ(sold->status, 201) << sold->body;
  const std::string lead_id = json::parse(sold->body)["lead_id"];
  const json lead = json::parse(svc.get("/v1/leads/" + lead_id, op)->body)["data"];
  EXPECT_EQ(lead["distribution"]["buyer_id"], modest_id) << lead.dump();
  bool suppressed = false;
  for (const auto& i : lead["ineligible_buyers"])
    suppressed = suppressed || (i["buyer_id"] == rich_id && i["reason"] == "suppressed");
  EXPECT_TRUE(suppressed) << lead.dump();
  EXPECT_EQ(rich->stats().pings, 0u);

  // A seller is refused every route, and learns nothing of the lists.
  std::vector<httplib::Result> seller_tries;
  seller_tries.push_back(svc.get("/v1/suppression-lists", seller_key));
  seller_tries.push_back(svc.get("/v1/suppression-lists/" + dnc, seller_key));
  seller_tries.push_back(svc.post("/v1/suppression-lists", {{"name", "x"}}, seller_key));
  seller_tries.push_back(put(dnc, "a@example.com\n", seller_key));
  seller_tries.push_back(cli->Delete("/v1/suppression-lists/" + customers, auth(seller_key)));
  for (const auto& r : seller_tries) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << r->body;
    EXPECT_EQ(r->body.find("sup_"), std::string::npos) << r->body;
  }
  // The modest buyer sees none of the others' lists, nor can it touch them.
  const json modest_sees = json::parse(svc.get("/v1/suppression-lists", modest_key)->body);
  EXPECT_EQ(modest_sees["data"], json::array()) << modest_sees.dump();
  for (const std::string& id : {dnc, customers}) {
    EXPECT_EQ(svc.get("/v1/suppression-lists/" + id, modest_key)->status, 404);
    EXPECT_EQ(put(id, "a@example.com\n", modest_key)->status, 404);
    EXPECT_EQ(cli->Delete("/v1/suppression-lists/" + id, auth(modest_key))->status, 404);
  }
  EXPECT_EQ(
      svc.post("/v1/suppression-lists", {{"name", "x"}, {"buyer_id", rich_id}}, modest_key)->status,
      403);
  // The rich buyer reads its own list only; the operator reads both.
  const json rich_sees = json::parse(svc.get("/v1/suppression-lists", rich_key)->body)["data"];
  ASSERT_EQ(rich_sees.size(), 1u) << rich_sees.dump();
  EXPECT_EQ(rich_sees[0]["list_id"], customers);
  EXPECT_EQ(rich_sees[0]["entries"], 1);
  EXPECT_EQ(json::parse(svc.get("/v1/suppression-lists", op)->body)["data"].size(), 2u);

  // Bad lines are named, and nothing is replaced.
  auto bad = put(dnc, "email\nok@example.com\nnot an entry\n", op);
  ASSERT_EQ(bad->status, 422) << bad->body;
  EXPECT_EQ(json::parse(bad->body)["rejected_lines"], json({3}));
  EXPECT_NE(bad->body.find("line 3"), std::string::npos) << bad->body;
  EXPECT_EQ(json::parse(svc.get("/v1/suppression-lists/" + dnc, op)->body)["data"]["entries"], 1);
  EXPECT_EQ(
      cli->Put("/v1/suppression-lists/" + dnc + "/entries", auth(op), "{}", "application/json")
          ->status,
      415);

  // An upload past the front's 64 KiB is taken (this route's alone); a lead that size is not.
  std::string big = "email\n";
  for (int i = 0; i < 6000; ++i) big += "person." + std::to_string(i) + "@big-list.example\n";
  ASSERT_GT(big.size(), 64u * 1024);
  auto replaced = put(dnc, big, op);
  ASSERT_EQ(replaced->status, 200) << replaced->body;
  EXPECT_EQ(json::parse(replaced->body)["data"]["entries"], 6000);
  json huge = sample_lead(9203);
  huge["notes"] = big;
  auto too_large = svc.post("/v1/leads", huge, seller_key);
  ASSERT_TRUE(too_large);
  EXPECT_EQ(too_large->status, 413);
  // The list was replaced in one step: the person listed before is let through again.
  ASSERT_TRUE(wait_for_suppression_entries(svc, 6001));
  EXPECT_EQ(svc.post("/v1/leads", listed, seller_key)->status, 201);

  // Deleted: gone for its buyer and from the lookups.
  EXPECT_EQ(cli->Delete("/v1/suppression-lists/" + customers, auth(rich_key))->status, 204);
  EXPECT_EQ(svc.get("/v1/suppression-lists/" + customers, op)->status, 404);
  ASSERT_TRUE(wait_for_suppression_entries(svc, 6000));
}

}  // namespace leadflow::testing
