#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/base/money.hpp"
#include "leadflow/money/ledger.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

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

/// One immutable movement of money (SPEC §7): the money component's value (leadflow/money/
/// ledger.hpp), which also says which entries a sale and a return write.
using LedgerEntry = money::LedgerEntry;

/// Which ledger entries to list, oldest first by their time (`at`), entries of one instant in
/// the order written (by id): those matching every filter set ("" and 0 are unset), after the
/// entry (`after_at_ms`, `after_id`) when `after_id` is not 0. The time bounds are half-open,
/// [from_ms, to_ms). Adapters translate the filters into their SQL; they decide nothing.
struct LedgerQuery {
  std::string lead_id;  // "" = every lead
  std::int64_t after_id = 0;
  int limit = 100;
  std::int64_t after_at_ms = 0;  // the time of the entry `after_id` (the cursor's position)
  std::int64_t from_ms = 0;      // 0 = from the first entry
  std::int64_t to_ms = 0;        // 0 = to the last; exclusive
  std::string buyer_id;
  std::string seller_id;
  std::string kind;  // money::kSaleEntry, money::kReturnEntry or "" for both
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

/// A lead's money, read together: its returns (one per buyer that returned it), its settlements
/// (oldest first) and its ledger entries (oldest first, at most 1,000).
struct LeadMoney {
  std::vector<LeadReturn> returns;
  std::vector<Settlement> settlements;
  std::vector<LedgerEntry> ledger;
};

/// The money port: returns, settlements and the ledger, for the API's money routes and
/// leadflow-admin's generator.
class MoneyStore : public virtual StorePort {
 public:
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
  /// Ledger entries as `q` asks, oldest first (by time, then id); nullopt when the store cannot
  /// say.
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
  /// A lead's returns, settlements and ledger entries in one call (the lead view): an adapter
  /// reads them in one snapshot where it can, so they agree with each other and cost one read
  /// lock rather than three. nullopt when the store cannot say.
  virtual std::optional<LeadMoney> money_of_lead(std::string_view lead_id) {
    auto returns = returns_of_lead(lead_id);
    auto settlements = settlements_of_lead(lead_id);
    LedgerQuery q;
    q.lead_id = std::string(lead_id);
    q.limit = 1000;
    auto ledger = list_ledger(q);
    if (!returns || !settlements || !ledger) return std::nullopt;
    return LeadMoney{std::move(*returns), std::move(*settlements), std::move(*ledger)};
  }
  /// A buyer's sales made since `since_ms` and how many of them it returned; nullopt when the
  /// store cannot say.
  virtual std::optional<ReturnStats> return_stats(std::string_view buyer_id,
                                                  std::int64_t since_ms) = 0;
};

}  // namespace leadflow
