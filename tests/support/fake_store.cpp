#include "fake_store.hpp"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>

namespace leadflow::testing {

FakeStore::FakeStore(const Clock& clock) : clock_(clock) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "leadflow-fake-store-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("FakeStore: mkdtemp failed");
  dir_ = pattern;
  std::string error;
  real_ = open_migrated_store("sqlite:" + dir_ + "/leadflow.db", error);
  if (!real_) throw std::runtime_error("FakeStore: " + error);
}

FakeStore::~FakeStore() {
  real_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void FakeStore::fail_next_post_intents(int n) {
  std::lock_guard lock(mu_);
  failing_intents_ = n;
}

void FakeStore::refuse_reservations(const std::string& buyer_id) {
  std::lock_guard lock(mu_);
  refused_reservations_.insert(buyer_id);
}

void FakeStore::unavailable_for(std::chrono::milliseconds d) {
  std::lock_guard lock(mu_);
  down_until_ = clock_.steady_now() + d;
}

void FakeStore::fail_next_lookups(int n) {
  std::lock_guard lock(mu_);
  failing_lookups_ = n;
}

void FakeStore::fail_next_buyer_lists(int n) {
  std::lock_guard lock(mu_);
  failing_buyer_lists_ = n;
}

void FakeStore::fail_next_account_reads(int n) {
  std::lock_guard lock(mu_);
  failing_account_reads_ = n;
}

void FakeStore::fail_next_vertical_reoffer_reads(int n) {
  std::lock_guard lock(mu_);
  failing_vertical_reoffer_reads_ = n;
}

void FakeStore::hold_calls() {
  std::lock_guard lock(mu_);
  held_ = true;
}

void FakeStore::release_calls() {
  {
    std::lock_guard lock(mu_);
    held_ = false;
  }
  released_.notify_all();
}

bool FakeStore::lookup_fails() {
  if (down()) return true;
  std::lock_guard lock(mu_);
  if (failing_lookups_ <= 0) return false;
  --failing_lookups_;
  ++unavailable_calls_;
  return true;
}

bool FakeStore::account_read_fails() {
  if (down()) return true;
  std::lock_guard lock(mu_);
  if (failing_account_reads_ <= 0) return false;
  --failing_account_reads_;
  ++unavailable_calls_;
  return true;
}

int FakeStore::post_intents_written() const {
  std::lock_guard lock(mu_);
  return intents_written_;
}

int FakeStore::unavailable_calls() const {
  std::lock_guard lock(mu_);
  return unavailable_calls_;
}

int FakeStore::held_calls() const {
  std::lock_guard lock(mu_);
  return waiting_;
}

bool FakeStore::down() {
  std::unique_lock lock(mu_);
  ++waiting_;
  released_.wait(lock, [&] { return !held_; });
  --waiting_;
  if (clock_.steady_now() >= down_until_) return false;
  ++unavailable_calls_;
  return true;
}

StoreStatus FakeStore::migrate() { return down() ? StoreStatus::kUnavailable : real_->migrate(); }
bool FakeStore::healthy() { return !down() && real_->healthy(); }

StoreStatus FakeStore::insert_seller(const Seller& s) {
  return down() ? StoreStatus::kUnavailable : real_->insert_seller(s);
}
Lookup<Seller> FakeStore::get_seller(std::string_view id) {
  return account_read_fails() ? Lookup<Seller>{} : real_->get_seller(id);
}
std::optional<std::vector<Seller>> FakeStore::list_sellers() {
  return down() ? std::nullopt : real_->list_sellers();
}
StoreStatus FakeStore::insert_campaign(const Campaign& c) {
  return down() ? StoreStatus::kUnavailable : real_->insert_campaign(c);
}
Lookup<Campaign> FakeStore::get_campaign(std::string_view id) {
  return account_read_fails() ? Lookup<Campaign>{} : real_->get_campaign(id);
}
Lookup<Campaign> FakeStore::find_campaign_by_key_hash(std::string_view key_hash) {
  return lookup_fails() ? Lookup<Campaign>{} : real_->find_campaign_by_key_hash(key_hash);
}
std::optional<std::vector<Campaign>> FakeStore::list_campaigns(std::string_view seller_id) {
  return down() ? std::nullopt : real_->list_campaigns(seller_id);
}
StoreStatus FakeStore::insert_api_key(const ApiKey& k) {
  return down() ? StoreStatus::kUnavailable : real_->insert_api_key(k);
}
Lookup<ApiKey> FakeStore::find_api_key_by_hash(std::string_view key_hash) {
  return lookup_fails() ? Lookup<ApiKey>{} : real_->find_api_key_by_hash(key_hash);
}
std::optional<std::vector<ApiKey>> FakeStore::list_api_keys() {
  return down() ? std::nullopt : real_->list_api_keys();
}
Lookup<ApiKey> FakeStore::get_api_key(std::string_view id) {
  return lookup_fails() ? Lookup<ApiKey>{} : real_->get_api_key(id);
}
StoreStatus FakeStore::revoke_api_key(std::string_view id, std::int64_t at_ms,
                                      std::int64_t if_version) {
  return down() ? StoreStatus::kUnavailable : real_->revoke_api_key(id, at_ms, if_version);
}

StoreStatus FakeStore::insert_user(const User& u) {
  return down() ? StoreStatus::kUnavailable : real_->insert_user(u);
}
Lookup<User> FakeStore::get_user(std::string_view id) {
  return down() ? Lookup<User>{} : real_->get_user(id);
}
Lookup<User> FakeStore::find_user_by_email(std::string_view email) {
  return down() ? Lookup<User>{} : real_->find_user_by_email(email);
}
std::optional<std::vector<User>> FakeStore::list_users() {
  return down() ? std::nullopt : real_->list_users();
}
StoreStatus FakeStore::touch_api_key(std::string_view id, std::int64_t at_ms) {
  return down() ? StoreStatus::kUnavailable : real_->touch_api_key(id, at_ms);
}

StoreStatus FakeStore::update_user(User& u, std::string_view keep_session) {
  return down() ? StoreStatus::kUnavailable : real_->update_user(u, keep_session);
}
StoreStatus FakeStore::set_user_password(std::string_view user_id, std::string_view password_hash,
                                         std::string_view keep_session) {
  return down() ? StoreStatus::kUnavailable
                : real_->set_user_password(user_id, password_hash, keep_session);
}
StoreStatus FakeStore::set_user_time_zone(std::string_view user_id, std::string_view zone) {
  return down() ? StoreStatus::kUnavailable : real_->set_user_time_zone(user_id, zone);
}
StoreStatus FakeStore::record_login(std::string_view user_id, std::int64_t at_ms,
                                    std::string_view rehashed, std::string_view verified) {
  return down() ? StoreStatus::kUnavailable
                : real_->record_login(user_id, at_ms, rehashed, verified);
}
StoreStatus FakeStore::insert_session(const UserSession& s) {
  return down() ? StoreStatus::kUnavailable : real_->insert_session(s);
}
Lookup<UserSession> FakeStore::find_session(std::string_view token_hash) {
  return down() ? Lookup<UserSession>{} : real_->find_session(token_hash);
}
StoreStatus FakeStore::touch_session(std::string_view token_hash, std::int64_t at_ms) {
  return down() ? StoreStatus::kUnavailable : real_->touch_session(token_hash, at_ms);
}
StoreStatus FakeStore::delete_session(std::string_view token_hash) {
  return down() ? StoreStatus::kUnavailable : real_->delete_session(token_hash);
}
StoreStatus FakeStore::delete_user_sessions(std::string_view user_id) {
  return down() ? StoreStatus::kUnavailable : real_->delete_user_sessions(user_id);
}
StoreStatus FakeStore::delete_expired_sessions(std::int64_t now_ms, std::int64_t idle_before_ms) {
  return down() ? StoreStatus::kUnavailable
                : real_->delete_expired_sessions(now_ms, idle_before_ms);
}
Lookup<UserTotp> FakeStore::get_user_totp(std::string_view user_id) {
  return down() ? Lookup<UserTotp>{} : real_->get_user_totp(user_id);
}
Lookup<UserTotp> FakeStore::find_user_totp_by_challenge(std::string_view challenge_hash) {
  return down() ? Lookup<UserTotp>{} : real_->find_user_totp_by_challenge(challenge_hash);
}
StoreStatus FakeStore::begin_user_totp(const UserTotp& t) {
  return down() ? StoreStatus::kUnavailable : real_->begin_user_totp(t);
}
StoreStatus FakeStore::enable_user_totp(std::string_view user_id, std::int64_t step,
                                        const std::vector<std::string>& recovery_hashes) {
  return down() ? StoreStatus::kUnavailable
                : real_->enable_user_totp(user_id, step, recovery_hashes);
}
StoreStatus FakeStore::accept_user_totp_step(std::string_view user_id, std::int64_t step) {
  return down() ? StoreStatus::kUnavailable : real_->accept_user_totp_step(user_id, step);
}
StoreStatus FakeStore::use_recovery_code(std::string_view user_id, std::string_view code_hash,
                                         std::int64_t at_ms) {
  return down() ? StoreStatus::kUnavailable : real_->use_recovery_code(user_id, code_hash, at_ms);
}
StoreStatus FakeStore::set_user_totp_challenge(std::string_view user_id,
                                               std::string_view challenge_hash,
                                               std::int64_t expires_at_ms) {
  return down() ? StoreStatus::kUnavailable
                : real_->set_user_totp_challenge(user_id, challenge_hash, expires_at_ms);
}
StoreStatus FakeStore::take_user_totp_challenge(std::string_view user_id,
                                                std::string_view challenge_hash) {
  return down() ? StoreStatus::kUnavailable
                : real_->take_user_totp_challenge(user_id, challenge_hash);
}
StoreStatus FakeStore::delete_user_totp(std::string_view user_id) {
  return down() ? StoreStatus::kUnavailable : real_->delete_user_totp(user_id);
}

StoreStatus FakeStore::insert_buyer(const Buyer& b) {
  return down() ? StoreStatus::kUnavailable : real_->insert_buyer(b);
}
StoreStatus FakeStore::update_buyer(Buyer& b) {
  return down() ? StoreStatus::kUnavailable : real_->update_buyer(b);
}
Lookup<Buyer> FakeStore::get_buyer(std::string_view id) {
  return down() ? Lookup<Buyer>{} : real_->get_buyer(id);
}
std::optional<std::vector<Buyer>> FakeStore::list_buyers(const BuyerQuery& q) {
  if (down()) return std::nullopt;
  {
    std::lock_guard lock(mu_);
    if (failing_buyer_lists_ > 0) {
      --failing_buyer_lists_;
      ++unavailable_calls_;
      return std::nullopt;
    }
  }
  return real_->list_buyers(q);
}
std::int64_t FakeStore::buyers_version() { return down() ? -1 : real_->buyers_version(); }
std::optional<std::vector<VerticalReoffer>> FakeStore::list_vertical_reoffers() {
  if (down()) return std::nullopt;
  {
    std::lock_guard lock(mu_);
    if (failing_vertical_reoffer_reads_ > 0) {
      --failing_vertical_reoffer_reads_;
      ++unavailable_calls_;
      return std::nullopt;
    }
  }
  return real_->list_vertical_reoffers();
}
StoreStatus FakeStore::set_vertical_reoffer(VerticalReoffer& v) {
  return down() ? StoreStatus::kUnavailable : real_->set_vertical_reoffer(v);
}
StoreStatus FakeStore::reset_vertical_reoffer(std::string_view vertical, std::int64_t version) {
  return down() ? StoreStatus::kUnavailable : real_->reset_vertical_reoffer(vertical, version);
}
StoreStatus FakeStore::append_change(const ChangeEntry& e) {
  return down() ? StoreStatus::kUnavailable : real_->append_change(e);
}
std::optional<std::vector<ChangeEntry>> FakeStore::list_changes(const ChangeQuery& q) {
  if (down()) return std::nullopt;
  return real_->list_changes(q);
}
EraseStatus FakeStore::erase_lead(const Lead& tombstone, std::int64_t at_ms, const ChangeEntry& e) {
  return down() ? EraseStatus::kUnavailable : real_->erase_lead(tombstone, at_ms, e);
}
std::optional<std::vector<ErasableLead>> FakeStore::erasable_leads(std::int64_t from_ms,
                                                                   std::int64_t before_ms,
                                                                   int limit) {
  if (down()) return std::nullopt;
  return real_->erasable_leads(from_ms, before_ms, limit);
}
StoreStatus FakeStore::create_suppression_list(const SuppressionList& l) {
  return down() ? StoreStatus::kUnavailable : real_->create_suppression_list(l);
}
Lookup<SuppressionList> FakeStore::get_suppression_list(std::string_view id) {
  if (down()) return {};
  return real_->get_suppression_list(id);
}
std::optional<std::vector<SuppressionList>> FakeStore::list_suppression_lists(
    std::optional<std::string_view> buyer_id) {
  if (down()) return std::nullopt;
  return real_->list_suppression_lists(buyer_id);
}
StoreStatus FakeStore::replace_suppression_entries(std::string_view id,
                                                   std::span<const std::uint64_t> fingerprints,
                                                   std::int64_t now_ms) {
  return down() ? StoreStatus::kUnavailable
                : real_->replace_suppression_entries(id, fingerprints, now_ms);
}
std::optional<std::vector<std::uint64_t>> FakeStore::suppression_entries(
    std::string_view id, std::int64_t entries_version) {
  if (down()) return std::nullopt;
  return real_->suppression_entries(id, entries_version);
}
StoreStatus FakeStore::delete_suppression_list(std::string_view id) {
  return down() ? StoreStatus::kUnavailable : real_->delete_suppression_list(id);
}
std::optional<money::Closes> FakeStore::list_closes() {
  if (down()) return std::nullopt;
  return real_->list_closes();
}
std::optional<std::vector<money::FrozenTotals>> FakeStore::frozen_totals(std::string_view period) {
  if (down()) return std::nullopt;
  return real_->frozen_totals(period);
}
std::optional<std::vector<money::StatementEntry>> FakeStore::statement_entries(
    const StatementQuery& q) {
  if (down()) return std::nullopt;
  return real_->statement_entries(q);
}
CloseResult FakeStore::close_period(const CloseRequest& r) {
  return down() ? CloseResult{} : real_->close_period(r);
}
StoreStatus FakeStore::insert_postback_endpoint(const PostbackEndpoint& e) {
  return down() ? StoreStatus::kUnavailable : real_->insert_postback_endpoint(e);
}
Lookup<PostbackEndpoint> FakeStore::get_postback_endpoint(std::string_view id) {
  if (down()) return {};
  return real_->get_postback_endpoint(id);
}
std::optional<std::vector<PostbackEndpoint>> FakeStore::list_postback_endpoints(
    std::string_view seller_id) {
  if (down()) return std::nullopt;
  return real_->list_postback_endpoints(seller_id);
}
StoreStatus FakeStore::update_postback_endpoint(PostbackEndpoint& e, bool fan_out_first) {
  return down() ? StoreStatus::kUnavailable : real_->update_postback_endpoint(e, fan_out_first);
}
Lookup<PostbackEndpoint> FakeStore::rotate_postback_secret(const SecretRotation& r) {
  if (down()) return {};
  return real_->rotate_postback_secret(r);
}
StoreStatus FakeStore::delete_postback_endpoint(std::string_view id, std::int64_t version) {
  return down() ? StoreStatus::kUnavailable : real_->delete_postback_endpoint(id, version);
}
std::uint64_t FakeStore::postback_endpoints_version() {
  return real_->postback_endpoints_version();
}
std::optional<std::vector<PostbackDelivery>> FakeStore::claim_postbacks(
    std::int64_t now_ms, std::int64_t lease_ms, int limit, std::span<const PostbackHold> holds) {
  if (down()) return std::nullopt;
  auto claimed = real_->claim_postbacks(now_ms, lease_ms, limit, holds);
  std::lock_guard lock(mu_);
  for (const PostbackDelivery& d : claimed.value_or(std::vector<PostbackDelivery>{}))
    ++postback_claims_[{d.endpoint_id, d.facts.event_id}];
  return claimed;
}
int FakeStore::postback_claims(const std::string& endpoint_id, const std::string& event_id) const {
  std::lock_guard lock(mu_);
  const auto it = postback_claims_.find({endpoint_id, event_id});
  return it == postback_claims_.end() ? 0 : it->second;
}
StoreStatus FakeStore::record_postback_attempts(std::span<const PostbackAttempt> attempts) {
  return down() ? StoreStatus::kUnavailable : real_->record_postback_attempts(attempts);
}
StoreStatus FakeStore::release_postbacks(std::span<const PostbackRelease> rows) {
  return down() ? StoreStatus::kUnavailable : real_->release_postbacks(rows);
}
std::optional<int> FakeStore::resume_postbacks(std::string_view endpoint_id, std::int64_t now_ms,
                                               std::int64_t beyond_ms) {
  if (down()) return std::nullopt;
  return real_->resume_postbacks(endpoint_id, now_ms, beyond_ms);
}
std::optional<std::vector<PostbackDelivery>> FakeStore::list_postback_deliveries(
    std::string_view endpoint_id, std::string_view before_event_id, int limit) {
  if (down()) return std::nullopt;
  return real_->list_postback_deliveries(endpoint_id, before_event_id, limit);
}
std::optional<std::vector<PostbackAttempt>> FakeStore::list_postback_attempts(
    std::string_view endpoint_id, std::string_view event_id) {
  if (down()) return std::nullopt;
  return real_->list_postback_attempts(endpoint_id, event_id);
}
std::optional<std::vector<PostbackAttempt>> FakeStore::recent_postback_attempts(
    std::string_view endpoint_id, int limit) {
  if (down()) return std::nullopt;
  return real_->recent_postback_attempts(endpoint_id, limit);
}
std::optional<std::vector<RecentStatuses>> FakeStore::recent_postback_statuses(int per_endpoint) {
  if (down()) return std::nullopt;
  return real_->recent_postback_statuses(per_endpoint);
}
StoreStatus FakeStore::replay_postback(std::string_view endpoint_id, std::string_view event_id,
                                       std::int64_t now_ms) {
  return down() ? StoreStatus::kUnavailable : real_->replay_postback(endpoint_id, event_id, now_ms);
}
std::optional<PostbackBacklog> FakeStore::postback_backlog() {
  if (down()) return std::nullopt;
  return real_->postback_backlog();
}
std::optional<int> FakeStore::prune_postbacks(PostbackState state, std::int64_t before_ms,
                                              int limit) {
  if (down()) return std::nullopt;
  return real_->prune_postbacks(state, before_ms, limit);
}

std::vector<LeadInsertResult> FakeStore::insert_leads(std::span<const Lead> leads,
                                                      std::span<const SearchKeys> keys) {
  return down() ? std::vector<LeadInsertResult>{} : real_->insert_leads(leads, keys);
}
Lookup<LeadRecord> FakeStore::get_lead(std::string_view id) {
  return down() ? Lookup<LeadRecord>{} : real_->get_lead(id);
}
std::optional<std::vector<LeadRecord>> FakeStore::list_leads(const LeadQuery& q) {
  return down() ? std::nullopt : real_->list_leads(q);
}
std::optional<std::string> FakeStore::lead_changes_position() {
  return down() ? std::nullopt : real_->lead_changes_position();
}
Lookup<LeadChanges> FakeStore::list_lead_changes(std::string_view from, std::string_view to,
                                                 int limit) {
  return down() ? Lookup<LeadChanges>{} : real_->list_lead_changes(from, to, limit);
}
std::string FakeStore::find_duplicate(std::string_view vertical, std::string_view email,
                                      std::string_view phone, std::int64_t since_ms,
                                      std::string_view lead_id) {
  return down() ? std::string() : real_->find_duplicate(vertical, email, phone, since_ms, lead_id);
}

StoreStatus FakeStore::record_post_intent(const PostIntent& p, std::span<const CapWindow> caps) {
  if (down()) return StoreStatus::kUnavailable;
  {
    std::lock_guard lock(mu_);
    if (failing_intents_ > 0) {
      --failing_intents_;
      ++unavailable_calls_;
      return StoreStatus::kUnavailable;
    }
    if (!caps.empty() && refused_reservations_.count(p.buyer_id)) return StoreStatus::kLimitReached;
  }
  const StoreStatus s = real_->record_post_intent(p, caps);
  if (s == StoreStatus::kOk) {
    std::lock_guard lock(mu_);
    ++intents_written_;
  }
  return s;
}
std::optional<std::vector<PostIntent>> FakeStore::get_post_intents(std::string_view lead_id) {
  return lookup_fails() ? std::nullopt : real_->get_post_intents(lead_id);
}
std::vector<StoreStatus> FakeStore::record_outcomes(std::span<const OutcomeRecord> outcomes) {
  if (down()) return std::vector<StoreStatus>(outcomes.size(), StoreStatus::kUnavailable);
  return real_->record_outcomes(outcomes);
}
std::optional<std::vector<ReofferClaim>> FakeStore::claim_reoffers(std::int64_t now_ms, int limit,
                                                                   std::int64_t lease_until_ms) {
  return down() ? std::nullopt : real_->claim_reoffers(now_ms, limit, lease_until_ms);
}
StoreStatus FakeStore::record_reoffer(const ReofferOutcome& outcome) {
  return down() ? StoreStatus::kUnavailable : real_->record_reoffer(outcome);
}
std::optional<std::int64_t> FakeStore::count_reoffers(std::int64_t now_ms, bool due) {
  return down() ? std::nullopt : real_->count_reoffers(now_ms, due);
}
Lookup<ReofferClaim> FakeStore::scheduled_reoffer(std::string_view lead_id) {
  return down() ? Lookup<ReofferClaim>{} : real_->scheduled_reoffer(lead_id);
}
std::optional<std::int64_t> FakeStore::count_sales(std::string_view buyer_id,
                                                   std::int64_t since_ms) {
  return down() ? std::nullopt : real_->count_sales(buyer_id, since_ms);
}
std::optional<Cents> FakeStore::sales_cents(std::string_view buyer_id, std::int64_t since_ms) {
  return down() ? std::nullopt : real_->sales_cents(buyer_id, since_ms);
}
SettleResult FakeStore::settle_lead(const Settlement& s, const PayoutRule& payout) {
  return down() ? SettleResult{} : real_->settle_lead(s, payout);
}
std::optional<std::vector<Settlement>> FakeStore::settlements_of_lead(std::string_view lead_id) {
  return down() ? std::nullopt : real_->settlements_of_lead(lead_id);
}
StoreStatus FakeStore::update_seller(Seller& s) {
  return down() ? StoreStatus::kUnavailable : real_->update_seller(s);
}
StoreStatus FakeStore::update_campaign(Campaign& c) {
  return down() ? StoreStatus::kUnavailable : real_->update_campaign(c);
}
ReturnResult FakeStore::record_return(const ReturnRequest& r) {
  return down() ? ReturnResult{} : real_->record_return(r);
}
std::optional<std::vector<LeadReturn>> FakeStore::returns_of_lead(std::string_view lead_id) {
  return down() ? std::nullopt : real_->returns_of_lead(lead_id);
}
std::optional<std::vector<LedgerEntry>> FakeStore::list_ledger(const LedgerQuery& q) {
  return down() ? std::nullopt : real_->list_ledger(q);
}
std::optional<ReturnStats> FakeStore::return_stats(std::string_view buyer_id,
                                                   std::int64_t since_ms) {
  return down() ? std::nullopt : real_->return_stats(buyer_id, since_ms);
}
std::optional<bool> FakeStore::buyer_bought_person(std::string_view buyer_id,
                                                   std::string_view lead_id,
                                                   std::int64_t since_ms) {
  return down() ? std::nullopt : real_->buyer_bought_person(buyer_id, lead_id, since_ms);
}

StoreStatus FakeStore::claim_idempotency_key(const IdempotencyRecord& record,
                                             std::int64_t expire_before_ms,
                                             IdempotencyRecord& existing) {
  return down() ? StoreStatus::kUnavailable
                : real_->claim_idempotency_key(record, expire_before_ms, existing);
}
StoreStatus FakeStore::complete_idempotency_key(std::string_view scope, std::string_view key,
                                                int status, std::string_view response) {
  return down() ? StoreStatus::kUnavailable
                : real_->complete_idempotency_key(scope, key, status, response);
}
StoreStatus FakeStore::release_idempotency_key(std::string_view scope, std::string_view key) {
  return down() ? StoreStatus::kUnavailable : real_->release_idempotency_key(scope, key);
}
StoreStatus FakeStore::update_rate_bucket(std::string_view key,
                                          const std::function<void(RateBucketState&)>& update) {
  return down() ? StoreStatus::kUnavailable : real_->update_rate_bucket(key, update);
}
StoreStatus FakeStore::update_attempt_windows(
    const std::vector<std::string>& keys,
    const std::function<void(std::vector<std::vector<std::int64_t>>&)>& update) {
  return down() ? StoreStatus::kUnavailable : real_->update_attempt_windows(keys, update);
}
StoreStatus FakeStore::forget_attempt_windows(std::int64_t before_ms) {
  return down() ? StoreStatus::kUnavailable : real_->forget_attempt_windows(before_ms);
}
std::optional<std::vector<RateBucketRow>> FakeStore::list_rate_buckets(std::string_view after,
                                                                       int limit) {
  return down() ? std::nullopt : real_->list_rate_buckets(after, limit);
}
std::optional<std::int64_t> FakeStore::delete_rate_buckets(const std::vector<RateBucketRow>& rows) {
  return down() ? std::nullopt : real_->delete_rate_buckets(rows);
}
std::optional<std::string> FakeStore::shared_secret(std::string_view name,
                                                    std::string_view candidate) {
  return down() ? std::nullopt : real_->shared_secret(name, candidate);
}
std::optional<std::vector<RevenueCell>> FakeStore::revenue_rollup(const RollupQuery& q) {
  return down() ? std::nullopt : real_->revenue_rollup(q);
}
std::optional<std::vector<PerformanceCell>> FakeStore::performance_rollup(const RollupQuery& q) {
  return down() ? std::nullopt : real_->performance_rollup(q);
}

std::optional<std::vector<UnsoldCell>> FakeStore::unsold_rollup(const RollupQuery& q) {
  return down() ? std::nullopt : real_->unsold_rollup(q);
}
std::optional<std::int64_t> FakeStore::count_queued(std::string_view campaign_id,
                                                    std::int64_t since_ms) {
  return down() ? std::nullopt : real_->count_queued(campaign_id, since_ms);
}
void FakeStore::count_invalid(std::string_view campaign_id, std::int64_t at_ms) {
  if (!down()) real_->count_invalid(campaign_id, at_ms);
}

}  // namespace leadflow::testing
