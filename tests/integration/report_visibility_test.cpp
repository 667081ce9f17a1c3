// Who may ask and see what in the reports, over real HTTPS on a real SQLite store: every report
// × every reader (the operator's key, a seller's key and dashboard session, a buyer's key and
// session) × every grouping and filter, as JSON and CSV. Two sellers sell to two buyers, one sale
// is returned, some leads go unsold. A reader's answer must carry exactly its permitted columns,
// and no other party's id or money may appear anywhere in its body.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "leadflow/store/store.hpp"
#include "leadflow/visibility/visibility.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

constexpr const char* kPassword = "a long enough password";

enum class Role { kOperator, kSeller, kBuyer };

// A reader: its role, how it authenticates (a key, or a session's cookie) and the values that
// must never appear in its answers.
struct Reader {
  std::string name;
  Role role;
  std::string key, cookie;
  std::string own;                     // its seller's or buyer's id
  std::vector<std::string> forbidden;  // other parties' ids and money, never in any answer
  std::vector<std::string> hidden;     // columns and figures it may not read, never in a 200
};

const std::vector<std::string> kRevenueFigures = {"leads_sold",
                                                  "revenue",
                                                  "payout",
                                                  "margin",
                                                  "avg_price",
                                                  "gross_revenue",
                                                  "returns",
                                                  "returned_revenue",
                                                  "returned_payout",
                                                  "aged_sales",
                                                  "aged_revenue",
                                                  "aged_payout",
                                                  "aged_margin",
                                                  "aged_returns",
                                                  "aged_returned_revenue",
                                                  "aged_returned_payout",
                                                  "aged_net_revenue",
                                                  "aged_net_payout",
                                                  "aged_net_margin"};
const std::vector<std::string> kPerformanceFigures = {
    "leads",  "duplicates",      "invalid",         "sold",
    "unsold", "failed",          "pinged",          "bids",
    "won",    "delivered",       "rejected",        "timeouts",
    "errors", "acceptance_rate", "avg_response_ms", "p95_response_ms"};

// What each role may see, written out here apart from the code under test.
std::vector<std::string> figures_for(Role role, const std::string& report) {
  if (report == "unsold") return {"leads", "reoffered", "sold_aged"};
  const auto& all = report == "revenue" ? kRevenueFigures : kPerformanceFigures;
  std::set<std::string> allowed;
  if (role == Role::kOperator) return all;
  if (report == "revenue")
    allowed = role == Role::kSeller
                  ? std::set<std::string>{"leads_sold",     "payout",
                                          "returns",        "returned_payout",
                                          "aged_sales",     "aged_payout",
                                          "aged_returns",   "aged_returned_payout",
                                          "aged_net_payout"}
                  : std::set<std::string>{"leads_sold",      "revenue",
                                          "avg_price",       "gross_revenue",
                                          "returns",         "returned_revenue",
                                          "aged_sales",      "aged_revenue",
                                          "aged_returns",    "aged_returned_revenue",
                                          "aged_net_revenue"};
  else
    allowed = role == Role::kSeller
                  ? std::set<std::string>{"leads",  "duplicates", "invalid",        "sold",
                                          "unsold", "failed",     "acceptance_rate"}
                  : std::set<std::string>{
                        "pinged",          "bids",           "won",    "delivered",
                        "rejected",        "timeouts",       "errors", "acceptance_rate",
                        "avg_response_ms", "p95_response_ms"};
  std::vector<std::string> out;
  for (const auto& f : all)
    if (allowed.count(f)) out.push_back(f);
  return out;
}

// The column of a grouping for a role, or "" when the role may not cut the report by it.
std::string column_for(Role role, const std::string& report, const std::string& group) {
  if (group == "day" || group == "hour") return group;
  if (group == "reason") return report == "unsold" ? "reason" : "";
  if (role == Role::kSeller && group == "buyer") return "";
  if (role == Role::kBuyer && group == "campaign") return "";
  if (role == Role::kBuyer && group == "seller") return "source_code";
  return group == "vertical" || group == "source" ? group : group + "_id";
}

class ReportVisibility : public ::testing::Test {
 protected:
  void SetUp() override {
    high = start_buyer("high", 15.00);
    high_id = svc.add_buyer(*high);
    low = start_buyer("low", 10.00);
    low_id = svc.add_buyer(*low, "solar");
    acme = svc.add_seller("Acme");
    other = svc.add_seller("Other");
    std::string campaign_key;
    std::tie(campaign, campaign_key) = svc.add_campaign(acme);
    const std::string acme_key = svc.add_api_key({{"name", "acme"}, {"seller_id", acme}});
    const std::string other_key = svc.add_api_key({{"name", "other"}, {"seller_id", other}});
    const std::string low_key = svc.add_api_key({{"name", "low"}, {"buyer_id", low_id}});

    // Each seller sells to each buyer; one of acme's sales to high is returned; a campaign lead.
    const std::string returned = sell(acme_key, 1, "auto_insurance");
    sell(acme_key, 2, "solar");
    sell(other_key, 3, "auto_insurance");
    sell(other_key, 4, "solar");
    auto b = svc.https()->Post("/api/v1/lead", sample_campaign_lead(5, campaign_key).dump(),
                               "application/json");
    ASSERT_EQ(b->status, 200) << b->body;
    ASSERT_EQ(
        svc.post("/v1/leads/" + returned + "/return", {{"reason", "fraud"}}, svc.operator_key())
            ->status,
        201);
    // Unsold: nobody buys mortgages; low refuses one of other's solar leads.
    json mortgage = sample_lead(6, "mortgage");
    mortgage.erase("custom_fields");
    ASSERT_EQ(svc.post("/v1/leads", mortgage, acme_key)->status, 201);
    low->set_reject_next(1, "cap reached");
    json refused = sample_lead(7, "solar");
    refused.erase("custom_fields");
    ASSERT_EQ(svc.post("/v1/leads", refused, other_key)->status, 201);

    // Every seller payout is 70% of its price: 10.50 for high's 15.00, 7.00 for low's 10.00.
    // Sellers never read buyers' ids or prices (15.00, 10.00), buyers never sellers' ids or
    // payouts, neither the margin.
    const std::vector<std::string> seller_hides = {"buyer_id",  "revenue", "margin", "avg_price",
                                                   "pinged",    "bids",    "won",    "delivered",
                                                   "_response", "gross"};
    const std::vector<std::string> buyer_hides = {"seller_id", "campaign_id", "payout", "margin",
                                                  "\"leads\"", "duplicates",  "invalid"};
    readers.push_back({"operator key", Role::kOperator, svc.operator_key(), "", "", {}, {}});
    readers.push_back({"seller key",
                       Role::kSeller,
                       acme_key,
                       "",
                       acme,
                       {high_id, low_id, other, "15.0", "10.0"},
                       seller_hides});
    readers.push_back({"seller session",
                       Role::kSeller,
                       "",
                       sign_in("seller", other, "other@x.io"),
                       other,
                       {high_id, low_id, acme, campaign, "15.0", "10.0"},
                       seller_hides});
    readers.push_back({"buyer key",
                       Role::kBuyer,
                       low_key,
                       "",
                       low_id,
                       {acme, other, campaign, high_id, "7.0", "14.0"},
                       buyer_hides});
    readers.push_back({"buyer session",
                       Role::kBuyer,
                       "",
                       sign_in("buyer", high_id, "high@x.io"),
                       high_id,
                       {acme, other, campaign, low_id, "10.5", "21.0", "31.5"},
                       buyer_hides});
    secret = *svc.app().store().shared_secret(kVisibilitySecretName, "not this one");
  }

  std::string sell(const std::string& key, int salt, const std::string& vertical) {
    json lead = sample_lead(salt, vertical);
    if (vertical != "auto_insurance") lead.erase("custom_fields");
    auto r = svc.post("/v1/leads", lead, key);
    EXPECT_EQ(r->status, 201) << r->body;
    EXPECT_EQ(json::parse(r->body)["distribution"]["accepted"], true) << r->body;
    return json::parse(r->body)["lead_id"];
  }

  // A dashboard user of the account, signed in; its session cookie.
  std::string sign_in(const std::string& account, const std::string& id, const std::string& email) {
    auto made = svc.post("/v1/users",
                         {{"email", email},
                          {"name", account},
                          {"password", kPassword},
                          {"account", account},
                          {account + "_id", id}},
                         svc.operator_key());
    EXPECT_EQ(made->status, 201) << made->body;
    auto r = svc.https()->Post(
        "/v1/session", json{{"email", email}, {"password", kPassword}}.dump(), "application/json");
    EXPECT_EQ(r->status, 201) << r->body;
    const std::string set = r->get_header_value("Set-Cookie");
    return set.substr(0, set.find(';'));
  }

  httplib::Result ask(const Reader& who, const std::string& path, bool accept_csv = false) {
    httplib::Headers h;
    if (!who.key.empty()) h.emplace("Authorization", "Bearer " + who.key);
    if (!who.cookie.empty()) h.emplace("Cookie", who.cookie);
    if (accept_csv) h.emplace("Accept", "text/csv");
    return svc.https()->Get(path.c_str(), h);
  }

  // No other party's id or money anywhere in the answer; in a report answered, none of the
  // columns and figures the reader may not read (a refusal names them).
  void expect_no_leak(const Reader& who, const std::string& what, const httplib::Result& r) {
    for (const auto& f : who.forbidden)
      EXPECT_EQ(r->body.find(f), std::string::npos)
          << who.name << " " << what << " reveals \"" << f << "\": " << r->body;
    if (r->status != 200) return;
    for (const auto& f : who.hidden)
      EXPECT_EQ(r->body.find(f), std::string::npos)
          << who.name << " " << what << " answers \"" << f << "\": " << r->body;
  }

  ServiceFixture svc;
  std::unique_ptr<BuyerSimulator> high, low;
  std::string high_id, low_id, acme, other, campaign, secret;
  std::vector<Reader> readers;
};

TEST_F(ReportVisibility, EveryReaderGetsExactlyItsColumnsForEveryGroupingAsJsonAndCsv) {
  for (const std::string report : {"revenue", "performance", "unsold"}) {
    for (const auto& who : readers) {
      for (const std::string group :
           {"", "day", "hour", "buyer", "vertical", "source", "seller", "campaign", "reason"}) {
        const std::string what = report + "?group_by=" + group;
        const std::string path = "/v1/reports/" + what;
        auto r = ask(who, path);
        ASSERT_TRUE(r) << what;
        expect_no_leak(who, what, r);
        if (who.role == Role::kBuyer && report == "unsold") {
          EXPECT_EQ(r->status, 403) << who.name << " " << what << ": " << r->body;
          continue;
        }
        const std::string column = group.empty() ? "" : column_for(who.role, report, group);
        if (!group.empty() && column.empty()) {
          EXPECT_EQ(r->status, 400) << who.name << " " << what << ": " << r->body;
          EXPECT_NE(r->body.find(group), std::string::npos) << "the refusal names " << group;
          continue;
        }
        ASSERT_EQ(r->status, 200) << who.name << " " << what << ": " << r->body;
        const json data = json::parse(r->body)["data"];
        std::vector<std::string> columns;
        if (!column.empty()) columns.push_back(column);
        if (report == "unsold" && group != "reason") columns.push_back("reason");
        const auto figures = figures_for(who.role, report);
        columns.insert(columns.end(), figures.begin(), figures.end());
        const std::set<std::string> want(columns.begin(), columns.end());
        EXPECT_FALSE(data["rows"].empty()) << who.name << " " << what << ": " << r->body;
        for (const auto& row : data["rows"]) {
          std::set<std::string> got;
          for (const auto& [k, v] : row.items()) got.insert(k);
          EXPECT_EQ(got, want) << who.name << " " << what << ": " << row.dump();
          // Its own account's rows only; a buyer reads each seller as its own source code.
          if (column == "seller_id" && who.role == Role::kSeller) {
            EXPECT_EQ(row[column], who.own);
          }
          if (column == "buyer_id" && who.role == Role::kBuyer) {
            EXPECT_EQ(row[column], who.own);
          }
          if (column == "source_code") {
            EXPECT_TRUE(row[column] == source_code(secret, who.own, acme) ||
                        row[column] == source_code(secret, who.own, other))
                << row.dump();
          }
        }
        if (report != "unsold") {
          std::set<std::string> totals;
          for (const auto& [k, v] : data["totals"].items()) totals.insert(k);
          EXPECT_EQ(totals, std::set<std::string>(figures.begin(), figures.end()))
              << who.name << " " << what << " totals: " << data["totals"].dump();
        }
        // The CSV: exactly the JSON's columns, in order, and the same rows.
        auto csv = ask(who, path + "&format=csv");
        ASSERT_EQ(csv->status, 200) << csv->body;
        expect_no_leak(who, what + " (CSV)", csv);
        const std::string header = csv->body.substr(0, csv->body.find("\r\n"));
        std::string expected;
        for (const auto& c : columns) expected += (expected.empty() ? "" : ",") + c;
        EXPECT_EQ(header, expected) << who.name << " " << what;
      }
    }
  }
}

TEST_F(ReportVisibility, EveryReaderMayFilterOnlyByItsOwnKeys) {
  struct Filter {
    std::string param, value;
    std::set<Role> allowed;  // for the reports that have the key
  };
  const std::vector<Filter> filters = {
      {"vertical", "solar", {Role::kOperator, Role::kSeller, Role::kBuyer}},
      {"source", "google", {Role::kOperator, Role::kSeller, Role::kBuyer}},
      {"buyer_id", "", {Role::kOperator, Role::kBuyer}},
      {"seller_id", "", {Role::kOperator, Role::kSeller}},
      {"campaign_id", campaign, {Role::kOperator, Role::kSeller}},
      {"reason", "no_buyer_in_vertical", {Role::kOperator, Role::kSeller}},
      {"source_code", source_code(secret, low_id, acme), {}},
  };
  for (const std::string report : {"revenue", "performance", "unsold"}) {
    for (const auto& who : readers) {
      for (const auto& f : filters) {
        // A reader's own buyer or seller; the operator's, any.
        // Its own buyer or seller, or another's: a seller asking after low, a buyer after acme.
        std::string value = f.value;
        if (f.param == "buyer_id") value = who.role == Role::kBuyer ? who.own : low_id;
        if (f.param == "seller_id") value = who.role == Role::kSeller ? who.own : acme;
        if (who.role == Role::kSeller && f.param == "campaign_id" && who.own != acme) continue;
        const std::string what = report + "?" + f.param + "=" + value;
        for (bool csv : {false, true}) {
          auto r = ask(who, "/v1/reports/" + what, csv);
          ASSERT_TRUE(r) << what;
          expect_no_leak(who, what, r);
          int status = f.allowed.count(who.role) ? 200 : 400;
          if (f.param == "reason" && report != "unsold") status = 400;  // not its key
          if (who.role == Role::kBuyer && report == "unsold") status = 403;
          EXPECT_EQ(r->status, status) << who.name << " " << what << ": " << r->body;
          if (status == 400) {
            EXPECT_NE(r->body.find(f.param), std::string::npos) << r->body;
          }
          if (status == 200 && !csv) {
            EXPECT_NE(json::parse(r->body)["data"]["totals"], nullptr) << r->body;
          }
        }
      }
    }
  }
}

TEST_F(ReportVisibility, EachReaderReadsItsOwnMoney) {
  const auto totals = [&](const Reader& who) {
    auto r = ask(who, "/v1/reports/revenue");
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body)["data"]["totals"];
  };
  // The operator: 5 sales (3 × 15.00, 2 × 10.00), one 15.00 returned.
  const json op = totals(readers[0]);
  EXPECT_EQ(op["revenue"], 50.0);
  EXPECT_EQ(op["payout"], 35.0);
  EXPECT_EQ(op["margin"], 15.0);
  // Acme: 10.50 + 7.00 + 10.50, 10.50 reversed.
  const json acme_totals = totals(readers[1]);
  EXPECT_EQ(acme_totals["leads_sold"], 3);
  EXPECT_EQ(acme_totals["payout"], 17.5);
  EXPECT_EQ(acme_totals["returned_payout"], 10.5);
  // Other (by its session): 10.50 + 7.00.
  EXPECT_EQ(totals(readers[2])["payout"], 17.5);
  // Low (by its key): two leads at 10.00; high (by its session): three at 15.00, one returned.
  const json low_totals = totals(readers[3]);
  EXPECT_EQ(low_totals["revenue"], 20.0);
  EXPECT_EQ(low_totals["avg_price"], 10.0);
  const json high_totals = totals(readers[4]);
  EXPECT_EQ(high_totals["revenue"], 30.0);
  EXPECT_EQ(high_totals["returned_revenue"], 15.0);
  // A buyer's sources: one code per seller, different from the other buyer's.
  auto by_source = ask(readers[3], "/v1/reports/revenue?group_by=seller");
  std::set<std::string> codes;
  const json sources = json::parse(by_source->body);
  for (const auto& row : sources["data"]["rows"])
    codes.insert(row["source_code"].get<std::string>());
  EXPECT_EQ(codes, (std::set<std::string>{source_code(secret, low_id, acme),
                                          source_code(secret, low_id, other)}));
  EXPECT_NE(source_code(secret, low_id, acme), source_code(secret, high_id, acme));
  // The aged band net of its returns (no aged sale here: zero): the operator all three, a seller
  // its payout side alone, a buyer its spend side alone; never the other side's nor the margin.
  for (const char* net : {"aged_net_revenue", "aged_net_payout", "aged_net_margin"})
    EXPECT_EQ(op[net], 0.0) << net << ": " << op.dump();
  for (const json& seller_totals : {acme_totals, totals(readers[2])}) {
    EXPECT_EQ(seller_totals["aged_net_payout"], 0.0) << seller_totals.dump();
    EXPECT_FALSE(seller_totals.contains("aged_net_revenue")) << seller_totals.dump();
    EXPECT_FALSE(seller_totals.contains("aged_net_margin")) << seller_totals.dump();
  }
  for (const json& buyer_totals : {low_totals, high_totals}) {
    EXPECT_EQ(buyer_totals["aged_net_revenue"], 0.0) << buyer_totals.dump();
    EXPECT_FALSE(buyer_totals.contains("aged_net_payout")) << buyer_totals.dump();
    EXPECT_FALSE(buyer_totals.contains("aged_net_margin")) << buyer_totals.dump();
  }
}

}  // namespace
}  // namespace leadflow::testing
