#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leadflow/base/money.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

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

/// The distribution port: what the auction reads and writes while it distributes one lead
/// (duplicates, caps and budgets, post intents, a buyer's earlier purchases).
class DistributionStore : public virtual StorePort {
 public:
  // --- distribution ---------------------------------------------------------------------------
  /// The id of an earlier real lead of the vertical with this e-mail or phone received at or
  /// after `since_ms`, other than `lead_id`; "" if none. A test lead is never one: it must not
  /// make the person's real lead a duplicate (leadflow/domain/test_mode.hpp).
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
  /// Counts the lead ids a buyer bought since `since_ms` (caps); nullopt when the store cannot
  /// say, so callers fail closed instead of overselling a cap.
  virtual std::optional<std::int64_t> count_sales(std::string_view buyer_id,
                                                  std::int64_t since_ms) = 0;
  /// The cents of the sales a buyer made since `since_ms`, net of the ones it returned
  /// (budgets); nullopt when the store cannot say.
  virtual std::optional<Cents> sales_cents(std::string_view buyer_id, std::int64_t since_ms) = 0;
  /// Whether the buyer bought, since `since_ms`, a lead of the same person as the stored lead
  /// `lead_id`: the same e-mail or phone, compared by their search keys (the lead's, and the
  /// copies its sales keep), so a person whose lead was erased is still recognised. One index
  /// probe per key. false for a lead stored without keys; nullopt when the store cannot say.
  virtual std::optional<bool> buyer_bought_person(std::string_view buyer_id,
                                                  std::string_view lead_id,
                                                  std::int64_t since_ms) = 0;
};

}  // namespace leadflow
