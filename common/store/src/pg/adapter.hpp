#pragma once
// The PgStore class: the PostgreSQL adapter of every store port. Its methods are defined per port,
// in pg/<port>.cpp (docs/store-ports.md); the helpers they share stay here.
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attempt_times.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead_codec.hpp"
#include "leadflow/money/ledger.hpp"
#include "leadflow/store/store.hpp"
#include "performance_rows.hpp"
#include "pg/driver.hpp"
#include "pg/redact.hpp"
#include "pg/rollup_rows.hpp"
#include "pg/schema.hpp"
#include "postback_rows.hpp"
#include "rollup_tiers.hpp"
#include "rows.hpp"

namespace leadflow::pg {

using nlohmann::json;
using namespace store_rows;  // the column lists and row readers shared with SQLite
using namespace pg;          // the libpq wrapper (driver.hpp)

constexpr std::int64_t kHourMs = 3'600'000;
// libpq settings bounding every wait on a dead server or network: keepalives find a silent peer
// within about a minute of idleness, tcp_user_timeout fails a send the peer never acknowledges.
constexpr const char* kKeepalivesIdleS = "30";
constexpr const char* kKeepalivesIntervalS = "10";
constexpr const char* kKeepalivesCount = "3";
constexpr const char* kTcpUserTimeoutMs = "15000";

// A watch whose connection is lost tries again this often.
constexpr auto kWatchRetryPause = std::chrono::milliseconds(200);

/// The statement appending ledger entries (leadflow/money/ledger.hpp says which a sale and a
/// return write) in the order given, for the caller's transaction; the revenue rollup's trigger
/// counts each. Defined in pg/money.cpp.
Statement ledger_statement(std::span<const money::LedgerEntry> entries);

// ------------------------------------------------------------------------------------------------
// Announcements: NOTIFY, and a LISTEN on a connection of its own
// ------------------------------------------------------------------------------------------------

/// Whether `channel` may be used as an (unquoted-safe) PostgreSQL channel name.
inline bool valid_channel(std::string_view channel) {
  if (channel.empty() || channel.size() > 63) return false;
  return std::all_of(channel.begin(), channel.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
  });
}

/// A LISTEN on a connection outside the pool, served by one thread: it waits on the
/// connection's socket and on an eventfd (stop), hands every notification's payload to the
/// callback, and after a lost connection connects and listens again, pausing between attempts
/// and logging once per outage. Each time it listens it calls `on_listening` first.
class PgWatch final : public StoreWatch {
 public:
  PgWatch(ConnectSettings settings, std::string channel,
          std::function<void(std::string_view)> on_payload, std::function<void()> on_listening)
      : settings_(std::move(settings)),
        channel_(std::move(channel)),
        on_payload_(std::move(on_payload)),
        on_listening_(std::move(on_listening)),
        wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    thread_ = std::thread([this] { run(); });
  }
  PgWatch(const PgWatch&) = delete;
  PgWatch& operator=(const PgWatch&) = delete;
  ~PgWatch() override {
    stopping_ = true;
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto n = ::write(wake_, &one, sizeof one);
    thread_.join();
    ::close(wake_);
  }

  bool listening() const override { return listening_; }

 private:
  /// Waits until `fd` is readable, stop() is called or `timeout_ms` passes (-1: no limit).
  /// False once stopping.
  bool wait(int fd, int timeout_ms) {
    pollfd fds[2] = {{wake_, POLLIN, 0}, {fd, POLLIN, 0}};
    while (!stopping_) {
      const int rc = ::poll(fds, fd >= 0 ? 2 : 1, timeout_ms);
      if (rc >= 0 || errno != EINTR) break;
    }
    return !stopping_;
  }

  void run() {
    std::unique_ptr<Connection> conn;
    bool down = false;
    const std::string listen = "LISTEN " + channel_;
    while (!stopping_) {
      if (!conn) {
        std::string error;
        conn = Connection::open(settings_, error);
        if (conn) {
          try {
            conn->exec_script(listen.c_str(), Effect::kRead);
          } catch (const PgError& e) {
            conn.reset();
            error = e.message;
          }
        }
        if (!conn) {
          if (!std::exchange(down, true))
            log(LogLevel::kWarn, "store_watch_down", {{"channel", channel_}, {"detail", error}});
          wait(-1, static_cast<int>(kWatchRetryPause.count()));
          continue;
        }
        if (std::exchange(down, false))
          log(LogLevel::kInfo, "store_watch_resumed", {{"channel", channel_}});
        // Listening from here: what the callback reads now, and what is announced from now on,
        // leave nothing out.
        listening_ = true;
        if (on_listening_) {
          try {
            on_listening_();
          } catch (const std::exception& e) {
            log(LogLevel::kError, "store_watch_callback_failed",
                {{"channel", channel_}, {"error", e.what()}});
          }
        }
      }
      if (!wait(conn->socket(), -1)) break;
      try {
        for (const std::string& payload : conn->take_notifications()) {
          try {
            on_payload_(payload);
          } catch (const std::exception& e) {
            log(LogLevel::kError, "store_watch_callback_failed",
                {{"channel", channel_}, {"error", e.what()}});
          }
        }
      } catch (const PgError& e) {
        log(LogLevel::kWarn, "store_watch_down", {{"channel", channel_}, {"detail", e.message}});
        listening_ = false;
        down = true;
        conn.reset();
      }
    }
  }

  const ConnectSettings settings_;
  const std::string channel_;
  const std::function<void(std::string_view)> on_payload_;
  const std::function<void()> on_listening_;
  const int wake_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> listening_{false};
  std::thread thread_;
};

// ------------------------------------------------------------------------------------------------
// The store
// ------------------------------------------------------------------------------------------------

/// The PostgreSQL Store. Thread-safe: every call leases a connection from the pool; several
/// processes may share one database (atomicity comes from transactions, row locks and advisory
/// locks, never from in-process mutexes).
class PgStore final : public Store, private PgCalls {
 public:
  /// `listen_settings`: where the listening connections (watch()) go, which may differ from the
  /// pool's (a pooler in transaction mode holds no LISTEN).
  PgStore(ConnectSettings settings, ConnectSettings listen_settings, std::size_t pool_size)
      : PgCalls(std::move(settings), pool_size), listen_settings_(std::move(listen_settings)) {}

  using PgCalls::pool;

  // --- schema -----------------------------------------------------------------------------------

  StoreStatus migrate() override {
    return run("migrate", StoreStatus::kUnavailable,
               [&](Connection& c) { return apply_migrations(c); });
  }

  bool healthy() override {
    return run("healthy", false,
               [&](Connection& c) { return c.exec("SELECT 1", Effect::kRead).rows() == 1; });
  }

  // --- accounts ---------------------------------------------------------------------------------

  StoreStatus insert_seller(const Seller& s) override;
  Lookup<Seller> get_seller(std::string_view id) override;
  StoreStatus update_seller(Seller& s) override;
  std::optional<std::vector<Seller>> list_sellers() override;
  StoreStatus insert_campaign(const Campaign& c) override;
  Lookup<Campaign> get_campaign(std::string_view id) override;
  StoreStatus update_campaign(Campaign& cp) override;
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

  /// The answer of a conditional write of one record, a row of (the new version or NULL when
  /// nothing was written, whether the record exists): kOk with `version` the new one, kConflict
  /// when the record moved past the version asked, kNotFound when there is none.
  static StoreStatus versioned(const Result& r, std::int64_t& version) {
    if (!r.is_null(0, 0)) {
      version = r.int64(0, 0);
      return StoreStatus::kOk;
    }
    return r.boolean(0, 1) ? StoreStatus::kConflict : StoreStatus::kNotFound;
  }

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

  /// One writing statement ending in RETURNING 1; kNotFound when it changed no row.
  StoreStatus changed_one(const char* op, const char* sql, const Params& params) {
    return run(op, StoreStatus::kUnavailable, [&](Connection& c) {
      const Result r = c.exec(sql, params, Effect::kWrite);
      return r.rows() > 0 ? StoreStatus::kOk : StoreStatus::kNotFound;
    });
  }

  // --- re-offers (reoffers.cpp) ----------------------------------------------------------------

  std::optional<std::vector<ReofferClaim>> claim_reoffers(std::int64_t now_ms, int limit,
                                                          std::int64_t lease_until_ms) override;
  StoreStatus record_reoffer(const ReofferOutcome& outcome) override;
  std::optional<std::int64_t> count_reoffers(std::int64_t now_ms, bool due) override;
  Lookup<ReofferClaim> scheduled_reoffer(std::string_view lead_id) override;

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

  // --- postbacks (pg/postbacks.cpp) -------------------------------------------------------------

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
  std::uint64_t postback_endpoints_version() override;
  std::optional<int> prune_postbacks(PostbackState state, std::int64_t before_ms,
                                     int limit) override;

 private:
  /// The statement writing `events`' outbox rows for the caller's transaction: one row per event
  /// whose lead's seller has an endpoint, on or off, as the statement reads the endpoints (the
  /// others write nothing). Which endpoints get it is read when a claim fans it out.
  static Statement outbox_statement(std::span<const OutboxEvent> events);
  /// Writes `e`'s event when its lead's seller has an endpoint (outbox_statement).
  static void outbox_if_subscribed(Connection& c, const OutboxEvent& e);
  StoreStatus write_counted(const char* op, const char* sql, const Params& params);
  /// After this process changed an endpoint (committed): its own version, and a NOTIFY on
  /// kEndpointsChannel for every other process's.
  void endpoints_changed();
  /// LISTENs on kEndpointsChannel from the first time this store is asked for the endpoints'
  /// version, for as long as it lives.
  void watch_endpoints();
  const ConnectSettings listen_settings_;
  /// postback_endpoints_version(): moved on by every change heard of (or a lost watch).
  std::atomic<std::uint64_t> endpoints_version_{1};
  std::once_flag endpoints_watch_once_;
  std::unique_ptr<StoreWatch> endpoints_watch_;  // after endpoints_version_: stopped before it goes

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
  std::optional<std::vector<PostIntent>> get_post_intents(std::string_view lead_id) override;
  std::vector<StoreStatus> record_outcomes(std::span<const OutcomeRecord> outcomes) override;
  std::optional<std::int64_t> count_sales(std::string_view buyer_id,
                                          std::int64_t since_ms) override;
  std::optional<Cents> sales_cents(std::string_view buyer_id, std::int64_t since_ms) override;

  // --- returns and the ledger -------------------------------------------------------------------

  ReturnResult record_return(const ReturnRequest& r) override;
  std::vector<ReturnResult> record_returns(std::span<const ReturnRequest> rs) override;

  /// record_return's checks and writes, inside the caller's transaction; a failure throws (the
  /// caller's run() answers it), a refusal is an answer in `out`.
  static void return_in_transaction(Connection& c, const ReturnRequest& r, ReturnResult& out) {
    const Result found = c.exec(
        "SELECT sales.price_cents, sales.payout_cents, sales.sold_at,"
        " sales.lead_id IS NOT NULL, lead.seller_id, lead.campaign_id, lead.vertical,"
        " lead.source, COALESCE(sales.aged, FALSE)"
        " FROM (SELECT id, seller_id, campaign_id, vertical, source FROM leads WHERE id = $1"
        " FOR UPDATE) AS lead"
        " LEFT JOIN sales ON sales.lead_id = lead.id AND sales.buyer_id = $2",
        Params().add(r.lead_id).add(r.buyer_id), Effect::kRead);
    if (found.rows() == 0) return void(out.status = ReturnStatus::kNoSuchLead);
    if (!found.boolean(0, 3)) return void(out.status = ReturnStatus::kNotSold);
    LeadReturn& ret = out.ret;
    ret.price = found.int64(0, 0);
    ret.payout = found.int64(0, 1);
    ret.sold_at_ms = found.int64(0, 2);
    const Result before =
        c.exec("SELECT " LF_RETURN_COLUMNS " FROM returns WHERE lead_id = $1 AND buyer_id = $2",
               Params().add(r.lead_id).add(r.buyer_id), Effect::kRead);
    if (before.rows() > 0) {
      out.ret = read_return(Row{before, 0});
      out.status = ReturnStatus::kAlreadyReturned;
      return;
    }
    if (!admit_return(r, out)) return;
    c.exec("INSERT INTO returns (" LF_RETURN_COLUMNS
           ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
           Params()
               .add(ret.lead_id)
               .add(ret.buyer_id)
               .add(ret.reason)
               .add(ret.note)
               .add(ret.by_key_id)
               .add(ret.price)
               .add(ret.payout)
               .add(ret.sold_at_ms)
               .add(ret.returned_at_ms),
           Effect::kWrite);
    const money::LedgerEntry entry =
        money::return_entry({ret.lead_id, found.text(0, 4), found.text(0, 5)}, ret.buyer_id,
                            ret.price, ret.payout, ret.returned_at_ms);
    const Statement ledger = ledger_statement(std::span(&entry, 1));
    c.exec(ledger.sql, ledger.params, Effect::kWrite);
    // A return of an aged sale also in the bands that keep it apart (docs/reports.md), under the
    // lock the ledger's trigger took for the revenue tiers.
    for (int band : reports::return_bands(found.boolean(0, 8)))
      for (const std::string& sql :
           store_rows::band_return_sql(band, {"$1::BIGINT", "$2::TEXT", "$3::TEXT", "$4::TEXT",
                                              "$5::TEXT", "$6::TEXT", "$7::BIGINT", "$8::BIGINT"}))
        c.exec(sql.c_str(),
               Params()
                   .add(ret.returned_at_ms)
                   .add(found.text(0, 4))
                   .add(found.text(0, 5))
                   .add(ret.buyer_id)
                   .add(found.text(0, 6))
                   .add(found.text(0, 7))
                   .add(ret.price)
                   .add(ret.payout),
               Effect::kWrite);
    // Returned once no sale of it stands: a share returned leaves the others sold.
    c.exec(
        "UPDATE leads SET status = 'returned' WHERE id = $1 AND status = 'delivered'"
        " AND NOT EXISTS (SELECT 1 FROM sales WHERE sales.lead_id = $1"
        "  AND NOT EXISTS (SELECT 1 FROM returns WHERE returns.lead_id = $1"
        "   AND returns.buyer_id = sales.buyer_id))",
        Params().add(r.lead_id), Effect::kWrite);
    out.status = ReturnStatus::kReturned;
  }

  SettleResult settle_lead(const Settlement& asked, const PayoutRule& payout) override;
  std::optional<std::vector<Settlement>> settlements_of_lead(std::string_view lead_id) override;
  std::optional<std::vector<LeadReturn>> returns_of_lead(std::string_view lead_id) override;
  std::optional<LeadMoney> money_of_lead(std::string_view lead_id) override;
  std::optional<std::vector<LedgerEntry>> list_ledger(const LedgerQuery& q) override;
  std::optional<ReturnStats> return_stats(std::string_view buyer_id,
                                          std::int64_t since_ms) override;
  std::optional<bool> buyer_bought_person(std::string_view buyer_id, std::string_view lead_id,
                                          std::int64_t since_ms) override;

  // --- idempotency ------------------------------------------------------------------------------

  StoreStatus claim_idempotency_key(const IdempotencyRecord& r, std::int64_t expire_before_ms,
                                    IdempotencyRecord& existing) override;
  StoreStatus complete_idempotency_key(std::string_view scope, std::string_view key, int status,
                                       std::string_view response) override;
  StoreStatus release_idempotency_key(std::string_view scope, std::string_view key) override;

  // --- shared rate limits -----------------------------------------------------------------------

  std::optional<std::string> shared_secret(std::string_view name,
                                           std::string_view candidate) override;
  StoreStatus update_rate_bucket(std::string_view key,
                                 const std::function<void(RateBucketState&)>& update) override;

  // --- attempt windows ---------------------------------------------------------------------------

  StoreStatus update_attempt_windows(
      const std::vector<std::string>& keys,
      const std::function<void(std::vector<std::vector<std::int64_t>>&)>& update) override;
  StoreStatus forget_attempt_windows(std::int64_t before_ms) override;
  std::optional<std::vector<RateBucketRow>> list_rate_buckets(std::string_view after,
                                                              int limit) override;
  std::optional<std::int64_t> delete_rate_buckets(const std::vector<RateBucketRow>& rows) override;

  // --- announcements ----------------------------------------------------------------------------

  bool announces() const override;
  StoreStatus announce(std::string_view channel, std::span<const std::string> payloads) override;
  std::unique_ptr<StoreWatch> watch(std::string_view channel,
                                    std::function<void(std::string_view)> on_payload,
                                    std::function<void()> on_listening) override;

  // --- stats ------------------------------------------------------------------------------------

  std::optional<std::vector<RevenueCell>> revenue_rollup(const RollupQuery& rq) override;
  std::optional<std::int64_t> count_queued(std::string_view campaign_id,
                                           std::int64_t since_ms) override;
  void count_invalid(std::string_view campaign_id, std::int64_t at_ms) override;
  std::optional<std::vector<PerformanceCell>> performance_rollup(const RollupQuery& rq) override;
  std::optional<std::vector<UnsoldCell>> unsold_rollup(const RollupQuery& rq) override;

 private:
  static std::int64_t clamp_limit(int limit) { return std::clamp<std::int64_t>(limit, 1, 1000); }

  /// The statement summing `sums` (SQL over `columns`) for `rq` from the ranges of its plan
  /// (plan_rollup: the tiers' whole hours and days, quarter hours at the edges), one branch of
  /// a UNION ALL per table and tier: its columns are the bucket (with by_bucket), the group
  /// keys, then the sums. The ranges are the plan's integers, written into the text; $1... are
  /// the filters' values in order. With cuts, per bucket (each within one stretch) or, when
  /// stretches_in_sql, per stretch (its start from the parameter after the filters, which
  /// filter_params adds).
  template <std::size_t N>
  static std::string planned_sql(const std::string& table, const char* const (&columns)[N],
                                 const std::string& sums, const RollupQuery& q, RollupKind kind) {
    std::vector<RollupRange> plan = plan_rollup(q, kind);
    if (plan.empty()) plan.push_back({0, q.from_ms, q.to_ms});  // no rows, one statement
    std::string filters, keys, inner = "bucket", by_bucket;
    for (ReportKey k : q.group) keys += std::string(", ") + rollup_column(k);
    for (const char* c : columns) inner += std::string(", ") + c;
    int n = 0;
    for (const auto& [key, value] : q.filters)
      filters += std::string(" AND ") + rollup_column(key) + " = $" + std::to_string(++n);
    std::map<int, std::string> ranges;  // per tier (0: the quarter-hour rollup)
    for (const RollupRange& r : plan) {
      std::string& text = ranges[r.tier];
      text += (text.empty() ? "" : " OR ") + std::string("bucket >= ") + std::to_string(r.from_ms) +
              " AND bucket < " + std::to_string(r.to_ms);
    }
    std::string rows;
    for (const auto& [tier, text] : ranges) {
      if (!rows.empty()) rows += " UNION ALL ";
      rows += "SELECT " + inner + keys + " FROM " + table +
              (tier == 0 ? "_rollup WHERE ("
                         : "_tiers WHERE tier = " + std::to_string(tier) + " AND (") +
              text + ")" + filters;
    }
    // The keys after the bucket (if any): "GROUP BY <first>, <keys>", or the keys alone.
    const auto group_by = [&](const std::string& first) {
      const std::string all = first.empty() ? (keys.empty() ? "" : keys.substr(2)) : first + keys;
      return all.empty() ? std::string() : " GROUP BY " + all;
    };
    if (!q.by_bucket)
      return "SELECT " + (keys.empty() ? "" : keys.substr(2) + ", ") + sums + " FROM (" + rows +
             ") AS r" + group_by("");
    if (!stretches_in_sql(q))
      return "SELECT bucket" + keys + ", " + sums + " FROM (" + rows + ") AS r" +
             group_by("bucket");
    const std::string starts = "$" + std::to_string(++n) + "::BIGINT[]";
    const std::string stretch = "(" + starts + ")[width_bucket(bucket, " + starts + ")]";
    return "SELECT " + stretch + keys + ", " + sums + " FROM (" + rows + ") AS r" +
           group_by(stretch);
  }

  /// Whether planned_sql sums a cut question's rows per stretch (rather than per bucket, each
  /// within one stretch): when stretches are longer than two hours on average, so that far
  /// fewer sums are sent (a 30-day report by day and buyer in New York's days reads 110,000
  /// hour rows: 15,000 sums per hour and buyer, 620 per day; 221 ms, then 90). Finding a row's
  /// stretch costs more than it saves when the stretches are hours: a 90-day report by hour
  /// took 113 ms per bucket and 200 per stretch.
  static bool stretches_in_sql(const RollupQuery& q) {
    const std::vector<std::int64_t> starts = sum_starts(q);
    return !starts.empty() &&
           (q.to_ms - q.from_ms) / static_cast<std::int64_t>(starts.size()) > 2 * kTierHourMs;
  }

  /// The parameters of planned_sql: the filters' values, then the stretches' starts.
  static Params filter_params(const RollupQuery& q) {
    Params params;
    for (const auto& f : q.filters) params.add(f.second);
    if (stretches_in_sql(q)) {
      ArrayText array;
      for (std::int64_t s : sum_starts(q)) array.add(s);
      params.add(array.str());
    }
    return params;
  }

  /// A rollup's sums, read with PostgreSQL's JIT compilation off and 64 MB of work memory (SET
  /// LOCAL, in a transaction of its own sent as one pipeline: one round trip). A rollup sum is a
  /// scan adding up a few dozen integer columns, which JIT does not make faster; over 3 million
  /// generated leads, compiling the expressions of a 30-day performance report took 120-140 ms
  /// of every answer (EXPLAIN ANALYZE: "JIT: ... Emission 103-119 ms"), and the report was
  /// slower with it than without. The default 4 MB made a 30-day report by day and buyer in New
  /// York's days (110,000 hour rows) sort on disk: 218 ms, 133 ms in memory.
  template <class T, class Read>
  std::optional<std::vector<T>> read_rollup(const char* op, const std::string& sql,
                                            const Params& params, Read&& read) {
    return run(op, std::optional<std::vector<T>>{},
               [&](Connection& c) -> std::optional<std::vector<T>> {
                 const std::vector<Result> results =
                     c.exec_pipeline({{"BEGIN", Params()},
                                      {"SET LOCAL jit = off", Params()},
                                      {"SET LOCAL work_mem = '64MB'", Params()},
                                      {sql.c_str(), params},
                                      {"COMMIT", Params()}},
                                     Effect::kRead);
                 const Result& r = results[3];
                 std::vector<T> out;
                 out.reserve(static_cast<std::size_t>(r.rows()));
                 for (int i = 0; i < r.rows(); ++i) out.push_back(read(Row{r, i}));
                 return out;
               });
  }

  static std::int64_t hour_start(std::int64_t ms) {
    const std::int64_t h = ms / kHourMs - (ms % kHourMs < 0 ? 1 : 0);  // floor, also below 0
    return h * kHourMs;
  }

  std::atomic<std::int64_t> last_buyers_version_{0};
};

}  // namespace leadflow::pg
