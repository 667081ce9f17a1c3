// Statements and closed periods over real HTTPS, on SQLite and on PostgreSQL: a buyer's invoice
// and a seller's payout statement of a month, each as its reader may see it (JSON and CSV); the
// operator's close (refused before the month ended everywhere, once only); a return after the
// close lands in the next month as an adjustment naming the sale's month, and the closed month
// reads as it did; a seller's month cut in its own zone, set and checked through the API, and a
// seller moved to another zone between periods with each sale on exactly one of its statements.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "leadflow/base/ids.hpp"
#include "leadflow/base/time_format.hpp"
#include "pg_test_database.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

json body_of(const httplib::Result& r) { return json::parse(r->body); }

// Calendar time set by the test (moving on with the real clock); steady time stays real.
class SetCalendar final : public Clock {
 public:
  SystemTime now() const override {
    return std::chrono::system_clock::now() + std::chrono::milliseconds(ahead_ms_.load());
  }
  SteadyTime steady_now() const override { return std::chrono::steady_clock::now(); }
  void set(std::int64_t unix_ms) {
    const auto real = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    ahead_ms_ = unix_ms - real;
  }

 private:
  std::atomic<std::int64_t> ahead_ms_{0};
};

class Statements : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ServiceOptions o;
    o.clock = &clock_;
    if (GetParam() == "postgresql") {
      admin_ = pg_admin_url();
      ASSERT_FALSE(admin_.empty()) << "no PostgreSQL: run through ctest (postgres_start)";
      database_ = "lf_st_" + new_id("t").substr(2);
      for (auto& ch : database_)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      ASSERT_TRUE(psql(admin_, "CREATE DATABASE " + database_));
      o.store_url = admin_.substr(0, admin_.rfind('/') + 1) + database_ + "?pool_size=4";
    }
    clock_.set(*parse_rfc3339_ms("2026-10-20T12:00:00Z"));
    svc_ = std::make_unique<ServiceFixture>(o);
  }
  void TearDown() override {
    svc_.reset();
    if (!database_.empty()) psql(admin_, "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }

  SetCalendar clock_;
  std::string admin_, database_;
  std::unique_ptr<ServiceFixture> svc_;
};

TEST_P(Statements, AClosedMonthIsFinalAndALaterReturnIsTheNextMonthsAdjustment) {
  ServiceFixture& svc = *svc_;
  auto sim = start_buyer("Statement buyer", 15.00);
  const std::string buyer = svc.add_buyer(*sim, "auto_insurance", {{"return_window_days", 60}});
  const std::string buyer_key = svc.add_api_key({{"name", "buyer"}, {"buyer_id", buyer}});
  const std::string seller = svc.add_seller("Statement Seller");
  const std::string seller_key = svc.add_api_key({{"name", "seller"}, {"seller_id", seller}});
  std::string first;
  for (int salt : {11, 12}) {
    auto posted = svc.post("/v1/leads", sample_lead(salt), seller_key);
    ASSERT_EQ(posted->status, 201) << posted->body;
    ASSERT_EQ(body_of(posted)["distribution"]["accepted"], true) << posted->body;
    if (first.empty()) first = body_of(posted)["lead_id"];
  }
  const auto get = [&](const std::string& path, const std::string& key) {
    auto r = svc.get(path, key);
    EXPECT_TRUE(r);
    return r;
  };
  const std::string& op = svc.operator_key();

  // October has not ended everywhere: it cannot be closed yet.
  auto early = svc.post("/v1/periods/2026-10/close", json::object(), op);
  EXPECT_EQ(early->status, 422) << early->body;
  auto periods = get("/v1/periods", op);
  ASSERT_EQ(periods->status, 200) << periods->body;
  EXPECT_EQ(body_of(periods)["data"][0]["period"], "2026-10");
  EXPECT_EQ(body_of(periods)["data"][0]["status"], "current");

  clock_.set(*parse_rfc3339_ms("2026-11-02T00:00:00Z"));
  EXPECT_EQ(svc.post("/v1/periods/2026-10/close", json::object(), buyer_key)->status, 403);
  EXPECT_EQ(svc.post("/v1/periods/2026-13/close", json::object(), op)->status, 400);
  auto closed = svc.post("/v1/periods/2026-10/close", json::object(), op);
  ASSERT_EQ(closed->status, 201) << closed->body;
  const json close = body_of(closed)["data"];
  EXPECT_EQ(close["period"], "2026-10");
  ASSERT_EQ(close["totals"].size(), 2u) << close;
  for (const auto& t : close["totals"]) {
    EXPECT_EQ(t["total"], 30.0) << t;
    EXPECT_EQ(t["total_payout"], 21.0) << t;
    EXPECT_EQ(t["margin"], 9.0) << t;
  }
  auto again = svc.post("/v1/periods/2026-10/close", json::object(), op);
  EXPECT_EQ(again->status, 409) << again->body;
  EXPECT_EQ(body_of(again)["close"]["closed_at"], close["closed_at"]);

  const std::string october = "/v1/statements?period=2026-10";
  auto invoice = get(october, buyer_key);
  ASSERT_EQ(invoice->status, 200) << invoice->body;
  const json before = body_of(invoice)["data"];
  EXPECT_EQ(before["party"], "buyer");
  EXPECT_EQ(before["status"], "closed");
  EXPECT_EQ(before["totals"]["total"], 30.0);
  EXPECT_EQ(before["totals"]["sales"], 2);
  ASSERT_EQ(before["lines"].size(), 2u);
  for (const auto& line : before["lines"]) {
    EXPECT_EQ(line["amount"], 15.0);
    for (const char* hidden : {"payout", "margin", "seller_id"})
      EXPECT_FALSE(line.contains(hidden)) << "a buyer was shown " << hidden;
  }
  EXPECT_FALSE(before["totals"].contains("total_payout"));
  EXPECT_FALSE(before["totals"].contains("margin"));

  // A return after the close: November's, an adjustment of October's sale.
  auto returned =
      svc.post("/v1/leads/" + first + "/return", {{"reason", "invalid_phone"}}, buyer_key);
  ASSERT_EQ(returned->status, 201) << returned->body;
  auto after = get(october, buyer_key);
  EXPECT_EQ(body_of(after)["data"], before) << "a closed statement changed";
  auto november = get("/v1/statements?period=2026-11", buyer_key);
  ASSERT_EQ(november->status, 200) << november->body;
  const json nov = body_of(november)["data"];
  EXPECT_EQ(nov["status"], "open");
  ASSERT_EQ(nov["lines"].size(), 1u);
  EXPECT_EQ(nov["lines"][0]["kind"], "return");
  EXPECT_EQ(nov["lines"][0]["lead_id"], first);
  EXPECT_EQ(nov["lines"][0]["adjustment"], true);
  EXPECT_EQ(nov["lines"][0]["ref_period"], "2026-10");
  EXPECT_EQ(nov["lines"][0]["amount"], -15.0);
  EXPECT_EQ(nov["totals"]["total"], -15.0);

  // The seller's payout statements: its payouts, never a buyer or a price.
  auto payouts = get(october, seller_key);
  ASSERT_EQ(payouts->status, 200) << payouts->body;
  const json paid = body_of(payouts)["data"];
  EXPECT_EQ(paid["party"], "seller");
  EXPECT_EQ(paid["totals"]["total_payout"], 21.0);
  for (const auto& line : paid["lines"])
    for (const char* hidden : {"amount", "margin", "buyer_id"})
      EXPECT_FALSE(line.contains(hidden)) << "a seller was shown " << hidden;
  EXPECT_FALSE(paid["totals"].contains("total"));
  auto reversal = get("/v1/statements?period=2026-11", seller_key);
  EXPECT_EQ(body_of(reversal)["data"]["totals"]["reversals"], -10.5);

  // Each reads only its own; the operator reads either, with the margin.
  EXPECT_EQ(get("/v1/statements?party=seller&id=" + seller + "&period=2026-10", buyer_key)->status,
            404);
  EXPECT_EQ(get("/v1/statements?party=buyer&id=" + buyer + "&period=2026-10", seller_key)->status,
            404);
  EXPECT_EQ(get("/v1/statements?party=buyer&id=by_someone_else&period=2026-10", buyer_key)->status,
            404);
  auto operators = get("/v1/statements?party=buyer&id=" + buyer + "&period=2026-10", op);
  ASSERT_EQ(operators->status, 200) << operators->body;
  const json seen = body_of(operators)["data"];
  EXPECT_EQ(seen["totals"]["margin"], 9.0);
  EXPECT_EQ(seen["lines"][0]["seller_id"], seller);
  EXPECT_EQ(seen["lines"][0]["payout"], 10.5);
  EXPECT_EQ(get("/v1/statements?party=buyer&id=by_nobody&period=2026-10", op)->status, 404);
  auto bad = get("/v1/statements?period=October", buyer_key);
  ASSERT_EQ(bad->status, 400);
  EXPECT_EQ(body_of(bad)["errors"][0]["field"], "period");

  // The CSV: the buyer's columns, its lines and a total.
  auto csv = get("/v1/statements?period=2026-11&format=csv", buyer_key);
  ASSERT_EQ(csv->status, 200) << csv->body;
  EXPECT_NE(csv->get_header_value("Content-Type").find("text/csv"), std::string::npos);
  EXPECT_EQ(csv->body.substr(0, csv->body.find("\r\n")),
            "entry_id,at,kind,settled,lead_id,adjustment,home_period,ref_period,ref_at,amount");
  EXPECT_NE(csv->body.find(",return,false," + first + ",true,2026-11,2026-10,"), std::string::npos)
      << csv->body;
  EXPECT_NE(csv->body.find("\r\n,,total,,,,,,,-15"), std::string::npos) << csv->body;

  // A week is a period too: October's sales in ISO week 43, open.
  auto week = get("/v1/statements?period=2026-W43", buyer_key);
  ASSERT_EQ(week->status, 200) << week->body;
  EXPECT_EQ(body_of(week)["data"]["totals"]["total"], 30.0);
  EXPECT_EQ(body_of(week)["data"]["status"], "open");
  auto weeks = get("/v1/periods?calendar=week", buyer_key);
  ASSERT_EQ(weeks->status, 200) << weeks->body;
  EXPECT_EQ(body_of(weeks)["data"][0]["period"], "2026-W45");
  EXPECT_FALSE(body_of(weeks)["data"][0].contains("closable"));
}

// A seller's zone, set by the operator and checked as a buyer's schedule's is: its payout
// statements are cut at its own midnight, and its closed month stays as it was closed.
TEST_P(Statements, ASellerInNewYorkIsPaidForItsMonthToNewYorksMidnight) {
  ServiceFixture& svc = *svc_;
  auto sim = start_buyer("Zone buyer", 15.00);
  svc.add_buyer(*sim, "auto_insurance");
  const std::string& op = svc.operator_key();
  const auto put = [&](const std::string& path, const json& body) {
    return svc.https()->Put(path, {{"Authorization", "Bearer " + op}}, body.dump(),
                            "application/json");
  };
  const auto refused_zone = [&](const httplib::Result& r, const char* code) {
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 400) << r->body;
    const json errors = body_of(r)["errors"];
    ASSERT_EQ(errors.size(), 1u) << r->body;
    EXPECT_EQ(errors[0]["field"], "time_zone") << r->body;
    EXPECT_EQ(errors[0]["code"], code) << r->body;
  };
  // Not a zone: refused with the field named, nothing created.
  refused_zone(svc.post("/v1/sellers", {{"name", "Nowhere"}, {"time_zone", "Mars/Olympus"}}, op),
               "invalid_format");
  refused_zone(svc.post("/v1/sellers", {{"name", "Nowhere"}, {"time_zone", "America"}}, op),
               "invalid_format");
  refused_zone(svc.post("/v1/sellers", {{"name", "Nowhere"}, {"time_zone", 5}}, op),
               "invalid_type");
  EXPECT_TRUE(body_of(svc.get("/v1/sellers", op))["data"].empty());

  auto made =
      svc.post("/v1/sellers", {{"name", "New York Seller"}, {"time_zone", "America/New_York"}}, op);
  ASSERT_EQ(made->status, 201) << made->body;
  EXPECT_EQ(body_of(made)["data"]["time_zone"], "America/New_York");
  const std::string ny = body_of(made)["data"]["seller_id"];
  const std::string utc = svc.add_seller("UTC Seller");
  EXPECT_EQ(body_of(svc.get("/v1/sellers/" + utc, op))["data"]["time_zone"], "UTC");
  EXPECT_EQ(body_of(svc.get("/v1/sellers/" + ny, op))["data"]["time_zone"], "America/New_York");
  const std::string ny_key = svc.add_api_key({{"name", "ny"}, {"seller_id", ny}});
  const std::string utc_key = svc.add_api_key({{"name", "utc"}, {"seller_id", utc}});

  // 03:30Z on 1 November is 23:30 on 31 October in New York; 05:00Z is 01:00 on 1 November.
  const auto sell = [&](const std::string& key, int salt) {
    auto posted = svc.post("/v1/leads", sample_lead(salt), key);
    ASSERT_EQ(posted->status, 201) << posted->body;
    ASSERT_EQ(body_of(posted)["distribution"]["accepted"], true) << posted->body;
  };
  clock_.set(*parse_rfc3339_ms("2026-11-01T03:30:00Z"));
  sell(ny_key, 31);
  sell(utc_key, 32);
  clock_.set(*parse_rfc3339_ms("2026-11-01T05:00:00Z"));
  sell(ny_key, 33);
  clock_.set(*parse_rfc3339_ms("2026-11-02T00:00:00Z"));

  const auto statement = [&](const std::string& key, const char* period) {
    auto r = svc.get(std::string("/v1/statements?period=") + period, key);
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    return r && r->status == 200 ? body_of(r)["data"] : json();
  };
  const json october = statement(ny_key, "2026-10");
  EXPECT_EQ(october["time_zone"], "America/New_York");
  EXPECT_EQ(parse_rfc3339_ms(october["from"].get<std::string>()),
            parse_rfc3339_ms("2026-10-01T04:00:00Z"));
  EXPECT_EQ(parse_rfc3339_ms(october["to"].get<std::string>()),
            parse_rfc3339_ms("2026-11-01T04:00:00Z"));
  EXPECT_EQ(october["lines"].size(), 1u) << october;
  EXPECT_EQ(october["totals"]["total_payout"], 10.5);
  EXPECT_EQ(statement(ny_key, "2026-11")["lines"].size(), 1u);
  // The UTC seller's sale at the same instant is in its November.
  EXPECT_EQ(statement(utc_key, "2026-10")["lines"].size(), 0u);
  EXPECT_EQ(statement(utc_key, "2026-11")["lines"].size(), 1u);
  EXPECT_EQ(statement(utc_key, "2026-11")["time_zone"], "UTC");

  // The close freezes the New York seller's October in its zone.
  auto closed = svc.post("/v1/periods/2026-10/close", json::object(), op);
  ASSERT_EQ(closed->status, 201) << closed->body;
  bool found = false;
  const json frozen = body_of(closed)["data"]["totals"];
  for (const auto& t : frozen)
    if (t["party"] == "seller" && t["account_id"] == ny) {
      found = true;
      EXPECT_EQ(t["time_zone"], "America/New_York");
      EXPECT_EQ(t["total_payout"], 10.5);
    }
  EXPECT_TRUE(found) << closed->body;
  const json closed_october = statement(ny_key, "2026-10");
  EXPECT_EQ(closed_october["status"], "closed");

  // The operator moves the seller to Kolkata (a bad zone is refused, the zone kept): its closed
  // October does not move, its open December starts at Kolkata's midnight.
  refused_zone(put("/v1/sellers/" + ny, {{"time_zone", "Asia/Nowhere"}}), "invalid_format");
  EXPECT_EQ(body_of(svc.get("/v1/sellers/" + ny, op))["data"]["time_zone"], "America/New_York");
  auto moved = put("/v1/sellers/" + ny, {{"time_zone", "Asia/Kolkata"}});
  ASSERT_EQ(moved->status, 200) << moved->body;
  EXPECT_EQ(body_of(moved)["data"]["time_zone"], "Asia/Kolkata");
  EXPECT_EQ(statement(ny_key, "2026-10"), closed_october) << "a closed statement changed";
  const json december = statement(ny_key, "2026-12");
  EXPECT_EQ(december["time_zone"], "Asia/Kolkata");
  EXPECT_EQ(parse_rfc3339_ms(december["from"].get<std::string>()),
            parse_rfc3339_ms("2026-11-30T18:30:00Z"));
}

// A seller moved east between October and November, then west between November and December,
// over HTTPS: every sale is on exactly one of its statements, each closed period is read in the
// bounds and zone its close recorded, and each open period starts where the closed one before it
// ended. The seller reads its zone itself on its own account.
TEST_P(Statements, ASellerMovedBetweenPeriodsHasEachSaleOnExactlyOneStatement) {
  ServiceFixture& svc = *svc_;
  auto sim = start_buyer("Mover buyer", 15.00);
  svc.add_buyer(*sim, "auto_insurance");
  const std::string& op = svc.operator_key();
  auto made =
      svc.post("/v1/sellers", {{"name", "Moving Seller"}, {"time_zone", "America/New_York"}}, op);
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string seller = body_of(made)["data"]["seller_id"];
  const std::string key = svc.add_api_key({{"name", "mover"}, {"seller_id", seller}});
  const auto own_zone = [&] {
    auto r = svc.get("/v1/account", key);
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    return r && r->status == 200 ? body_of(r)["data"]["time_zone"] : json();
  };
  const auto move = [&](const char* zone) {
    auto r = svc.https()->Put("/v1/sellers/" + seller, {{"Authorization", "Bearer " + op}},
                              json{{"time_zone", zone}}.dump(), "application/json");
    ASSERT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    EXPECT_EQ(own_zone(), zone);
  };
  std::vector<std::string> sold;
  const auto sell_at = [&](const char* at) {
    clock_.set(*parse_rfc3339_ms(at));
    auto posted = svc.post("/v1/leads", sample_lead(100 + static_cast<int>(sold.size())), key);
    ASSERT_EQ(posted->status, 201) << posted->body;
    ASSERT_EQ(body_of(posted)["distribution"]["accepted"], true) << posted->body;
    sold.push_back(body_of(posted)["lead_id"]);
  };
  const auto statement = [&](const std::string& period) {
    auto r = svc.get("/v1/statements?period=" + period, key);
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : "no answer");
    return r && r->status == 200 ? body_of(r)["data"] : json();
  };
  const auto at = [](const json& st, const char* bound) {
    return parse_rfc3339_ms(st[bound].get<std::string>());
  };
  // Every sale on exactly one statement of September to January, and its payout counted once.
  const auto each_once = [&](const char* when) {
    std::map<std::string, int> seen;
    double payouts = 0;
    for (const char* p : {"2026-09", "2026-10", "2026-11", "2026-12", "2027-01"}) {
      const json st = statement(p);
      for (const auto& line : st["lines"]) ++seen[line["lead_id"].get<std::string>()];
      payouts += st["totals"]["total_payout"].get<double>();
    }
    for (const auto& id : sold) EXPECT_EQ(seen[id], 1) << when << ": " << id;
    EXPECT_EQ(seen.size(), sold.size()) << when;
    EXPECT_DOUBLE_EQ(payouts, 10.5 * static_cast<double>(sold.size())) << when;
  };
  const auto close = [&](const char* period) {
    auto r = svc.post(std::string("/v1/periods/") + period + "/close", json::object(), op);
    EXPECT_TRUE(r && r->status == 201) << (r ? r->body : "no answer");
    const json closed = r && r->status == 201 ? body_of(r)["data"]["totals"] : json::array();
    for (const auto& t : closed)
      if (t["party"] == "seller" && t["account_id"] == seller) return t;
    ADD_FAILURE() << period << ": nothing frozen of the seller";
    return json();
  };
  EXPECT_EQ(own_zone(), "America/New_York");

  // 20:00Z on 31 October is 16:00 in New York (October) and 01:30 on 1 November in Kolkata;
  // 03:30Z on 1 November is still October in New York; 05:00Z is November there.
  sell_at("2026-10-31T20:00:00Z");
  sell_at("2026-11-01T03:30:00Z");
  sell_at("2026-11-01T05:00:00Z");
  clock_.set(*parse_rfc3339_ms("2026-11-02T00:00:00Z"));
  const json october_close = close("2026-10");
  EXPECT_EQ(october_close["time_zone"], "America/New_York");
  EXPECT_EQ(october_close["sales"], 2);
  const json october = statement("2026-10");
  EXPECT_EQ(at(october, "to"), parse_rfc3339_ms("2026-11-01T04:00:00Z"));

  // East to Kolkata: October stays New York's; November starts where October ended and ends at
  // Kolkata's midnight. A sale dated in October but written after its close is November's
  // adjustment; 17:00Z on 30 November is 22:30 there (November), 20:00Z is 1 December.
  move("Asia/Kolkata");
  EXPECT_EQ(statement("2026-10"), october) << "a closed statement changed";
  sell_at("2026-10-31T22:00:00Z");
  sell_at("2026-11-30T17:00:00Z");
  sell_at("2026-11-30T20:00:00Z");
  clock_.set(*parse_rfc3339_ms("2026-12-02T00:00:00Z"));
  const json november = statement("2026-11");
  EXPECT_EQ(november["time_zone"], "Asia/Kolkata");
  EXPECT_EQ(at(november, "from"), parse_rfc3339_ms("2026-11-01T04:00:00Z"));
  EXPECT_EQ(at(november, "to"), parse_rfc3339_ms("2026-11-30T18:30:00Z"));
  ASSERT_EQ(november["lines"].size(), 3u) << november;
  EXPECT_EQ(november["lines"][1]["lead_id"], sold[3]);
  EXPECT_EQ(november["lines"][1]["adjustment"], true);
  EXPECT_EQ(november["lines"][1]["home_period"], "2026-10");
  each_once("moved to Kolkata");

  // November closed in Kolkata, then west to Los Angeles: November stays as closed, December
  // starts at its frozen end and ends at Los Angeles's midnight (08:00Z on 1 January).
  const json november_close = close("2026-11");
  EXPECT_EQ(november_close["time_zone"], "Asia/Kolkata");
  EXPECT_EQ(november_close["sales"], 3);
  const json closed_november = statement("2026-11");
  EXPECT_EQ(closed_november["status"], "closed");
  move("America/Los_Angeles");
  EXPECT_EQ(statement("2026-11"), closed_november) << "a closed statement changed";
  const json december = statement("2026-12");
  EXPECT_EQ(december["time_zone"], "America/Los_Angeles");
  EXPECT_EQ(at(december, "from"), parse_rfc3339_ms("2026-11-30T18:30:00Z"));
  EXPECT_EQ(at(december, "to"), parse_rfc3339_ms("2027-01-01T08:00:00Z"));
  // 07:00Z on 1 January is still 31 December in Los Angeles; 09:00Z is 1 January.
  sell_at("2027-01-01T07:00:00Z");
  sell_at("2027-01-01T09:00:00Z");
  clock_.set(*parse_rfc3339_ms("2027-01-02T00:00:00Z"));
  EXPECT_EQ(statement("2026-12")["lines"].size(), 2u);
  EXPECT_EQ(statement("2027-01")["lines"].size(), 1u);
  each_once("moved to Los Angeles");
}

INSTANTIATE_TEST_SUITE_P(Stores, Statements, ::testing::Values("sqlite", "postgresql"));

}  // namespace
}  // namespace leadflow::testing
