#pragma once
// The storage contract: one suite of behaviour every Store adapter must show. An adapter's
// integration test includes this header and the suite's .inc files inside namespace
// leadflow::contract: store_contract_tests.inc (the whole store's own: schema, health, shared
// secrets), one store_contract_<port>.inc per role port (docs/store-ports.md), and
// store_contract_versions.inc; then it instantiates the suite with its factory:
//
//   namespace leadflow::contract {
//   #include "store_contract_tests.inc"
//   #include "store_contract_accounts.inc"  // ... one per port
//   INSTANTIATE_TEST_SUITE_P(Sqlite, StoreContract, ::testing::Values(sqlite_factory()),
//                            store_factory_name);
//   }
//
// The TEST_P bodies live in an .inc, not in the support library, because a static library's
// object files are linked only when referenced, and registering tests references nothing.
// An .inc includes nothing itself (it is read inside a namespace): headers it needs are here.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lead_fields.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/base/crypto.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/metrics.hpp"  // store_contract_limits.inc: the clean-up's counter
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/lead_search.hpp"  // store_contract_intake.inc: search keys
#include "leadflow/domain/verticals.hpp"
#include "leadflow/erasure/erasure.hpp"             // store_contract_erasure.inc
#include "leadflow/erasure/retention.hpp"           // store_contract_erasure.inc
#include "leadflow/limits/rate_bucket_sweeper.hpp"  // store_contract_limits.inc
#include "leadflow/management/management.hpp"  // store_contract_versions.inc: changes as the API makes them
#include "leadflow/money/payout.hpp"           // store_contract_money.inc: a shared sale's parts
#include "leadflow/store/store.hpp"
#include "simulated_clock.hpp"

namespace leadflow::contract {

/// A fresh, empty (not yet migrated) store for one test, and how to throw its data away.
struct StoreHandle {
  std::unique_ptr<Store> store;
  std::function<void()> cleanup;  // run after the store is destroyed; may be empty
  /// Another store on the same data with connections of its own, as a second process would
  /// open it. Destroyed by the test before `cleanup` runs.
  std::function<std::unique_ptr<Store>()> open_again;
  /// Makes the database itself fail the write of a post intent for `lead_id` (as a lost disk or
  /// connection would), behind the adapter's back; the function returned takes the fault away.
  std::function<std::function<void()>(const std::string& lead_id)> fail_post_intent_of;
  /// Runs `sql` on the database behind the adapter's back, as an operator with a SQL shell
  /// would; whether the database accepted it.
  std::function<bool(const std::string& sql)> try_sql;
};

/// Takes schema steps 40 (a vertical policy's version), 39 (an endpoint's version), 38 (an
/// endpoint's spell on) and 37 (postback events written once, fanned out by the claims) back
/// behind the adapter's back. Whether the database took them.
inline bool undo_postback_events(const StoreHandle& h) {
  return h.try_sql("ALTER TABLE vertical_reoffers DROP COLUMN version") &&
         h.try_sql("ALTER TABLE vertical_reoffers DROP COLUMN active") &&
         h.try_sql("ALTER TABLE postback_endpoints DROP COLUMN version") &&
         h.try_sql("DROP VIEW postback_event_deliveries") &&
         h.try_sql("ALTER TABLE postback_endpoints DROP COLUMN on_since_ms") &&
         h.try_sql("ALTER TABLE postback_endpoints DROP COLUMN off_since_ms") &&
         h.try_sql("DROP TABLE postback_events");
}

/// Takes schema step 35 (the ledger journal's indexes) back behind the adapter's back, for the
/// tests that return a database to an earlier step and upgrade it: PostgreSQL's step replaced
/// ledger_by_time (at) with (at, id), SQLite's kept it. Whether the database took it.
inline bool undo_ledger_journal_indexes(const StoreHandle& h) {
  if (!h.try_sql("DROP INDEX ledger_by_buyer") || !h.try_sql("DROP INDEX ledger_by_seller"))
    return false;
  if (!h.try_sql("DROP INDEX ledger_by_time_id")) return true;  // SQLite's
  return h.try_sql("CREATE INDEX ledger_by_time ON ledger_entries (at)");
}

/// Takes schema step 36 (PostgreSQL's revenue rollups kept per statement) back behind the
/// adapter's back: the trigger per ledger entry as step 12 left it. SQLite's step changed
/// nothing. Whether the database took it.
inline bool undo_revenue_rollup_per_statement(const StoreHandle& h) {
  if (!h.try_sql("DROP TRIGGER revenue_rollup_of_entries ON ledger_entries")) return true;
  return h.try_sql("DROP FUNCTION revenue_rollup_of_entries()") && h.try_sql(R"sql(
CREATE FUNCTION revenue_rollup_of_entry() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(7810778542233040243);
  INSERT INTO revenue_rollup (bucket, seller_id, campaign_id, buyer_id, vertical, source, sales,
                              revenue, payout, returns, returned_revenue, returned_payout)
  SELECT NEW.at - NEW.at % 900000, NEW.seller_id, NEW.campaign_id, NEW.buyer_id, leads.vertical,
         leads.source, (NEW.kind = 'sale')::INT,
         CASE WHEN NEW.kind = 'sale' THEN NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'sale' THEN NEW.payout_cents ELSE 0 END,
         (NEW.kind = 'return')::INT,
         CASE WHEN NEW.kind = 'return' THEN -NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'return' THEN -NEW.payout_cents ELSE 0 END
  FROM leads WHERE leads.id = NEW.lead_id
  ON CONFLICT (bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE SET
    sales = revenue_rollup.sales + excluded.sales,
    revenue = revenue_rollup.revenue + excluded.revenue,
    payout = revenue_rollup.payout + excluded.payout,
    returns = revenue_rollup.returns + excluded.returns,
    returned_revenue = revenue_rollup.returned_revenue + excluded.returned_revenue,
    returned_payout = revenue_rollup.returned_payout + excluded.returned_payout;
  INSERT INTO revenue_tiers (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source,
                             sales, revenue, payout, returns, returned_revenue, returned_payout)
  SELECT t.tier, NEW.at - NEW.at % t.grain_ms,
         CASE WHEN t.seller = 1 THEN NEW.seller_id ELSE '' END,
         CASE WHEN t.campaign = 1 THEN NEW.campaign_id ELSE '' END,
         CASE WHEN t.buyer = 1 THEN NEW.buyer_id ELSE '' END,
         CASE WHEN t.vertical = 1 THEN leads.vertical ELSE '' END,
         CASE WHEN t.source = 1 THEN leads.source ELSE '' END,
         (NEW.kind = 'sale')::INT,
         CASE WHEN NEW.kind = 'sale' THEN NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'sale' THEN NEW.payout_cents ELSE 0 END,
         (NEW.kind = 'return')::INT,
         CASE WHEN NEW.kind = 'return' THEN -NEW.revenue_cents ELSE 0 END,
         CASE WHEN NEW.kind = 'return' THEN -NEW.payout_cents ELSE 0 END
  FROM leads, rollup_tiers AS t WHERE leads.id = NEW.lead_id ORDER BY 1, 2, 3, 4, 5, 6, 7
  ON CONFLICT (tier, bucket, seller_id, campaign_id, buyer_id, vertical, source) DO UPDATE SET
    sales = revenue_tiers.sales + excluded.sales,
    revenue = revenue_tiers.revenue + excluded.revenue,
    payout = revenue_tiers.payout + excluded.payout,
    returns = revenue_tiers.returns + excluded.returns,
    returned_revenue = revenue_tiers.returned_revenue + excluded.returned_revenue,
    returned_payout = revenue_tiers.returned_payout + excluded.returned_payout;
  RETURN NULL;
END $$;
CREATE TRIGGER revenue_rollup_of_entry AFTER INSERT ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION revenue_rollup_of_entry();
)sql");
}

/// How the suite gets stores of one adapter.
struct StoreFactory {
  std::string name;  // "sqlite", "postgresql": names the instantiation
  std::function<StoreHandle()> make;
};

inline void PrintTo(const StoreFactory& f, std::ostream* os) { *os << f.name; }
inline std::string store_factory_name(const ::testing::TestParamInfo<StoreFactory>& info) {
  return info.param.name;
}

// A fixed instant (2023-11-14T22:13:20Z) and spans, so tests never read the real clock.
inline constexpr std::int64_t kT0 = 1'700'000'000'000;
inline constexpr std::int64_t kSecond = 1'000;
inline constexpr std::int64_t kMinute = 60 * kSecond;
inline constexpr std::int64_t kHour = 60 * kMinute;
inline constexpr std::int64_t kDay = 24 * kHour;

/// The fixture: a migrated store per test, removed afterwards.
class StoreContract : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override {
    handle_ = GetParam().make();
    ASSERT_NE(handle_.store, nullptr) << "the " << GetParam().name << " factory made no store";
    ASSERT_EQ(handle_.store->migrate(), StoreStatus::kOk);
  }

  void TearDown() override {
    handle_.store.reset();
    if (handle_.cleanup) handle_.cleanup();
  }

  Store& store() { return *handle_.store; }

  /// A unique, distinguishable value for e-mails, phones and names.
  static int next_serial() {
    static std::atomic<int> serial{0};
    return ++serial;
  }

  /// A complete, valid lead received at `at_ms`. Ids are made in creation order, so a lead made
  /// later has a greater id (ids sort by time; the generator is monotonic).
  static Lead make_lead(std::int64_t at_ms, std::string vertical = "auto_insurance") {
    const int n = next_serial();
    Lead l;
    l.id = new_id(kLeadPrefix, at_ms);
    l.seller_id = "sl_contract";
    l.campaign_id = "";
    l.api_key_id = "key_contract";
    l.surface = Surface::kApi;
    l.first_name = "Ada" + std::to_string(n);
    l.last_name = "Lovelace";
    l.email = "person" + std::to_string(n) + "@example.com";
    std::string digits = std::to_string(1000000 + n);
    l.phone = "+1415" + digits.substr(digits.size() - 7);
    l.zip_code = "94107";
    l.state = "CA";
    l.vertical = std::move(vertical);
    l.source = "google";
    l.received_at_ms = at_ms;
    return l;
  }

  /// Inserts leads and asserts every one was new.
  void insert(const std::vector<Lead>& leads) {
    const auto results = store().insert_leads(leads);
    ASSERT_EQ(results.size(), leads.size());
    for (const auto& r : results) ASSERT_TRUE(r.inserted);
  }

  static Distribution sold_to(std::string buyer_id, Cents price, Cents payout, std::int64_t at_ms) {
    Distribution d;
    d.status = DeliveryStatus::kDelivered;
    d.buyer_id = std::move(buyer_id);
    d.price = price;
    d.payout = payout;
    d.buyer_lead_id = "ref-" + std::to_string(next_serial());
    d.decided_at_ms = at_ms;
    return d;
  }

  static Distribution decided(DeliveryStatus status, std::int64_t at_ms, std::string reason = "") {
    Distribution d;
    d.status = status;
    d.reason = std::move(reason);
    d.decided_at_ms = at_ms;
    return d;
  }

  /// Records one outcome and returns its status.
  StoreStatus record(const std::string& lead_id, Distribution d) {
    std::vector<OutcomeRecord> batch{{lead_id, std::move(d)}};
    const auto results = store().record_outcomes(batch);
    if (results.size() != 1) return StoreStatus::kUnavailable;
    return results[0];
  }

  Seller make_seller(std::string name = "Acme Leads") {
    Seller s;
    s.id = new_id(kSellerPrefix, kT0);
    s.name = std::move(name);
    s.active = true;
    s.created_at_ms = kT0;
    return s;
  }

  static Campaign make_campaign(const std::string& seller_id) {
    const int n = next_serial();
    Campaign c;
    c.id = new_id(kCampaignPrefix, kT0);
    c.seller_id = seller_id;
    c.name = "Campaign " + std::to_string(n);
    c.vertical = "solar";
    c.key_hash = std::string(60, 'a') + std::to_string(1000 + n);
    c.key_hint = "lfc_Ab12";
    c.created_at_ms = kT0;
    return c;
  }

  static ApiKey make_api_key(const std::string& seller_id) {
    const int n = next_serial();
    ApiKey k;
    k.id = new_id(kKeyPrefix, kT0);
    k.seller_id = seller_id;
    k.name = "key " + std::to_string(n);
    k.plan = Plan::kStandard;
    k.scopes = kScopeLeadsWrite | kScopeLeadsRead;
    k.key_hash = std::string(60, 'b') + std::to_string(1000 + n);
    k.key_hint = "lfk_Zz99";
    k.created_at_ms = kT0;
    return k;
  }

  static Buyer make_buyer(std::string name, std::vector<std::string> verticals,
                          bool active = true) {
    Buyer b;
    b.id = new_id(kBuyerPrefix, kT0);
    b.name = std::move(name);
    b.active = active;
    b.verticals = std::move(verticals);
    b.mode = DeliveryMode::kPingPost;
    b.ping_url = "https://buyer.example.com/ping";
    b.post_url = "https://buyer.example.com/post";
    b.timeout_ms = 800;
    b.pricing = PricingModel::kBid;
    b.min_bid = 500;
    b.priority = 2;
    b.weight = 3;
    b.created_at_ms = kT0;
    b.updated_at_ms = kT0;
    return b;
  }

  /// The ids of `records`, in order.
  static std::vector<std::string> ids_of(const std::vector<LeadRecord>& records) {
    std::vector<std::string> ids;
    for (const auto& r : records) ids.push_back(r.lead.id);
    return ids;
  }

  StoreHandle handle_;
};

}  // namespace leadflow::contract
