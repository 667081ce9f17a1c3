#pragma once
// The visibility model: which party may see which class of field. leadflow stands between
// competitors: a seller never learns a buyer's identity, bid or price; a buyer never learns a
// seller's identity or payout; neither learns the margin. Every answer, CSV, dashboard page and
// postback asks this file, and nothing else, what its reader may see (docs/visibility.md has
// the table).
#include <string>
#include <string_view>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/lead_search.hpp"

namespace leadflow {

/// The three kinds of reader.
enum class Party { kOperator, kSeller, kBuyer };

/// Who is reading: the party and, for a seller or a buyer, which one. A plain value; copy it.
struct Viewer {
  Party party = Party::kOperator;
  std::string seller_id;  // a seller's own id
  std::string buyer_id;   // a buyer's own id
  /// A buyer the operator lets see sellers' names and ids instead of its opaque source codes.
  bool seller_names = false;

  static Viewer seller(std::string_view seller_id);
  static Viewer buyer(std::string_view buyer_id, bool seller_names = false);
  static Viewer of(const ApiKey& key);
  static Viewer of(const User& user);
  bool is_operator() const { return party == Party::kOperator; }
  bool is_seller() const { return party == Party::kSeller; }
  bool is_buyer() const { return party == Party::kBuyer; }
};

/// The classes of field. Each field of a lead, attempt, sale, return, settlement, ledger entry
/// and report row belongs to exactly one.
enum class FieldClass {
  kPerson,        // the person: names, e-mail, phone, address fields, IP, user agent, custom fields
  kLeadState,     // status, timestamps, vertical, source, lead id
  kUnsoldReason,  // why a lead went unsold or failed, in words that name no buyer
  kBuyerIdentity,   // buyer ids and names, buyer_lead_id, per-buyer reasons and eligibility
  kBuyerMoney,      // bids, prices paid, revenue
  kSellerIdentity,  // seller ids and names, campaign ids, the seller's API key id
  kSellerMoney,     // the seller's payout and its reversals
  kMargin,          // revenue − payout
  kOperatorRecord,  // the operator's own records: settlement notes, the operator key that acted
};

/// How much of a class a viewer may see.
enum class Access {
  kNone,  // nothing of it
  kOwn,   // only the values that belong to the viewer (its own buyer, its own seller)
  kAll,   // every value
};

/// The table of docs/visibility.md, in code.
Access access(const Viewer& viewer, FieldClass field);

/// Whether `viewer` may see a field of class `field` whose value belongs to the seller
/// `seller_id` and the buyer `buyer_id` (either may be empty where the field has none).
bool may_see(const Viewer& viewer, FieldClass field, std::string_view seller_id,
             std::string_view buyer_id);

/// The opaque source code a buyer sees in place of a seller: stable for the pair, different for
/// each buyer, so a buyer can judge quality by source without learning who sells, and two buyers
/// cannot compare notes. `secret` is the store's visibility secret; the code is
/// "src_" followed by 12 lower-case base32 characters (60 bits of an HMAC-SHA256).
std::string source_code(std::string_view secret, std::string_view buyer_id,
                        std::string_view seller_id);

/// The name under which the store keeps the source codes' secret (Store::shared_secret), and a
/// new random one (64 hex digits) for the first process to offer. It is the installation's one
/// secret, which keys lead search too (leadflow/domain/lead_search.hpp).
inline constexpr std::string_view kVisibilitySecretName = kInstallationSecretName;
std::string new_visibility_secret();

}  // namespace leadflow
