#pragma once
// Second chances end to end over real HTTPS with simulated buyers (docs/reoffers.md), on whichever
// store the ServiceFixture was given: reoffers_test runs them on a SQLite file (the embedded
// default), pg_reoffers_test on PostgreSQL. A lead nobody bought live is offered again after its
// vertical's delay to the buyers that take aged leads and were never posted it, at their aged
// price; the sale enters the lead's timeline and the ledger, and each party sees only its own.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "leadflow/store/store.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {

using nlohmann::json;

inline json reoffer_body_of(const httplib::Result& r) { return json::parse(r->body); }

inline ServiceOptions reoffering_vertical(const std::string& max_sales = "1") {
  ServiceOptions o;
  o.verticals_json = R"({"verticals": [{"name": "auto_insurance", "max_sales": )" + max_sales +
                     R"(, "reoffer": {"delays_seconds": [1, 2], "window_hours": 1}}]})";
  return o;
}

// The operator's view of the lead once `until` holds of it, or the last one read after 20 s.
template <class Pred>
json lead_when(ServiceFixture& svc, const std::string& id, Pred until) {
  json lead;
  for (int i = 0; i < 200; ++i) {
    lead = reoffer_body_of(svc.get("/v1/leads/" + id, svc.operator_key()))["data"];
    if (until(lead)) return lead;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return lead;
}

/// An unsold lead is sold aged to a buyer of aged leads never posted it, at its aged price; its
/// timeline, its ledger and what each party sees of it.
inline void check_aged_sale(ServiceFixture& svc) {
  // Live, nobody buys: `live` bids nothing, `posted` bids and refuses the post.
  auto live = start_buyer("live", 9.00);
  live->set_no_bid_rate(1.0);
  auto posted = start_buyer("posted", 9.00);
  posted->set_reject_rate(1.0);
  auto aged = start_buyer("aged", 9.00);
  aged->set_no_bid_rate(1.0);
  const std::string live_id = svc.add_buyer(*live);
  const std::string posted_id = svc.add_buyer(
      *posted, "auto_insurance",
      {{"accepts_aged", true}, {"pricing", {{"model", "bid"}, {"aged_price", 2.00}}}});
  const std::string aged_id = svc.add_buyer(
      *aged, "auto_insurance",
      {{"accepts_aged", true}, {"pricing", {{"model", "bid"}, {"aged_price", 3.50}}}});
  const std::string aged_key = svc.add_api_key({{"name", "aged"}, {"buyer_id", aged_id}});
  const std::string seller_id = svc.add_seller("Second Chances");
  const std::string seller_key = svc.add_api_key({{"name", "seller"}, {"seller_id", seller_id}});

  auto r = svc.post("/v1/leads", sample_lead(1), seller_key);
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string id = reoffer_body_of(r)["lead_id"];
  EXPECT_EQ(reoffer_body_of(r)["distribution"]["delivery_status"], "unsold") << r->body;
  ASSERT_EQ(posted->posts().size(), 1u);  // live: posted and refused
  EXPECT_EQ(aged->posts().size(), 0u);
  // The schedule's backlog on /metrics: one re-offer scheduled, due in a second.
  const auto gauges = [&] { return svc.get("/metrics", svc.operator_key())->body; };
  const std::string before = gauges();
  EXPECT_NE(before.find("\nleadflow_reoffers_scheduled 1\n"), std::string::npos) << before;
  EXPECT_NE(before.find("\nleadflow_reoffers_due 0\n"), std::string::npos) << before;

  const json lead = lead_when(svc, id, [](const json& l) { return l["status"] == "delivered"; });
  ASSERT_EQ(lead["status"], "delivered") << lead.dump();
  const std::string after = gauges();  // sold aged: nothing left to offer again
  EXPECT_NE(after.find("\nleadflow_reoffers_scheduled 0\n"), std::string::npos) << after;
  // The aged buyer took it at its aged price, without a ping; the buyer already posted live was
  // not offered it again; the buyer not taking aged leads was not pinged again.
  ASSERT_EQ(aged->posts().size(), 1u);
  EXPECT_EQ(json::parse(aged->posts()[0].body)["price"], 3.5);
  EXPECT_EQ(aged->posts()[0].header("Idempotency-Key"), id);
  EXPECT_EQ(posted->posts().size(), 1u);
  EXPECT_EQ(live->pings().size(), 1u);
  EXPECT_EQ(lead["distribution"]["buyer_id"], aged_id);
  EXPECT_EQ(lead["distribution"]["price"], 3.5);
  // The timeline: the live auction, then the re-offer's post.
  const json& attempts = lead["attempts"];
  ASSERT_GE(attempts.size(), 3u) << lead.dump();
  for (std::size_t i = 0; i + 1 < attempts.size(); ++i)
    EXPECT_EQ(attempts[i]["reoffer"], 0) << attempts.dump();
  EXPECT_EQ(attempts.back()["buyer_id"], aged_id);
  EXPECT_EQ(attempts.back()["kind"], "post");
  EXPECT_EQ(attempts.back()["outcome"], "accepted");
  EXPECT_EQ(attempts.back()["reoffer"], 1);
  // One ledger entry, as any sale: the seller paid by its rule (70%) on 3.50.
  ASSERT_EQ(lead["ledger"].size(), 1u) << lead.dump();
  EXPECT_EQ(lead["ledger"][0]["revenue"], 3.5);
  EXPECT_EQ(lead["ledger"][0]["payout"], 2.45);

  // The seller sees its lead sold later and its payout, no buyer and no price.
  const json mine = reoffer_body_of(svc.get("/v1/leads/" + id, seller_key))["data"];
  EXPECT_EQ(mine["status"], "delivered");
  EXPECT_EQ(mine["distribution"]["price"], 2.45) << mine.dump();
  EXPECT_TRUE(mine["distribution"]["buyer_id"].is_null()) << mine.dump();
  EXPECT_EQ(mine["offers"]["reoffers"], 1) << mine.dump();
  // The buyer sees its aged purchase at its price, and no seller.
  const json bought = reoffer_body_of(svc.get("/v1/leads/" + id, aged_key))["data"];
  EXPECT_EQ(bought["distribution"]["price"], 3.5) << bought.dump();
  EXPECT_FALSE(bought.contains("seller_id") && !bought["seller_id"].is_null()) << bought.dump();
  // Only its own pings and posts: its live ping, then its aged post.
  ASSERT_EQ(bought["attempts"].size(), 2u) << bought.dump();
  for (const auto& a : bought["attempts"]) EXPECT_EQ(a["buyer_id"], aged_id) << bought.dump();
  EXPECT_EQ(bought["attempts"][1]["reoffer"], 1) << bought.dump();

  // The reports (docs/reports.md): the revenue came from an aged sale, each reader its own
  // money of it; the unsold lead was offered again and sold aged.
  const auto totals = [&](const std::string& report, const std::string& key) {
    const auto got = svc.get("/v1/reports/" + report, key);
    EXPECT_EQ(got->status, 200) << got->body;
    return reoffer_body_of(got)["data"]["totals"];
  };
  const json op = totals("revenue", svc.operator_key());
  EXPECT_EQ(op["leads_sold"], 1) << op.dump();
  EXPECT_EQ(op["aged_sales"], 1) << op.dump();
  EXPECT_EQ(op["aged_revenue"], 3.5) << op.dump();
  EXPECT_EQ(op["aged_payout"], 2.45) << op.dump();
  EXPECT_EQ(op["aged_margin"], 1.05) << op.dump();
  // Nothing returned yet: the aged band net of returns is the sale as made.
  EXPECT_EQ(op["aged_net_revenue"], 3.5) << op.dump();
  EXPECT_EQ(op["aged_net_payout"], 2.45) << op.dump();
  EXPECT_EQ(op["aged_net_margin"], 1.05) << op.dump();
  const json seller = totals("revenue", seller_key);
  EXPECT_EQ(seller["aged_sales"], 1) << seller.dump();
  EXPECT_EQ(seller["aged_payout"], 2.45) << seller.dump();
  EXPECT_FALSE(seller.contains("aged_revenue") || seller.contains("aged_margin")) << seller.dump();
  EXPECT_EQ(seller["aged_net_payout"], 2.45) << seller.dump();
  EXPECT_FALSE(seller.contains("aged_net_revenue") || seller.contains("aged_net_margin"))
      << seller.dump();
  const json buyer = totals("revenue", aged_key);
  EXPECT_EQ(buyer["aged_revenue"], 3.5) << buyer.dump();
  EXPECT_FALSE(buyer.contains("aged_payout") || buyer.contains("aged_margin")) << buyer.dump();
  EXPECT_EQ(buyer["aged_net_revenue"], 3.5) << buyer.dump();
  EXPECT_FALSE(buyer.contains("aged_net_payout") || buyer.contains("aged_net_margin"))
      << buyer.dump();
  for (const std::string& key : {svc.operator_key(), seller_key}) {
    const auto got = svc.get("/v1/reports/unsold?group_by=reason", key);
    ASSERT_EQ(got->status, 200) << got->body;
    const json data = reoffer_body_of(got)["data"];
    EXPECT_EQ(data["totals"]["leads"], 1) << got->body;  // what the live auction found
    EXPECT_EQ(data["totals"]["reoffered"], 1) << got->body;
    EXPECT_EQ(data["totals"]["sold_aged"], 1) << got->body;
    ASSERT_EQ(data["rows"].size(), 1u) << got->body;
    EXPECT_EQ(data["rows"][0]["reason"], "refused") << got->body;
    EXPECT_EQ(data["rows"][0]["sold_aged"], 1) << got->body;
  }
  const auto csv = svc.get("/v1/reports/unsold?group_by=reason&format=csv", seller_key);
  EXPECT_EQ(csv->body.substr(0, csv->body.find("\r\n")), "reason,leads,reoffered,sold_aged");

  // Returned, the aged sale counts apart among the returns: each reader its own money of it.
  const auto back =
      svc.post("/v1/leads/" + id + "/return", {{"reason", "invalid_phone"}}, aged_key);
  ASSERT_EQ(back->status, 201) << back->body;
  const json op_back = totals("revenue", svc.operator_key());
  EXPECT_EQ(op_back["returns"], 1) << op_back.dump();
  EXPECT_EQ(op_back["aged_returns"], 1) << op_back.dump();
  EXPECT_EQ(op_back["aged_returned_revenue"], 3.5) << op_back.dump();
  EXPECT_EQ(op_back["aged_returned_payout"], 2.45) << op_back.dump();
  EXPECT_EQ(op_back["aged_revenue"], 3.5) << op_back.dump();      // the sale, as made
  EXPECT_EQ(op_back["aged_net_revenue"], 0.0) << op_back.dump();  // and nothing left of it
  EXPECT_EQ(op_back["aged_net_payout"], 0.0) << op_back.dump();
  EXPECT_EQ(op_back["aged_net_margin"], 0.0) << op_back.dump();
  const json seller_back = totals("revenue", seller_key);
  EXPECT_EQ(seller_back["aged_returned_payout"], 2.45) << seller_back.dump();
  EXPECT_FALSE(seller_back.contains("aged_returned_revenue")) << seller_back.dump();
  EXPECT_EQ(seller_back["aged_net_payout"], 0.0) << seller_back.dump();
  const json buyer_back = totals("revenue", aged_key);
  EXPECT_EQ(buyer_back["aged_returns"], 1) << buyer_back.dump();
  EXPECT_EQ(buyer_back["aged_returned_revenue"], 3.5) << buyer_back.dump();
  EXPECT_FALSE(buyer_back.contains("aged_returned_payout")) << buyer_back.dump();
  EXPECT_EQ(buyer_back["aged_net_revenue"], 0.0) << buyer_back.dump();
  // Neither reads the other side's money anywhere: the price, the payout, the margin.
  EXPECT_EQ(seller_back.dump().find("3.5"), std::string::npos) << seller_back.dump();
  EXPECT_EQ(seller_back.dump().find("1.05"), std::string::npos) << seller_back.dump();
  EXPECT_EQ(buyer_back.dump().find("2.45"), std::string::npos) << buyer_back.dump();
  EXPECT_EQ(buyer_back.dump().find("1.05"), std::string::npos) << buyer_back.dump();
  const auto revenue_csv = svc.get("/v1/reports/revenue?group_by=&format=csv", aged_key);
  ASSERT_EQ(revenue_csv->status, 200) << revenue_csv->body;
  EXPECT_EQ(revenue_csv->body,
            "leads_sold,revenue,avg_price,gross_revenue,returns,returned_revenue,aged_sales,"
            "aged_revenue,aged_returns,aged_returned_revenue,aged_net_revenue\r\n"
            "1,0.0,3.5,3.5,1,3.5,1,3.5,1,3.5,0.0\r\n");
}

/// Nobody taking it aged, the lead goes through every round of its policy, then no more.
inline void check_every_round(ServiceFixture& svc) {
  auto none = start_buyer("none", 9.00);
  none->set_no_bid_rate(1.0);  // bids nothing, live or aged
  const std::string none_id = svc.add_buyer(*none, "auto_insurance", {{"accepts_aged", true}});
  const std::string seller_key =
      svc.add_api_key({{"name", "seller"}, {"seller_id", svc.add_seller()}});
  auto r = svc.post("/v1/leads", sample_lead(2), seller_key);
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string id = reoffer_body_of(r)["lead_id"];
  // Two rounds (1 s and 2 s): its aged pings say so, then no more.
  const json lead = lead_when(svc, id, [](const json& l) {
    return !l["attempts"].empty() && l["attempts"].back()["reoffer"] == 2;
  });
  ASSERT_EQ(lead["attempts"].back()["reoffer"], 2) << lead.dump();
  EXPECT_EQ(lead["status"], "unsold");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto pings = none->pings();
  ASSERT_EQ(pings.size(), 3u);  // live, then two aged pings
  EXPECT_FALSE(json::parse(pings[0].body).contains("aged"));
  EXPECT_EQ(json::parse(pings[1].body)["aged"], true);
  EXPECT_EQ(json::parse(pings[2].body)["aged"], true);
  EXPECT_EQ(svc.app().store().scheduled_reoffer(id).status, StoreStatus::kNotFound);
  (void)none_id;
  // Offered again, once however many rounds, and never sold aged; no aged revenue.
  const json unsold =
      reoffer_body_of(svc.get("/v1/reports/unsold", svc.operator_key()))["data"]["totals"];
  EXPECT_EQ(unsold["reoffered"], 1) << unsold.dump();
  EXPECT_EQ(unsold["sold_aged"], 0) << unsold.dump();
  const json revenue =
      reoffer_body_of(svc.get("/v1/reports/revenue", svc.operator_key()))["data"]["totals"];
  EXPECT_EQ(revenue["aged_sales"], 0) << revenue.dump();
}

/// A campaign's own policy replaces its vertical's (docs/reoffers.md): a campaign of solar (whose
/// vertical offers nothing again) with its own delay has its unsold lead sold aged; a campaign of
/// auto_insurance (whose vertical offers again after 1 s and 2 s) with a policy of none has its
/// unsold lead stay unsold, while a lead of the same vertical posted beside it with no campaign
/// follows the vertical's and is sold aged. The policy is the operator's to set, its seller's to
/// read, no buyer's.
inline void check_campaigns_own_policy(ServiceFixture& svc) {
  auto aged = start_buyer("aged", 9.00);
  aged->set_no_bid_rate(1.0);  // bids nothing live; buys aged at its aged price, without a ping
  const std::string aged_id =
      svc.add_buyer(*aged, "auto_insurance",
                    {{"verticals", {"auto_insurance", "solar"}},
                     {"accepts_aged", true},
                     {"pricing", {{"model", "bid"}, {"aged_price", 3.00}}}});
  const std::string buyer_key = svc.add_api_key({{"name", "aged"}, {"buyer_id", aged_id}});
  const std::string seller_id = svc.add_seller("Own Policies");
  const std::string seller_key = svc.add_api_key({{"name", "seller"}, {"seller_id", seller_id}});
  const json own = json::parse(R"({"delays_seconds": [1], "window_hours": 1})");
  const auto [solar_id, solar_key] =
      svc.add_campaign(seller_id, {{"vertical", "solar"}, {"reoffer", own}});
  const auto [auto_id, auto_key] = svc.add_campaign(seller_id);
  // A refused policy names its member and changes nothing; "none" is set by the operator.
  const auto put = [&](const std::string& key, const json& body) {
    return svc.https()->Put("/v1/campaigns/" + auto_id, {{"Authorization", "Bearer " + key}},
                            body.dump(), "application/json");
  };
  const auto refused = put(svc.operator_key(), {{"reoffer", {{"delays_seconds", {7200, 60}}}}});
  ASSERT_EQ(refused->status, 400) << refused->body;
  EXPECT_EQ(reoffer_body_of(refused)["errors"][0]["field"], "reoffer.delays_seconds");
  EXPECT_EQ(put(seller_key, {{"reoffer", nullptr}})->status, 403);
  const auto none = put(svc.operator_key(), {{"reoffer", {{"delays_seconds", json::array()}}}});
  ASSERT_EQ(none->status, 200) << none->body;
  EXPECT_EQ(reoffer_body_of(none)["data"]["reoffer"]["delays_seconds"], json::array());
  // Its seller reads it; a buyer reads no campaign.
  const json read = reoffer_body_of(svc.get("/v1/campaigns/" + solar_id, seller_key))["data"];
  EXPECT_EQ(read["reoffer"], own) << read.dump();
  EXPECT_EQ(svc.get("/v1/campaigns/" + solar_id, buyer_key)->status, 403);
  EXPECT_EQ(svc.get("/v1/campaigns", buyer_key)->status, 403);

  const auto post_b = [&](int salt, const std::string& key) {
    auto r = svc.post("/api/v1/lead", sample_campaign_lead(salt, key), "");
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    EXPECT_EQ(reoffer_body_of(r)["status"], "unsold") << r->body;
    return reoffer_body_of(r)["lead_id"].get<std::string>();
  };
  const std::string solar_lead = post_b(31, solar_key);
  const std::string none_lead = post_b(32, auto_key);
  auto a = svc.post("/v1/leads", sample_lead(33), seller_key);
  ASSERT_EQ(a->status, 201) << a->body;
  const std::string vertical_lead = reoffer_body_of(a)["lead_id"];
  const auto sold = [](const json& l) { return l["status"] == "delivered"; };
  // The solar campaign's own delay: sold aged, though solar offers nothing again.
  const json by_own = lead_when(svc, solar_lead, sold);
  EXPECT_EQ(by_own["status"], "delivered") << by_own.dump();
  EXPECT_EQ(by_own["distribution"]["price"], 3.0) << by_own.dump();
  // The lead of no campaign follows auto_insurance's policy: sold aged.
  EXPECT_EQ(lead_when(svc, vertical_lead, sold)["status"], "delivered");
  // The campaign whose policy is none: past both of its vertical's delays, never offered again.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const json kept = reoffer_body_of(svc.get("/v1/leads/" + none_lead, svc.operator_key()))["data"];
  EXPECT_EQ(kept["status"], "unsold") << kept.dump();
  for (const auto& attempt : kept["attempts"]) EXPECT_EQ(attempt["reoffer"], 0) << kept.dump();
  EXPECT_EQ(svc.app().store().scheduled_reoffer(none_lead).status, StoreStatus::kNotFound);
  EXPECT_EQ(aged->posts().size(), 2u)
      << "the aged buyer was posted exactly the two re-offered leads";
}

}  // namespace leadflow::testing
