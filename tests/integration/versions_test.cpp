// Versions over real HTTPS (docs/versions.md): users, buyers, campaigns, sellers and API keys
// answer GET with a strong ETag made of their version, list rows carry the version, and PUT and
// DELETE honour If-Match: a stale tag is a 412 problem naming the current ETag and changes
// nothing, a matching one (or "*") makes the change and answers its new ETag, and no If-Match
// still changes the record, field by field. A user's password change never revives a user an
// operator disabled meanwhile.
#include <gtest/gtest.h>

#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr const char* kPassword = "a long enough password";

json body_of(const httplib::Result& r) { return json::parse(r->body); }

class VersionsTest : public ::testing::Test {
 protected:
  httplib::Headers auth(const std::string& if_match = "") const {
    httplib::Headers h{{"Authorization", "Bearer " + svc.operator_key()}};
    if (!if_match.empty()) h.emplace("If-Match", if_match);
    return h;
  }
  httplib::Result get(const std::string& path) const {
    return svc.https()->Get(path.c_str(), auth());
  }
  httplib::Result put(const std::string& path, const json& body,
                      const std::string& if_match = "") const {
    return svc.https()->Put(path.c_str(), auth(if_match), body.dump(), "application/json");
  }

  // The If-Match contract of one record at `path` (a GET and a PUT of it), whose `field` the
  // PUT bodies `first` and `second` set to different values.
  void check_versioned(const std::string& path, const std::string& list_path,
                       const std::string& field, const json& first, const json& second) {
    SCOPED_TRACE(path);
    auto read = get(path);
    ASSERT_EQ(read->status, 200) << read->body;
    const std::string etag = read->get_header_value("ETag");
    EXPECT_EQ(etag, "\"v1\"");
    EXPECT_EQ(body_of(read)["data"]["version"], 1);
    auto list = get(list_path);
    ASSERT_EQ(list->status, 200) << list->body;
    const json rows = body_of(list)["data"];  // a range-for over a temporary's member dangles
    for (const auto& row : rows) EXPECT_TRUE(row.contains("version")) << row;

    // The first editor's change, at the version read: made, with the new tag.
    auto changed = put(path, first, etag);
    ASSERT_EQ(changed->status, 200) << changed->body;
    EXPECT_EQ(changed->get_header_value("ETag"), "\"v2\"");
    EXPECT_EQ(body_of(changed)["data"]["version"], 2);

    // The second editor read the same version: refused, naming the current tag; nothing changed.
    auto stale = put(path, second, etag);
    ASSERT_EQ(stale->status, 412) << stale->body;
    EXPECT_EQ(stale->get_header_value("Content-Type"), "application/problem+json");
    EXPECT_EQ(stale->get_header_value("ETag"), "\"v2\"");
    const json problem = body_of(stale);
    EXPECT_EQ(problem["status"], 412);
    EXPECT_EQ(problem["etag"], "\"v2\"");
    EXPECT_NE(problem["detail"].get<std::string>().find("someone else changed"), std::string::npos)
        << problem;
    auto after = get(path);
    EXPECT_EQ(after->get_header_value("ETag"), "\"v2\"");
    EXPECT_EQ(body_of(after)["data"][field], body_of(changed)["data"][field]);

    // Tags that cannot match: weak ones, foreign ones, a version from the future.
    for (const std::string tag : {"W/\"v2\"", "\"v9\"", "v2", "\"2\""})
      EXPECT_EQ(put(path, second, tag)->status, 412) << tag;
    // One of a list matching is enough; "*" allows any version; none still changes it.
    auto listed = put(path, second, "\"v1\", \"v2\"");
    ASSERT_EQ(listed->status, 200) << listed->body;
    EXPECT_EQ(listed->get_header_value("ETag"), "\"v3\"");
    auto star = put(path, first, "*");
    ASSERT_EQ(star->status, 200) << star->body;
    EXPECT_EQ(star->get_header_value("ETag"), "\"v4\"");
    auto plain = put(path, second);
    ASSERT_EQ(plain->status, 200) << plain->body;
    EXPECT_EQ(plain->get_header_value("ETag"), "\"v5\"");
    EXPECT_EQ(body_of(get(path))["data"][field], body_of(plain)["data"][field]);
  }

  ServiceFixture svc;
};

TEST_F(VersionsTest, SellersHonourIfMatch) {
  const std::string id = svc.add_seller("Versioned seller");
  check_versioned("/v1/sellers/" + id, "/v1/sellers", "name", {{"name", "First"}},
                  {{"name", "Second"}});
  EXPECT_EQ(get("/v1/sellers/sl_missing")->status, 404);
  EXPECT_EQ(put("/v1/sellers/sl_missing", {{"name", "X"}}, "*")->status, 404);
}

TEST_F(VersionsTest, CampaignsHonourIfMatch) {
  const std::string seller = svc.add_seller();
  const std::string id = svc.add_campaign(seller).first;
  check_versioned("/v1/campaigns/" + id, "/v1/campaigns", "rate_limit_per_minute",
                  {{"rate_limit_per_minute", 100}}, {{"rate_limit_per_minute", 200}});
}

TEST_F(VersionsTest, BuyersHonourIfMatch) {
  const std::string id = svc.add_buyer(*start_buyer("versioned", 1.0));
  check_versioned("/v1/buyers/" + id, "/v1/buyers", "name", {{"name", "First"}},
                  {{"name", "Second"}});
  // The version read back in a body is the view's, not a change.
  auto read = get("/v1/buyers/" + id);
  json back = {{"name", "Sent back"}, {"version", body_of(read)["data"]["version"]}};
  EXPECT_EQ(put("/v1/buyers/" + id, back, read->get_header_value("ETag"))->status, 200);
}

TEST_F(VersionsTest, UsersHonourIfMatch) {
  auto made = svc.post("/v1/users",
                       {{"email", "edited@example.com"},
                        {"name", "Edited"},
                        {"password", kPassword},
                        {"account", "operator"}},
                       svc.operator_key());
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string id = body_of(made)["data"]["id"];
  check_versioned("/v1/users/" + id, "/v1/users", "name", {{"name", "First"}},
                  {{"name", "Second"}});
  EXPECT_EQ(get("/v1/users/us_missing")->status, 404);
}

TEST_F(VersionsTest, ApiKeysAnswerAnETagAndARevocationHonoursIfMatch) {
  const std::string seller = svc.add_seller();
  auto made =
      svc.post("/v1/api-keys", {{"name", "versioned"}, {"seller_id", seller}}, svc.operator_key());
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string id = body_of(made)["data"]["key_id"];
  const std::string secret = body_of(made)["data"]["key"];
  const std::string path = "/v1/api-keys/" + id;
  auto read = get(path);
  ASSERT_EQ(read->status, 200) << read->body;
  EXPECT_EQ(read->get_header_value("ETag"), "\"v1\"");
  EXPECT_EQ(body_of(read)["data"]["version"], 1);
  EXPECT_EQ(body_of(read)["data"].count("key"), 0u);  // never the secret
  const json keys = body_of(get("/v1/api-keys"))["data"];
  for (const auto& row : keys) EXPECT_TRUE(row.contains("version"));
  EXPECT_EQ(get("/v1/api-keys/key_missing")->status, 404);

  auto stale = svc.https()->Delete(path.c_str(), auth("\"v7\""));
  ASSERT_EQ(stale->status, 412) << stale->body;
  EXPECT_EQ(stale->get_header_value("ETag"), "\"v1\"");
  EXPECT_EQ(svc.get("/v1/leads", secret)->status, 200);  // still live

  auto revoked = svc.https()->Delete(path.c_str(), auth("\"v1\""));
  ASSERT_EQ(revoked->status, 200) << revoked->body;
  EXPECT_EQ(revoked->get_header_value("ETag"), "\"v2\"");
  EXPECT_EQ(svc.get("/v1/leads", secret)->status, 401);
  auto after = get(path);
  EXPECT_EQ(after->get_header_value("ETag"), "\"v2\"");
  EXPECT_FALSE(body_of(after)["data"]["revoked_at"].is_null());
  // Revoked already: at an older version refused, without If-Match kOk as before.
  EXPECT_EQ(svc.https()->Delete(path.c_str(), auth("\"v1\""))->status, 412);
  EXPECT_EQ(svc.https()->Delete(path.c_str(), auth())->status, 200);
}

// Two operators edit different fields of one buyer at once, neither sending If-Match (an old
// client): both changes stay.
TEST_F(VersionsTest, ConcurrentEditsWithoutIfMatchKeepEachOthersFields) {
  const std::string id = svc.add_buyer(*start_buyer("shared", 1.0));
  const std::string path = "/v1/buyers/" + id;
  for (int round = 0; round < 5; ++round) {
    const std::string name = "Round " + std::to_string(round);
    const int priority = round + 1;
    std::latch start(2);
    std::thread a([&] {
      start.arrive_and_wait();
      EXPECT_EQ(put(path, {{"name", name}})->status, 200);
    });
    std::thread b([&] {
      start.arrive_and_wait();
      EXPECT_EQ(put(path, {{"priority", priority}})->status, 200);
    });
    a.join();
    b.join();
    const json got = body_of(get(path))["data"];
    ASSERT_EQ(got["name"], name) << "round " << round;
    ASSERT_EQ(got["priority"], priority) << "round " << round;
  }
}

// The report: a user's own password change, sent as the operator disables the user. Both used
// to answer 200 and the user was active again afterwards.
TEST_F(VersionsTest, DisablingAUserWinsOverItsConcurrentPasswordChange) {
  auto made = svc.post("/v1/users",
                       {{"email", "racer@example.com"},
                        {"name", "Racer"},
                        {"password", kPassword},
                        {"account", "operator"}},
                       svc.operator_key());
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string id = body_of(made)["data"]["id"];
  std::string password = kPassword;
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(put("/v1/users/" + id, {{"active", true}})->status, 200);
    auto in = svc.https()->Post("/v1/session",
                                json{{"email", "racer@example.com"}, {"password", password}}.dump(),
                                "application/json");
    ASSERT_EQ(in->status, 201) << in->body;
    const std::string set = in->get_header_value("Set-Cookie");
    const httplib::Headers session{{"Cookie", set.substr(0, set.find(';'))},
                                   {"X-CSRF-Token", body_of(in)["csrf_token"]}};
    const std::string next = "a new password number " + std::to_string(round);
    std::latch start(2);
    int changed_status = 0;
    std::thread change([&] {
      start.arrive_and_wait();
      changed_status =
          svc.https()
              ->Post("/v1/session/password", session,
                     json{{"current_password", password}, {"new_password", next}}.dump(),
                     "application/json")
              ->status;
    });
    std::thread disable([&] {
      start.arrive_and_wait();
      EXPECT_EQ(put("/v1/users/" + id, {{"active", false}})->status, 200);
    });
    change.join();
    disable.join();
    // Either the change came first (200) or the disabling did (the session ended: 401).
    EXPECT_TRUE(changed_status == 200 || changed_status == 401) << changed_status;
    if (changed_status == 200) password = next;
    ASSERT_EQ(body_of(get("/v1/users/" + id))["data"]["active"], false) << "round " << round;
  }
}

}  // namespace
}  // namespace leadflow::testing
