// The lead reads without a server: a request parsed as the server would, fake intake and money
// ports, and the answer's status and body. What each reader may see of a lead, that another
// party's lead is answered exactly as an unknown one, how many reads the lead view makes, and how
// the list's query is decoded, cut to the reader's own leads and refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_intake.hpp"
#include "lead_reads.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/domain/lead_search.hpp"
#include "leadflow/http/parser.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

const std::string kSoldLead = "ld_01JQ0000000000000000000001";
const std::string kPendingLead = "ld_01JQ0000000000000000000002";
const std::string kReturnedLead = "ld_01JQ0000000000000000000003";
const std::string kOthers = "ld_01JQ0000000000000000000004";   // another seller's, another buyer's
const std::string kNobodys = "ld_01JQ0000000000000000000009";  // a valid id no lead has

// The intake and money ports: the leads a test puts in, the page list_leads answers, the reads
// counted and the list questions kept. `down` answers as the adapters do when the server is
// gone: every read "unavailable" (kUnavailable, nullopt).
class FakeLeadStores final : public testing::FakeIntakeReads, public MoneyStore {
 public:
  std::vector<LeadRecord> leads;
  LeadMoney money;
  bool down = false;        // every read
  bool leads_down = false;  // get_lead alone
  bool list_down = false;   // list_leads alone
  bool money_down = false;  // money_of_lead alone

  int lead_reads = 0;
  int money_reads = 0;
  std::vector<LeadQuery> lists_asked;

  bool healthy() override { return !down; }

  Lookup<LeadRecord> get_lead(std::string_view id) override {
    ++lead_reads;
    if (down || leads_down) return {};
    for (const auto& r : leads)
      if (r.lead.id == id) return {StoreStatus::kOk, r};
    return {StoreStatus::kNotFound, std::nullopt};
  }
  std::optional<std::vector<LeadRecord>> list_leads(const LeadQuery& q) override {
    lists_asked.push_back(q);
    if (down || list_down) return std::nullopt;
    std::vector<LeadRecord> page;
    // Newest first: the leads are kept in descending id order, and a cursor starts after its id.
    for (const auto& r : leads) {
      if (!q.before_id.empty() && r.lead.id >= q.before_id) continue;
      if (!q.seller_id.empty() && r.lead.seller_id != q.seller_id) continue;
      if (!q.buyer_id.empty() && r.distribution.buyer_id != q.buyer_id) continue;
      if (static_cast<int>(page.size()) < q.limit) page.push_back(r);
    }
    return page;
  }
  std::optional<LeadMoney> money_of_lead(std::string_view) override {
    ++money_reads;
    if (down || money_down) return std::nullopt;
    return money;
  }

  ReturnResult record_return(const ReturnRequest&) override { return {}; }
  SettleResult settle_lead(const Settlement&, const PayoutRule&) override { return {}; }
  std::optional<std::vector<LeadReturn>> returns_of_lead(std::string_view) override {
    return std::nullopt;
  }
  std::optional<std::vector<LedgerEntry>> list_ledger(const LedgerQuery&) override {
    return std::nullopt;
  }
  std::optional<std::vector<Settlement>> settlements_of_lead(std::string_view) override {
    return std::nullopt;
  }
  std::optional<ReturnStats> return_stats(std::string_view, std::int64_t) override {
    return std::nullopt;
  }
};

LeadRecord lead(const std::string& id, const std::string& seller, const std::string& buyer,
                DeliveryStatus status) {
  LeadRecord r;
  r.lead.id = id;
  r.lead.seller_id = seller;
  r.lead.vertical = "auto_insurance";
  r.lead.email = "ann@example.com";
  r.distribution.status = status;
  if (!buyer.empty()) {
    r.distribution.buyer_id = buyer;
    r.distribution.sales.push_back(Sale{buyer, 2400, 1680, ""});
  }
  return r;
}

class LeadReadHandler : public ::testing::Test {
 protected:
  LeadReadHandler() {
    store.leads = {lead(kSoldLead, "sl_1", "by_1", DeliveryStatus::kDelivered),
                   lead(kPendingLead, "sl_1", "", DeliveryStatus::kPending),
                   lead(kReturnedLead, "sl_1", "by_1", DeliveryStatus::kReturned),
                   lead(kOthers, "sl_2", "by_2", DeliveryStatus::kDelivered)};
    Settlement s;
    s.lead_id = kSoldLead;
    s.buyer_id = "by_1";
    s.sold = true;
    s.price = 2400;
    s.payout = 1680;
    store.money.settlements.push_back(s);
    LedgerEntry e;
    e.id = 1;
    e.kind = "sale";
    e.lead_id = kSoldLead;
    e.buyer_id = "by_1";
    e.seller_id = "sl_1";
    e.revenue = 2400;
    e.payout = 1680;
    store.money.ledger.push_back(e);
  }

  FakeLeadStores store;
  SellerLabels labels{"secret", {}};
  LeadReadPorts ports{store, store, labels, "secret"};

  http::Response read(const Viewer& viewer, const std::string& id) {
    http::Response res;
    answer_lead(ports, viewer, id, res);
    return res;
  }
  http::Response list(const Viewer& viewer, const std::string& query) {
    const std::string raw = "GET /v1/leads?" + query + " HTTP/1.1\r\nHost: a.example\r\n\r\n";
    http::Request req;
    const http::ParseResult r = http::parse_request(raw, http::ParseLimits{}, req);
    EXPECT_EQ(r.status, http::ParseStatus::kComplete) << r.error_detail;
    http::Response res;
    answer_lead_list(ports, viewer, req, res);
    return res;
  }
  static std::vector<std::string> fields_of(const http::Response& res) {
    std::vector<std::string> out;
    const json body = json::parse(res.body);
    for (const auto& e : body["errors"]) out.push_back(e["field"]);
    return out;
  }
};

const Viewer kOperator{};

TEST_F(LeadReadHandler, TheOperatorReadsASoldLeadWithItsMoneyInTwoReads) {
  const http::Response res = read(kOperator, kSoldLead);
  ASSERT_EQ(res.status, 200) << res.body;
  const json data = json::parse(res.body)["data"];
  EXPECT_EQ(data["lead_id"], kSoldLead);
  EXPECT_EQ(data["settlements"].size(), 1u);
  EXPECT_EQ(data["settlement"], data["settlements"][0]);
  EXPECT_EQ(data["ledger"].size(), 1u);
  EXPECT_FALSE(data.contains("returns"));  // not returned
  EXPECT_EQ(store.lead_reads, 1);
  EXPECT_EQ(store.money_reads, 1);
}

TEST_F(LeadReadHandler, ALeadNeverSoldReadsNoMoney) {
  const http::Response res = read(Viewer::seller("sl_1"), kPendingLead);
  ASSERT_EQ(res.status, 200) << res.body;
  const json data = json::parse(res.body)["data"];
  EXPECT_FALSE(data.contains("ledger"));
  EXPECT_FALSE(data.contains("settlement"));
  EXPECT_EQ(store.lead_reads, 1);
  EXPECT_EQ(store.money_reads, 0);
}

TEST_F(LeadReadHandler, AReturnedLeadShowsItsReturns) {
  const http::Response res = read(Viewer::buyer("by_1"), kReturnedLead);
  ASSERT_EQ(res.status, 200) << res.body;
  const json data = json::parse(res.body)["data"];
  EXPECT_TRUE(data["returns"].is_array());
  EXPECT_TRUE(data.contains("ledger"));
}

TEST_F(LeadReadHandler, AnotherPartysLeadIsAnsweredAsAnUnknownOne) {
  const http::Response unknown = read(Viewer::seller("sl_1"), kNobodys);
  EXPECT_EQ(unknown.status, 404);
  for (const Viewer& other : {Viewer::seller("sl_1"), Viewer::buyer("by_1")}) {
    const http::Response res = read(other, kOthers);
    EXPECT_EQ(res.status, 404);
    EXPECT_EQ(res.body, unknown.body);
    EXPECT_EQ(res.header_block(), unknown.header_block());
  }
  // A lead the buyer did not buy is no lead of its own either, though its seller's.
  EXPECT_EQ(read(Viewer::buyer("by_2"), kSoldLead).body, unknown.body);
  EXPECT_EQ(store.money_reads, 0);  // nothing of an unseen lead is read beyond the lead
}

TEST_F(LeadReadHandler, AMalformedIdIsA404WithoutAskingTheStore) {
  const http::Response res = read(kOperator, "not-a-lead");
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(res.body, read(kOperator, kNobodys).body);
  EXPECT_EQ(store.lead_reads, 1);  // the unknown id's, not the malformed one's
}

// Our own failure is never an answer: a lead the store cannot read is a 503 with Retry-After
// (errors.cpp's store-outage answer), never "no such lead"; none is a 404, a lead a 200.
TEST_F(LeadReadHandler, ALeadTheStoreCannotReadIsA503NotA404) {
  store.down = true;
  const http::Response down = read(kOperator, kSoldLead);
  EXPECT_EQ(down.status, 503) << down.body;
  EXPECT_EQ(down.header("Retry-After"), "1");
  const json body = json::parse(down.body);
  EXPECT_EQ(body["status"], 503);
  EXPECT_EQ(body["detail"], "the store cannot be reached; retry");
  EXPECT_EQ(read(kOperator, kNobodys).status, 503);  // it cannot say there is none either
  EXPECT_EQ(store.money_reads, 0);
  store.down = false;
  EXPECT_EQ(read(kOperator, kNobodys).status, 404);
  EXPECT_EQ(read(kOperator, kSoldLead).status, 200);
}

// A lead is not shown without the money the store could not read: an empty ledger or no
// settlement would read as an answer.
TEST_F(LeadReadHandler, MoneyTheStoreCannotReadIsA503NotALeadWithoutIt) {
  store.money_down = true;
  const http::Response down = read(kOperator, kSoldLead);
  EXPECT_EQ(down.status, 503) << down.body;
  EXPECT_EQ(down.header("Retry-After"), "1");
  EXPECT_EQ(read(Viewer::buyer("by_1"), kReturnedLead).status, 503);
  // A lead never sold reads no money: it is answered.
  EXPECT_EQ(read(kOperator, kPendingLead).status, 200);
}

TEST_F(LeadReadHandler, AListTheStoreCannotReadIsA503NotAnEmptyPage) {
  store.list_down = true;
  const http::Response down = list(Viewer::seller("sl_1"), "");
  EXPECT_EQ(down.status, 503) << down.body;
  EXPECT_EQ(down.header("Retry-After"), "1");
  EXPECT_FALSE(json::parse(down.body).contains("data"));
  // A search too: "not found" and "cannot say" are different answers.
  EXPECT_EQ(list(kOperator, "q=" + kSoldLead).status, 503);
  store.list_down = false;
  const http::Response none = list(Viewer::seller("sl_9"), "");
  ASSERT_EQ(none.status, 200) << none.body;
  EXPECT_EQ(json::parse(none.body)["data"], json::array());
  const http::Response some = list(Viewer::seller("sl_1"), "");
  ASSERT_EQ(some.status, 200) << some.body;
  EXPECT_EQ(json::parse(some.body)["data"].size(), 3u);
}

// A buyer's rows are read whole (a row carries no sales): one the store cannot read makes the
// page a 503 rather than a row without the buyer's purchase.
TEST_F(LeadReadHandler, ABuyersPageWithALeadTheStoreCannotReadIsA503) {
  store.leads_down = true;
  const http::Response down = list(Viewer::buyer("by_1"), "");
  EXPECT_EQ(down.status, 503) << down.body;
  EXPECT_EQ(down.header("Retry-After"), "1");
  // A seller's rows are the page's: nothing more is read.
  EXPECT_EQ(list(Viewer::seller("sl_1"), "").status, 200);
}

TEST_F(LeadReadHandler, ASellersListIsItsOwnLeadsOnePageAtATime) {
  const http::Response res = list(Viewer::seller("sl_1"), "limit=2");
  ASSERT_EQ(res.status, 200) << res.body;
  ASSERT_EQ(store.lists_asked.size(), 1u);
  const LeadQuery& q = store.lists_asked.front();
  EXPECT_EQ(q.seller_id, "sl_1");
  EXPECT_EQ(q.limit, 3);  // one more than the page: whether another follows
  const json body = json::parse(res.body);
  EXPECT_EQ(body["data"].size(), 2u);
  EXPECT_EQ(body["has_more"], true);
  EXPECT_EQ(body["next_cursor"], http::encode_cursor(kPendingLead));
  EXPECT_EQ(store.lead_reads, 0);  // a seller's rows are the page's
}

TEST_F(LeadReadHandler, ABuyersListIsItsPurchasesEachRowReadWhole) {
  const http::Response res = list(Viewer::buyer("by_1"), "");
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(store.lists_asked.front().buyer_id, "by_1");
  EXPECT_EQ(json::parse(res.body)["has_more"], false);
  EXPECT_EQ(json::parse(res.body)["data"].size(), 2u);
  EXPECT_EQ(store.lead_reads, 2);  // a row carries no sales: each is read with the lead
}

TEST_F(LeadReadHandler, ASearchFindsByIdEmailOrPhoneKey) {
  ASSERT_EQ(list(kOperator, "q=" + kSoldLead).status, 200);
  EXPECT_EQ(store.lists_asked.back().lead_id, kSoldLead);
  ASSERT_EQ(list(kOperator, "q=ann%40example.com").status, 200);
  EXPECT_EQ(store.lists_asked.back().email_key,
            search_key("secret", SearchField::kEmail, "ann@example.com"));
  EXPECT_TRUE(store.lists_asked.back().lead_id.empty());
  const http::Response bad = list(kOperator, "q=nothing");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(fields_of(bad), std::vector<std::string>{"q"});
}

TEST_F(LeadReadHandler, FiltersAreHandedToTheStore) {
  ASSERT_EQ(list(kOperator, "status=returned&vertical=auto_insurance&source=s1").status, 200);
  const LeadQuery& q = store.lists_asked.back();
  ASSERT_TRUE(q.status.has_value());
  EXPECT_TRUE(*q.status == DeliveryStatus::kReturned);
  EXPECT_EQ(q.vertical, "auto_insurance");
  EXPECT_EQ(q.source, "s1");
  EXPECT_EQ(q.limit, 26);  // the default page of 25, and one more
}

TEST_F(LeadReadHandler, ABareDateEndsTheDayItNames) {
  ASSERT_EQ(list(kOperator, "created_from=2026-11-27&created_to=2026-11-27").status, 200);
  const LeadQuery& q = store.lists_asked.back();
  EXPECT_EQ(q.created_to_ms - q.created_from_ms, 86'400'000);
}

// Whole days in the zone asked: New York's 2026-11-01 runs 04:00Z to 05:00Z the next day, 25
// hours (the clocks fall back); a session's default zone applies without `tz`; a full
// date-time keeps its instant whatever the zone.
TEST_F(LeadReadHandler, ABareDateIsAWholeDayInTheZoneAskedAcrossAChangeOfClocks) {
  constexpr std::int64_t kNov1NewYork = 1'793'505'600'000;  // 2026-11-01T04:00:00Z
  ASSERT_EQ(
      list(kOperator, "created_from=2026-11-01&created_to=2026-11-01&tz=America/New_York").status,
      200);
  EXPECT_EQ(store.lists_asked.back().created_from_ms, kNov1NewYork);
  EXPECT_EQ(store.lists_asked.back().created_to_ms, kNov1NewYork + 25 * 3'600'000);

  ports.default_zone = "America/New_York";
  ASSERT_EQ(list(kOperator, "created_from=2026-11-01&created_to=2026-11-01").status, 200);
  EXPECT_EQ(store.lists_asked.back().created_from_ms, kNov1NewYork);
  ASSERT_EQ(list(kOperator, "created_from=2026-11-01&tz=UTC").status, 200);
  EXPECT_EQ(store.lists_asked.back().created_from_ms, kNov1NewYork - 4 * 3'600'000);
  ASSERT_EQ(list(kOperator, "created_from=2026-11-01T04:30:00Z").status, 200);
  EXPECT_EQ(store.lists_asked.back().created_from_ms, kNov1NewYork + 1'800'000);

  const std::size_t asked = store.lists_asked.size();
  const http::Response bad = list(kOperator, "created_from=2026-11-01&tz=Mars/Olympus_Mons");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(fields_of(bad), std::vector<std::string>{"tz"});
  EXPECT_EQ(store.lists_asked.size(), asked);
}

TEST_F(LeadReadHandler, RefusesEachBadParameterByNameBeforeAskingTheStore) {
  const http::Response res =
      list(kOperator, "limit=0&status=bogus&created_from=yesterday&cursor=abc&colour=red");
  EXPECT_EQ(res.status, 400);
  const std::vector<std::string> fields = fields_of(res);
  for (const char* f : {"colour", "limit", "status", "created_from", "cursor"})
    EXPECT_NE(std::find(fields.begin(), fields.end(), f), fields.end()) << f;
  EXPECT_TRUE(store.lists_asked.empty());
}

TEST_F(LeadReadHandler, AReaderMayNotFilterOnAPartyItMayNotSee) {
  EXPECT_EQ(fields_of(list(Viewer::seller("sl_1"), "buyer_id=by_1")),
            std::vector<std::string>{"buyer_id"});
  EXPECT_EQ(fields_of(list(Viewer::seller("sl_1"), "seller_id=sl_2")),
            std::vector<std::string>{"seller_id"});
  EXPECT_EQ(fields_of(list(Viewer::buyer("by_1"), "seller_id=sl_1")),
            std::vector<std::string>{"seller_id"});
  EXPECT_EQ(fields_of(list(Viewer::buyer("by_1"), "buyer_id=by_2")),
            std::vector<std::string>{"buyer_id"});
  EXPECT_TRUE(store.lists_asked.empty());
  // Naming itself is no refusal.
  EXPECT_EQ(list(Viewer::seller("sl_1"), "seller_id=sl_1").status, 200);
  EXPECT_EQ(list(Viewer::buyer("by_1"), "buyer_id=by_1").status, 200);
}

TEST_F(LeadReadHandler, AnExportHoldsTenThousandRowsAndSaysWhereTheNextOneStarts) {
  // 10,050 leads of one seller, newest (largest id) first, as the store lists them.
  store.leads.clear();
  char id[32];
  for (int n = 10'050; n >= 1; --n) {
    std::snprintf(id, sizeof id, "ld_01JR%022d", n);
    store.leads.push_back(lead(id, "sl_9", "by_1", DeliveryStatus::kDelivered));
  }
  const Viewer seller = Viewer::seller("sl_9");
  const http::Response first =
      list(seller, "format=csv&created_from=2026-11-01&created_to=2026-11-27");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.header("Content-Disposition"),
            "attachment; filename=\"leads_2026-11-01_2026-11-27.csv\"");
  EXPECT_EQ(first.header("X-Has-More"), "true");
  EXPECT_EQ(std::count(first.body.begin(), first.body.end(), '\n'), 10'001);       // and the header
  EXPECT_NE(first.body.find("ld_01JR0000000000000000000051"), std::string::npos);  // the 10,000th
  EXPECT_EQ(first.body.find("ld_01JR0000000000000000000050"), std::string::npos);
  EXPECT_EQ(first.body.find("buyer_id"), std::string::npos) << "a seller's file names no buyer";
  const std::string cursor(first.header("X-Next-Cursor"));
  EXPECT_EQ(http::decode_cursor(cursor), "ld_01JR0000000000000000000051");
  const http::Response rest = list(seller, "format=csv&cursor=" + cursor);
  ASSERT_EQ(rest.status, 200) << rest.body;
  EXPECT_EQ(rest.header("X-Has-More"), "false");
  EXPECT_FALSE(rest.has_header("X-Next-Cursor"));
  EXPECT_EQ(std::count(rest.body.begin(), rest.body.end(), '\n'), 51);
  // Named after the days of the leads it holds when no range is asked (the fake's are all on
  // the epoch's first day).
  EXPECT_EQ(rest.header("Content-Disposition"),
            "attachment; filename=\"leads_1970-01-01_1970-01-01.csv\"");
}

TEST_F(LeadReadHandler, AnExportTheStoreCannotFinishIsA503NotAShorterFile) {
  store.list_down = true;
  const http::Response down = list(Viewer::seller("sl_1"), "format=csv");
  EXPECT_EQ(down.status, 503);
  EXPECT_EQ(down.header("Retry-After"), "1");
}

}  // namespace
}  // namespace leadflow
