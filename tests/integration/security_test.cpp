// Security bounds of the front over real HTTPS, a section per bound.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "leadflow/base/ids.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

// A front without workers: accepted leads stay queued.
ServiceOptions front_only() {
  ServiceOptions o;
  o.workers = 0;
  return o;
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

}  // namespace
}  // namespace leadflow::testing
