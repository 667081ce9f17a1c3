// Security bounds of the front over real HTTPS, a section per bound.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "leadflow/base/ids.hpp"
#include "leadflow/base/metrics.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

// A front without workers (accepted leads stay queued), with `limit` failed authentications a
// minute per address (0: the default).
ServiceOptions front_only(int limit = 0) {
  ServiceOptions o;
  o.workers = 0;
  o.auth_failure_limit = limit;
  return o;
}

// The value of a counter series in this process's registry (the service runs in the test
// process), 0 when absent. `series` is the name and labels as exposed.
double counter(const std::string& series) {
  const std::string text = render_metrics();
  const auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return 0;
  return std::stod(text.substr(at + series.size() + 2));
}

// ---------------------------------------------------------------------------------------------
// Operator bodies: wrong JSON types, names

TEST(OperatorBodies, ACampaignWhosePayoutModelIsNotAStringIs400) {
  ServiceFixture svc;
  const std::string seller = svc.add_seller();
  for (const json& model : {json(5), json(true), json(nullptr), json::array(), json::object()}) {
    auto r = svc.post("/v1/campaigns",
                      {{"seller_id", seller},
                       {"name", "x"},
                       {"vertical", "auto_insurance"},
                       {"payout", {{"model", model}, {"value", 5}}}},
                      svc.operator_key());
    ASSERT_EQ(r->status, 400) << model.dump() << ": " << r->body;
    EXPECT_EQ(body_of(r)["errors"][0]["field"], "payout.model") << r->body;
  }
}

TEST(OperatorBodies, NamesWithControlCharactersAre400) {
  ServiceFixture svc;
  const std::string seller = svc.add_seller();
  for (const std::string& name : {std::string("a\0b", 3), std::string("two\nlines"),
                                  std::string("\x1b[2Jclear"), std::string("c1 \xc2\x9b")}) {
    auto s = svc.post("/v1/sellers", {{"name", name}}, svc.operator_key());
    EXPECT_EQ(s->status, 400) << json(name).dump();
    auto c = svc.post("/v1/campaigns",
                      {{"seller_id", seller}, {"name", name}, {"vertical", "auto_insurance"}},
                      svc.operator_key());
    EXPECT_EQ(c->status, 400) << json(name).dump();
    auto k = svc.post("/v1/api-keys", {{"name", name}}, svc.operator_key());
    EXPECT_EQ(k->status, 400) << json(name).dump();
  }
  EXPECT_EQ(svc.post("/v1/sellers", {{"name", "Zoë 李"}}, svc.operator_key())->status, 201);
}

// ---------------------------------------------------------------------------------------------
// Failed authentications per client address

class FailedAuth : public ::testing::Test {
 protected:
  void SetUp() override {
    seller = svc.add_seller();
    std::tie(campaign_id, key) = svc.add_campaign(seller, {{"mode", "async"}});
  }
  httplib::Result post_lead(const std::string& campaign_key) {
    return svc.https()->Post("/api/v1/lead", sample_campaign_lead(salt++, campaign_key).dump(),
                             "application/json");
  }

  ServiceFixture svc{front_only()};
  std::string seller, campaign_id, key;
  int salt = 1;
};

TEST_F(FailedAuth, InventedCampaignKeysFromOneAddressGet429AfterTheLimit) {
  // The default: 20 failures a minute per address, counted across the lead post, stats and
  // jobs routes together.
  auto c = svc.https();
  int unauthorized = 0;
  for (int i = 0; i < 20; ++i) {
    const std::string invented = "lfc_invented" + std::to_string(i);
    httplib::Result r = i % 3 == 0   ? post_lead(invented)
                        : i % 3 == 1 ? c->Get(("/api/v1/stats/" + invented).c_str())
                                     : c->Get("/api/v1/jobs/ld_01KAP3ZJ6Q8X5E7R9T2W4Y6B8D",
                                              {{"X-Campaign-Key", invented}});
    if (r->status == 401) ++unauthorized;
  }
  EXPECT_EQ(unauthorized, 20);
  for (const std::string route : {"lead", "stats", "jobs"}) {
    httplib::Result r = route == "lead"    ? post_lead("lfc_more")
                        : route == "stats" ? c->Get("/api/v1/stats/lfc_more")
                                           : c->Get("/api/v1/jobs/ld_01KAP3ZJ6Q8X5E7R9T2W4Y6B8D",
                                                    {{"X-Campaign-Key", "lfc_more"}});
    ASSERT_EQ(r->status, 429) << route << ": " << r->body;
    EXPECT_TRUE(r->has_header("Retry-After")) << route;
    EXPECT_GE(std::stoi(r->get_header_value("Retry-After")), 1);
    EXPECT_EQ(body_of(r)["status"], "rate_limited") << route;
  }
  // A valid key from the same address is not locked out.
  EXPECT_EQ(post_lead(key)->status, 202);
  EXPECT_EQ(c->Get(("/api/v1/stats/" + key).c_str())->status, 200);
}

TEST_F(FailedAuth, InvalidApiKeysShareTheSameBudget) {
  for (int i = 0; i < 10; ++i) ASSERT_EQ(post_lead("lfc_nope")->status, 401);
  for (int i = 0; i < 10; ++i)
    ASSERT_EQ(svc.get("/v1/leads", "lfk_nope" + std::to_string(i))->status, 401) << i;
  auto r = svc.get("/v1/leads", "lfk_nope");
  ASSERT_EQ(r->status, 429) << r->body;
  EXPECT_TRUE(r->has_header("Retry-After"));
  EXPECT_EQ(svc.get("/v1/leads", svc.operator_key())->status, 200);
}

TEST(FailedAuthBehindAProxy, EachForwardedClientHasItsOwnBudget) {
  ServiceOptions o = front_only(3);
  o.plain_http = true;
  o.trusted_proxies = {"127.0.0.1/32"};
  ServiceFixture svc(o);
  auto c = svc.plain();
  auto stats = [&](const std::string& forwarded_for) {
    return c->Get("/api/v1/stats/lfc_invented", {{"X-Forwarded-For", forwarded_for}})->status;
  };
  for (int i = 0; i < 3; ++i) EXPECT_EQ(stats("198.51.100.7"), 401);
  EXPECT_EQ(stats("198.51.100.7"), 429);
  EXPECT_EQ(stats("10.9.8.7, 198.51.100.7"), 429);  // the proxy's own hop is the one believed
  EXPECT_EQ(stats("198.51.100.8"), 401);
}

TEST(FailedAuthWithoutAProxy, AForwardedForHeaderIsNotBelieved) {
  ServiceOptions o = front_only(3);
  o.plain_http = true;
  ServiceFixture svc(o);
  auto c = svc.plain();
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(c->Get("/api/v1/stats/lfc_invented",
                     {{"X-Forwarded-For", "198.51.100." + std::to_string(i)}})
                  ->status,
              401);
  EXPECT_EQ(c->Get("/api/v1/stats/lfc_invented", {{"X-Forwarded-For", "198.51.100.99"}})->status,
            429);
}

// ---------------------------------------------------------------------------------------------
// /metrics on the public listeners

TEST(Metrics, ThePublicListenersServeThemToOperatorKeysOnly) {
  ServiceOptions o = front_only();
  o.metrics_listen = true;
  ServiceFixture svc(o);
  const std::string seller = svc.add_seller();
  const std::string seller_key = svc.add_api_key({{"seller_id", seller}});
  EXPECT_EQ(svc.https()->Get("/metrics")->status, 401);
  EXPECT_EQ(svc.get("/metrics", seller_key)->status, 403);
  auto ok = svc.get("/metrics", svc.operator_key());
  ASSERT_EQ(ok->status, 200);
  EXPECT_NE(ok->body.find("leadflow_http_requests_total"), std::string::npos);
  // An operator key limited to reports is enough (what a Prometheus scrape would hold).
  const std::string reports = svc.add_api_key({{"scopes", {"reports:read"}}});
  EXPECT_EQ(svc.get("/metrics", reports)->status, 200);
  // The dedicated listener stays open for Prometheus.
  httplib::Client ops("127.0.0.1", svc.app().metrics_port());
  auto open = ops.Get("/metrics");
  ASSERT_EQ(open->status, 200);
  EXPECT_NE(open->body.find("leadflow_http_requests_total"), std::string::npos);
  EXPECT_EQ(ops.Get("/readyz")->status, 200);
  // Health and readiness stay open everywhere (probes carry no key).
  EXPECT_EQ(svc.https()->Get("/healthz")->status, 200);
  EXPECT_EQ(svc.https()->Get("/readyz")->status, 200);
}

// ---------------------------------------------------------------------------------------------
// Job polls

TEST(Jobs, IdsThatAreNotThisCampaignsReadLikeIdsThatDoNotExist) {
  // No workers: every accepted lead stays queued, and never reaches the store.
  ServiceFixture svc(front_only());
  const std::string seller = svc.add_seller();
  const auto [mine_id, mine] = svc.add_campaign(seller, {{"mode", "async"}});
  const auto [theirs_id, theirs] = svc.add_campaign(seller, {{"mode", "async"}});
  auto posted =
      svc.https()->Post("/api/v1/lead", sample_campaign_lead(1, theirs).dump(), "application/json");
  ASSERT_EQ(posted->status, 202);
  const std::string their_job = body_of(posted)["job_id"];
  const std::string their_lead = body_of(posted)["lead_id"];
  auto own =
      svc.https()->Post("/api/v1/lead", sample_campaign_lead(2, mine).dump(), "application/json");
  ASSERT_EQ(own->status, 202);
  const std::string my_job = body_of(own)["job_id"];

  auto poll = [&](const std::string& id, const std::string& key) {
    return svc.https()->Get(("/api/v1/jobs/" + id).c_str(), {{"X-Campaign-Key", key}});
  };
  // Our own queued job.
  auto r = poll(my_job, mine);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r)["status"], "queued");
  // An invented id made a moment ago, another campaign's job and its lead id: one answer.
  const std::string invented = new_id(kLeadPrefix);
  const auto reference = poll(invented, mine);
  EXPECT_EQ(reference->status, 404) << reference->body;
  for (const std::string& id :
       {their_job, their_lead, std::string("ld_") + their_lead.substr(3, 10) + "0000000000000000",
        my_job.substr(0, my_job.size() - 1) + (my_job.back() == 'A' ? 'B' : 'A'),
        std::string("x")}) {
    auto other = poll(id, mine);
    EXPECT_EQ(other->status, reference->status) << id;
    EXPECT_EQ(other->body, reference->body) << id;
  }
  // The other campaign sees its own job.
  EXPECT_EQ(body_of(poll(their_job, theirs))["status"], "queued");
}

TEST(Jobs, ADecidedLeadOfAnotherCampaignReadsLikeOneThatDoesNotExist) {
  ServiceFixture svc;
  auto buyer = start_buyer("acme", 15.00);
  svc.add_buyer(*buyer);
  const std::string seller = svc.add_seller();
  const auto [mine_id, mine] = svc.add_campaign(seller);
  const auto [theirs_id, theirs] = svc.add_campaign(seller);
  auto sold =
      svc.https()->Post("/api/v1/lead", sample_campaign_lead(3, theirs).dump(), "application/json");
  ASSERT_EQ(sold->status, 200) << sold->body;
  const std::string lead = body_of(sold)["lead_id"];
  auto poll = [&](const std::string& id, const std::string& key) {
    return svc.https()->Get(("/api/v1/jobs/" + id).c_str(), {{"X-Campaign-Key", key}});
  };
  EXPECT_EQ(body_of(poll(lead, theirs))["status"], "sold");
  const auto foreign = poll(lead, mine);
  const auto invented = poll(new_id(kLeadPrefix), mine);
  EXPECT_EQ(foreign->status, 404);
  EXPECT_EQ(foreign->status, invented->status);
  EXPECT_EQ(foreign->body, invented->body);
}

// ---------------------------------------------------------------------------------------------
// Cache-Control

TEST(CacheControl, EveryApiAnswerIsNoStore) {
  ServiceFixture svc;
  auto buyer = start_buyer("acme", 15.00);
  svc.add_buyer(*buyer);
  const std::string seller = svc.add_seller();
  const auto [campaign_id, key] = svc.add_campaign(seller);
  auto posted = svc.post("/v1/leads", sample_lead(1), svc.operator_key());
  ASSERT_EQ(posted->status, 201) << posted->body;
  const std::string lead = body_of(posted)["lead_id"];
  auto b =
      svc.https()->Post("/api/v1/lead", sample_campaign_lead(2, key).dump(), "application/json");
  std::vector<std::pair<std::string, httplib::Result>> answers;
  answers.emplace_back("POST /v1/leads", std::move(posted));
  answers.emplace_back("GET /v1/leads/{id}", svc.get("/v1/leads/" + lead, svc.operator_key()));
  answers.emplace_back("GET /v1/leads", svc.get("/v1/leads", svc.operator_key()));
  answers.emplace_back("POST /api/v1/lead", std::move(b));
  answers.emplace_back("GET /api/v1/jobs/{id}", svc.https()->Get(("/api/v1/jobs/" + lead).c_str(),
                                                                 {{"X-Campaign-Key", key}}));
  answers.emplace_back("GET /api/v1/stats/{key}",
                       svc.https()->Get(("/api/v1/stats/" + key).c_str()));
  answers.emplace_back("401", svc.get("/v1/leads", "lfk_wrong"));
  answers.emplace_back("404", svc.get("/v1/nothing", svc.operator_key()));
  answers.emplace_back("GET /v1/api-keys", svc.get("/v1/api-keys", svc.operator_key()));
  for (auto& [what, r] : answers) {
    ASSERT_TRUE(r) << what;
    EXPECT_EQ(r->get_header_value("Cache-Control"), "no-store") << what << " " << r->status;
  }
}

// ---------------------------------------------------------------------------------------------
// Media types

TEST(MediaTypes, MultipartOnAJsonRouteIs415) {
  ServiceFixture svc(front_only());
  const std::string seller = svc.add_seller();
  const auto [campaign_id, key] = svc.add_campaign(seller, {{"mode", "async"}});
  auto c = svc.https();
  const httplib::Headers auth = {{"Authorization", "Bearer " + svc.operator_key()}};
  // A JSON body sent as multipart (no boundary, or a boundary the body does not use).
  for (const char* type : {"multipart/form-data", "multipart/form-data; boundary=xyz"}) {
    auto a = c->Post("/v1/leads", auth, sample_lead(1).dump(), type);
    EXPECT_EQ(a->status, 415) << type << ": " << a->body;
    auto s = c->Post("/v1/sellers", auth, R"({"name":"x"})", type);
    EXPECT_EQ(s->status, 415) << type << ": " << s->body;
    auto b = c->Post("/api/v1/lead", sample_campaign_lead(2, key).dump(), type);
    EXPECT_EQ(b->status, 415) << type << ": " << b->body;
    EXPECT_EQ(body_of(b)["status"], "unsupported_media_type");
  }
  // A well-formed multipart body: 415 on a JSON route, a lead on the legacy form.
  httplib::MultipartFormDataItems form;
  const json fields = sample_campaign_lead(3, key);
  for (const auto& [k, v] : fields.items())
    if (k != "SELLER_CAMPAIGN_KEY") form.push_back({k, v.get<std::string>(), "", ""});
  EXPECT_EQ(c->Post("/api/v1/lead", form)->status, 415);
  EXPECT_EQ(c->Post(("/" + key).c_str(), form)->status, 202);
  // A malformed multipart body on the legacy form is still unreadable: 400.
  auto bad = c->Post(("/" + key).c_str(), "not multipart", "multipart/form-data; boundary=xyz");
  EXPECT_EQ(bad->status, 400) << bad->body;
}

// ---------------------------------------------------------------------------------------------
// The audit log

TEST(Audit, RecordsFailuresRefusalsAndKeysWithoutSecrets) {
  ServiceFixture svc(front_only(2));
  ::testing::internal::CaptureStderr();
  const std::string seller = svc.add_seller();
  const auto [campaign_id, campaign_key] = svc.add_campaign(seller, {{"mode", "async"}});
  const double failed0 = counter(
      "leadflow_audit_events_total{event=\"auth_failed\",kind=\"unknown_key\",surface=\"api\"}");
  const double created0 = counter(
      "leadflow_audit_events_total{event=\"key_created\",kind=\"api_key\",surface=\"api\"}");

  // A key that looks real but is not: its secret must never be written.
  const std::string wrong = "lfk_" + std::string(39, 'Q') + "WXYZ";
  EXPECT_EQ(svc.get("/v1/leads", wrong)->status, 401);
  EXPECT_EQ(svc.https()
                ->Post("/api/v1/lead",
                       sample_campaign_lead(1, "lfc_" + std::string(39, 'R') + "STUV").dump(),
                       "application/json")
                ->status,
            401);
  EXPECT_EQ(svc.get("/v1/leads", wrong)->status, 429);
  auto created =
      svc.post("/v1/api-keys", {{"name", "ci"}, {"seller_id", seller}}, svc.operator_key());
  ASSERT_EQ(created->status, 201);
  const std::string new_key = body_of(created)["data"]["key"];
  const std::string new_key_id = body_of(created)["data"]["key_id"];
  auto revoked = svc.https()->Delete(("/v1/api-keys/" + new_key_id).c_str(),
                                     {{"Authorization", "Bearer " + svc.operator_key()}});
  ASSERT_EQ(revoked->status, 200);
  EXPECT_EQ(svc.get("/v1/leads", new_key)->status, 429);  // revoked, and over the limit
  const std::string log = ::testing::internal::GetCapturedStderr();

  std::vector<json> lines;
  std::size_t start = 0;
  while (start < log.size()) {
    const auto end = log.find('\n', start);
    const std::string line = log.substr(start, end - start);
    start = end == std::string::npos ? log.size() : end + 1;
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("event", "").rfind("audit.", 0) == 0) lines.push_back(j);
  }
  auto find = [&](const std::string& event, const std::string& field, const std::string& value) {
    for (const json& j : lines)
      if (j["event"] == event && j.value(field, "") == value) return j;
    return json();
  };
  const json failed = find("audit.auth_failed", "route", "/v1/leads");
  ASSERT_FALSE(failed.is_null()) << log;
  EXPECT_EQ(failed["client"], "127.0.0.1");
  EXPECT_EQ(failed["surface"], "api");
  EXPECT_EQ(failed["kind"], "unknown_key");
  EXPECT_EQ(failed["credential_last4"], "WXYZ");
  const json failed_b = find("audit.auth_failed", "route", "/api/v1/lead");
  ASSERT_FALSE(failed_b.is_null()) << log;
  EXPECT_EQ(failed_b["surface"], "campaign");
  EXPECT_EQ(failed_b["credential_last4"], "STUV");
  const json limited = find("audit.rate_limited", "route", "/v1/leads");
  ASSERT_FALSE(limited.is_null()) << log;
  EXPECT_EQ(limited["kind"], "failed_auth_per_address");
  EXPECT_EQ(limited["client"], "127.0.0.1");
  const json made = find("audit.key_created", "key_id", new_key_id);
  ASSERT_FALSE(made.is_null()) << log;
  EXPECT_EQ(made["seller_id"], seller);
  EXPECT_EQ(made["client"], "127.0.0.1");
  EXPECT_EQ(made["actor_key_id"].get<std::string>().rfind("key_", 0), 0u);
  const json campaign_made = find("audit.key_created", "campaign_id", campaign_id);
  ASSERT_FALSE(campaign_made.is_null()) << log;
  EXPECT_EQ(campaign_made["kind"], "campaign_key");
  EXPECT_EQ(campaign_made["seller_id"], seller);
  const json gone = find("audit.key_revoked", "key_id", new_key_id);
  ASSERT_FALSE(gone.is_null()) << log;
  EXPECT_EQ(gone["route"], "/v1/api-keys/{id}");

  // No secret in any line: not the keys, not the campaign key, not the operator's.
  for (const std::string& secret :
       {wrong, new_key, campaign_key, svc.operator_key(), std::string(39, 'Q'),
        std::string(39, 'R'), new_key.substr(4, 20)})
    EXPECT_EQ(log.find(secret), std::string::npos) << secret;

  EXPECT_GE(counter("leadflow_audit_events_total{event=\"auth_failed\",kind=\"unknown_key\","
                    "surface=\"api\"}"),
            failed0 + 1);
  EXPECT_GE(counter("leadflow_audit_events_total{event=\"key_created\",kind=\"api_key\","
                    "surface=\"api\"}"),
            created0 + 1);
  EXPECT_GE(counter("leadflow_audit_events_total{event=\"key_revoked\",kind=\"api_key\","
                    "surface=\"api\"}"),
            1);
  EXPECT_GE(counter("leadflow_audit_events_total{event=\"rate_limited\",kind=\"failed_auth_per_"
                    "address\",surface=\"api\"}"),
            1);
}

}  // namespace
}  // namespace leadflow::testing
