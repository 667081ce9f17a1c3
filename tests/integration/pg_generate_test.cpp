// leadflow-admin generate, on SQLite and on PostgreSQL: what it writes through the store's own
// paths fills the rollups exactly. After 2,000 leads over three days around New York's return
// to standard time (2026-11-01), the revenue and performance rollups, folded into New York days
// and hours and cut by each report key, equal the raw rows (leads with their attempts, sales,
// ledger entries) summed by hand, to the cent and the count. The same for a day around Lord
// Howe's half-hour fall back (2026-04-05), its repeated half hour an hour of its own. And a seed
// gives the same data.
//
// PostgreSQL: LEADFLOW_TEST_PG_URL (a superuser URL), else the server of the postgres_start
// fixture; each run gets a database of its own, dropped afterwards.

#include <gtest/gtest.h>

#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "generate.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/store/store.hpp"

namespace leadflow {
namespace {

std::string pg_admin_url() {
  if (const char* env = std::getenv("LEADFLOW_TEST_PG_URL"); env != nullptr && *env != '\0')
    return env;
  std::ifstream file(LEADFLOW_BINARY_DIR "/pg/url");
  std::string url;
  std::getline(file, url);
  return url;
}

bool pg_exec(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  PGresult* r = PQexec(conn, sql.c_str());
  const auto status = PQresultStatus(r);
  PQclear(r);
  PQfinish(conn);
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

/// A store of one test: a SQLite file in a temporary directory, or a PostgreSQL database of its
/// own; removed at the end.
class TestStore {
 public:
  explicit TestStore(const std::string& kind) {
    std::random_device seed;
    std::mt19937_64 random(seed() ^ (static_cast<std::uint64_t>(getpid()) << 32));
    const std::string name = "leadflow_generate_" + std::to_string(random() % 1'000'000'000ULL);
    std::string url;
    if (kind == "sqlite") {
      dir_ = std::filesystem::temp_directory_path() / name;
      std::filesystem::create_directories(dir_);
      url = "sqlite:" + (dir_ / "leadflow.db").string();
    } else {
      admin_ = pg_admin_url();
      if (admin_.empty()) return;
      if (!pg_exec(admin_, "CREATE DATABASE " + name)) return;
      db_ = name;
      const auto scheme_end = admin_.find("://");
      const auto path = admin_.find('/', scheme_end + 3);
      const auto query = admin_.find('?');
      url = admin_.substr(0, std::min(path, query)) + "/" + name +
            (query == std::string::npos ? "" : admin_.substr(query));
    }
    std::string error;
    store_ = open_migrated_store(url, error);
    EXPECT_NE(store_, nullptr) << error;
  }
  TestStore(const TestStore&) = delete;
  TestStore& operator=(const TestStore&) = delete;
  ~TestStore() {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
    if (!db_.empty()) pg_exec(admin_, "DROP DATABASE IF EXISTS " + db_ + " WITH (FORCE)");
  }
  Store* get() { return store_.get(); }

 private:
  std::filesystem::path dir_;
  std::string admin_, db_;
  std::unique_ptr<Store> store_;
};

/// Every lead with its attempts and sales, oldest first.
std::vector<LeadRecord> all_leads(Store& store) {
  std::vector<LeadRecord> out;
  LeadQuery q;
  q.limit = 100;
  for (;;) {
    const auto page = store.list_leads(q).value();
    for (const auto& r : page) {
      auto full = store.get_lead(r.lead.id).value;
      EXPECT_TRUE(full.has_value()) << r.lead.id;
      if (full) out.push_back(std::move(*full));
    }
    if (static_cast<int>(page.size()) < q.limit) break;
    q.before_id = page.back().lead.id;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<LedgerEntry> all_entries(Store& store) {
  std::vector<LedgerEntry> out;
  LedgerQuery q;
  q.limit = 1000;
  for (;;) {
    const auto page = store.list_ledger(q);
    EXPECT_TRUE(page.has_value());
    if (!page || page->empty()) break;
    out.insert(out.end(), page->begin(), page->end());
    q.after_id = page->back().id;
    q.after_at_ms = page->back().at_ms;
  }
  return out;
}

enum class Cut { kNone, kDay, kHour };

/// A report's question: a time cut (in New York unless `tz` says), the keys, a filter, a range.
struct Question {
  Cut cut = Cut::kNone;
  std::vector<ReportKey> group;
  std::vector<std::pair<ReportKey, std::string>> filters;
  std::int64_t from_ms = 0, to_ms = 0;
  std::shared_ptr<const TimeZone> tz = nullptr;
};

using Key = std::pair<std::int64_t, std::vector<std::string>>;  // time cut's start, keys
constexpr int kRevenueFigures = 6;
using RevenueTable = std::map<Key, std::array<std::int64_t, kRevenueFigures>>;
using PerformanceTable = std::map<Key, std::array<std::int64_t, kPerformanceFigures>>;

std::int64_t cut_start(const TimeZone& tz, Cut cut, std::int64_t ms) {
  switch (cut) {
    case Cut::kNone:
      return 0;
    case Cut::kDay:
      return tz.start_of_day(ms / 1000);
    case Cut::kHour:
      return tz.start_of_hour(ms / 1000);
  }
  return 0;
}

/// The report keys of one row of raw data.
struct RowKeys {
  std::string seller, campaign, buyer, vertical, source;
  const std::string& of(ReportKey k) const {
    switch (k) {
      case ReportKey::kSeller:
        return seller;
      case ReportKey::kCampaign:
        return campaign;
      case ReportKey::kBuyer:
        return buyer;
      case ReportKey::kVertical:
        return vertical;
      case ReportKey::kSource:
        return source;
      case ReportKey::kReason:  // the unsold rollup's alone, not asked here
        break;
    }
    return seller;
  }
  /// The keys of `q`'s row this data falls in; false when a filter leaves it out.
  bool key(const Question& q, std::vector<std::string>& out) const {
    for (const auto& [k, v] : q.filters)
      if (of(k) != v) return false;
    for (ReportKey k : q.group) out.push_back(of(k));
    return true;
  }
};

/// The store's question for `q`. With `cuts`, the instants where q's days or hours begin in
/// its zone, so the store answers from its tiers where it can; without, quarter hours only.
RollupQuery rollup_query(const Question& q, const TimeZone& tz, bool cuts) {
  RollupQuery r;
  r.from_ms = q.from_ms;
  r.to_ms = q.to_ms;
  r.filters = q.filters;
  r.by_bucket = q.cut != Cut::kNone;
  r.group = q.group;
  if (r.by_bucket && cuts)
    for (std::int64_t t = q.from_ms + kRollupBucketMs; t < q.to_ms; t += kRollupBucketMs)
      if (cut_start(tz, q.cut, t) != cut_start(tz, q.cut, t - kRollupBucketMs)) r.cuts.push_back(t);
  return r;
}

/// The store's revenue cells for `q`, folded into its zone's days or hours.
RevenueTable stored_revenue(Store& store, const Question& q, const TimeZone& zone, bool cuts) {
  RevenueTable stored;
  const auto cells = store.revenue_rollup(rollup_query(q, zone, cuts));
  EXPECT_TRUE(cells.has_value());
  if (!cells) return stored;
  for (const auto& c : *cells) {
    auto& f = stored[{cut_start(zone, q.cut, c.bucket_ms), c.keys}];
    const std::array<std::int64_t, kRevenueFigures> add = {
        c.sales, c.revenue, c.payout, c.returns, c.returned_revenue, c.returned_payout};
    for (int i = 0; i < kRevenueFigures; ++i) f[i] += add[i];
  }
  return stored;
}

/// The same figures from the raw rows: each ledger entry by its own time.
RevenueTable revenue_by_hand(const std::vector<LedgerEntry>& ledger,
                             const std::map<std::string, const LeadRecord*>& lead_by_id,
                             const Question& q, const TimeZone& zone) {
  RevenueTable by_hand;
  for (const auto& e : ledger) {
    if (e.at_ms < q.from_ms || e.at_ms >= q.to_ms) continue;
    const LeadRecord& l = *lead_by_id.at(e.lead_id);
    const RowKeys k{e.seller_id, e.campaign_id, e.buyer_id, l.lead.vertical, l.lead.source};
    std::vector<std::string> keys;
    if (!k.key(q, keys)) continue;
    auto& f = by_hand[{cut_start(zone, q.cut, e.at_ms), keys}];
    if (e.kind == "sale") {
      f[0] += 1;
      f[1] += e.revenue;
      f[2] += e.payout;
    } else {
      f[3] += 1;
      f[4] -= e.revenue;
      f[5] -= e.payout;
    }
  }
  return by_hand;
}

/// The performance figures of one decided lead, counted from its stored record: the lead's own
/// under buyer "", each buyer's pings and posts under that buyer. Written from the report's
/// definition, not from the store's code.
void count_lead(const LeadRecord& r, const std::function<std::int64_t*(const std::string&)>& row) {
  const Distribution& d = r.distribution;
  std::int64_t* lead = row("");
  if (lead) {
    ++lead[kLeads];
    if (d.status == DeliveryStatus::kDuplicate) ++lead[kDuplicates];
    if (d.status == DeliveryStatus::kDelivered || d.status == DeliveryStatus::kReturned)
      ++lead[kSold];
    if (d.status == DeliveryStatus::kUnsold || d.status == DeliveryStatus::kRejected)
      ++lead[kUnsold];
    if (d.status == DeliveryStatus::kFailed) ++lead[kFailed];
  }
  for (const Attempt& a : d.attempts) {
    if (a.outcome == AttemptOutcome::kSkipped) continue;
    std::int64_t* b = row(a.buyer_id);
    if (!b) continue;
    ++b[a.kind == AttemptKind::kPing ? kPings : kPosts];
    if (a.outcome == AttemptOutcome::kBid) ++b[kBids];
    if (a.outcome == AttemptOutcome::kAccepted) ++b[kAccepted];
    if (a.outcome == AttemptOutcome::kRejected) ++b[kRejected];
    if (a.outcome == AttemptOutcome::kTimeout) ++b[kTimeouts];
    if (a.outcome == AttemptOutcome::kError) ++b[kErrors];
    if (a.outcome != AttemptOutcome::kTimeout && a.outcome != AttemptOutcome::kError) {
      ++b[kResponses];
      b[kResponseMs] += a.duration_ms;
      int bucket = 0;
      while (bucket < kLatencyBuckets - 1 && a.duration_ms > kLatencyEdgesMs[bucket]) ++bucket;
      ++b[kLatency0 + bucket];
    }
  }
}

class GenerateTest : public ::testing::TestWithParam<std::string> {};

// 2026-11-01 06:00 UTC: New York goes from EDT (-4) back to EST (-5); its 1 a.m. happens twice.
constexpr const char* kEnd = "2026-11-02T12:00:00Z";

TEST_P(GenerateTest, TheRollupsEqualTheRawRowsSummedByHand) {
  if (GetParam() == "postgresql" && pg_admin_url().empty())
    GTEST_FAIL() << "no PostgreSQL server: set LEADFLOW_TEST_PG_URL or run through ctest";
  TestStore ts(GetParam());
  Store* store = ts.get();
  ASSERT_NE(store, nullptr);
  GenerateOptions o;
  o.leads = 2000;
  o.days = 3;
  o.seed = 13;
  o.sellers = 5;
  o.buyers = 12;
  o.batch = 300;
  o.return_rate = 0.15;  // enough returns to count in every cut
  o.invalid_rate = 0.05;
  o.keep_invalid = true;
  o.end_ms = *parse_rfc3339_ms(kEnd);
  std::string error;
  const auto sum = generate(*store, o, error);
  ASSERT_TRUE(sum.has_value()) << error;

  const std::vector<LeadRecord> leads = all_leads(*store);
  const std::vector<LedgerEntry> ledger = all_entries(*store);
  ASSERT_EQ(leads.size(), 2000u);
  // The data is what the summary says, and of every kind the reports count.
  std::int64_t sold = 0, duplicates = 0, unsold = 0, failed = 0, returned = 0, pings = 0;
  for (const auto& r : leads) {
    EXPECT_GE(r.lead.received_at_ms, sum->from_ms);
    EXPECT_LT(r.lead.received_at_ms, sum->to_ms);
    const DeliveryStatus s = r.distribution.status;
    sold += s == DeliveryStatus::kDelivered || s == DeliveryStatus::kReturned;
    returned += s == DeliveryStatus::kReturned;
    duplicates += s == DeliveryStatus::kDuplicate;
    unsold += s == DeliveryStatus::kUnsold;
    failed += s == DeliveryStatus::kFailed;
    for (const auto& a : r.distribution.attempts) pings += a.kind == AttemptKind::kPing;
  }
  EXPECT_EQ(sold, sum->sold);
  EXPECT_EQ(duplicates, sum->duplicates);
  EXPECT_EQ(unsold, sum->unsold);
  EXPECT_EQ(failed, sum->failed);
  EXPECT_EQ(pings, sum->pings);
  EXPECT_EQ(returned, sum->returns);  // exclusive sales: a return returns the lead
  EXPECT_GT(sold, 500);
  EXPECT_GT(duplicates, 10);
  EXPECT_GT(unsold, 10);
  EXPECT_GT(failed, 0);
  EXPECT_GT(sum->returns, 20);
  EXPECT_GT(sum->invalid, 10);
  std::int64_t sale_entries = 0, return_entries = 0;
  for (const auto& e : ledger) (e.kind == "sale" ? sale_entries : return_entries)++;
  EXPECT_EQ(sale_entries, sum->sales);
  EXPECT_EQ(return_entries, sum->returns);

  std::map<std::string, const LeadRecord*> lead_by_id;
  for (const auto& r : leads) lead_by_id[r.lead.id] = &r;
  std::map<std::string, std::pair<std::string, std::string>> campaign_of;  // seller, vertical
  const auto campaigns = store->list_campaigns("").value();
  for (const auto& c : campaigns) campaign_of[c.id] = {c.seller_id, c.vertical};

  const auto ny = TimeZone::load("America/New_York");
  ASSERT_NE(ny, nullptr);
  // The questions: every cut and key over the whole range; a filter; New York's 25-hour day
  // alone (its local midnights, on quarter hours).
  std::vector<Question> questions;
  const std::vector<std::vector<ReportKey>> groups = {{},
                                                      {ReportKey::kBuyer},
                                                      {ReportKey::kSource},
                                                      {ReportKey::kSeller},
                                                      {ReportKey::kVertical},
                                                      {ReportKey::kCampaign},
                                                      {ReportKey::kBuyer, ReportKey::kVertical}};
  for (Cut cut : {Cut::kNone, Cut::kDay, Cut::kHour})
    for (const auto& g : groups) questions.push_back({cut, g, {}, sum->from_ms, sum->to_ms});
  const std::int64_t long_day_start = *parse_rfc3339_ms("2026-11-01T04:00:00Z");
  const std::int64_t long_day_end = *parse_rfc3339_ms("2026-11-02T05:00:00Z");
  ASSERT_EQ(long_day_end - long_day_start, 25 * 3'600'000);
  questions.push_back({Cut::kHour, {ReportKey::kSource}, {}, long_day_start, long_day_end});
  questions.push_back({Cut::kDay,
                       {ReportKey::kBuyer},
                       {{ReportKey::kSeller, sum->seller_ids.front()}},
                       sum->from_ms,
                       sum->to_ms});

  // The same cut in other zones: UTC (whole UTC days from the day tiers) and India's (half an
  // hour off UTC: quarter hours at every cut); ranges not on an hour (quarter hours at edges).
  const auto kolkata = TimeZone::load("Asia/Kolkata");
  const auto utc = TimeZone::load("UTC");
  ASSERT_NE(kolkata, nullptr);
  ASSERT_NE(utc, nullptr);
  for (const auto& zone : {kolkata, utc})
    for (Cut cut : {Cut::kDay, Cut::kHour})
      for (const auto& g : groups)
        questions.push_back({cut, g, {}, sum->from_ms, sum->to_ms, zone});
  questions.push_back({Cut::kNone,
                       {ReportKey::kBuyer},
                       {{ReportKey::kSource, "google"}},
                       sum->from_ms + 45 * 60'000,
                       sum->to_ms - 2 * 3'600'000 - 15 * 60'000});
  questions.push_back({Cut::kDay,
                       {ReportKey::kCampaign},
                       {},
                       sum->from_ms + 15 * 60'000,
                       sum->to_ms - 30 * 60'000,
                       kolkata});

  int nonempty_hour_rows_on_repeat = 0;
  for (const Question& q : questions)
    for (bool cuts : {false, true}) {
      if (cuts && q.cut == Cut::kNone) continue;  // the same question: nothing to cut
      const TimeZone& zone = q.tz ? *q.tz : *ny;
      SCOPED_TRACE("cut " + std::to_string(static_cast<int>(q.cut)) + " in " + zone.name() +
                   (cuts ? " (tiers)" : " (quarter hours)") + ", keys " +
                   std::to_string(q.group.size()) + ", filters " +
                   std::to_string(q.filters.size()) + ", from " + format_rfc3339_ms(q.from_ms));
      // Revenue: the store's cells folded into the zone's days or hours, and each ledger entry by
      // its own time.
      const RevenueTable by_hand = revenue_by_hand(ledger, lead_by_id, q, zone);
      EXPECT_EQ(stored_revenue(*store, q, zone, cuts), by_hand);
      EXPECT_FALSE(by_hand.empty());

      // Performance: the same, from each decided lead (by when it arrived) and each invalid post.
      PerformanceTable pstored, pby_hand;
      const auto pcells = store->performance_rollup(rollup_query(q, zone, cuts));
      ASSERT_TRUE(pcells.has_value());
      for (const auto& c : *pcells) {
        auto& f = pstored[{cut_start(zone, q.cut, c.bucket_ms), c.keys}];
        for (int i = 0; i < kPerformanceFigures; ++i) f[i] += c.figures[i];
      }
      for (const auto& r : leads) {
        const Lead& l = r.lead;
        if (l.received_at_ms < q.from_ms || l.received_at_ms >= q.to_ms) continue;
        const std::int64_t at = cut_start(zone, q.cut, l.received_at_ms);
        count_lead(r, [&](const std::string& buyer) -> std::int64_t* {
          const RowKeys k{l.seller_id, l.campaign_id, buyer, l.vertical, l.source};
          std::vector<std::string> keys;
          if (!k.key(q, keys)) return nullptr;
          return pby_hand[{at, keys}].data();
        });
      }
      for (const auto& p : sum->invalid_posts) {
        if (p.at_ms < q.from_ms || p.at_ms >= q.to_ms) continue;
        const auto& [seller, vertical] = campaign_of.at(p.campaign_id);
        const RowKeys k{seller, p.campaign_id, "", vertical, ""};
        std::vector<std::string> keys;
        if (!k.key(q, keys)) continue;
        ++pby_hand[{cut_start(zone, q.cut, p.at_ms), keys}][kInvalid];
      }
      EXPECT_EQ(pstored, pby_hand);

      // Unsold: the tiers' answer equals the quarter hours' (each checked by hand by the store
      // contract tests), for the leads' own reasons or each buyer's. Quarter hours are asked
      // cut by time without cuts (a question not cut by time is answered from the tiers).
      if (cuts || q.cut == Cut::kNone) {
        const auto unsold_of = [&](bool tiers) {
          RollupQuery u = rollup_query(q, zone, tiers);
          if (!tiers) u.by_bucket = true;
          u.group.push_back(ReportKey::kReason);
          if (std::find(u.group.begin(), u.group.end(), ReportKey::kBuyer) == u.group.end())
            u.filters.push_back({ReportKey::kBuyer, ""});
          std::map<Key, std::int64_t> folded;
          const auto ucells = store->unsold_rollup(u);
          EXPECT_TRUE(ucells.has_value());
          if (ucells)
            for (const auto& c : *ucells)
              folded[{cut_start(zone, q.cut, c.bucket_ms), c.keys}] += c.leads;
          return folded;
        };
        const auto from_tiers = unsold_of(true);
        EXPECT_EQ(from_tiers, unsold_of(false));
        EXPECT_FALSE(from_tiers.empty());
      }
      if (q.tz == nullptr && q.cut == Cut::kHour)
        for (const auto& [key, f] : pby_hand)
          if (const auto t = ny->local(key.first); t.month == 11 && t.day == 1 &&
                                                   t.minute_of_day / 60 == 1 &&
                                                   ny->offset_at(key.first) == -5 * 3600)
            ++nonempty_hour_rows_on_repeat;
    }
  // The repeated 1 a.m. (the second one, in EST) did hold leads: the DST change was exercised.
  EXPECT_GT(nonempty_hour_rows_on_repeat, 0);
}

// Lord Howe falls back by half an hour on 2026-04-05: 02:00 +11:00 becomes 01:30 +10:30 at 15:00
// UTC. Its hours are local-clock hours at one offset, so the repeated half hour (15:00-15:30 UTC)
// is an hour of its own; the cut at 15:30 UTC is inside a UTC hour, so the store must read that
// hour in quarter hours, never from its hour tier. Folded into Lord Howe's hours, the rollups
// (from the tiers, and from quarter hours alone) equal the ledger summed by hand, the repeated
// half hour included.
TEST_P(GenerateTest, TheRollupsEqualTheRawRowsAcrossLordHowesRepeatedHalfHour) {
  if (GetParam() == "postgresql" && pg_admin_url().empty())
    GTEST_FAIL() << "no PostgreSQL server: set LEADFLOW_TEST_PG_URL or run through ctest";
  TestStore ts(GetParam());
  Store* store = ts.get();
  ASSERT_NE(store, nullptr);
  GenerateOptions o;
  o.leads = 1500;
  o.days = 1;
  o.seed = 17;
  o.sellers = 3;
  o.buyers = 6;
  o.batch = 300;
  o.return_rate = 0.15;
  o.end_ms = *parse_rfc3339_ms("2026-04-05T03:00:00Z");
  std::string error;
  const auto sum = generate(*store, o, error);
  ASSERT_TRUE(sum.has_value()) << error;
  const std::vector<LeadRecord> leads = all_leads(*store);
  const std::vector<LedgerEntry> ledger = all_entries(*store);
  std::map<std::string, const LeadRecord*> lead_by_id;
  for (const auto& r : leads) lead_by_id[r.lead.id] = &r;

  const auto lord_howe = TimeZone::load("Australia/Lord_Howe");
  ASSERT_NE(lord_howe, nullptr);
  // Rows are keyed by where their hour starts, in Unix seconds (cut_start).
  const std::int64_t repeated = *parse_rfc3339_ms("2026-04-04T15:00:00Z") / 1000;
  const std::int64_t after = *parse_rfc3339_ms("2026-04-04T15:30:00Z") / 1000;
  ASSERT_EQ(lord_howe->start_of_hour(repeated), repeated);
  ASSERT_EQ(lord_howe->start_of_hour(after), after);
  for (const auto& group : std::vector<std::vector<ReportKey>>{{}, {ReportKey::kBuyer}})
    for (Cut cut : {Cut::kHour, Cut::kDay})
      for (bool cuts : {false, true}) {
        const Question q{cut, group, {}, sum->from_ms, sum->to_ms, lord_howe};
        SCOPED_TRACE("cut " + std::to_string(static_cast<int>(cut)) + ", keys " +
                     std::to_string(group.size()) + (cuts ? " (tiers)" : " (quarter hours)"));
        const RevenueTable by_hand = revenue_by_hand(ledger, lead_by_id, q, *lord_howe);
        EXPECT_EQ(stored_revenue(*store, q, *lord_howe, cuts), by_hand);
        if (cut != Cut::kHour || !group.empty()) continue;
        // The repeated half hour held sales, in a row of its own.
        const auto row = by_hand.find({repeated, {}});
        ASSERT_NE(row, by_hand.end());
        EXPECT_GT(row->second[0], 0);
        EXPECT_TRUE(by_hand.contains({after, {}}));
      }
}

TEST_P(GenerateTest, ASeedGivesTheSameData) {
  if (GetParam() == "postgresql" && pg_admin_url().empty())
    GTEST_FAIL() << "no PostgreSQL server: set LEADFLOW_TEST_PG_URL or run through ctest";
  TestStore one(GetParam()), two("sqlite");
  ASSERT_NE(one.get(), nullptr);
  ASSERT_NE(two.get(), nullptr);
  GenerateOptions o;
  o.leads = 300;
  o.days = 2;
  o.seed = 7;
  o.end_ms = *parse_rfc3339_ms(kEnd);
  std::string error;
  ASSERT_TRUE(generate(*one.get(), o, error).has_value()) << error;
  ASSERT_TRUE(generate(*two.get(), o, error).has_value()) << error;
  // A second run into a store with leads is refused.
  EXPECT_FALSE(generate(*two.get(), o, error).has_value());
  EXPECT_NE(error.find("already holds leads"), std::string::npos) << error;

  const auto a = all_leads(*one.get()), b = all_leads(*two.get());
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].lead.id, b[i].lead.id);
    EXPECT_EQ(a[i].lead.email, b[i].lead.email);
    EXPECT_EQ(a[i].lead.received_at_ms, b[i].lead.received_at_ms);
    EXPECT_EQ(a[i].distribution.status, b[i].distribution.status);
    EXPECT_EQ(a[i].distribution.price, b[i].distribution.price);
    EXPECT_EQ(a[i].distribution.attempts.size(), b[i].distribution.attempts.size());
  }
  const auto la = all_entries(*one.get()), lb = all_entries(*two.get());
  ASSERT_EQ(la.size(), lb.size());
  std::int64_t ra = 0, rb = 0;
  for (const auto& e : la) ra += e.revenue * 31 + e.payout + e.at_ms % 1000;
  for (const auto& e : lb) rb += e.revenue * 31 + e.payout + e.at_ms % 1000;
  EXPECT_EQ(ra, rb);
}

INSTANTIATE_TEST_SUITE_P(Stores, GenerateTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace leadflow
