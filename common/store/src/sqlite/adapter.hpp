#pragma once
// The SqliteStore class: the SQLite adapter of every store port. Its methods are defined per port,
// in sqlite/<port>.cpp (docs/store-ports.md); the helpers they share stay here.
#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attempt_times.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/money/budget.hpp"
#include "leadflow/money/ledger.hpp"
#include "leadflow/store/store.hpp"
#include "postback_rows.hpp"
#include "rollup_tiers.hpp"
#include "rows.hpp"
#include "sqlite/driver.hpp"
#include "sqlite/lead_rows.hpp"
#include "sqlite/schema.hpp"

// A lead may take a post intent while it is pending, or while one of its re-offers is leased to a
// worker (docs/reoffers.md): an aged lead's posts are guarded by intents as a live lead's are.
#define LF_OPEN_FOR_POSTS                                                                 \
  "(leads.status = 'pending' OR EXISTS (SELECT 1 FROM reoffers WHERE reoffers.lead_id = " \
  "leads.id AND reoffers.lease_until > 0))"

namespace leadflow::sqlite {

/// The writer commits without syncing for the life of this object (one transaction, see
/// insert_leads), and with a full sync again after it, whatever happened in between.
class UnsyncedCommit {
 public:
  explicit UnsyncedCommit(sqlite::Connection& c) : c_(c) { c_.exec("PRAGMA synchronous = NORMAL"); }
  UnsyncedCommit(const UnsyncedCommit&) = delete;
  UnsyncedCommit& operator=(const UnsyncedCommit&) = delete;
  ~UnsyncedCommit() {
    if (c_.exec("PRAGMA synchronous = FULL") != SQLITE_OK)
      log(LogLevel::kError, "store_unavailable",
          {{"op", "insert_leads"}, {"detail", "cannot set synchronous = FULL again"}});
  }

 private:
  sqlite::Connection& c_;
};

using nlohmann::json;
using namespace store_rows;  // the column lists and row readers shared with PostgreSQL
using namespace sqlite;      // the SQLite wrapper (driver.hpp)

constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::size_t kReaderPoolSize = 4;

// ------------------------------------------------------------------------------------------------
// Row codecs (a lead's own rows: lead_rows.cpp)
// ------------------------------------------------------------------------------------------------

inline std::string verticals_json(const Buyer& b) { return dump(json(b.verticals)); }

// ------------------------------------------------------------------------------------------------
// The store
// ------------------------------------------------------------------------------------------------

/// The SQLite Store. Thread-safe: writes serialise on one connection, reads use the pool.
class SqliteStore final : public Store, private SqliteCalls {
 public:
  SqliteStore(std::string path, std::unique_ptr<Connection> writer)
      : SqliteCalls(std::move(path), std::move(writer), kReaderPoolSize) {}

  ~SqliteStore() override {
    // Refreshes the planner's statistics where they drifted; cheap when nothing changed.
    std::lock_guard lock(write_mu_);
    writer_->exec("PRAGMA optimize");
  }

  // --- schema -----------------------------------------------------------------------------------

  StoreStatus migrate() override {
    return guarded("migrate", StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      return apply_migrations(*writer_);
    });
  }

  bool healthy() override {
    return guarded("healthy", false, [&] {
      auto conn = readers_.acquire();
      if (!conn) return false;
      // Reads the schema page: fails on a missing, locked-out or corrupt file.
      Query q(*conn, "SELECT COUNT(*) FROM sqlite_master");
      return q.step() == SQLITE_ROW;
    });
  }

  // --- accounts ---------------------------------------------------------------------------------

  StoreStatus insert_seller(const Seller& s) override;
  Lookup<Seller> get_seller(std::string_view id) override;
  StoreStatus update_seller(Seller& s) override;
  std::optional<std::vector<Seller>> list_sellers() override;
  StoreStatus insert_campaign(const Campaign& c) override;
  Lookup<Campaign> get_campaign(std::string_view id) override;
  StoreStatus update_campaign(Campaign& c) override;
  Lookup<Campaign> find_campaign_by_key_hash(std::string_view key_hash) override;
  std::optional<std::vector<Campaign>> list_campaigns(std::string_view seller_id) override;
  StoreStatus insert_api_key(const ApiKey& k) override;
  Lookup<ApiKey> find_api_key_by_hash(std::string_view key_hash) override;
  std::optional<std::vector<ApiKey>> list_api_keys() override;
  Lookup<ApiKey> get_api_key(std::string_view id) override;
  StoreStatus revoke_api_key(std::string_view id, std::int64_t at_ms,
                             std::int64_t if_version) override;
  StoreStatus touch_api_key(std::string_view id, std::int64_t at_ms) override;

  // --- dashboard users and their sessions -------------------------------------------------------

  StoreStatus insert_user(const User& u) override;
  Lookup<User> get_user(std::string_view id) override;
  Lookup<User> find_user_by_email(std::string_view email) override;
  std::optional<std::vector<User>> list_users() override;
  StoreStatus update_user(User& u, std::string_view keep_session) override;
  StoreStatus set_user_password(std::string_view user_id, std::string_view password_hash,
                                std::string_view keep_session) override;
  StoreStatus set_user_time_zone(std::string_view user_id, std::string_view zone) override;
  StoreStatus record_login(std::string_view user_id, std::int64_t at_ms, std::string_view rehashed,
                           std::string_view verified) override;
  StoreStatus insert_session(const UserSession& s) override;
  Lookup<UserSession> find_session(std::string_view token_hash) override;
  StoreStatus touch_session(std::string_view token_hash, std::int64_t at_ms) override;
  StoreStatus delete_session(std::string_view token_hash) override;
  StoreStatus delete_user_sessions(std::string_view user_id) override;
  StoreStatus delete_expired_sessions(std::int64_t now_ms, std::int64_t idle_before_ms) override;

  // --- dashboard users' second factor -----------------------------------------------------------

  Lookup<UserTotp> get_user_totp(std::string_view user_id) override;
  Lookup<UserTotp> find_user_totp_by_challenge(std::string_view challenge_hash) override;
  StoreStatus begin_user_totp(const UserTotp& t) override;
  StoreStatus enable_user_totp(std::string_view user_id, std::int64_t step,
                               const std::vector<std::string>& recovery_hashes) override;
  StoreStatus accept_user_totp_step(std::string_view user_id, std::int64_t step) override;
  StoreStatus use_recovery_code(std::string_view user_id, std::string_view code_hash,
                                std::int64_t at_ms) override;
  StoreStatus set_user_totp_challenge(std::string_view user_id, std::string_view challenge_hash,
                                      std::int64_t expires_at_ms) override;
  StoreStatus take_user_totp_challenge(std::string_view user_id,
                                       std::string_view challenge_hash) override;
  StoreStatus delete_user_totp(std::string_view user_id) override;

  // --- buyers -----------------------------------------------------------------------------------

  StoreStatus insert_buyer(const Buyer& b) override;
  StoreStatus update_buyer(Buyer& b) override;
  Lookup<Buyer> get_buyer(std::string_view id) override;
  std::optional<std::vector<Buyer>> list_buyers(const BuyerQuery& bq) override;
  std::int64_t buyers_version() override;
  std::optional<std::vector<VerticalReoffer>> list_vertical_reoffers() override;
  StoreStatus set_vertical_reoffer(VerticalReoffer& v) override;
  StoreStatus reset_vertical_reoffer(std::string_view vertical, std::int64_t version) override;

  // --- statements and closed periods (statements.cpp) ----------------------------------------

  std::optional<money::Closes> list_closes() override;
  std::optional<std::vector<money::FrozenTotals>> frozen_totals(std::string_view period) override;
  std::optional<std::vector<money::StatementEntry>> statement_entries(
      const StatementQuery& q) override;
  CloseResult close_period(const CloseRequest& r) override;

  // --- suppression lists (suppression.cpp) ------------------------------------------------------

  StoreStatus create_suppression_list(const SuppressionList& l) override;
  Lookup<SuppressionList> get_suppression_list(std::string_view id) override;
  std::optional<std::vector<SuppressionList>> list_suppression_lists(
      std::optional<std::string_view> buyer_id) override;
  StoreStatus replace_suppression_entries(std::string_view id,
                                          std::span<const std::uint64_t> fingerprints,
                                          std::int64_t now_ms) override;
  std::optional<std::vector<std::uint64_t>> suppression_entries(
      std::string_view id, std::int64_t entries_version) override;
  StoreStatus delete_suppression_list(std::string_view id) override;

  // --- postbacks (sqlite/postbacks.cpp) ---------------------------------------------------------

  StoreStatus insert_postback_endpoint(const PostbackEndpoint& e) override;
  Lookup<PostbackEndpoint> get_postback_endpoint(std::string_view id) override;
  std::optional<std::vector<PostbackEndpoint>> list_postback_endpoints(
      std::string_view seller_id) override;
  StoreStatus update_postback_endpoint(PostbackEndpoint& e, bool fan_out_first) override;
  Lookup<PostbackEndpoint> rotate_postback_secret(const SecretRotation& r) override;
  StoreStatus delete_postback_endpoint(std::string_view id, std::int64_t version) override;
  std::optional<std::vector<PostbackDelivery>> claim_postbacks(
      std::int64_t now_ms, std::int64_t lease_ms, int limit,
      std::span<const PostbackHold> holds = {}) override;
  StoreStatus record_postback_attempts(std::span<const PostbackAttempt> attempts) override;
  StoreStatus release_postbacks(std::span<const PostbackRelease> rows) override;
  std::optional<int> resume_postbacks(std::string_view endpoint_id, std::int64_t now_ms,
                                      std::int64_t beyond_ms) override;
  std::optional<std::vector<PostbackDelivery>> list_postback_deliveries(
      std::string_view endpoint_id, std::string_view before_event_id, int limit) override;
  std::optional<std::vector<PostbackAttempt>> list_postback_attempts(
      std::string_view endpoint_id, std::string_view event_id) override;
  std::optional<std::vector<PostbackAttempt>> recent_postback_attempts(std::string_view endpoint_id,
                                                                       int limit) override;
  std::optional<std::vector<RecentStatuses>> recent_postback_statuses(int per_endpoint) override;
  StoreStatus replay_postback(std::string_view endpoint_id, std::string_view event_id,
                              std::int64_t now_ms) override;
  std::optional<PostbackBacklog> postback_backlog() override;
  /// One process: its own changes move it.
  std::uint64_t postback_endpoints_version() override { return subscribers_.version(); }
  std::optional<int> prune_postbacks(PostbackState state, std::int64_t before_ms,
                                     int limit) override;

 private:
  /// Reads the sellers with an endpoint (on or off) again when the cache is stale (on the writer,
  /// inside the caller's transaction).
  int refresh_subscribers(Connection& c);
  /// Writes the event `e` once, in the caller's transaction; a claim fans it out to its
  /// endpoints (fan_out_postback_events).
  static int write_outbox(Connection& c, const OutboxEvent& e);
  /// Due when their event happened, or for an endpoint held at the hold's end if later
  /// (`holds`: a JSON array of [endpoint_id, until_ms]).
  static int fan_out_postback_events(Connection& c, int limit, std::string_view holds, int& events);
  /// Every event not yet fanned out of the seller of the endpoint `endpoint_id`.
  static int fan_out_seller_events(Connection& c, std::string_view endpoint_id);
  /// write_outbox when the seller `seller_id` ("" = the lead's, unknown here: any seller) has
  /// an endpoint, on or off, as far as the cache knows; nothing otherwise.
  int outbox_if_subscribed(Connection& c, const std::string& seller_id, const OutboxEvent& e) {
    if (int rc = refresh_subscribers(c)) return rc;
    if (seller_id.empty() ? !subscribers_.any() : !subscribers_.has(seller_id)) return SQLITE_OK;
    return write_outbox(c, e);
  }
  StoreStatus write_counted(const char* op, std::string_view sql,
                            const std::function<void(Query&)>& bind);
  PostbackSubscribers subscribers_;

 public:
  // --- the change log (audit.cpp) ----------------------------------------------------------------

  StoreStatus append_change(const ChangeEntry& e) override;
  std::optional<std::vector<ChangeEntry>> list_changes(const ChangeQuery& q) override;

  // --- erasure (erasure.cpp) -------------------------------------------------------------------

  EraseStatus erase_lead(const Lead& tombstone, std::int64_t at_ms, const ChangeEntry& e) override;
  std::optional<std::vector<ErasableLead>> erasable_leads(std::int64_t from_ms,
                                                          std::int64_t before_ms,
                                                          int limit) override;

  // --- leads ------------------------------------------------------------------------------------

  using IntakeStore::insert_leads;
  std::vector<LeadInsertResult> insert_leads(std::span<const Lead> leads,
                                             std::span<const SearchKeys> keys) override;
  Lookup<LeadRecord> get_lead(std::string_view id) override;
  std::optional<std::vector<LeadRecord>> list_leads(const LeadQuery& lq) override;
  std::optional<std::string> lead_changes_position() override;
  Lookup<LeadChanges> list_lead_changes(std::string_view from, std::string_view to,
                                        int limit) override;
  std::string find_duplicate(std::string_view vertical, std::string_view email,
                             std::string_view phone, std::int64_t since_ms,
                             std::string_view lead_id) override;
  StoreStatus record_post_intent(const PostIntent& p, std::span<const CapWindow> caps) override;
  std::vector<StoreStatus> record_post_intents(std::span<const PostIntentWrite> writes) override;

 private:
  /// record_post_intent's body, under write_mu_. Without `own_transaction` the caller's open
  /// transaction holds the write lock, which makes the cap count and the write atomic.
  StoreStatus write_post_intent(Connection& c, const PostIntent& p, std::span<const CapWindow> caps,
                                bool own_transaction) {
    Transaction tx(c);
    if (own_transaction)
      if (int rc = tx.begin()) return report(c, rc, "record_post_intent");
    if (!caps.empty()) {
      // A decided (or unknown) lead answers as it would without caps, not kLimitReached.
      {
        Query q(c, "SELECT " LF_OPEN_FOR_POSTS " FROM leads WHERE id = ?1");
        const int rc = q.bind(p.lead_id).step();
        if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
        if (rc != SQLITE_ROW) return report(c, rc, "record_post_intent");
        if (!q.boolean(0)) return StoreStatus::kConflict;
      }
      for (const CapWindow& cap : caps) {
        // Intents of decided leads are not counted: a sale counts through its sales row, and
        // an unsold lead's intent reserved nothing that was used.
        const bool cents = cap.unit == CapUnit::kCents;
        Query q(c, cents
                       ? "SELECT (SELECT COALESCE(SUM(price_cents), 0) FROM sales"
                         "  WHERE buyer_id = ?1 AND sold_at >= ?2)"
                         " - (SELECT COALESCE(SUM(price_cents), 0) FROM returns"
                         "    WHERE buyer_id = ?1 AND sold_at >= ?2)"
                         " + (SELECT COALESCE(SUM(post_intents.price_cents), 0) FROM post_intents"
                         "    JOIN leads ON leads.id = post_intents.lead_id"
                         "    WHERE post_intents.buyer_id = ?1 AND post_intents.at >= ?2"
                         "    AND post_intents.lead_id <> ?3 AND " LF_OPEN_FOR_POSTS ")"
                       : "SELECT (SELECT COUNT(*) FROM sales WHERE buyer_id = ?1 AND sold_at >= ?2)"
                         " + (SELECT COUNT(*) FROM post_intents"
                         "    JOIN leads ON leads.id = post_intents.lead_id"
                         "    WHERE post_intents.buyer_id = ?1 AND post_intents.at >= ?2"
                         "    AND post_intents.lead_id <> ?3 AND " LF_OPEN_FOR_POSTS ")");
        const int rc = q.bind(p.buyer_id).bind(cap.since_ms).bind(p.lead_id).step();
        if (rc != SQLITE_ROW) return report(c, rc, "record_post_intent");
        if (!money::window_has_room(q.int64(0), money::window_taking(cents, p.price), cap.limit))
          return StoreStatus::kLimitReached;
      }
    }
    {
      Query q(c,
              "INSERT INTO post_intents (lead_id, buyer_id, price_cents, ping_id, at, shared)"
              " SELECT id, ?2, ?3, ?4, ?5, ?6 FROM leads WHERE id = ?1 AND " LF_OPEN_FOR_POSTS
              " ON CONFLICT (lead_id, buyer_id) DO UPDATE SET price_cents = excluded.price_cents,"
              " ping_id = excluded.ping_id, at = excluded.at, shared = excluded.shared");
      if (int rc = q.bind(p.lead_id)
                       .bind(p.buyer_id)
                       .bind(p.price)
                       .bind(p.ping_id)
                       .bind(p.at_ms)
                       .bind(p.shared)
                       .run())
        return report(c, rc, "record_post_intent");
    }
    if (c.changes() == 0)
      return exists(c, "SELECT 1 FROM leads WHERE id = ?1", p.lead_id, "record_post_intent",
                    StoreStatus::kConflict);
    {
      // The posts this one follows were answered: an exclusive post replaces every other
      // intent of the lead, a share the exclusive one (the shares stay, posted side by side).
      Query q(c,
              "DELETE FROM post_intents WHERE lead_id = ?1 AND buyer_id <> ?2"
              " AND (?3 = 0 OR shared = 0)");
      if (int rc = q.bind(p.lead_id).bind(p.buyer_id).bind(p.shared).run())
        return report(c, rc, "record_post_intent");
    }
    if (own_transaction)
      if (int rc = tx.commit()) return report(c, rc, "record_post_intent");
    return StoreStatus::kOk;
  }

 public:
  StoreStatus update_rate_bucket(std::string_view key,
                                 const std::function<void(RateBucketState&)>& update) override;
  std::optional<std::string> shared_secret(std::string_view name,
                                           std::string_view candidate) override;
  StoreStatus update_attempt_windows(
      const std::vector<std::string>& keys,
      const std::function<void(std::vector<std::vector<std::int64_t>>&)>& update) override;
  StoreStatus forget_attempt_windows(std::int64_t before_ms) override;
  std::optional<std::vector<RateBucketRow>> list_rate_buckets(std::string_view after,
                                                              int limit) override;
  std::optional<std::int64_t> delete_rate_buckets(const std::vector<RateBucketRow>& rows) override;
  StoreStatus claim_idempotency_key(const IdempotencyRecord& r, std::int64_t expire_before_ms,
                                    IdempotencyRecord& existing) override;
  StoreStatus complete_idempotency_key(std::string_view scope, std::string_view key, int status,
                                       std::string_view response) override;
  StoreStatus release_idempotency_key(std::string_view scope, std::string_view key) override;
  std::optional<std::vector<PostIntent>> get_post_intents(std::string_view lead_id) override;
  std::vector<StoreStatus> record_outcomes(std::span<const OutcomeRecord> outcomes) override;
  std::optional<std::int64_t> count_sales(std::string_view buyer_id,
                                          std::int64_t since_ms) override;
  std::optional<Cents> sales_cents(std::string_view buyer_id, std::int64_t since_ms) override;

  // --- returns and the ledger -------------------------------------------------------------------

  ReturnResult record_return(const ReturnRequest& r) override;
  std::vector<ReturnResult> record_returns(std::span<const ReturnRequest> rs) override;

  /// record_return's checks and writes, inside the caller's transaction on the writer. A
  /// SQLite failure is returned (the caller rolls back); a refusal is an answer in `out`.
  static int return_in_transaction(Connection& c, const ReturnRequest& r, ReturnResult& out) {
    LeadReturn& ret = out.ret;
    std::string seller_id, campaign_id, vertical, source;
    bool aged = false;  // the sale was made by a re-offer
    {
      Query q(c,
              "SELECT leads.seller_id, leads.campaign_id, sales.price_cents, sales.payout_cents,"
              " sales.sold_at, leads.vertical, leads.source, sales.aged FROM leads"
              " LEFT JOIN sales ON sales.lead_id = leads.id AND sales.buyer_id = ?2"
              " WHERE leads.id = ?1");
      const int rc = q.bind(r.lead_id).bind(r.buyer_id).step();
      if (rc == SQLITE_DONE) return (out.status = ReturnStatus::kNoSuchLead, SQLITE_OK);
      if (rc != SQLITE_ROW) return rc;
      if (q.is_null(2)) return (out.status = ReturnStatus::kNotSold, SQLITE_OK);
      seller_id = q.text(0);
      campaign_id = q.text(1);
      ret.price = q.int64(2);
      ret.payout = q.int64(3);
      ret.sold_at_ms = q.int64(4);
      vertical = q.text(5);
      source = q.text(6);
      aged = q.boolean(7);
    }
    {
      Query q(c, "SELECT " LF_RETURN_COLUMNS " FROM returns WHERE lead_id = ?1 AND buyer_id = ?2");
      const int rc = q.bind(r.lead_id).bind(r.buyer_id).step();
      if (rc == SQLITE_ROW) {
        out.ret = read_return(q);
        out.status = ReturnStatus::kAlreadyReturned;
        return SQLITE_OK;
      }
      if (rc != SQLITE_DONE) return rc;
    }
    if (!admit_return(r, out)) return SQLITE_OK;
    {
      Query q(c, "INSERT INTO returns (" LF_RETURN_COLUMNS
                 ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
      q.bind(ret.lead_id)
          .bind(ret.buyer_id)
          .bind(ret.reason)
          .bind(ret.note)
          .bind(ret.by_key_id)
          .bind(ret.price)
          .bind(ret.payout)
          .bind(ret.sold_at_ms)
          .bind(ret.returned_at_ms);
      if (int rc = q.run()) return rc;
    }
    const money::LedgerEntry entry =
        money::return_entry({ret.lead_id, seller_id, campaign_id}, ret.buyer_id, ret.price,
                            ret.payout, ret.returned_at_ms);
    if (int rc = write_ledger_entries(c, std::span(&entry, 1))) return rc;
    // A return of an aged sale also in the bands that keep it apart (docs/reports.md).
    for (int band : reports::return_bands(aged)) {
      for (const std::string& sql :
           store_rows::band_return_sql(band, {"?1", "?2", "?3", "?4", "?5", "?6", "?7", "?8"})) {
        Query q(c, sql);
        q.bind(ret.returned_at_ms).bind(seller_id).bind(campaign_id).bind(ret.buyer_id);
        if (int rc = q.bind(vertical).bind(source).bind(ret.price).bind(ret.payout).run())
          return rc;
      }
    }
    {
      // Returned once no sale of it stands: a share returned leaves the others sold.
      Query q(c,
              "UPDATE leads SET status = 'returned' WHERE id = ?1 AND status = 'delivered'"
              " AND NOT EXISTS (SELECT 1 FROM sales WHERE sales.lead_id = ?1"
              "  AND NOT EXISTS (SELECT 1 FROM returns WHERE returns.lead_id = ?1"
              "   AND returns.buyer_id = sales.buyer_id))");
      if (int rc = q.bind(r.lead_id).run()) return rc;
    }
    out.status = ReturnStatus::kReturned;
    return SQLITE_OK;
  }

  SettleResult settle_lead(const Settlement& asked, const PayoutRule& payout) override;
  std::optional<std::vector<Settlement>> settlements_of_lead(std::string_view lead_id) override;
  std::optional<std::vector<LeadReturn>> returns_of_lead(std::string_view lead_id) override;
  std::optional<LeadMoney> money_of_lead(std::string_view lead_id) override;
  std::optional<std::vector<LedgerEntry>> list_ledger(const LedgerQuery& lq) override;
  std::optional<ReturnStats> return_stats(std::string_view buyer_id,
                                          std::int64_t since_ms) override;
  std::optional<bool> buyer_bought_person(std::string_view buyer_id, std::string_view lead_id,
                                          std::int64_t since_ms) override;
  std::optional<std::vector<RevenueCell>> revenue_rollup(const RollupQuery& rq) override;
  std::optional<std::int64_t> count_queued(std::string_view campaign_id,
                                           std::int64_t since_ms) override;
  void count_invalid(std::string_view campaign_id, std::int64_t at_ms) override;
  std::optional<std::vector<PerformanceCell>> performance_rollup(const RollupQuery& rq) override;

  /// The sums of a rollup for `rq`, per bucket (by_bucket) and group keys, in the order of
  /// those: the rows of each range of the plan (store_rows::plan_rollup: the tiers' whole hours
  /// and days, quarter hours at the edges) are read in the table's key order and added up
  /// here. SQLite runs an aggregate step for every row and every SUM (27 of them for a
  /// performance row), which was most of a report's time: over 3 million generated leads a
  /// 30-day performance report by buyer spent seconds in SUM steps over 1.3 million rows
  /// (scripts/bench.sh reports). Same answers as SUM ... GROUP BY: integer sums, and one cell
  /// of zeros for a sum with neither cut nor keys over no rows.
  template <std::size_t N>
  std::optional<
      std::map<std::pair<std::int64_t, std::vector<std::string>>, std::array<std::int64_t, N>>>
  fold_rollup(const char* op, store_rows::RollupKind kind, const std::string& table,
              const char* const (&columns)[N], const RollupQuery& rq) {
    using Sums =
        std::map<std::pair<std::int64_t, std::vector<std::string>>, std::array<std::int64_t, N>>;
    // ?1 and ?2 the range, ?3 the tier (in the tiers' table), then the filters.
    const auto select = [&](bool tiers) {
      std::string sql = "SELECT bucket";
      for (ReportKey k : rq.group) sql += std::string(", ") + rollup_column(k);
      for (const char* c : columns) sql += std::string(", ") + c;
      sql += " FROM " + table + (tiers ? "_tiers" : "_rollup") +
             " WHERE bucket >= ?1 AND bucket < ?2 AND " + (tiers ? "tier = ?3" : "?3 = 0");
      int n = 3;
      for (const auto& f : rq.filters)
        sql += std::string(" AND ") + rollup_column(f.first) + " = ?" + std::to_string(++n);
      return sql;
    };
    const std::vector<store_rows::RollupRange> plan = store_rows::plan_rollup(rq, kind);
    // With cuts, a row counts in the stretch holding its bucket; without, in its own bucket.
    const std::vector<std::int64_t> starts = store_rows::sum_starts(rq);
    return guarded(op, std::optional<Sums>{}, [&]() -> std::optional<Sums> {
      auto conn = readers_.acquire();
      if (!conn) return std::nullopt;
      Sums sums;
      std::pair<std::int64_t, std::vector<std::string>> key{0, {}};
      key.second.resize(rq.group.size());
      const int first = 1 + static_cast<int>(rq.group.size());
      const std::string rollup_sql = select(false), tiers_sql = select(true);
      for (const store_rows::RollupRange& range : plan) {
        Query q(*conn, range.tier == 0 ? rollup_sql : tiers_sql);
        q.bind(range.from_ms).bind(range.to_ms).bind(static_cast<std::int64_t>(range.tier));
        for (const auto& f : rq.filters) q.bind(std::string_view(f.second));
        // Rows of one cell come together when there are no keys (sorted by bucket); otherwise
        // they are looked up by their keys.
        int rc;
        std::array<std::int64_t, N>* cell = nullptr;
        while ((rc = q.step()) == SQLITE_ROW) {
          const std::int64_t bucket =
              rq.by_bucket ? store_rows::sum_start_of(starts, q.int64(0)) : 0;
          bool same = cell != nullptr && bucket == key.first;
          for (std::size_t k = 0; k < rq.group.size(); ++k) {
            std::string v = q.text(1 + static_cast<int>(k));
            if (same && v != key.second[k]) same = false;
            key.second[k] = std::move(v);
          }
          if (!same) {
            key.first = bucket;
            auto [it, fresh] = sums.try_emplace(key);
            if (fresh) it->second.fill(0);
            cell = &it->second;
          }
          for (std::size_t i = 0; i < N; ++i) (*cell)[i] += q.int64(first + static_cast<int>(i));
        }
        if (rc != SQLITE_DONE) {
          report(*conn, rc, op);
          return std::nullopt;
        }
      }
      if (!rq.by_bucket && rq.group.empty() && sums.empty()) sums[{0, {}}].fill(0);
      return sums;
    });
  }

  std::optional<std::vector<UnsoldCell>> unsold_rollup(const RollupQuery& rq) override;

  // --- re-offers (sqlite/reoffers.cpp) ------------------------------------------------------
  std::optional<std::vector<ReofferClaim>> claim_reoffers(std::int64_t now_ms, int limit,
                                                          std::int64_t lease_until_ms) override;
  StoreStatus record_reoffer(const ReofferOutcome& outcome) override;
  std::optional<std::int64_t> count_reoffers(std::int64_t now_ms, bool due) override;
  Lookup<ReofferClaim> scheduled_reoffer(std::string_view lead_id) override;

 private:
  static std::int64_t clamp_limit(int limit) { return std::clamp<std::int64_t>(limit, 1, 1000); }

  static std::int64_t hour_start(std::int64_t ms) {
    const std::int64_t h = ms / kHourMs - (ms % kHourMs < 0 ? 1 : 0);  // floor, also below 0
    return h * kHourMs;
  }

  /// A settlement moved a failed lead to sold or unsold: so do its rows of the rollups.
  static int settled_in_rollup(Connection& c, std::string_view lead_id, bool sold) {
    LeadKeys keys;
    if (int rc = read_lead_keys(c, lead_id, keys)) return rc;
    OutcomeDeltas deltas;
    store_rows::add_settled(deltas.performance, keys, sold);
    if (!sold) store_rows::add_settled_unsold(deltas.unsold, keys);
    return write_outcome_deltas(c, deltas);
  }

  static std::vector<LeadInsertResult> failed(const Connection& c, int rc, const char* op,
                                              std::vector<LeadInsertResult>& results) {
    report(c, rc, op);
    results.clear();
    return results;
  }

  /// kOk-like `found` when the row of `sql` (one ?1 parameter) exists, kNotFound when not.
  /// One writing statement; kNotFound when it changed no row.
  template <class Bind>
  StoreStatus changed_one(const char* op, const char* sql, Bind&& bind) {
    return guarded(op, StoreStatus::kUnavailable, [&] {
      std::lock_guard lock(write_mu_);
      Connection& c = *writer_;
      Query q(c, sql);
      bind(q);
      if (int rc = q.run()) return report(c, rc, op);
      return c.changes() > 0 ? StoreStatus::kOk : StoreStatus::kNotFound;
    });
  }

  /// A conditional write of one record on the writer (held): `sql` changes the row whose id is
  /// `id` if it is at the version its last parameter names (0: any), adds one to the version and
  /// returns it. kOk with `version` the new one; kConflict when the row of `exists_sql` (one ?1
  /// parameter: `id`) is there but moved on, kNotFound when it is not.
  template <class Bind>
  static StoreStatus write_versioned(Connection& c, const char* op, const char* sql,
                                     const char* exists_sql, std::string_view id, Bind&& bind,
                                     std::int64_t& version) {
    {
      Query q(c, sql);
      bind(q);
      const int rc = q.step();
      if (rc == SQLITE_ROW) {
        version = q.int64(0);
        return StoreStatus::kOk;
      }
      if (rc != SQLITE_DONE) return report(c, rc, op);
    }
    return exists(c, exists_sql, id, op, StoreStatus::kConflict);
  }

  static StoreStatus exists(Connection& c, const char* sql, std::string_view key, const char* op,
                            StoreStatus found) {
    Query q(c, sql);
    const int rc = q.bind(key).step();
    if (rc == SQLITE_ROW) return found;
    if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
    return report(c, rc, op);
  }

  /// A buyer change and the version bump, in one transaction.
  template <class Body>
  StoreStatus write_buyer(const char* op, Body&& body) {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, op);
    const StoreStatus st = body(c);
    if (st != StoreStatus::kOk) return st;
    if (int rc = Query(c, "UPDATE buyers_version SET version = version + 1 WHERE id = 1").run())
      return report(c, rc, op);
    if (int rc = tx.commit()) return report(c, rc, op);
    return StoreStatus::kOk;
  }

  std::atomic<std::int64_t> last_buyers_version_{0};
};

}  // namespace leadflow::sqlite
