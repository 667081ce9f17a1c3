// The visibility matrix over real HTTPS and SQLite (docs/visibility.md): every lead, return and
// settlement route, read by every role (the operator's key, a seller's key and dashboard session,
// a buyer's key and dashboard session). Each answer is searched whole: a seller's for any buyer
// id, bid, price or margin; a buyer's for any seller id, campaign id, payout or margin. And each
// must carry what is the reader's own: the person, the seller's payout, the buyer's price.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <thread>

#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr const char* kPassword = "a long enough password";

json body_of(const httplib::Result& r) { return json::parse(r->body); }

// Every string and number anywhere in a JSON document.
void collect(const json& j, std::vector<std::string>& strings, std::vector<double>& numbers) {
  if (j.is_object() || j.is_array()) {
    for (const auto& v : j) collect(v, strings, numbers);
  } else if (j.is_string()) {
    strings.push_back(j.get<std::string>());
  } else if (j.is_number()) {
    numbers.push_back(j.get<double>());
  }
}

// What must never appear in an answer: ids (anywhere inside a string) and amounts (as numbers).
struct Forbidden {
  std::vector<std::string> ids;
  std::vector<double> amounts;
};

// Fails, naming the leak, when `body` holds anything forbidden.
void expect_no_leak(const std::string& what, const json& body, const Forbidden& f) {
  std::vector<std::string> strings;
  std::vector<double> numbers;
  collect(body, strings, numbers);
  for (const auto& id : f.ids)
    for (const auto& s : strings)
      EXPECT_EQ(s.find(id), std::string::npos) << what << " leaks " << id << ": " << body.dump();
  for (double amount : f.amounts)
    for (double n : numbers)
      EXPECT_FALSE(std::fabs(n - amount) < 1e-9)
          << what << " leaks the amount " << amount << ": " << body.dump();
}

// The number of keys named `key` anywhere in `j`.
int count_key(const json& j, const std::string& key) {
  int n = 0;
  if (j.is_object())
    for (const auto& [k, v] : j.items()) n += (k == key) + count_key(v, key);
  else if (j.is_array())
    for (const auto& v : j) n += count_key(v, key);
  return n;
}

// A reader: an API key, or a dashboard session (its cookie and CSRF token).
struct Reader {
  std::string name;
  std::string key;
  std::string cookie;
  std::string csrf;
};

class Visibility : public ::testing::Test {
 protected:
  void SetUp() override {
    high = start_buyer("high", 15.00);
    low = start_buyer("low", 10.00);
    far = start_buyer("far", 30.00);
    high_id = svc.add_buyer(*high);
    low_id = svc.add_buyer(*low);
    // Never eligible: its id lands in every lead's ineligible_buyers.
    far_id = svc.add_buyer(*far, "auto_insurance", {{"filters", {{"states", {"AK"}}}}});
    // Paid 5.50 a lead posted with its keys, 6.25 a lead of its campaign.
    auto made = svc.post("/v1/sellers",
                         {{"name", "Acme Leads"}, {"payout", {{"model", "fixed"}, {"value", 5.5}}}},
                         svc.operator_key());
    ASSERT_EQ(made->status, 201) << made->body;
    seller_id = body_of(made)["data"]["seller_id"];
    rival_id = svc.add_seller("Rival Leads");
    auto campaign =
        svc.add_campaign(seller_id, {{"payout", {{"model", "fixed"}, {"value", 6.25}}}});
    campaign_id = campaign.first;
    campaign_key = campaign.second;

    op = {"operator key", svc.operator_key(), "", ""};
    seller_key = {"seller key", svc.add_api_key({{"name", "s"}, {"seller_id", seller_id}}), "", ""};
    seller_session = session("seller@example.com", "seller", {{"seller_id", seller_id}});
    seller_session.name = "seller session";
    buyer_key = {"buyer key", svc.add_api_key({{"name", "b"}, {"buyer_id", high_id}}), "", ""};
    buyer_session = session("buyer@example.com", "buyer", {{"buyer_id", high_id}});
    buyer_session.name = "buyer session";
  }

  Reader session(const std::string& email, const std::string& account, json extra) {
    json body = {{"email", email}, {"name", email}, {"password", kPassword}, {"account", account}};
    body.merge_patch(extra);
    auto made = svc.post("/v1/users", body, svc.operator_key());
    EXPECT_EQ(made->status, 201) << made->body;
    auto r = svc.https()->Post(
        "/v1/session", json{{"email", email}, {"password", kPassword}}.dump(), "application/json");
    EXPECT_EQ(r->status, 201) << r->body;
    Reader out;
    if (r->status != 201) return out;
    const std::string set = r->get_header_value("Set-Cookie");
    out.cookie = set.substr(0, set.find(';'));
    out.csrf = body_of(r)["csrf_token"];
    return out;
  }

  httplib::Headers headers(const Reader& r) const {
    if (!r.key.empty()) return {{"Authorization", "Bearer " + r.key}};
    return {{"Cookie", r.cookie}, {"X-CSRF-Token", r.csrf}};
  }
  httplib::Result get(const std::string& path, const Reader& r) const {
    return svc.https()->Get(path.c_str(), headers(r));
  }
  httplib::Result post(const std::string& path, const json& body, const Reader& r) const {
    return svc.https()->Post(path.c_str(), headers(r), body.dump(), "application/json");
  }

  // The lead as the operator reads it.
  json operator_view(const std::string& id) {
    auto r = get("/v1/leads/" + id, op);
    EXPECT_EQ(r->status, 200) << r->body;
    return body_of(r)["data"];
  }

  // What a seller must never see, and a buyer (`buyer`'s reader) must never see.
  Forbidden seller_forbidden() const {
    // The buyers' bids and prices, and the margin of a sale at 15 paying 6.25.
    return {{high_id, low_id, far_id, "by_"}, {15.0, 10.0, 30.0, 15.0 - 6.25, 15.0 - 5.5}};
  }
  Forbidden buyer_forbidden() const {
    return {{seller_id, rival_id, campaign_id, "sl_", "cp_"}, {5.5, 6.25, 15.0 - 6.25, 15.0 - 5.5}};
  }

  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> high, low, far;
  std::string high_id, low_id, far_id, seller_id, rival_id, campaign_id, campaign_key;
  Reader op, seller_key, seller_session, buyer_key, buyer_session;
};

TEST_F(Visibility, EveryLeadRouteTimesEveryRoleShowsItsOwnAndLeaksNothing) {
  // Three leads of the seller, all bought by `high` at 15: by its key, by its dashboard
  // session (5.50 each to the seller) and through its campaign (Surface B, 6.25).
  std::vector<std::string> ids;
  for (const Reader* r : {&seller_key, &seller_session}) {
    auto posted = post("/v1/leads", sample_lead(static_cast<int>(ids.size()) + 1), *r);
    ASSERT_EQ(posted->status, 201) << r->name << ": " << posted->body;
    const json b = body_of(posted);
    expect_no_leak(r->name + " POST /v1/leads", b, seller_forbidden());
    // The interface names buyer_id in every distribution: a seller reads it, withheld, as null.
    ASSERT_TRUE(b["distribution"].contains("buyer_id")) << b.dump();
    EXPECT_TRUE(b["distribution"]["buyer_id"].is_null()) << b.dump();
    // Its own payout, where the buyers' price was.
    const json lead = operator_view(b["lead_id"]);
    EXPECT_EQ(b["distribution"]["price"], lead["distribution"]["payout"]) << b.dump();
    EXPECT_EQ(b["distribution"]["payout"], 5.5) << b.dump();
    EXPECT_EQ(lead["distribution"]["payout"], 5.5) << lead.dump();
    ids.push_back(b["lead_id"]);
  }
  auto b_posted = svc.https()->Post("/api/v1/lead", sample_campaign_lead(3, campaign_key).dump(),
                                    "application/json");
  ASSERT_EQ(b_posted->status, 200) << b_posted->body;
  expect_no_leak("Surface B answer", body_of(b_posted), seller_forbidden());
  ids.push_back(body_of(b_posted)["lead_id"]);
  const std::string campaign_lead = ids.back();

  // The operator's answer to its own post names the buyer and its price.
  auto op_posted = svc.post("/v1/leads", sample_lead(9), svc.operator_key());
  ASSERT_EQ(op_posted->status, 201) << op_posted->body;
  EXPECT_EQ(body_of(op_posted)["distribution"]["buyer_id"], high_id);
  EXPECT_EQ(body_of(op_posted)["distribution"]["price"], 15.0);

  // The buyer returns the campaign's lead: its answer has its price, not the payout.
  auto ret =
      post("/v1/leads/" + campaign_lead + "/return", {{"reason", "invalid_phone"}}, buyer_key);
  ASSERT_EQ(ret->status, 201) << ret->body;
  expect_no_leak("buyer key POST return", body_of(ret), buyer_forbidden());
  EXPECT_EQ(body_of(ret)["data"]["price"], 15.0);
  // Neither a seller nor the buyer settles; an unsettleable lead is the operator's 409.
  for (const Reader* r : {&seller_key, &seller_session, &buyer_key, &buyer_session})
    EXPECT_EQ(post("/v1/leads/" + ids[0] + "/settle", {{"sold", true}}, *r)->status, 403)
        << r->name;
  EXPECT_EQ(post("/v1/leads/" + ids[0] + "/return", {{"reason", "fraud"}}, seller_key)->status,
            403);

  const json campaign_op = operator_view(campaign_lead);
  ASSERT_EQ(campaign_op["status"], "returned");
  EXPECT_EQ(campaign_op["distribution"]["payout"], 6.25);
  EXPECT_EQ(campaign_op["campaign_id"], campaign_id);
  EXPECT_EQ(campaign_op["ineligible_buyers"][0]["buyer_id"], far_id);
  EXPECT_EQ(campaign_op["ledger"].size(), 2u);
  EXPECT_EQ(count_key(campaign_op, "margin"), 2);

  // Every lead view and the list, by every role.
  for (const Reader* r : {&seller_key, &seller_session}) {
    for (const auto& id : ids) {
      auto got = get("/v1/leads/" + id, *r);
      ASSERT_EQ(got->status, 200) << r->name << ": " << got->body;
      const json lead = body_of(got)["data"];
      expect_no_leak(r->name + " GET lead", lead, seller_forbidden());
      EXPECT_EQ(lead["seller_id"], seller_id);
      EXPECT_FALSE(lead["email"].get<std::string>().empty());  // the person, its own
      EXPECT_EQ(lead["distribution"]["payout"], operator_view(id)["distribution"]["payout"]);
      EXPECT_TRUE(lead.contains("offers")) << lead.dump();
      EXPECT_EQ(lead["ineligible_reasons"],
                json({"the lead's state is outside a buyer's filters"}));
      for (const char* absent : {"attempts", "ineligible_buyers"})
        EXPECT_FALSE(lead.contains(absent)) << r->name << " " << absent;
      EXPECT_EQ(count_key(lead, "margin"), 0);
    }
    const json returned = body_of(get("/v1/leads/" + campaign_lead, *r))["data"];
    ASSERT_EQ(returned["returns"].size(), 1u) << returned.dump();
    EXPECT_EQ(returned["returns"][0]["payout"], 6.25);  // its payout reversal
    ASSERT_EQ(returned["ledger"].size(), 2u) << returned.dump();
    EXPECT_EQ(returned["ledger"][1]["payout"], -6.25);
    EXPECT_EQ(returned["campaign_id"], campaign_id);

    auto list = get("/v1/leads", *r);
    ASSERT_EQ(list->status, 200) << list->body;
    expect_no_leak(r->name + " GET /v1/leads", body_of(list), seller_forbidden());
    EXPECT_EQ(body_of(list)["data"].size(), 3u);
    const json rows = body_of(list)["data"];  // a range-for over a temporary's member dangles
    for (const auto& row : rows) EXPECT_TRUE(row["distribution"].contains("payout")) << row.dump();

    // A filter on a buyer is refused, naming it; on another seller too.
    for (const std::string& q :
         {"buyer_id=" + high_id, "buyer_id=" + low_id, "seller_id=" + rival_id}) {
      auto refused = get("/v1/leads?" + q, *r);
      EXPECT_EQ(refused->status, 400) << r->name << " " << q << ": " << refused->body;
      EXPECT_EQ(body_of(refused)["errors"][0]["field"], q.substr(0, q.find('=')));
    }
    EXPECT_EQ(get("/v1/leads?seller_id=" + seller_id, *r)->status, 200);
    EXPECT_EQ(get("/v1/leads?status=returned&source=google&vertical=auto_insurance", *r)->status,
              200);
  }

  for (const Reader* r : {&buyer_key, &buyer_session}) {
    std::set<std::string> codes;
    for (const auto& id : ids) {
      auto got = get("/v1/leads/" + id, *r);
      ASSERT_EQ(got->status, 200) << r->name << ": " << got->body;
      const json lead = body_of(got)["data"];
      expect_no_leak(r->name + " GET lead", lead, buyer_forbidden());
      EXPECT_FALSE(lead["email"].get<std::string>().empty());  // the person it bought
      EXPECT_EQ(lead["distribution"]["price"], 15.0);
      EXPECT_EQ(lead["distribution"]["buyer_id"], high_id);
      codes.insert(lead["source_code"].get<std::string>());
      EXPECT_EQ(count_key(lead, "payout"), 0) << lead.dump();
      EXPECT_EQ(count_key(lead, "margin"), 0) << lead.dump();
      // Another buyer's bids are not its own.
      for (const auto& a : lead["attempts"]) EXPECT_EQ(a["buyer_id"], high_id);
    }
    EXPECT_EQ(codes.size(), 1u);  // one seller, one stable code
    const json returned = body_of(get("/v1/leads/" + campaign_lead, *r))["data"];
    ASSERT_EQ(returned["returns"].size(), 1u);
    EXPECT_EQ(returned["returns"][0]["price"], 15.0);
    EXPECT_EQ(returned["ledger"][0]["price"], 15.0);

    auto list = get("/v1/leads", *r);
    ASSERT_EQ(list->status, 200) << list->body;
    expect_no_leak(r->name + " GET /v1/leads", body_of(list), buyer_forbidden());
    EXPECT_EQ(body_of(list)["data"].size(), 4u);  // the operator's lead too: it bought it
    for (const std::string& q : {"seller_id=" + seller_id, "buyer_id=" + low_id}) {
      auto refused = get("/v1/leads?" + q, *r);
      EXPECT_EQ(refused->status, 400) << r->name << " " << q << ": " << refused->body;
      EXPECT_EQ(body_of(refused)["errors"][0]["field"], q.substr(0, q.find('=')));
    }
    EXPECT_EQ(get("/v1/leads?buyer_id=" + high_id, *r)->status, 200);
  }

  // Another seller's key sees none of them.
  const std::string rival_key = svc.add_api_key({{"name", "r"}, {"seller_id", rival_id}});
  for (const auto& id : ids) EXPECT_EQ(svc.get("/v1/leads/" + id, rival_key)->status, 404);
  // The operator's list and views are whole.
  const json all = body_of(get("/v1/leads", op))["data"];
  EXPECT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0]["distribution"]["buyer_id"], high_id);
}

TEST_F(Visibility, EachBuyerGetsItsOwnCodeAndTheOperatorMayShowSellerNames) {
  auto posted = post("/v1/leads", sample_lead(1), seller_key);
  ASSERT_EQ(posted->status, 201) << posted->body;
  const std::string id = body_of(posted)["lead_id"];
  const json seen = body_of(get("/v1/leads/" + id, buyer_key))["data"];
  const std::string code = seen["source_code"];
  EXPECT_EQ(code.rfind("src_", 0), 0u);
  EXPECT_FALSE(seen.contains("seller_id"));

  // The option round-trips, is validated and defaults to false.
  const json before = body_of(svc.get("/v1/buyers/" + high_id, svc.operator_key()))["data"];
  EXPECT_EQ(before["visibility"], json({{"seller_names", false}}));
  auto put = [&](const json& body) {
    return svc.https()->Put(("/v1/buyers/" + high_id).c_str(),
                            {{"Authorization", "Bearer " + svc.operator_key()}}, body.dump(),
                            "application/json");
  };
  for (const json& bad : {json{{"visibility", {{"seller_names", "yes"}}}},
                          json{{"visibility", {{"payouts", true}}}}, json{{"visibility", 1}}}) {
    auto r = put(bad);
    EXPECT_EQ(r->status, 400) << bad.dump() << ": " << r->body;
  }
  auto shown = put({{"visibility", {{"seller_names", true}}}});
  ASSERT_EQ(shown->status, 200) << shown->body;
  EXPECT_EQ(body_of(shown)["data"]["visibility"]["seller_names"], true);
  EXPECT_EQ(body_of(svc.get("/v1/buyers/" + high_id,
                            svc.operator_key()))["data"]["visibility"]["seller_names"],
            true);
  // A buyer cannot set it for itself.
  EXPECT_EQ(post("/v1/buyers", {{"name", "x"}}, buyer_key)->status, 403);

  for (const Reader* r : {&buyer_key, &buyer_session}) {
    const json named = body_of(get("/v1/leads/" + id, *r))["data"];
    EXPECT_EQ(named["seller_id"], seller_id) << r->name;
    EXPECT_EQ(named["seller_name"], "Acme Leads") << r->name;
    EXPECT_EQ(named["source_code"], code);  // the code stays
    EXPECT_EQ(count_key(named, "payout"), 0) << named.dump();
  }
  ASSERT_EQ(put({{"visibility", {{"seller_names", false}}}})->status, 200);
  EXPECT_FALSE(body_of(get("/v1/leads/" + id, buyer_key))["data"].contains("seller_id"));

  // Another buyer that buys the same seller's lead gets another code.
  high->set_no_bid_rate(1.0);
  auto second = post("/v1/leads", sample_lead(2), seller_key);
  ASSERT_EQ(second->status, 201) << second->body;
  const std::string low_key = svc.add_api_key({{"name", "l"}, {"buyer_id", low_id}});
  const json low_seen = body_of(
      svc.get("/v1/leads/" + body_of(second)["lead_id"].get<std::string>(), low_key))["data"];
  ASSERT_TRUE(low_seen.contains("source_code")) << low_seen.dump();
  EXPECT_NE(low_seen["source_code"], code);
  EXPECT_EQ(low_seen["distribution"]["price"], 10.0);
}

// A lead whose post was never answered fails naming its buyer; the operator settles it.
class SettledVisibility : public ::testing::Test {
 protected:
  static ServiceOptions short_auctions() {
    ServiceOptions o;
    o.auction_timeout_ms = 600;
    o.wait_ms = 100;  // answer 202 at once: the lead is decided (failed) seconds later
    return o;
  }
  SettledVisibility() : svc(short_auctions()) {}

  void SetUp() override {
    BuyerSimOptions o;
    o.name = "silent";
    o.hang_ms = 5000;
    silent = std::make_unique<BuyerSimulator>(o);
    silent->start();
    // A fixed-price buyer is posted without a ping: every request it gets is a post.
    silent_id =
        svc.add_buyer(*silent, "auto_insurance",
                      {{"delivery", {{"timeout_ms", 150}}},
                       {"pricing", {{"model", "fixed"}, {"price", 20.0}, {"min_bid", nullptr}}}});
    silent->set_hang_next(1'000'000);
    auto made = svc.post("/v1/sellers",
                         {{"name", "Acme Leads"}, {"payout", {{"model", "fixed"}, {"value", 7.5}}}},
                         svc.operator_key());
    ASSERT_EQ(made->status, 201) << made->body;
    seller_id = body_of(made)["data"]["seller_id"];
    seller_key = svc.add_api_key({{"name", "s"}, {"seller_id", seller_id}});
    buyer_key = svc.add_api_key({{"name", "b"}, {"buyer_id", silent_id}});
  }

  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> silent;
  std::string silent_id, seller_id, seller_key, buyer_key;
};

TEST_F(SettledVisibility, AFailedLeadsReasonNamesNoBuyerAndEachSideReadsItsSettlement) {
  auto posted = svc.post("/v1/leads", sample_lead(1), seller_key);
  ASSERT_TRUE(posted->status == 201 || posted->status == 202) << posted->body;
  const std::string id = body_of(posted)["lead_id"];
  json op;
  for (int i = 0; i < 600; ++i) {
    op = body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"];
    if (op["status"] == "failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(op["status"], "failed") << op.dump();
  // The operator's reason names the buyer; the seller's does not.
  EXPECT_NE(op["distribution"]["reason"].get<std::string>().find(silent_id), std::string::npos)
      << op.dump();
  const json failed = body_of(svc.get("/v1/leads/" + id, seller_key))["data"];
  ASSERT_TRUE(failed["distribution"].contains("reason")) << failed.dump();
  expect_no_leak("seller's failed lead", failed, {{silent_id, "by_"}, {20.0}});
  EXPECT_EQ(svc.get("/v1/leads/" + id, buyer_key)->status, 404);  // not bought (yet)

  auto settled = svc.post("/v1/leads/" + id + "/settle",
                          {{"sold", true}, {"note", "phoned " + seller_id}}, svc.operator_key());
  ASSERT_EQ(settled->status, 201) << settled->body;
  EXPECT_EQ(body_of(settled)["data"]["payout"], 7.5);
  EXPECT_EQ(body_of(settled)["data"]["price"], 20.0);

  const json seller_view = body_of(svc.get("/v1/leads/" + id, seller_key))["data"];
  expect_no_leak("seller's settled lead", seller_view, {{silent_id, "by_"}, {20.0, 12.5}});
  ASSERT_EQ(seller_view["settlements"].size(), 1u) << seller_view.dump();
  EXPECT_EQ(seller_view["settlement"]["payout"], 7.5);
  EXPECT_EQ(seller_view["distribution"]["payout"], 7.5);
  EXPECT_FALSE(seller_view["settlement"].contains("note"));

  auto bought = svc.get("/v1/leads/" + id, buyer_key);
  ASSERT_EQ(bought->status, 200) << bought->body;
  const json buyer_view = body_of(bought)["data"];
  expect_no_leak("buyer's settled lead", buyer_view, {{seller_id, "sl_"}, {7.5, 12.5}});
  EXPECT_EQ(buyer_view["settlement"]["price"], 20.0);
  EXPECT_EQ(buyer_view["distribution"]["price"], 20.0);
  EXPECT_FALSE(buyer_view["settlement"].contains("note"));
}

}  // namespace
}  // namespace leadflow::testing
