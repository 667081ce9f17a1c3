// The postback endpoints' routes over real HTTPS on the embedded service, with its own sender:
// a seller manages its own endpoints and nobody else's, a buyer none, the operator every
// seller's; the secret is shown once; URLs and events are checked; a lead sold reaches the
// seller's receiver signed, its delivery log says so, and a replay sends it again; a secret is
// rotated by whoever may change the endpoint, with CSRF for a session, and the change log says so
// without the secret.
#include <gtest/gtest.h>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "leadflow/base/time_format.hpp"
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

std::int64_t ms_of(const json& time) {
  EXPECT_TRUE(time.is_string()) << time;
  return time.is_string() ? parse_rfc3339_ms(time.get<std::string>()).value_or(0) : 0;
}

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
  EXPECT_EQ(call("GET", "/v1/postback-endpoints/" + id, acme_key, nullptr, 200)["data"]["failing"],
            false);
  EXPECT_EQ(call("GET", "/v1/postback-endpoints", acme_key, nullptr, 200)["data"][0]["failing"],
            false);
  EXPECT_GT(attempts[0]["latency_ms"].get<double>(), 0);

  // Replayed: the same event again.
  call("POST", "/v1/postback-endpoints/" + id + "/deliveries/" + first.event_id + "/replay",
       acme_key, json::object(), 202);
  call("POST", "/v1/postback-endpoints/" + id + "/deliveries/evt_01HZZZZZZZZZZZZZZZZZZZZZZZ/replay",
       acme_key, json::object(), 404);
  ASSERT_TRUE(receiver_.wait_for([](const auto& got) { return got.size() >= 2; }));
  EXPECT_EQ(receiver_.received()[1].event_id, first.event_id);
  EXPECT_EQ(receiver_.received()[1].body, first.body);

  // Switched off, it says since when, and a lead decided while it is off is not its own; on
  // again, the next lead's event is.
  const json off =
      call("PATCH", "/v1/postback-endpoints/" + id, acme_key, {{"active", false}}, 200)["data"];
  EXPECT_FALSE(off["active"].get<bool>());
  EXPECT_GT(ms_of(off["switched_off_at"]), 0);
  const auto while_off = svc_.post("/v1/leads", sample_lead(2), acme_key);
  ASSERT_TRUE(while_off);
  const std::string off_lead = json::parse(while_off->body)["lead_id"];
  for (int i = 0; i < 100; ++i) {
    if (call("GET", "/v1/leads/" + off_lead, acme_key, nullptr, 200)["data"]["status"] != "pending")
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const json on =
      call("PATCH", "/v1/postback-endpoints/" + id, acme_key, {{"active", true}}, 200)["data"];
  EXPECT_TRUE(on["switched_off_at"].is_null());
  const auto after_on = svc_.post("/v1/leads", sample_lead(3), acme_key);
  ASSERT_TRUE(after_on);
  const std::string on_lead = json::parse(after_on->body)["lead_id"];
  ASSERT_TRUE(receiver_.wait_for([](const auto& got) { return got.size() >= 3; }));
  EXPECT_EQ(receiver_.received()[2].body["data"]["lead_id"], on_lead);
  const json leads_told =
      call("GET", "/v1/postback-endpoints/" + id + "/deliveries", acme_key, nullptr, 200)["data"];
  std::set<std::string> told;
  for (const auto& r : leads_told) told.insert(r["lead_id"].get<std::string>());
  EXPECT_EQ(told, (std::set<std::string>{lead_id, on_lead})) << "none for " << off_lead;

  // The receiver fails; five replays, five failed attempts: the endpoint is failing, in its
  // answer and in the list.
  receiver_.set("/acme", secret, PostbackReceiver::Mode::kFail);
  const std::string replayed = "/v1/postback-endpoints/" + id + "/deliveries/" + first.event_id;
  const auto tries = [&] {
    return call("GET", replayed + "/attempts", acme_key, nullptr, 200)["data"].size();
  };
  for (std::size_t n = tries(), goal = n + 5; n < goal; ++n) {
    call("POST", replayed + "/replay", acme_key, json::object(), 202);
    for (int i = 0; i < 100 && tries() <= n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(call("GET", "/v1/postback-endpoints/" + id, acme_key, nullptr, 200)["data"]["failing"],
            true);
  EXPECT_EQ(call("GET", "/v1/postback-endpoints", acme_key, nullptr, 200)["data"][0]["failing"],
            true);

  call("DELETE", "/v1/postback-endpoints/" + id, acme_key, nullptr, 204);
  call("GET", "/v1/postback-endpoints/" + id, acme_key, nullptr, 404);
}

// An endpoint carries a version, as the other records people edit (docs/versions.md): its ETag
// on every answer that shows it, If-Match honoured by a PATCH (412 at another version, naming
// the current one, nothing changed), a rotation moving it too; another seller still gets 404.
TEST_F(PostbackApiTest, AnEndpointIsChangedOnlyAtTheVersionItWasRead) {
  const std::string acme = svc_.add_seller("Acme"), other = svc_.add_seller("Other");
  const std::string acme_key = svc_.add_api_key({{"name", "acme"}, {"seller_id", acme}});
  const std::string other_key = svc_.add_api_key({{"name", "other"}, {"seller_id", other}});
  const auto send = [&](const char* method, const std::string& path, const std::string& key,
                        const std::string& if_match, const json& body) {
    httplib::Headers headers = {{"Authorization", "Bearer " + key}};
    if (!if_match.empty()) headers.emplace("If-Match", if_match);
    auto c = svc_.https();
    return std::string(method) == "GET" ? c->Get(path, headers)
           : std::string(method) == "PATCH"
               ? c->Patch(path, headers, body.dump(), "application/json")
               : c->Post(path, headers, body.dump(), "application/json");
  };
  auto made = send("POST", "/v1/postback-endpoints", acme_key, "",
                   {{"url", receiver_.url("/v")}, {"events", {"lead.sold"}}});
  ASSERT_TRUE(made);
  ASSERT_EQ(made->status, 201) << made->body;
  EXPECT_EQ(made->get_header_value("ETag"), "\"v1\"");
  const std::string id = json::parse(made->body)["data"]["id"];
  const std::string path = "/v1/postback-endpoints/" + id;
  auto read = send("GET", path, acme_key, "", nullptr);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->get_header_value("ETag"), "\"v1\"");
  EXPECT_EQ(json::parse(read->body)["data"]["version"], 1);

  auto changed = send("PATCH", path, acme_key, "\"v1\"", {{"url", receiver_.url("/v2")}});
  ASSERT_TRUE(changed);
  ASSERT_EQ(changed->status, 200) << changed->body;
  EXPECT_EQ(changed->get_header_value("ETag"), "\"v2\"");
  EXPECT_EQ(json::parse(changed->body)["data"]["version"], 2);

  // Made on version 1: refused, the current version named, nothing changed.
  for (const char* stale : {"\"v1\"", "W/\"v2\"", "\"two\""}) {
    auto refused = send("PATCH", path, acme_key, stale, {{"active", false}});
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 412) << stale << ": " << refused->body;
    EXPECT_EQ(refused->get_header_value("ETag"), "\"v2\"");
    EXPECT_EQ(json::parse(refused->body)["etag"], "\"v2\"");
    EXPECT_EQ(json::parse(refused->body)["title"], "Precondition Failed");
    EXPECT_EQ(refused->reason, "Precondition Failed");
  }
  const json now = call("GET", path, acme_key, nullptr, 200)["data"];
  EXPECT_TRUE(now["active"].get<bool>());
  EXPECT_EQ(now["url"], receiver_.url("/v2"));
  // Another seller's If-Match changes nothing either: no such endpoint for it.
  auto foreign = send("PATCH", path, other_key, "\"v2\"", {{"active", false}});
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 404);

  // The body may carry back the version it read (read-only); a version of another type is not.
  EXPECT_EQ(send("PATCH", path, acme_key, "", {{"active", false}, {"version", "2"}})->status, 400);
  auto echoed = send("PATCH", path, acme_key, "", {{"active", false}, {"version", 2}});
  ASSERT_TRUE(echoed);
  EXPECT_EQ(echoed->status, 200) << echoed->body;
  EXPECT_EQ(echoed->get_header_value("ETag"), "\"v3\"");
  EXPECT_FALSE(json::parse(echoed->body)["data"]["active"].get<bool>());

  // A rotation is a change too.
  auto rotated = send("POST", path + "/rotate-secret", acme_key, "", json::object());
  ASSERT_TRUE(rotated);
  ASSERT_EQ(rotated->status, 200) << rotated->body;
  EXPECT_EQ(rotated->get_header_value("ETag"), "\"v4\"");
  EXPECT_EQ(send("PATCH", path, acme_key, "\"v3\"", {{"active", true}})->status, 412);
  auto any = send("PATCH", path, acme_key, "*", {{"active", true}});
  ASSERT_TRUE(any);
  EXPECT_EQ(any->status, 200) << any->body;
  EXPECT_EQ(any->get_header_value("ETag"), "\"v5\"");
  EXPECT_EQ(call("GET", "/v1/postback-endpoints", acme_key, nullptr, 200)["data"][0]["version"], 5);

  // A deletion honours If-Match too: refused at a version it no longer has, done at its own.
  const auto remove = [&](const std::string& if_match) {
    httplib::Headers headers = {{"Authorization", "Bearer " + acme_key}};
    if (!if_match.empty()) headers.emplace("If-Match", if_match);
    return svc_.https()->Delete(path, headers);
  };
  auto stale = remove("\"v4\"");
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->status, 412) << stale->body;
  EXPECT_EQ(stale->get_header_value("ETag"), "\"v5\"");
  call("GET", path, acme_key, nullptr, 200);
  auto gone = remove("\"v5\"");
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->status, 204) << gone->body;
  call("GET", path, acme_key, nullptr, 404);
}

TEST_F(PostbackApiTest, WhoMayChangeAnEndpointRotatesItsSecretAndTheChangeLogSaysSo) {
  auto buyer = start_buyer("Buyer", 12.0);
  const std::string buyer_id = svc_.add_buyer(*buyer);
  const std::string acme = svc_.add_seller("Acme"), other = svc_.add_seller("Other");
  const std::string acme_key = svc_.add_api_key({{"name", "acme"}, {"seller_id", acme}});
  const std::string other_key = svc_.add_api_key({{"name", "other"}, {"seller_id", other}});
  const std::string buyer_key = svc_.add_api_key({{"name", "buyer"}, {"buyer_id", buyer_id}});
  const std::string ops = svc_.operator_key();
  const json made = call("POST", "/v1/postback-endpoints", acme_key,
                         {{"url", receiver_.url("/rot")}, {"events", {"lead.sold"}}}, 201)["data"];
  const std::string id = made["id"];
  std::vector<std::string> secrets{made["secret"]};
  EXPECT_TRUE(made["secret_rotated_at"].is_null());
  EXPECT_TRUE(made["previous_secret_expires_at"].is_null());

  // Refused: a buyer, another seller (as if there were no such endpoint), an unknown endpoint,
  // bad bodies; none of them rotates anything.
  const std::string path = "/v1/postback-endpoints/" + id + "/rotate-secret";
  call("POST", path, buyer_key, json::object(), 403);
  call("POST", path, other_key, json::object(), 404);
  call("POST", "/v1/postback-endpoints/pbe_missing/rotate-secret", acme_key, json::object(), 404);
  for (const json& bad :
       {json{{"previous_valid_for_seconds", -1}}, json{{"previous_valid_for_seconds", 604801}},
        json{{"previous_valid_for_seconds", "60"}}, json{{"previous_valid_for_seconds", 1.5}},
        json{{"secret", "mine"}}, json::array()})
    call("POST", path, acme_key, bad, 400);
  EXPECT_TRUE(call("GET", "/v1/postback-endpoints/" + id, acme_key, nullptr,
                   200)["data"]["secret_rotated_at"]
                  .is_null());

  // The seller, with no body: a new secret, shown in this answer alone; the old one signs on for
  // 24 hours.
  auto raw =
      svc_.https()->Post(path, {{"Authorization", "Bearer " + acme_key}}, "", "application/json");
  ASSERT_TRUE(raw);
  ASSERT_EQ(raw->status, 200) << raw->body;
  const json rotated = json::parse(raw->body)["data"];
  secrets.push_back(rotated["secret"]);
  EXPECT_TRUE(secrets[1].starts_with("pbs_"));
  EXPECT_EQ(secrets[1].size(), 68u);
  EXPECT_NE(secrets[1], secrets[0]);
  EXPECT_EQ(rotated["id"], id);
  EXPECT_EQ(rotated["url"], made["url"]);
  const std::int64_t at = ms_of(rotated["secret_rotated_at"]);
  EXPECT_EQ(ms_of(rotated["previous_secret_expires_at"]) - at, 86'400'000);
  const json read = call("GET", "/v1/postback-endpoints/" + id, acme_key, nullptr, 200)["data"];
  EXPECT_FALSE(read.contains("secret")) << "shown once";
  EXPECT_EQ(read["previous_secret_expires_at"], rotated["previous_secret_expires_at"]);
  EXPECT_EQ(read["secret_rotated_at"], rotated["secret_rotated_at"]);

  // Another rotation with an overlap while the old secret still signs would end it at once:
  // refused, saying until when it signs, nothing rotated. The operator then ends every old
  // secret at once; with none left signing, the seller keeps the replaced one a minute.
  const json refused = call("POST", path, ops, {{"previous_valid_for_seconds", 60}}, 409);
  EXPECT_NE(refused["detail"].get<std::string>().find(
                "still signs until " + read["previous_secret_expires_at"].get<std::string>()),
            std::string::npos)
      << refused;
  EXPECT_EQ(call("GET", "/v1/postback-endpoints/" + id, acme_key, nullptr,
                 200)["data"]["secret_rotated_at"],
            rotated["secret_rotated_at"]);
  const json at_once = call("POST", path, ops, {{"previous_valid_for_seconds", 0}}, 200)["data"];
  secrets.push_back(at_once["secret"]);
  EXPECT_TRUE(at_once["previous_secret_expires_at"].is_null());
  EXPECT_TRUE(call("GET", "/v1/postback-endpoints", acme_key, nullptr,
                   200)["data"][0]["previous_secret_expires_at"]
                  .is_null());
  const json by_key =
      call("POST", path, acme_key, {{"previous_valid_for_seconds", 60}}, 200)["data"];
  secrets.push_back(by_key["secret"]);
  EXPECT_EQ(ms_of(by_key["previous_secret_expires_at"]) - ms_of(by_key["secret_rotated_at"]),
            60'000);

  // The seller's dashboard user: only with its session's CSRF token.
  ASSERT_EQ(svc_.post("/v1/users",
                      {{"email", "rot@example.com"},
                       {"name", "Rotating user"},
                       {"password", "a long enough password"},
                       {"account", "seller"},
                       {"seller_id", acme}},
                      ops)
                ->status,
            201);
  auto in = svc_.https()->Post(
      "/v1/session",
      json{{"email", "rot@example.com"}, {"password", "a long enough password"}}.dump(),
      "application/json");
  ASSERT_TRUE(in);
  ASSERT_EQ(in->status, 201) << in->body;
  const std::string cookie = in->get_header_value("Set-Cookie");
  const httplib::Headers session{{"Cookie", cookie.substr(0, cookie.find(';'))}};
  httplib::Headers with_csrf = session;
  with_csrf.emplace("X-CSRF-Token", json::parse(in->body)["csrf_token"].get<std::string>());
  auto no_token = svc_.https()->Post(path, session, "{}", "application/json");
  ASSERT_TRUE(no_token);
  EXPECT_EQ(no_token->status, 403) << no_token->body;
  auto by_user = svc_.https()->Post(path, with_csrf, R"({"previous_valid_for_seconds": 0})",
                                    "application/json");
  ASSERT_TRUE(by_user);
  ASSERT_EQ(by_user->status, 200) << by_user->body;
  secrets.push_back(json::parse(by_user->body)["data"]["secret"]);
  EXPECT_EQ(std::set<std::string>(secrets.begin(), secrets.end()).size(), 5u);

  // The change log: the creation and each rotation, by whom; the secret reads "(secret)".
  const json log = call("GET", "/v1/audit?object_kind=postback_endpoint", ops, nullptr, 200);
  const std::string text = log.dump();
  for (const std::string& secret : secrets)
    EXPECT_EQ(text.find(secret), std::string::npos) << "a secret in the change log";
  std::vector<std::string> surfaces;
  int created = 0;
  for (const json& entry : log["data"]) {
    EXPECT_EQ(entry["object"]["kind"], "postback_endpoint");
    EXPECT_EQ(entry["object"]["id"], id);
    if (entry["action"] == "created") ++created;
    if (entry["action"] != "secret_rotated") continue;
    surfaces.push_back(entry["actor"]["surface"]);
    bool secret_noted = false;
    for (const json& change : entry["changes"]) {
      if (change["field"] == "secret") {
        secret_noted = true;
        EXPECT_EQ(change["before"], "(secret)");
        EXPECT_EQ(change["after"], "(secret)");
      }
      if (change["field"] == "secret_rotated_at") {
        EXPECT_TRUE(change["after"].is_string());
      }
    }
    EXPECT_TRUE(secret_noted) << entry.dump();
  }
  EXPECT_EQ(created, 1);
  // Newest first: the user's, the seller's key, the operator's, the seller's key (the refused
  // rotation is not there).
  EXPECT_EQ(surfaces, (std::vector<std::string>{"dashboard", "api", "api", "api"}));
}

}  // namespace
}  // namespace leadflow::testing
