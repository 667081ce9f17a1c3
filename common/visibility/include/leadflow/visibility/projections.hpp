#pragma once
// The projections: every lead-shaped answer (a lead, its distribution, attempts, sales,
// ineligibility, returns, settlements and ledger entries) as one reader may see it. Each field is
// asked of the visibility model (visibility.hpp) by its class; a field the reader may not see is
// absent from the answer, never null (null means "no value", as for an unsold lead's price).
// docs/visibility.md has the table and the decisions.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/domain/lead.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// How a buyer is shown the sellers of the leads it bought: the key of the source codes (the
/// store's visibility secret), and where a seller's name comes from for a buyer the operator
/// shows names to. Borrowed: the secret must outlive the projection.
struct SellerLabels {
  std::string_view secret;
  /// The seller's display name ("" when unknown); may be empty (no names looked up).
  std::function<std::string(const std::string& seller_id)> name_of;
};

/// How much of a lead: a list row, or the whole lead (attempts and ineligibility included).
enum class LeadDetail { kRow, kFull };

/// Whether the viewer may know the lead exists: the operator any, a seller its own, a buyer the
/// ones it bought (returned ones included). Anything else is answered as if it did not exist.
bool may_see_lead(const Viewer& viewer, const LeadRecord& record);

/// A lead as `viewer` sees it (GET /v1/leads and GET /v1/leads/{id}). The caller has checked
/// may_see_lead.
nlohmann::json project_lead(const Viewer& viewer, const LeadRecord& record,
                            const SellerLabels& labels, LeadDetail detail);

/// What a test lead would have come to (docs/visibility.md, "Test leads"), as the seller that
/// posted it may be told: it was valid (an invalid one is refused as a real one is), it was
/// stored as a test and offered to no buyer, and whether some active buyer takes leads of its
/// vertical now (`vertical_has_active_buyers`; null when the store could not say). Never which
/// buyers, how many, what they bid or would have paid: the same for every reader.
nlohmann::json project_would_have(std::optional<bool> vertical_has_active_buyers);

/// The "distribution" of a lead: accepted, delivery_status, currency; the operator also the
/// buyer and the buyers' price; a buyer its own purchase's price and reference; a seller its own
/// payout (as "payout", and as "price": what the lead fetched for it, the meaning Surface B's
/// answers give it). `seller_id` is the lead's seller.
nlohmann::json project_distribution(const Viewer& viewer, const Distribution& d,
                                    std::string_view seller_id);

/// The attempts (pings and posts) of a lead: every field for the operator; for a seller a summary
/// with no buyer and no bid ({"pings", "posts", "first_offered_at", "last_offered_at"}); nothing
/// for a buyer (null).
nlohmann::json project_attempts(const Viewer& viewer, const std::vector<Attempt>& attempts,
                                std::string_view seller_id);

/// Why buyers took no part: [{buyer_id, reason}] for the operator; for a seller the distinct
/// reasons in seller words, sorted, naming no buyer; null for a buyer.
nlohmann::json project_ineligibility(const Viewer& viewer, const std::vector<Ineligibility>& v,
                                     std::string_view seller_id);

/// A return of `lead_seller_id`'s lead: everything for the operator; the buyer's own without the
/// seller's payout; the seller its payout reversal without price, buyer, buyer's note or key.
/// Null when the viewer may see nothing of it.
nlohmann::json project_return(const Viewer& viewer, const LeadReturn& r,
                              std::string_view lead_seller_id);
/// The visible ones of `returns`, each projected.
nlohmann::json project_returns(const Viewer& viewer, const std::vector<LeadReturn>& returns,
                               std::string_view lead_seller_id);

/// A settlement of `lead_seller_id`'s lead: everything for the operator; the buyer settled with
/// its price side; the seller its payout side. Null when the viewer may see nothing of it.
nlohmann::json project_settlement(const Viewer& viewer, const Settlement& s,
                                  std::string_view lead_seller_id);
nlohmann::json project_settlements(const Viewer& viewer, const std::vector<Settlement>& v,
                                   std::string_view lead_seller_id);

/// A ledger entry: everything for the operator; its buyer the price side ("price", the entry's
/// revenue); its seller the payout side. Never the margin to either. Null when not visible.
nlohmann::json project_ledger_entry(const Viewer& viewer, const LedgerEntry& e);
nlohmann::json project_ledger(const Viewer& viewer, const std::vector<LedgerEntry>& entries);

/// Why a lead went unsold, failed or was refused, in words that name no buyer and no other
/// seller's lead: what a seller is shown in place of the operator's reason. Unknown reasons get
/// the status's general words, so a reason added later never leaks by default.
std::string seller_reason(DeliveryStatus status, std::string_view operator_reason);

/// One buyer's reason for taking no part ("filter:states", "cap:daily", ...) in seller words.
std::string seller_ineligibility(std::string_view reason);

}  // namespace leadflow
