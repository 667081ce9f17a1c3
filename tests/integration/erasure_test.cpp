// Erasure over real HTTPS (docs/erasure.md): the operator erases a sold lead's personal data;
// every party's view reads it as erased, its money stays, the change log says who and when, and
// the person's next lead is still a duplicate.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

// The bytes of the embedded queue's segments in the service's data directory.
std::string queued_bytes(const std::string& data_dir) {
  std::string out;
  for (const auto& e : std::filesystem::directory_iterator(data_dir + "/queue")) {
    if (!e.path().filename().string().starts_with("seg-")) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    out += s.str();
  }
  return out;
}

class Erasure : public ::testing::Test {
 protected:
  void SetUp() override {
    high = start_buyer("high", 15.00);
    high_id = svc.add_buyer(*high);
    buyer_key = svc.add_api_key({{"name", "high's key"}, {"buyer_id", high_id}});
    seller_id = svc.add_seller();
    seller_key = svc.add_api_key({{"name", "seller's key"}, {"seller_id", seller_id}});
  }

  // A lead of the seller's, sold to `high` (sync); its id.
  std::string sold_lead(int salt) {
    auto r = svc.post("/v1/leads", sample_lead(salt), seller_key);
    EXPECT_EQ(r->status, 201) << r->body;
    const json b = body_of(r);
    EXPECT_EQ(b["distribution"]["delivery_status"], "delivered") << r->body;
    return b["lead_id"];
  }

  json lead_as(const std::string& id, const std::string& key) {
    auto r = svc.get("/v1/leads/" + id, key);
    EXPECT_EQ(r->status, 200) << r->body;
    return r->status == 200 ? body_of(r)["data"] : json();
  }

  httplib::Result erase(const std::string& id, const std::string& key) {
    return svc.post("/v1/leads/" + id + "/erase", json::object(), key);
  }

  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> high;
  std::string high_id, buyer_key, seller_id, seller_key;
};

TEST_F(Erasure, TheOperatorErasesASoldLeadAndEveryViewReadsItErasedWithItsMoney) {
  const std::string id = sold_lead(1);
  const json before = lead_as(id, svc.operator_key());
  ASSERT_EQ(before["email"], "ada1@example.com");
  EXPECT_FALSE(before.contains("erased_at"));

  // Only the operator erases.
  EXPECT_EQ(erase(id, seller_key)->status, 403);
  EXPECT_EQ(erase(id, buyer_key)->status, 403);
  EXPECT_EQ(erase("ld_nosuchlead", svc.operator_key())->status, 404);

  // The queue's copy of the lead, as posted (a later sale lets the worker commit past it).
  EXPECT_NE(queued_bytes(svc.data_dir()).find("ada1@example.com"), std::string::npos);
  sold_lead(9);

  auto r = erase(id, svc.operator_key());
  ASSERT_EQ(r->status, 200) << r->body;
  // Rewritten in the segment, the other lead's left as it was.
  const std::string queued = queued_bytes(svc.data_dir());
  EXPECT_EQ(queued.find("ada1@example.com"), std::string::npos);
  EXPECT_NE(queued.find(R"("first_name":"","last_name":"","email":"","phone":"","zip_code":"")"),
            std::string::npos);
  EXPECT_NE(queued.find("ada9@example.com"), std::string::npos);
  const json done = body_of(r)["data"];
  EXPECT_EQ(done["lead_id"], id);
  const std::string erased_at = done["erased_at"];
  EXPECT_FALSE(erased_at.empty());
  // Once.
  auto again = erase(id, svc.operator_key());
  EXPECT_EQ(again->status, 409) << again->body;

  for (const std::string& key : {svc.operator_key(), seller_key, buyer_key}) {
    const json view = lead_as(id, key);
    EXPECT_EQ(view["erased_at"], erased_at) << view;
    EXPECT_EQ(view["status"], "delivered") << view;
    for (const char* person : {"first_name", "last_name", "email", "phone", "zip_code"}) {
      if (!view.contains(person)) continue;
      EXPECT_EQ(view[person], "") << person << " " << view;
    }
    EXPECT_EQ(view.dump().find("ada1@example.com"), std::string::npos) << view;
    EXPECT_EQ(view.dump().find("203.0.113.9"), std::string::npos) << view;
  }
  // The money is the same for whom it is: the operator's distribution as before.
  EXPECT_EQ(lead_as(id, svc.operator_key())["distribution"], before["distribution"]);

  // The buyer's export reads it erased.
  auto csv =
      svc.get("/v1/leads?format=csv&created_from=2020-01-01&created_to=2099-12-31", buyer_key);
  ASSERT_EQ(csv->status, 200) << csv->body;
  EXPECT_NE(csv->body.find(erased_at), std::string::npos) << csv->body;
  EXPECT_EQ(csv->body.find("ada1@example.com"), std::string::npos) << csv->body;

  // The change log says who erased which lead, when, and nothing of the person.
  auto log = svc.get("/v1/audit?object_kind=lead", svc.operator_key());
  ASSERT_EQ(log->status, 200) << log->body;
  const json entries = body_of(log)["data"];
  ASSERT_EQ(entries.size(), 1u) << entries;
  EXPECT_EQ(entries[0]["action"], "erased");
  EXPECT_EQ(entries[0]["object"]["id"], id);
  EXPECT_EQ(entries[0]["actor"]["surface"], "api");
  EXPECT_EQ(log->body.find("ada1@example.com"), std::string::npos);
}

// The erased person comes back through the same seller: their lead is a duplicate of the erased
// one, found by the keyed hashes of the e-mail and phone the erased lead keeps.
TEST_F(Erasure, AnErasedPersonsNextLeadIsStillADuplicate) {
  const std::string id = sold_lead(2);
  ASSERT_EQ(erase(id, svc.operator_key())->status, 200);
  auto r = svc.post("/v1/leads", sample_lead(2), seller_key);
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(body_of(r)["distribution"]["delivery_status"], "duplicate") << r->body;
  // Another person is sold as before.
  auto other = svc.post("/v1/leads", sample_lead(3), seller_key);
  ASSERT_EQ(other->status, 201) << other->body;
  EXPECT_EQ(body_of(other)["distribution"]["delivery_status"], "delivered") << other->body;
}

}  // namespace
}  // namespace leadflow::testing
