// The postback endpoints' routes over real HTTPS on the embedded service, with its own sender:
// a seller manages its own endpoints and nobody else's, a buyer none, the operator every
// seller's; the secret is shown once; URLs and events are checked; a lead sold reaches the
// seller's receiver signed, its delivery log says so, and a replay sends it again.
#include <gtest/gtest.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "postback_receiver.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

class PostbackApiTest : public ::testing::Test {
 protected:
  PostbackApiTest() : receiver_(receiver_dir_.path()), svc_(options()) {}

  ServiceOptions options() const {
    ServiceOptions o;
    o.buyer_ca_file = receiver_.cert_file();
    return o;
  }

  json call(const char* method, const std::string& path, const std::string& key, const json& body,
            int expect) {
    auto c = svc_.https();
    const httplib::Headers auth = {{"Authorization", "Bearer " + key}};
    httplib::Result r = std::string(method) == "GET"      ? c->Get(path, auth)
                        : std::string(method) == "DELETE" ? c->Delete(path, auth)
                        : std::string(method) == "PATCH"
                            ? c->Patch(path, auth, body.dump(), "application/json")
                            : c->Post(path, auth, body.dump(), "application/json");
    EXPECT_TRUE(r) << method << " " << path;
    if (!r) return nullptr;
    EXPECT_EQ(r->status, expect) << method << " " << path << ": " << r->body;
    return r->body.empty() ? json(nullptr) : json::parse(r->body);
  }

  TempDir receiver_dir_;
  PostbackReceiver receiver_;
  ServiceFixture svc_;
};

TEST_F(PostbackApiTest, ASellerManagesItsOwnEndpointsAndIsToldOfItsLeadsSigned) {
  auto buyer = start_buyer("Buyer", 12.0);
  const std::string buyer_id = svc_.add_buyer(*buyer);
  const std::string acme = svc_.add_seller("Acme"), other = svc_.add_seller("Other");
  const std::string acme_key = svc_.add_api_key({{"name", "acme"}, {"seller_id", acme}});
  const std::string other_key = svc_.add_api_key({{"name", "other"}, {"seller_id", other}});
  const std::string buyer_key = svc_.add_api_key({{"name", "buyer"}, {"buyer_id", buyer_id}});
  const std::string ops = svc_.operator_key();

  // Refusals: a buyer, bad fields, another seller's campaign, the operator naming no seller.
  call("POST", "/v1/postback-endpoints", buyer_key,
       {{"url", receiver_.url("/acme")}, {"events", {"lead.sold"}}}, 403);
  json bad = call("POST", "/v1/postback-endpoints", acme_key,
                  {{"url", "ftp://x"}, {"events", {"lead.bought"}}, {"secret", "mine"}}, 400);
  std::set<std::string> fields;
  for (const auto& e : bad["errors"]) fields.insert(e["field"].get<std::string>());
  EXPECT_EQ(fields, (std::set<std::string>{"url", "events", "secret"}));
  const auto [other_campaign, unused] = svc_.add_campaign(other);
  call(
      "POST", "/v1/postback-endpoints", acme_key,
      {{"url", receiver_.url("/acme")}, {"events", {"lead.sold"}}, {"campaign_id", other_campaign}},
      400);
  call("POST", "/v1/postback-endpoints", ops,
       {{"url", receiver_.url("/acme")}, {"events", {"lead.sold"}}}, 400);

  // Made by the seller: its secret once.
  const json made = call(
      "POST", "/v1/postback-endpoints", acme_key,
      {{"url", receiver_.url("/acme")}, {"events", {"lead.sold", "lead.unsold"}}}, 201)["data"];
  const std::string id = made["id"];
  const std::string secret = made["secret"];
  EXPECT_TRUE(secret.starts_with("pbs_"));
  EXPECT_EQ(made["seller_id"], acme);
  EXPECT_EQ(made["events"], json({"lead.sold", "lead.unsold"}));
  receiver_.set("/acme", secret, PostbackReceiver::Mode::kOk);
  const json read = call("GET", "/v1/postback-endpoints/" + id, acme_key, nullptr, 200)["data"];
  EXPECT_FALSE(read.contains("secret")) << "shown once";
  EXPECT_EQ(call("GET", "/v1/postback-endpoints", acme_key, nullptr, 200)["data"].size(), 1u);
  EXPECT_EQ(call("GET", "/v1/postback-endpoints", other_key, nullptr, 200)["data"].size(), 0u);
  call("GET", "/v1/postback-endpoints/" + id, other_key, nullptr, 404);
  call("PATCH", "/v1/postback-endpoints/" + id, other_key, {{"active", false}}, 404);
  call("GET", "/v1/postback-endpoints/" + id, buyer_key, nullptr, 403);
  EXPECT_EQ(
      call("GET", "/v1/postback-endpoints?seller_id=" + acme, ops, nullptr, 200)["data"].size(),
      1u);
  EXPECT_EQ(call("PATCH", "/v1/postback-endpoints/" + id, acme_key,
                 {{"events", {"lead.sold", "lead.unsold", "lead.returned"}}}, 200)["data"]["events"]
                .size(),
            3u);

  // A lead of Acme's is sold: the receiver is told, signed, and the log says delivered.
  auto posted = svc_.post("/v1/leads", sample_lead(1), acme_key);
  ASSERT_TRUE(posted);
  const std::string lead_id = json::parse(posted->body)["lead_id"];
  ASSERT_TRUE(receiver_.wait_for([](const auto& got) { return !got.empty(); }));
  const auto first = receiver_.received().front();
  EXPECT_TRUE(first.signature_ok);
  EXPECT_EQ(first.body["type"], "lead.sold");
  EXPECT_EQ(first.body["data"]["lead_id"], lead_id);
  EXPECT_EQ(first.body.dump().find(buyer_id), std::string::npos);
  json log;
  for (int i = 0; i < 100; ++i) {
    log = call("GET", "/v1/postback-endpoints/" + id + "/deliveries", acme_key, nullptr, 200);
    if (log["data"].size() == 1 && log["data"][0]["state"] == "delivered") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(log["data"].size(), 1u);
  const json row = log["data"][0];
  EXPECT_EQ(row["state"], "delivered");
  EXPECT_EQ(row["event_id"], first.event_id);
  EXPECT_EQ(row["lead_id"], lead_id);
  EXPECT_EQ(row["last_status"], 200);
  const json attempts =
      call("GET", "/v1/postback-endpoints/" + id + "/deliveries/" + first.event_id + "/attempts",
           acme_key, nullptr, 200)["data"];
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0]["status"], 200);
  EXPECT_GT(attempts[0]["latency_ms"].get<double>(), 0);

  // Replayed: the same event again.
  call("POST", "/v1/postback-endpoints/" + id + "/deliveries/" + first.event_id + "/replay",
       acme_key, json::object(), 202);
  call("POST", "/v1/postback-endpoints/" + id + "/deliveries/evt_01HZZZZZZZZZZZZZZZZZZZZZZZ/replay",
       acme_key, json::object(), 404);
  ASSERT_TRUE(receiver_.wait_for([](const auto& got) { return got.size() >= 2; }));
  EXPECT_EQ(receiver_.received()[1].event_id, first.event_id);
  EXPECT_EQ(receiver_.received()[1].body, first.body);

  call("DELETE", "/v1/postback-endpoints/" + id, acme_key, nullptr, 204);
  call("GET", "/v1/postback-endpoints/" + id, acme_key, nullptr, 404);
}

}  // namespace
}  // namespace leadflow::testing
