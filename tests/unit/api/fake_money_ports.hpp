#pragma once
// The store ports the money routes hold (intake, accounts, distribution, money), as one in-memory
// fake for the handler tests: records a test puts in, canned answers for the money writes, the
// questions asked kept, and each kind of store failure switched on by itself.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fake_intake.hpp"
#include "leadflow/base/audit.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/distribution.hpp"
#include "leadflow/store/intake.hpp"
#include "leadflow/store/money.hpp"

namespace leadflow::testing {

class FakeMoneyPorts final : public FakeIntakeReads,
                             public AccountsStore,
                             public DistributionStore,
                             public MoneyStore {
 public:
  std::map<std::string, LeadRecord, std::less<>> leads;
  std::map<std::string, Buyer, std::less<>> buyers;
  std::map<std::string, Campaign, std::less<>> campaigns;
  std::map<std::string, Seller, std::less<>> sellers;
  std::map<std::string, std::vector<PostIntent>, std::less<>> intents;

  // Failures, one kind at a time: the answer the adapters give when the server is gone.
  bool leads_down = false;     // get_lead: kUnavailable; list_leads: nullopt
  bool buyers_down = false;    // get_buyer: kUnavailable; list_buyers: nullopt
  bool accounts_down = false;  // get_campaign, get_seller: kUnavailable
  bool intents_down = false;   // get_post_intents: nullopt
  bool writes_down = false;    // record_return, settle_lead, the buyer writes: kUnavailable
  bool buyer_races = false;    // update_buyer: kConflict every time, as if others kept writing

  // What the money writes answer while the store is up. kReturned / kSettled echo the request;
  // kAlreadyReturned / kAlreadySettled answer `earlier_return` / `earlier_settlement`.
  ReturnStatus return_answer = ReturnStatus::kReturned;
  std::int64_t sold_at_ms = 0;  // the sale's time in a return's answer
  LeadReturn earlier_return;
  SettleStatus settle_answer = SettleStatus::kSettled;
  Settlement earlier_settlement;

  // What was asked.
  int lead_reads = 0;
  int buyer_updates = 0;
  std::vector<BuyerQuery> buyer_lists;
  std::vector<ReturnRequest> returns_asked;
  std::vector<Settlement> settlements_asked;  // `payout` is the rule's on the asked price

  bool healthy() override { return !writes_down; }

  // --- intake ---
  Lookup<LeadRecord> get_lead(std::string_view id) override {
    ++lead_reads;
    if (leads_down) return {};
    return found(leads, id);
  }
  std::optional<std::vector<LeadRecord>> list_leads(const LeadQuery&) override {
    if (leads_down) return std::nullopt;
    return std::vector<LeadRecord>{};
  }

  // --- accounts ---
  Lookup<Buyer> get_buyer(std::string_view id) override {
    if (buyers_down) return {};
    return found(buyers, id);
  }
  Lookup<Campaign> get_campaign(std::string_view id) override {
    if (accounts_down) return {};
    return found(campaigns, id);
  }
  Lookup<Seller> get_seller(std::string_view id) override {
    if (accounts_down) return {};
    return found(sellers, id);
  }
  StoreStatus insert_seller(const Seller&) override { return StoreStatus::kUnavailable; }
  StoreStatus update_seller(Seller&) override { return StoreStatus::kUnavailable; }
  std::optional<std::vector<Seller>> list_sellers() override { return std::vector<Seller>{}; }
  StoreStatus insert_campaign(const Campaign&) override { return StoreStatus::kUnavailable; }
  Lookup<Campaign> find_campaign_by_key_hash(std::string_view) override { return {}; }
  StoreStatus update_campaign(Campaign&) override { return StoreStatus::kUnavailable; }
  std::optional<std::vector<Campaign>> list_campaigns(std::string_view) override {
    return std::vector<Campaign>{};
  }
  StoreStatus insert_api_key(const ApiKey&) override { return StoreStatus::kUnavailable; }
  Lookup<ApiKey> find_api_key_by_hash(std::string_view) override { return {}; }
  std::optional<std::vector<ApiKey>> list_api_keys() override { return std::vector<ApiKey>{}; }
  Lookup<ApiKey> get_api_key(std::string_view) override { return {}; }
  StoreStatus revoke_api_key(std::string_view, std::int64_t, std::int64_t) override {
    return StoreStatus::kUnavailable;
  }
  StoreStatus touch_api_key(std::string_view, std::int64_t) override {
    return StoreStatus::kUnavailable;
  }
  StoreStatus insert_user(const User&) override { return StoreStatus::kUnavailable; }
  Lookup<User> get_user(std::string_view) override { return {}; }
  Lookup<User> find_user_by_email(std::string_view) override { return {}; }
  std::optional<std::vector<User>> list_users() override { return std::vector<User>{}; }
  StoreStatus update_user(User&, std::string_view) override { return StoreStatus::kUnavailable; }
  StoreStatus set_user_password(std::string_view, std::string_view, std::string_view) override {
    return StoreStatus::kUnavailable;
  }
  StoreStatus set_user_time_zone(std::string_view, std::string_view) override {
    return StoreStatus::kUnavailable;
  }
  // Buyers are written as the stores write them: an update at the version read, one more after.
  StoreStatus insert_buyer(const Buyer& b) override {
    if (writes_down) return StoreStatus::kUnavailable;
    buyers[b.id] = b;
    return StoreStatus::kOk;
  }
  StoreStatus update_buyer(Buyer& b) override {
    ++buyer_updates;
    if (writes_down) return StoreStatus::kUnavailable;
    const auto it = buyers.find(b.id);
    if (it == buyers.end()) return StoreStatus::kNotFound;
    if (buyer_races || it->second.version != b.version) return StoreStatus::kConflict;
    ++b.version;
    it->second = b;
    return StoreStatus::kOk;
  }
  std::optional<std::vector<Buyer>> list_buyers(const BuyerQuery& q) override {
    buyer_lists.push_back(q);
    if (buyers_down) return std::nullopt;
    std::vector<Buyer> page;
    for (const auto& [id, b] : buyers)
      if (id > q.after_id && (!q.active || b.active == *q.active) &&
          static_cast<int>(page.size()) < q.limit)
        page.push_back(b);
    return page;
  }
  std::int64_t buyers_version() override { return 0; }
  std::optional<std::vector<VerticalReoffer>> list_vertical_reoffers() override {
    return std::vector<VerticalReoffer>{};
  }
  StoreStatus set_vertical_reoffer(VerticalReoffer&) override { return StoreStatus::kUnavailable; }
  StoreStatus reset_vertical_reoffer(std::string_view, std::int64_t) override {
    return StoreStatus::kUnavailable;
  }

  // --- distribution ---
  std::optional<std::vector<PostIntent>> get_post_intents(std::string_view lead_id) override {
    if (intents_down) return std::nullopt;
    const auto it = intents.find(lead_id);
    return it == intents.end() ? std::vector<PostIntent>{} : it->second;
  }
  std::string find_duplicate(std::string_view, std::string_view, std::string_view, std::int64_t,
                             std::string_view) override {
    return "";
  }
  StoreStatus record_post_intent(const PostIntent&, std::span<const CapWindow>) override {
    return StoreStatus::kUnavailable;
  }
  std::optional<std::int64_t> count_sales(std::string_view, std::int64_t) override {
    return std::nullopt;
  }
  std::optional<Cents> sales_cents(std::string_view, std::int64_t) override { return std::nullopt; }
  std::optional<bool> buyer_bought_person(std::string_view, std::string_view,
                                          std::int64_t) override {
    return std::nullopt;
  }

  // --- money ---
  ReturnResult record_return(const ReturnRequest& r) override {
    returns_asked.push_back(r);
    if (writes_down) return {};
    ReturnResult out;
    out.status = return_answer;
    out.sold_at_ms = sold_at_ms;
    if (return_answer == ReturnStatus::kAlreadyReturned) out.ret = earlier_return;
    if (return_answer == ReturnStatus::kReturned)
      out.ret = LeadReturn{r.lead_id, r.buyer_id, r.reason,   r.note, r.by_key_id,
                           2400,      1680,       sold_at_ms, r.at_ms};
    return out;
  }
  SettleResult settle_lead(const Settlement& s, const PayoutRule& payout) override {
    Settlement asked = s;
    asked.payout = s.sold ? payout(s.price) : 0;
    settlements_asked.push_back(asked);
    if (writes_down) return {};
    SettleResult out;
    out.status = settle_answer;
    if (settle_answer == SettleStatus::kAlreadySettled) out.settlement = earlier_settlement;
    if (settle_answer == SettleStatus::kSettled) out.settlement = asked;
    return out;
  }
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
    return ReturnStats{10, 1};
  }

 private:
  template <class T>
  static std::optional<T> find(const std::map<std::string, T, std::less<>>& m,
                               std::string_view id) {
    const auto it = m.find(id);
    if (it == m.end()) return std::nullopt;
    return it->second;
  }
  template <class T>
  static Lookup<T> found(const std::map<std::string, T, std::less<>>& m, std::string_view id) {
    auto value = find(m, id);
    return {value ? StoreStatus::kOk : StoreStatus::kNotFound, std::move(value)};
  }
};

/// An audit record as written, its fields copied (AuditRecord only views them).
struct Audited {
  AuditEvent event = AuditEvent::kAuthFailed;
  std::string kind, lead_id, buyer_id, seller_id, actor_key_id;

  static Audited of(const AuditRecord& r) {
    return {r.event,
            std::string(r.kind),
            std::string(r.lead_id),
            std::string(r.buyer_id),
            std::string(r.seller_id),
            std::string(r.actor_key_id)};
  }
};

}  // namespace leadflow::testing
