// GET /v1/leads?q= over real HTTPS, SQLite and in-process workers (docs/api.md): one box finds a
// lead by its id, e-mail or phone, written as a person would type them, within the reader's own
// leads exactly as the list is; another party's lead is simply not found.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;
using Ids = std::set<std::string>;

class LeadSearch : public ::testing::Test {
 protected:
  void SetUp() override {
    buyer = start_buyer("buyer", 15.00);
    buyer_id = svc.add_buyer(*buyer);
    other_buyer_id = svc.add_buyer(*start_buyer("idle", 1.00), "solar");
    seller_id = svc.add_seller("Acme Leads");
    rival_id = svc.add_seller("Rival Leads");
    seller_key = svc.add_api_key({{"name", "s"}, {"seller_id", seller_id}});
    rival_key = svc.add_api_key({{"name", "r"}, {"seller_id", rival_id}});
    buyer_key = svc.add_api_key({{"name", "b"}, {"buyer_id", buyer_id}});
    other_buyer_key = svc.add_api_key({{"name", "o"}, {"buyer_id", other_buyer_id}});

    // One person, posted by each seller: the seller's lead is sold to the buyer; the rival's,
    // the same person again, is not (the buyer already has the person).
    json person = sample_lead(1);
    person["email"] = "Jane.Doe@Example.com";
    person["phone"] = "(212) 555-0123";
    mine = post_lead(person, seller_key);
    theirs = post_lead(person, rival_key);
    unrelated = post_lead(sample_lead(2), seller_key);
  }

  std::string post_lead(const json& body, const std::string& key) {
    auto r = svc.post("/v1/leads", body, key);
    EXPECT_TRUE(r->status == 201 || r->status == 202) << r->body;
    return json::parse(r->body).value("lead_id", "");
  }

  // The ids a search answers, and its status.
  Ids found(const std::string& query, const std::string& key, int expected_status = 200) {
    auto r = svc.get("/v1/leads?" + query, key);
    EXPECT_EQ(r->status, expected_status) << query << ": " << r->body;
    Ids ids;
    if (r->status != 200) return ids;
    const json body = json::parse(r->body);
    for (const auto& row : body["data"]) ids.insert(row["lead_id"].get<std::string>());
    return ids;
  }

  static std::string q(const std::string& text) {
    return "q=" + httplib::detail::encode_query_param(text);
  }

  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> buyer;
  std::string buyer_id, other_buyer_id, seller_id, rival_id;
  std::string seller_key, rival_key, buyer_key, other_buyer_key;
  std::string mine, theirs, unrelated;
};

TEST_F(LeadSearch, FindsByIdEmailOrPhoneWrittenAnyWayWithinTheReadersLeads) {
  ASSERT_FALSE(mine.empty());
  ASSERT_FALSE(theirs.empty());
  const std::string op = svc.operator_key();
  // The operator: both leads of the person, however the e-mail or phone is written.
  for (const char* text : {"jane.doe@example.com", "  JANE.DOE@example.COM ", "(212) 555-0123",
                           "+1 212.555.0123", "2125550123", "12125550123"})
    EXPECT_EQ(found(q(text), op), (Ids{mine, theirs})) << text;
  EXPECT_EQ(found(q(mine), op), Ids{mine});
  EXPECT_EQ(found(q(" " + unrelated + " "), op), Ids{unrelated});
  EXPECT_EQ(found(q("nobody@example.com"), op), Ids{});
  EXPECT_EQ(found(q("(303) 555-0199"), op), Ids{});

  // A seller: its own lead only; the rival's, by id, e-mail or phone, is simply not there.
  EXPECT_EQ(found(q("jane.doe@example.com"), seller_key), Ids{mine});
  EXPECT_EQ(found(q("212-555-0123"), seller_key), Ids{mine});
  EXPECT_EQ(found(q(theirs), seller_key), Ids{});
  EXPECT_EQ(found(q("jane.doe@example.com"), rival_key), Ids{theirs});
  EXPECT_EQ(found(q(mine), rival_key), Ids{});

  // A buyer: its purchase only; another buyer finds nothing of the person.
  EXPECT_EQ(found(q("jane.doe@example.com"), buyer_key), Ids{mine});
  EXPECT_EQ(found(q("(212) 555-0123"), buyer_key), Ids{mine});
  EXPECT_EQ(found(q(theirs), buyer_key), Ids{});
  EXPECT_EQ(found(q(unrelated), other_buyer_key), Ids{});
  EXPECT_EQ(found(q("jane.doe@example.com"), other_buyer_key), Ids{});
}

TEST_F(LeadSearch, CombinesWithTheFiltersAndTheCursor) {
  const std::string op = svc.operator_key();
  const std::string email = q("jane.doe@example.com");
  EXPECT_EQ(found(email + "&seller_id=" + seller_id, op), Ids{mine});
  EXPECT_EQ(found(email + "&buyer_id=" + buyer_id, op), Ids{mine});
  EXPECT_EQ(found(email + "&vertical=solar", op), Ids{});
  EXPECT_EQ(found(q(mine) + "&seller_id=" + rival_id, op), Ids{});

  // One a page: the newest first, then the other through the cursor.
  auto first = svc.get("/v1/leads?" + email + "&limit=1", op);
  ASSERT_EQ(first->status, 200) << first->body;
  const json page = json::parse(first->body);
  ASSERT_EQ(page["data"].size(), 1u);
  EXPECT_EQ(page["data"][0]["lead_id"], theirs);
  ASSERT_TRUE(page["has_more"].get<bool>());
  const std::string cursor = page["next_cursor"];
  EXPECT_EQ(found(email + "&limit=1&cursor=" + cursor, op), Ids{mine});
}

TEST_F(LeadSearch, ATextThatIsNoIdEmailOrPhoneIsRefusedNamingQ) {
  for (const char* text : {"jane", "", "ld_nope", "+44 20 7946 0958", "jane@"}) {
    auto r = svc.get("/v1/leads?" + q(text), seller_key);
    ASSERT_EQ(r->status, 400) << text << ": " << r->body;
    const json body = json::parse(r->body);
    ASSERT_EQ(body["errors"].size(), 1u) << r->body;
    EXPECT_EQ(body["errors"][0]["field"], "q") << r->body;
  }
}

}  // namespace
}  // namespace leadflow::testing
