#pragma once
// A store for unit tests: the real SQLite adapter on a private temporary database, with faults
// injected on demand.
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "leadflow/base/clock.hpp"
#include "leadflow/store/store.hpp"

namespace leadflow::testing {

/// The Store port backed by open_store("sqlite:<temp dir>") and migrated, so every answer is the
/// real adapter's, plus faults a test switches on:
///   - fail_next_post_intents(n): the next n record_post_intent calls answer kUnavailable and
///     write nothing (a lost connection);
///   - refuse_reservations(buyer): record_post_intent with caps for that buyer answers
///     kLimitReached and writes nothing (its cap is full elsewhere);
///   - fail_next_lookups(n): the next n lookups (campaign key, API key, post intent) answer
///   kUnavailable
///     while healthy() stays true (the server came back right after the failed call);
///   - fail_next_account_reads(n): the next n get_campaign / get_seller calls answer kUnavailable
///     while every other call is answered;
///   - fail_next_vertical_reoffer_reads(n): the next n list_vertical_reoffers calls answer
///     nullopt while every other call is answered;
///   - fail_next_buyer_lists(n): the next n list_buyers calls answer nullopt (the store could not
///     say) while every other call is answered;
///   - unavailable_for(d): every call fails as the adapters fail with the server gone (empty
///     results, kUnavailable, nullopt) until `clock` has moved on by `d`;
///   - hold_calls() ... release_calls(): every call waits in between (a store slow to answer).
///     The event loop never moves a simulated clock while a store call is out, so auctions
///     started while calls are held all begin at the same instant of simulated time.
/// The directory is removed with the store. Thread-safe.
class FakeStore final : public Store {
 public:
  explicit FakeStore(const Clock& clock);
  ~FakeStore() override;
  FakeStore(const FakeStore&) = delete;
  FakeStore& operator=(const FakeStore&) = delete;

  void fail_next_post_intents(int n);
  void refuse_reservations(const std::string& buyer_id);
  void unavailable_for(std::chrono::milliseconds d);
  void fail_next_lookups(int n);
  void fail_next_buyer_lists(int n);
  void fail_next_account_reads(int n);
  void fail_next_vertical_reoffer_reads(int n);
  void hold_calls();
  void release_calls();

  /// record_post_intent calls that wrote an intent.
  int post_intents_written() const;
  /// Calls refused because the store was unavailable.
  int unavailable_calls() const;
  /// Calls waiting for release_calls() now.
  int held_calls() const;
  /// How many times claim_postbacks has answered the row of `event_id` at `endpoint_id`.
  int postback_claims(const std::string& endpoint_id, const std::string& event_id) const;

  StoreStatus migrate() override;
  bool healthy() override;

  StoreStatus insert_seller(const Seller& s) override;
  Lookup<Seller> get_seller(std::string_view id) override;
  std::optional<std::vector<Seller>> list_sellers() override;
  StoreStatus insert_campaign(const Campaign& c) override;
  Lookup<Campaign> get_campaign(std::string_view id) override;
  Lookup<Campaign> find_campaign_by_key_hash(std::string_view key_hash) override;
  std::optional<std::vector<Campaign>> list_campaigns(std::string_view seller_id) override;
  StoreStatus insert_api_key(const ApiKey& k) override;
  Lookup<ApiKey> find_api_key_by_hash(std::string_view key_hash) override;
  std::optional<std::vector<ApiKey>> list_api_keys() override;
  Lookup<ApiKey> get_api_key(std::string_view id) override;
  StoreStatus revoke_api_key(std::string_view id, std::int64_t at_ms,
                             std::int64_t if_version) override;

  StoreStatus insert_user(const User& u) override;
  Lookup<User> get_user(std::string_view id) override;
  Lookup<User> find_user_by_email(std::string_view email) override;
  std::optional<std::vector<User>> list_users() override;
  StoreStatus update_user(User& u, std::string_view keep_session = {}) override;
  StoreStatus set_user_password(std::string_view user_id, std::string_view password_hash,
                                std::string_view keep_session) override;
  StoreStatus set_user_time_zone(std::string_view user_id, std::string_view zone) override;
  StoreStatus touch_api_key(std::string_view id, std::int64_t at_ms) override;
  StoreStatus record_login(std::string_view user_id, std::int64_t at_ms, std::string_view rehashed,
                           std::string_view verified) override;
  StoreStatus insert_session(const UserSession& s) override;
  Lookup<UserSession> find_session(std::string_view token_hash) override;
  StoreStatus touch_session(std::string_view token_hash, std::int64_t at_ms) override;
  StoreStatus delete_session(std::string_view token_hash) override;
  StoreStatus delete_user_sessions(std::string_view user_id) override;
  StoreStatus delete_expired_sessions(std::int64_t now_ms, std::int64_t idle_before_ms) override;
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

  StoreStatus insert_buyer(const Buyer& b) override;
  StoreStatus update_buyer(Buyer& b) override;
  Lookup<Buyer> get_buyer(std::string_view id) override;
  std::optional<std::vector<Buyer>> list_buyers(const BuyerQuery& q) override;
  std::int64_t buyers_version() override;
  std::optional<std::vector<VerticalReoffer>> list_vertical_reoffers() override;
  StoreStatus set_vertical_reoffer(VerticalReoffer& v) override;
  StoreStatus reset_vertical_reoffer(std::string_view vertical, std::int64_t version) override;
  StoreStatus append_change(const ChangeEntry& e) override;
  std::optional<std::vector<ChangeEntry>> list_changes(const ChangeQuery& q) override;
  EraseStatus erase_lead(const Lead& tombstone, std::int64_t at_ms, const ChangeEntry& e) override;
  std::optional<std::vector<ErasableLead>> erasable_leads(std::int64_t from_ms,
                                                          std::int64_t before_ms,
                                                          int limit) override;
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
  std::optional<money::Closes> list_closes() override;
  std::optional<std::vector<money::FrozenTotals>> frozen_totals(std::string_view period) override;
  std::optional<std::vector<money::StatementEntry>> statement_entries(
      const StatementQuery& q) override;
  CloseResult close_period(const CloseRequest& r) override;
  StoreStatus insert_postback_endpoint(const PostbackEndpoint& e) override;
  Lookup<PostbackEndpoint> get_postback_endpoint(std::string_view id) override;
  std::optional<std::vector<PostbackEndpoint>> list_postback_endpoints(
      std::string_view seller_id) override;
  StoreStatus update_postback_endpoint(PostbackEndpoint& e, bool fan_out_first) override;
  Lookup<PostbackEndpoint> rotate_postback_secret(const SecretRotation& r) override;
  StoreStatus delete_postback_endpoint(std::string_view id, std::int64_t version) override;
  std::uint64_t postback_endpoints_version() override;
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
  std::optional<int> prune_postbacks(PostbackState state, std::int64_t before_ms,
                                     int limit) override;

  using IntakeStore::insert_leads;
  std::vector<LeadInsertResult> insert_leads(std::span<const Lead> leads,
                                             std::span<const SearchKeys> keys) override;
  Lookup<LeadRecord> get_lead(std::string_view id) override;
  std::optional<std::vector<LeadRecord>> list_leads(const LeadQuery& q) override;
  std::optional<std::string> lead_changes_position() override;
  Lookup<LeadChanges> list_lead_changes(std::string_view from, std::string_view to,
                                        int limit) override;
  std::string find_duplicate(std::string_view vertical, std::string_view email,
                             std::string_view phone, std::int64_t since_ms,
                             std::string_view lead_id) override;
  StoreStatus record_post_intent(const PostIntent& p, std::span<const CapWindow> caps) override;
  std::optional<std::vector<PostIntent>> get_post_intents(std::string_view lead_id) override;
  std::vector<StoreStatus> record_outcomes(std::span<const OutcomeRecord> outcomes) override;
  std::optional<std::int64_t> count_sales(std::string_view buyer_id,
                                          std::int64_t since_ms) override;
  std::optional<Cents> sales_cents(std::string_view buyer_id, std::int64_t since_ms) override;
  ReturnResult record_return(const ReturnRequest& r) override;
  StoreStatus update_seller(Seller& s) override;
  StoreStatus update_campaign(Campaign& c) override;
  SettleResult settle_lead(const Settlement& s, const PayoutRule& payout) override;
  std::optional<std::vector<Settlement>> settlements_of_lead(std::string_view lead_id) override;
  std::optional<std::vector<LeadReturn>> returns_of_lead(std::string_view lead_id) override;
  std::optional<std::vector<LedgerEntry>> list_ledger(const LedgerQuery& q) override;
  std::optional<ReturnStats> return_stats(std::string_view buyer_id,
                                          std::int64_t since_ms) override;
  std::optional<bool> buyer_bought_person(std::string_view buyer_id, std::string_view lead_id,
                                          std::int64_t since_ms) override;

  StoreStatus claim_idempotency_key(const IdempotencyRecord& record, std::int64_t expire_before_ms,
                                    IdempotencyRecord& existing) override;
  StoreStatus complete_idempotency_key(std::string_view scope, std::string_view key, int status,
                                       std::string_view response) override;
  StoreStatus release_idempotency_key(std::string_view scope, std::string_view key) override;
  StoreStatus update_rate_bucket(std::string_view key,
                                 const std::function<void(RateBucketState&)>& update) override;
  StoreStatus update_attempt_windows(
      const std::vector<std::string>& keys,
      const std::function<void(std::vector<std::vector<std::int64_t>>&)>& update) override;
  StoreStatus forget_attempt_windows(std::int64_t before_ms) override;
  std::optional<std::vector<RateBucketRow>> list_rate_buckets(std::string_view after,
                                                              int limit) override;
  std::optional<std::int64_t> delete_rate_buckets(const std::vector<RateBucketRow>& rows) override;
  std::optional<std::string> shared_secret(std::string_view name,
                                           std::string_view candidate) override;
  std::optional<std::int64_t> count_queued(std::string_view campaign_id,
                                           std::int64_t since_ms) override;
  std::optional<std::vector<RevenueCell>> revenue_rollup(const RollupQuery& q) override;
  std::optional<std::vector<PerformanceCell>> performance_rollup(const RollupQuery& q) override;
  std::optional<std::vector<UnsoldCell>> unsold_rollup(const RollupQuery& q) override;
  void count_invalid(std::string_view campaign_id, std::int64_t at_ms) override;
  std::optional<std::vector<ReofferClaim>> claim_reoffers(std::int64_t now_ms, int limit,
                                                          std::int64_t lease_until_ms) override;
  StoreStatus record_reoffer(const ReofferOutcome& outcome) override;
  std::optional<std::int64_t> count_reoffers(std::int64_t now_ms, bool due) override;
  Lookup<ReofferClaim> scheduled_reoffer(std::string_view lead_id) override;

 private:
  /// True (and counted) while the store is unavailable. Waits while calls are held.
  bool down();
  /// True (and counted) while a lookup is to fail.
  bool lookup_fails();
  /// True (and counted) while a campaign or seller read is to fail.
  bool account_read_fails();

  const Clock& clock_;
  std::string dir_;
  std::unique_ptr<Store> real_;
  mutable std::mutex mu_;
  std::condition_variable released_;
  bool held_ = false;
  int failing_intents_ = 0;
  int failing_lookups_ = 0;
  int failing_buyer_lists_ = 0;
  int failing_account_reads_ = 0;
  int failing_vertical_reoffer_reads_ = 0;
  std::set<std::string> refused_reservations_;
  SteadyTime down_until_{};
  int intents_written_ = 0;
  int unavailable_calls_ = 0;
  int waiting_ = 0;                                                     // calls held now
  std::map<std::pair<std::string, std::string>, int> postback_claims_;  // endpoint, event
};

}  // namespace leadflow::testing
