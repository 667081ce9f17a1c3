#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"

namespace leadflow {

/// What a store call can end in. Adapters translate SQLite/libpq failures into these; handlers map
/// them to HTTP statuses in one place.
/// kLimitReached: a buyer cap window is full (record_post_intent).
enum class StoreStatus { kOk, kNotFound, kConflict, kUnavailable, kLimitReached };

/// A lookup's answer: the record (kOk), none (kNotFound), or kUnavailable when the store could
/// not say. A miss is only a kNotFound: asking healthy() afterwards would race a store that came
/// back in between, and a failed lookup would be believed (and cached) as "no such record".
/// The version a conditional write of a user, buyer, campaign, seller or API key expects the
/// record to be at (its `version` as read); kAnyVersion asks for none. Every change to one of
/// those records adds one to its version in the statement that makes it (docs/versions.md), so
/// a write conditional on the version read never overwrites a change it did not see.
inline constexpr std::int64_t kAnyVersion = 0;

template <class T>
struct Lookup {
  StoreStatus status = StoreStatus::kUnavailable;
  std::optional<T> value;
};

struct LeadQuery {
  std::string seller_id;  // "" = any (operator)
  std::optional<DeliveryStatus> status;
  std::string vertical, source, buyer_id;
  std::int64_t created_from_ms = 0;  // inclusive; 0 = open
  std::int64_t created_to_ms = 0;    // exclusive; 0 = open
  std::string before_id;             // cursor: only ids < this (newest first)
  int limit = 25;
};

struct BuyerQuery {
  std::optional<bool> active;
  std::string vertical;
  std::string after_id;  // cursor: only ids > this (oldest first)
  int limit = 25;
};

/// What happened to one lead insert.
struct LeadInsertResult {
  bool inserted = false;  // false: a lead with this id already existed
  DeliveryStatus existing_status = DeliveryStatus::kPending;
};

/// A pending post: written before a buyer is posted, so a worker that takes over a redelivered
/// lead re-posts to the same buyers (same Idempotency-Key) instead of selling twice. One per
/// lead and buyer; `shared` marks a post of a share of a shared sale.
struct PostIntent {
  std::string lead_id;
  std::string buyer_id;
  Cents price = 0;
  std::string ping_id;
  std::int64_t at_ms = 0;
  bool shared = false;
};

/// What a cap window counts: leads (hourly, daily, weekly, monthly caps) or cents of their
/// prices (daily and monthly budgets).
enum class CapUnit { kLeads, kCents };

/// One cap window of a buyer since `since_ms`: at most `limit` leads sold or being posted, or,
/// for a budget (kCents), at most `limit` cents of their prices. The intent being reserved
/// counts too: a budget of 10,000 cents with 9,000 spent admits a post at 10.00 and refuses one
/// at 10.01.
struct CapWindow {
  std::int64_t since_ms = 0;
  std::int64_t limit = 0;
  CapUnit unit = CapUnit::kLeads;
};

/// The shared state of one rate-limit key in scale-out mode: a token bucket and a day counter
/// (see SharedRateLimiter). `exists` is false for a key seen for the first time.
struct RateBucketState {
  bool exists = false;
  double tokens = 0;
  std::int64_t refilled_at_ms = 0;
  std::int64_t day = -1;
  std::int64_t day_count = 0;
};

/// The decided outcome of one lead, written in one transaction with its attempts.
struct OutcomeRecord {
  std::string lead_id;
  Distribution distribution;
};

/// A claimed Idempotency-Key of one API key (SPEC §2): the first request's body hash and, once it
/// was answered, that answer, replayed for repeats within 24 hours.
struct IdempotencyRecord {
  std::string scope;         // the API key id
  std::string key;           // the Idempotency-Key header
  std::string request_hash;  // hex SHA-256 of the body
  std::string lead_id;       // the lead the first request made
  int status = 0;            // 0 while the first request is in flight
  std::string response;      // the first answer's body
  std::int64_t created_at_ms = 0;
};

/// A buyer's return of a lead it bought (POST /v1/leads/{id}/return).
struct ReturnRequest {
  std::string lead_id;
  std::string buyer_id;  // the buyer returning it: the one the lead was sold to
  std::string reason;    // a configured reason code
  std::string note;
  std::string by_key_id;  // the API key that asked (the buyer's own, or the operator's)
  std::int64_t at_ms = 0;
  std::int64_t window_ms = 0;  // returnable while at_ms < the sale's time + window_ms
};

/// One recorded return: the sale it reverses, and why.
struct LeadReturn {
  std::string lead_id;
  std::string buyer_id;
  std::string reason;
  std::string note;
  std::string by_key_id;
  Cents price = 0;   // the sale's price, reversed
  Cents payout = 0;  // the seller's payout of that sale, reversed
  std::int64_t sold_at_ms = 0;
  std::int64_t returned_at_ms = 0;
};

/// What a return came to. kNotSold: the lead was not sold to that buyer (or was not sold);
/// kWindowClosed: the sale is older than the window; kAlreadyReturned: `ret` is the return
/// recorded before.
enum class ReturnStatus {
  kReturned,
  kNoSuchLead,
  kNotSold,
  kAlreadyReturned,
  kWindowClosed,
  kUnavailable
};
struct ReturnResult {
  ReturnStatus status = ReturnStatus::kUnavailable;
  LeadReturn ret;               // kReturned, kAlreadyReturned
  std::int64_t sold_at_ms = 0;  // kWindowClosed: when the sale was made
};

/// One immutable movement of money (SPEC §7), in cents: written by the store in the transaction
/// of what it records, never updated or deleted. kind "sale": revenue = the price the buyer
/// owes, payout = what the seller is owed; kind "return": both reversed (negative). Per lead,
/// and in total, margin = revenue - payout.
struct LedgerEntry {
  std::int64_t id = 0;  // increasing in the order written
  std::string kind;
  std::string lead_id;
  std::string buyer_id;
  std::string seller_id;    // "" for a lead posted with an operator key
  std::string campaign_id;  // "" on Surface A
  Cents revenue = 0;
  Cents payout = 0;
  std::int64_t at_ms = 0;
};

/// Which ledger entries to list: one lead's, or every entry after `after_id`, oldest first.
struct LedgerQuery {
  std::string lead_id;  // "" = every lead
  std::int64_t after_id = 0;
  int limit = 100;
};

/// An operator's settlement of a lead whose post outcome stayed unknown (the lead failed with a
/// post intent): one buyer's answer, sold at `price` (the seller earning `payout`) or not. A
/// lead posted to several buyers (a shared sale) is settled once per buyer.
struct Settlement {
  std::string lead_id;
  std::string buyer_id;  // the buyer of the post intent ("" asks for the lead's only one)
  bool sold = false;
  Cents price = 0;
  Cents payout = 0;
  std::string buyer_lead_id;
  std::string note;
  std::string by_key_id;  // the operator key that settled it
  std::int64_t at_ms = 0;
};

/// What a settlement came to. kNotUnknown: the lead's post outcome is not unknown (it is not
/// failed, or it has no post intent of that buyer); kAlreadySettled: `settlement` is the one
/// made before; kBuyerNeeded: the lead was posted to several buyers and none was named.
enum class SettleStatus {
  kSettled,
  kNoSuchLead,
  kNotUnknown,
  kAlreadySettled,
  kBuyerNeeded,
  kUnavailable
};
/// A seller's payout rule: what the seller earns of sales totalling `price`.
using PayoutRule = std::function<Cents(Cents price)>;
struct SettleResult {
  SettleStatus status = SettleStatus::kUnavailable;
  Settlement settlement;
};

/// A buyer's sales since a time, and how many of those it returned.
struct ReturnStats {
  std::int64_t sales = 0;
  std::int64_t returns = 0;
};

/// What a report is cut by, besides time (SPEC §2 Reports). kReason is the unsold rollup's
/// alone.
enum class ReportKey { kSeller, kCampaign, kBuyer, kVertical, kSource, kReason };

/// A question to a rollup: its quarter hours in [from_ms, to_ms) (both on a quarter hour), only
/// the rows matching every filter, summed per `group` keys (none: one sum) and, with
/// `by_bucket`, per time bucket: without `cuts` each quarter hour is a sum of its own; with
/// them (the instants where the caller's days or hours begin, in its time zone) no sum spans
/// a cut: the stretch between two cuts (or a cut and an end of the range) is summed in one
/// cell or several, each with a bucket_ms inside the stretch (its start, or the start of the
/// UTC hour, day or quarter hour summed), so the caller adds up the cells of a stretch. A
/// store answers from the coarsest rows that can (its tiers: whole UTC hours and days inside a
/// stretch) and reads quarter hours only at the edges.
struct RollupQuery {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  std::vector<std::pair<ReportKey, std::string>> filters;
  bool by_bucket = false;
  std::vector<ReportKey> group;
  std::vector<std::int64_t> cuts;
};

/// One sum of the revenue rollup: the ledger's sales and returns, by when the money moved.
struct RevenueCell {
  std::int64_t bucket_ms = 0;     // the bucket's start, with by_bucket
  std::vector<std::string> keys;  // one value per group key, in the query's order
  std::int64_t sales = 0;
  Cents revenue = 0;
  Cents payout = 0;
  std::int64_t returns = 0;
  Cents returned_revenue = 0;  // what the returns took back (positive)
  Cents returned_payout = 0;
};

/// The length of a rollup's time bucket: every time zone's midnight falls on a quarter hour.
inline constexpr std::int64_t kRollupBucketMs = 15 * 60 * 1000;

/// Buyers' response times are counted in fixed buckets, so that sums of them (any rows, any
/// time range) give a p95: upper edges in ms; the last bucket is open.
inline constexpr int kLatencyBuckets = 12;
inline constexpr std::int64_t kLatencyEdgesMs[kLatencyBuckets - 1] = {
    10, 25, 50, 100, 200, 300, 500, 750, 1000, 2000, 5000};
inline int latency_bucket(std::int64_t ms) {
  int i = 0;
  while (i < kLatencyBuckets - 1 && ms > kLatencyEdgesMs[i]) ++i;
  return i;
}

/// The figures of the performance rollup. A lead counts once decided, by the quarter hour it
/// was received in: under buyer "" by its status, and under each buyer asked by its pings and
/// posts (skipped ones never sent are not counted); invalid Surface B posts under buyer "".
enum PerformanceFigure {
  kLeads,
  kDuplicates,
  kInvalid,
  kSold,
  kUnsold,
  kFailed,
  kPings,
  kBids,
  kPosts,
  kAccepted,
  kRejected,
  kTimeouts,
  kErrors,
  kResponses,   // pings and posts the buyer answered (not timeouts or errors)...
  kResponseMs,  // ...and their response times summed
  kLatency0,    // kLatencyBuckets counts of those response times follow
};
inline constexpr int kPerformanceFigures = kLatency0 + kLatencyBuckets;

/// One sum of the performance rollup.
struct PerformanceCell {
  std::int64_t bucket_ms = 0;     // with by_bucket
  std::vector<std::string> keys;  // one value per group key
  std::array<std::int64_t, kPerformanceFigures> figures{};
};

/// One sum of the unsold rollup: leads decided unsold, counted under buyer "" by why the lead
/// went unsold, and under each buyer that could have had it by why that buyer did not.
struct UnsoldCell {
  std::int64_t bucket_ms = 0;     // with by_bucket
  std::vector<std::string> keys;  // one value per group key
  std::int64_t leads = 0;
};

/// A subscription to a channel of announcements (Store::watch): payloads are delivered until it
/// is destroyed. Destroying it waits for a delivery in progress to end.
class StoreWatch {
 public:
  virtual ~StoreWatch() = default;
  /// Whether announcements are heard now (false while its connection is being made again).
  virtual bool listening() const = 0;
};

/// The persistence port. One instance per process, shared by all threads: implementations are
/// thread-safe and own their connection pooling. No SQL or driver detail crosses this interface.
class Store {
 public:
  virtual ~Store() = default;

  /// Applies pending versioned migrations. Idempotent; safe to call at every start.
  virtual StoreStatus migrate() = 0;
  virtual bool healthy() = 0;

  // --- accounts -------------------------------------------------------------------------------
  virtual StoreStatus insert_seller(const Seller& s) = 0;
  virtual std::optional<Seller> get_seller(std::string_view id) = 0;
  /// Replaces a seller's name, status and payout rule if it is still at `s.version` (or any
  /// version with kAnyVersion): kOk with `s.version` the new one, kConflict when another change
  /// came first, kNotFound if absent. The other versioned updates below answer alike.
  virtual StoreStatus update_seller(Seller& s) = 0;
  virtual std::vector<Seller> list_sellers() = 0;

  virtual StoreStatus insert_campaign(const Campaign& c) = 0;
  virtual std::optional<Campaign> get_campaign(std::string_view id) = 0;
  virtual Lookup<Campaign> find_campaign_by_key_hash(std::string_view key_hash) = 0;
  /// Replaces a campaign's name, status, mode, sync timeout, per-minute ceiling and payout rule;
  /// its seller, vertical, key and creation time stay as they were. Versioned as update_seller.
  virtual StoreStatus update_campaign(Campaign& c) = 0;
  virtual std::vector<Campaign> list_campaigns(std::string_view seller_id) = 0;  // "" = all

  virtual StoreStatus insert_api_key(const ApiKey& k) = 0;  // kConflict if the hash exists
  virtual Lookup<ApiKey> find_api_key_by_hash(std::string_view key_hash) = 0;
  virtual std::vector<ApiKey> list_api_keys() = 0;
  virtual Lookup<ApiKey> get_api_key(std::string_view id) = 0;
  /// Revokes the key if it is at `if_version` (or any with kAnyVersion; kConflict if not):
  /// kOk also for a key revoked before, which keeps its first revocation time and version.
  virtual StoreStatus revoke_api_key(std::string_view id, std::int64_t at_ms,
                                     std::int64_t if_version) = 0;
  /// Records a use of the key at `at_ms` (a later one only); kNotFound when nothing changed.
  virtual StoreStatus touch_api_key(std::string_view id, std::int64_t at_ms) = 0;

  // --- dashboard users and their sessions ----------------------------------------------------
  /// kConflict if the id or the e-mail exists, or the seller or buyer named does not.
  virtual StoreStatus insert_user(const User& u) = 0;
  virtual Lookup<User> get_user(std::string_view id) = 0;
  virtual Lookup<User> find_user_by_email(std::string_view email) = 0;  // e-mail in lower case
  virtual std::vector<User> list_users() = 0;                           // by id
  /// Replaces a user's name, active flag and password hash; versioned as update_seller. A user
  /// made inactive, or given a new password hash, loses its sessions in the same transaction:
  /// all of them, but for `keep_session` (a token hash: the session that changed its own
  /// password).
  virtual StoreStatus update_user(User& u, std::string_view keep_session = {}) = 0;
  /// Sets an active user's password hash and nothing else of it (a user's own password change),
  /// and ends its sessions but `keep_session`, in one transaction; kNotFound if there is no such
  /// user or it is inactive (disabling a user wins over its concurrent password change).
  virtual StoreStatus set_user_password(std::string_view user_id, std::string_view password_hash,
                                        std::string_view keep_session) = 0;
  /// A sign-in: sets last_login_at, and the password hash to `rehashed` when that is not empty
  /// and the hash is still `verified` (the one the password was checked against: a password
  /// changed meanwhile is not replaced by the old one rehashed). Neither moves the version.
  virtual StoreStatus record_login(std::string_view user_id, std::int64_t at_ms,
                                   std::string_view rehashed, std::string_view verified) = 0;
  /// kConflict if the token hash exists or the user does not.
  virtual StoreStatus insert_session(const UserSession& s) = 0;
  virtual Lookup<UserSession> find_session(std::string_view token_hash) = 0;
  /// Marks a session used at `at_ms` (its idle time starts again); kNotFound if absent.
  virtual StoreStatus touch_session(std::string_view token_hash, std::int64_t at_ms) = 0;
  /// kNotFound if absent.
  virtual StoreStatus delete_session(std::string_view token_hash) = 0;
  /// Ends every session of a user (kOk when it had none).
  virtual StoreStatus delete_user_sessions(std::string_view user_id) = 0;
  /// Removes the sessions past their absolute expiry at `now_ms` or unused since before
  /// `idle_before_ms`.
  virtual StoreStatus delete_expired_sessions(std::int64_t now_ms, std::int64_t idle_before_ms) = 0;

  // --- dashboard users' second factor (docs/two-factor.md) --------------------------------------

  /// The user's second factor with its count of unused recovery codes; kNotFound for none.
  virtual Lookup<UserTotp> get_user_totp(std::string_view user_id) = 0;
  /// The second factor whose pending sign-in has this challenge hash; kNotFound for none.
  virtual Lookup<UserTotp> find_user_totp_by_challenge(std::string_view challenge_hash) = 0;
  /// Starts an enrolment (again): the user's second factor becomes `t.sealed_secret`, not enabled,
  /// with no step, challenge or recovery code. kConflict when the user's is enabled already, or
  /// when there is no such user.
  virtual StoreStatus begin_user_totp(const UserTotp& t) = 0;
  /// Confirms an enrolment: enabled, `step` as its last accepted step, and `recovery_hashes` as its
  /// recovery codes (replacing any), in one transaction. kNotFound when no enrolment waits.
  virtual StoreStatus enable_user_totp(std::string_view user_id, std::int64_t step,
                                       const std::vector<std::string>& recovery_hashes) = 0;
  /// Accepts a code of time step `step`: records it, only if the second factor is enabled and
  /// `step` is after the last accepted one. kNotFound otherwise (a replayed or older code), so two
  /// concurrent uses of one code cannot both pass.
  virtual StoreStatus accept_user_totp_step(std::string_view user_id, std::int64_t step) = 0;
  /// Uses one recovery code, once: kNotFound when the user has no unused code of this hash.
  virtual StoreStatus use_recovery_code(std::string_view user_id, std::string_view code_hash,
                                        std::int64_t at_ms) = 0;
  /// Records a pending sign-in's challenge (replacing the one before) on an enabled second
  /// factor; kNotFound when there is none.
  virtual StoreStatus set_user_totp_challenge(std::string_view user_id,
                                              std::string_view challenge_hash,
                                              std::int64_t expires_at_ms) = 0;
  /// Ends the pending sign-in of this challenge hash, once: kNotFound when it is not the user's
  /// current one (used already, or replaced).
  virtual StoreStatus take_user_totp_challenge(std::string_view user_id,
                                               std::string_view challenge_hash) = 0;
  /// Turns the second factor off: removes it and its recovery codes. kNotFound when there was none.
  virtual StoreStatus delete_user_totp(std::string_view user_id) = 0;

  // --- buyers ---------------------------------------------------------------------------------
  virtual StoreStatus insert_buyer(const Buyer& b) = 0;
  virtual StoreStatus update_buyer(Buyer& b) = 0;  // versioned as update_seller
  virtual std::optional<Buyer> get_buyer(std::string_view id) = 0;
  virtual std::vector<Buyer> list_buyers(const BuyerQuery& q) = 0;
  /// A number that changes whenever any buyer changes: workers reload their cache when it moves.
  virtual std::int64_t buyers_version() = 0;

  // --- leads ----------------------------------------------------------------------------------
  /// Inserts leads as pending, in one transaction. A lead whose id exists is left untouched
  /// (a redelivery) and reported with its current status.
  virtual std::vector<LeadInsertResult> insert_leads(std::span<const Lead> leads) = 0;
  virtual std::optional<LeadRecord> get_lead(std::string_view id) = 0;
  /// Newest first; the records carry no attempts.
  virtual std::vector<LeadRecord> list_leads(const LeadQuery& q) = 0;
  /// The id of an earlier lead of the vertical with this e-mail or phone received at or after
  /// `since_ms`, other than `lead_id`; "" if none.
  virtual std::string find_duplicate(std::string_view vertical, std::string_view email,
                                     std::string_view phone, std::int64_t since_ms,
                                     std::string_view lead_id) = 0;

  /// Durably records a post intent (kConflict if the lead is already decided). An exclusive
  /// intent replaces every other intent of the lead (the posts before it were answered); a
  /// shared one replaces the lead's exclusive intent and its buyer's own earlier one, and
  /// leaves the other shares' intents. With `caps`, the intent is also a reservation:
  /// atomically with the write, the buyer's sales since each window's `since_ms` plus its other
  /// open intents (intents of leads still pending) are counted (or, for a budget, their prices
  /// summed), and if this intent would take any window past its limit nothing is written and
  /// the answer is kLimitReached. Several workers reserving the last slot of a cap, or the last
  /// cents of a budget, at once: exactly as many win as fit.
  virtual StoreStatus record_post_intent(const PostIntent& p, std::span<const CapWindow> caps) = 0;
  /// Several record_post_intent calls at once, each answered as it would be alone, in order
  /// (a later one's caps count the earlier ones). An adapter writes them in one transaction
  /// where it can (one fsync for many); the default writes them one by one.
  struct PostIntentWrite {
    PostIntent intent;
    std::vector<CapWindow> caps;
  };
  virtual std::vector<StoreStatus> record_post_intents(std::span<const PostIntentWrite> writes) {
    std::vector<StoreStatus> out;
    out.reserve(writes.size());
    for (const auto& w : writes) out.push_back(record_post_intent(w.intent, w.caps));
    return out;
  }
  /// The lead's post intents, oldest first; nullopt when the store could not say (the lead may
  /// have some).
  virtual std::optional<std::vector<PostIntent>> get_post_intents(std::string_view lead_id) = 0;
  /// The lead's latest post intent (an exclusive post has one); kNotFound when it has none.
  Lookup<PostIntent> get_post_intent(std::string_view lead_id) {
    auto all = get_post_intents(lead_id);
    if (!all) return {};
    if (all->empty()) return {StoreStatus::kNotFound, std::nullopt};
    return {StoreStatus::kOk, std::move(all->back())};
  }

  /// Writes outcomes in one transaction. A lead already decided keeps its first outcome (the
  /// result for it is kConflict). A delivered outcome writes one sales row per sale (slots 0,
  /// 1, ...), all in the transaction that decides the lead, so a lead's sales are never added
  /// to by a second decider; a buyer buys a lead once and a slot holds one sale, by constraint.
  virtual std::vector<StoreStatus> record_outcomes(std::span<const OutcomeRecord> outcomes) = 0;

  /// Counts the lead ids a buyer bought since `since_ms` (caps); nullopt when the store cannot
  /// say, so callers fail closed instead of overselling a cap.
  virtual std::optional<std::int64_t> count_sales(std::string_view buyer_id,
                                                  std::int64_t since_ms) = 0;
  /// The cents of the sales a buyer made since `since_ms`, net of the ones it returned
  /// (budgets); nullopt when the store cannot say.
  virtual std::optional<Cents> sales_cents(std::string_view buyer_id, std::int64_t since_ms) = 0;

  // --- returns and the ledger ---------------------------------------------------------------
  /// Returns a delivered lead for its buyer, atomically: the return row, the ledger entry that
  /// reverses that buyer's sale's revenue and payout, and, once every buyer of the lead has
  /// returned it, the lead's status `returned`. A lead is returned once per buyer (constraint),
  /// only by a buyer it was sold to, within the window.
  virtual ReturnResult record_return(const ReturnRequest& r) = 0;
  /// Several record_return calls at once, each answered as it would be alone, in order (a later
  /// one sees the earlier ones). An adapter writes them in one transaction where it can (one
  /// fsync for many); the default writes them one by one.
  virtual std::vector<ReturnResult> record_returns(std::span<const ReturnRequest> rs) {
    std::vector<ReturnResult> out;
    out.reserve(rs.size());
    for (const auto& r : rs) out.push_back(record_return(r));
    return out;
  }
  /// The returns of a lead (one per buyer that returned it); nullopt when the store cannot say.
  virtual std::optional<std::vector<LeadReturn>> returns_of_lead(std::string_view lead_id) = 0;
  /// Ledger entries, oldest first; nullopt when the store cannot say.
  virtual std::optional<std::vector<LedgerEntry>> list_ledger(const LedgerQuery& q) = 0;
  /// Settles one buyer's post of a lead whose post outcome stayed unknown, atomically: the
  /// settlement row (once per lead and buyer); when sold, a sale (which enters the ledger like
  /// any sale) and the lead delivered, its payout by `payout` on the lead's total (the sale's
  /// part is what the total's payout grows by, so `s.payout` is ignored); when not sold and no
  /// intent of the lead is left unsettled or sold, the lead unsold. A lead stays settleable
  /// while it has an unsettled intent and was failed (or has been settled since).
  virtual SettleResult settle_lead(const Settlement& s, const PayoutRule& payout) = 0;
  /// The settlements of a lead, oldest first; nullopt when the store could not say.
  virtual std::optional<std::vector<Settlement>> settlements_of_lead(std::string_view lead_id) = 0;
  /// A buyer's sales made since `since_ms` and how many of them it returned; nullopt when the
  /// store cannot say.
  virtual std::optional<ReturnStats> return_stats(std::string_view buyer_id,
                                                  std::int64_t since_ms) = 0;
  /// Whether the buyer bought a lead with this e-mail/phone since `since_ms`; nullopt when the
  /// store cannot say.
  virtual std::optional<bool> buyer_bought_person(std::string_view buyer_id, std::string_view email,
                                                  std::string_view phone,
                                                  std::int64_t since_ms) = 0;

  // --- idempotency --------------------------------------------------------------------------
  /// Claims (scope, key) for `record` (status 0). kOk: claimed. kConflict: already held by a
  /// record younger than `expire_before_ms`, copied into `existing` (an older one is replaced).
  virtual StoreStatus claim_idempotency_key(const IdempotencyRecord& record,
                                            std::int64_t expire_before_ms,
                                            IdempotencyRecord& existing) = 0;
  /// Stores the answer of a claimed key.
  virtual StoreStatus complete_idempotency_key(std::string_view scope, std::string_view key,
                                               int status, std::string_view response) = 0;
  /// Gives a claim up (the request was not accepted, so a retry must be free to go).
  virtual StoreStatus release_idempotency_key(std::string_view scope, std::string_view key) = 0;

  // --- shared rate limits (scale-out) --------------------------------------------------------
  /// Reads the bucket of `key`, lets `update` change it, and writes it back, atomically against
  /// every other process using the store (row lock / serialised writer). `update` runs once,
  /// inside the critical section, and must be quick and must not call the store.
  virtual StoreStatus update_rate_bucket(std::string_view key,
                                         const std::function<void(RateBucketState&)>& update) = 0;

  // --- attempt windows (sign-in limits; shared in scale-out) -------------------------------
  /// Reads the attempt times (ms, oldest first; none for a key never seen) of each of `keys`
  /// (distinct), lets `update` change them, and writes them back, atomically for all the keys
  /// together against every other process using the store (row locks taken in key order /
  /// serialised writer). A window left empty is as one never seen. `update` runs once, inside
  /// the critical section, must be quick and must not call the store. The rule of what a window
  /// holds is the caller's (AttemptLimiter); the store keeps the times.
  virtual StoreStatus update_attempt_windows(
      const std::vector<std::string>& keys,
      const std::function<void(std::vector<std::vector<std::int64_t>>&)>& update) = 0;
  /// Removes the windows whose newest time is before `before_ms` (nothing in them counts any
  /// more), so keys that went quiet do not stay.
  virtual StoreStatus forget_attempt_windows(std::int64_t before_ms) = 0;

  // --- secrets shared by every process ------------------------------------------------------
  /// The secret called `name`: the one stored, or else `candidate`, stored now. Every process
  /// that asks gets the same value, whichever stored it first. nullopt when the store could not
  /// say.
  virtual std::optional<std::string> shared_secret(std::string_view name,
                                                   std::string_view candidate) = 0;

  // --- announcements between processes (scale-out) ------------------------------------------
  /// Whether announce() and watch() reach other processes (PostgreSQL: yes; SQLite: no).
  virtual bool announces() const { return false; }
  /// Sends each payload, in order, to every process watching `channel` at this moment
  /// (PostgreSQL: NOTIFY). Neither durable nor retried: a watcher that is disconnected misses
  /// it, so it is for notices whose loss costs only time. `channel` is lower-case letters,
  /// digits and '_'. kUnavailable when they could not be sent; a store of one process (SQLite)
  /// has no one to tell and answers kUnavailable.
  virtual StoreStatus announce(std::string_view channel, std::span<const std::string> payloads) {
    (void)channel;
    (void)payloads;
    return StoreStatus::kUnavailable;
  }
  /// Calls `on_payload` with every payload announced on `channel` while the returned watch
  /// lives, on a thread of its own. After the store was unreachable the watch connects again by
  /// itself; what was announced meanwhile is missed, so `on_listening` (may be empty) runs on
  /// that thread each time the watch starts hearing announcements, the first time included:
  /// what it reads from the store then, together with what is announced from then on, misses
  /// nothing. nullptr when the store cannot (SQLite).
  virtual std::unique_ptr<StoreWatch> watch(std::string_view channel,
                                            std::function<void(std::string_view)> on_payload,
                                            std::function<void()> on_listening) {
    (void)channel;
    (void)on_payload;
    (void)on_listening;
    return nullptr;
  }

  /// How many of the campaign's leads received since `since_ms` are still undecided (the
  /// rollups count a lead once decided); nullopt when the store cannot say.
  virtual std::optional<std::int64_t> count_queued(std::string_view campaign_id,
                                                   std::int64_t since_ms) = 0;

  // --- reports ------------------------------------------------------------------------------
  /// The revenue rollup's sums (kept with each ledger entry, so exact); nullopt when the store
  /// cannot say.
  virtual std::optional<std::vector<RevenueCell>> revenue_rollup(const RollupQuery& q) = 0;
  /// The performance rollup's sums (kept with each outcome); nullopt when the store cannot say.
  virtual std::optional<std::vector<PerformanceCell>> performance_rollup(const RollupQuery& q) = 0;
  /// The unsold rollup's sums (kept with each outcome); nullopt when the store cannot say.
  virtual std::optional<std::vector<UnsoldCell>> unsold_rollup(const RollupQuery& q) = 0;
  /// Counts a Surface B post that failed validation (the lead itself is never stored).
  virtual void count_invalid(std::string_view campaign_id, std::int64_t at_ms) = 0;
};

/// Opens the store named by LEADFLOW_STORE: "sqlite:PATH", or a libpq URI
/// "postgresql://user:pass@host:port/db[?pool_size=N&...]" (pool_size, default 8, is taken out;
/// other parameters go to libpq). Returns nullptr and sets `error` (never echoing a password)
/// when the store cannot be opened.
std::unique_ptr<Store> open_store(const std::string& url, std::string& error);

/// open_store, then Store::migrate(): what every process does at start. `error` names the
/// setting ("LEADFLOW_STORE: ...").
std::unique_ptr<Store> open_migrated_store(const std::string& url, std::string& error);

}  // namespace leadflow
