#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "leadflow/base/money.hpp"

namespace leadflow {

/// The whole set of delivery states (SPEC §2). pending -> delivered | unsold | duplicate |
/// rejected | failed | test; delivered -> returned. `accepted` is true exactly when delivered.
/// `test`: a test lead (leadflow/domain/test_mode.hpp), stored and shown, offered to no buyer.
enum class DeliveryStatus {
  kPending,
  kDelivered,
  kUnsold,
  kDuplicate,
  kRejected,
  kFailed,
  kReturned,
  kTest
};

std::string_view to_string(DeliveryStatus s);
std::optional<DeliveryStatus> parse_delivery_status(std::string_view s);
inline bool is_final(DeliveryStatus s) { return s != DeliveryStatus::kPending; }

/// A custom field value: a string or a number, kept as the seller wrote it. A number written
/// without a fraction or exponent is an integer (int64, exactly; validation refuses one beyond
/// that range), any other a double; so 2019 stays 2019 and 9007199254740993 keeps its digits.
using CustomValue = std::variant<std::string, double, std::int64_t>;
using CustomFields = std::vector<std::pair<std::string, CustomValue>>;

/// Where a lead came in.
enum class Surface { kApi, kCampaign };

/// A validated, normalised lead. Owned by value; carries no behaviour.
struct Lead {
  std::string id;           // ld_...
  std::string seller_id;    // sl_... ("" for the operator's own keys)
  std::string campaign_id;  // cp_... (Surface B only)
  std::string api_key_id;   // key_... (Surface A only)
  Surface surface = Surface::kApi;

  std::string first_name;
  std::string last_name;
  std::string email;     // lower-cased
  std::string phone;     // E.164, "+15551234567"
  std::string zip_code;  // five digits
  std::string zip4;      // four digits or ""
  std::string state;     // two-letter USPS code derived from the ZIP, or ""
  std::string vertical;
  std::string source;
  std::string landing_page;
  std::string ip_address;
  std::string user_agent;
  std::string trustedform_cert_url;
  std::string jornaya_leadid;
  std::optional<bool> tcpa_consent;
  std::string tcpa_consent_text;
  CustomFields custom_fields;

  std::int64_t received_at_ms = 0;
  int sync_wait_ms = 0;  // how long the seller's request waits for the outcome (0: async)
  /// A test lead (leadflow/domain/test_mode.hpp): set by the front from the post's own mark and
  /// its seller's and campaign's test mode; carried on the queue and stored with the lead.
  bool test = false;
};

enum class AttemptKind { kPing, kPost };
enum class AttemptOutcome { kBid, kNoBid, kAccepted, kRejected, kTimeout, kError, kSkipped };
std::string_view to_string(AttemptKind k);
std::string_view to_string(AttemptOutcome o);
std::optional<AttemptKind> parse_attempt_kind(std::string_view s);
std::optional<AttemptOutcome> parse_attempt_outcome(std::string_view s);

/// One ping or post to one buyer.
struct Attempt {
  std::string buyer_id;
  AttemptKind kind = AttemptKind::kPing;
  std::int64_t started_at_ms = 0;
  std::int32_t duration_ms = 0;
  AttemptOutcome outcome = AttemptOutcome::kNoBid;
  std::optional<Cents> bid;
  int http_status = 0;
  std::string reason;
  /// The tier of the ping tree the buyer was asked in (1-10); 0 for attempts recorded before
  /// the auction had tiers, shown as null.
  int tier = 0;
  /// 0: asked while the lead was live; N: asked in its Nth re-offer as an aged lead
  /// (docs/reoffers.md), so a timeline shows the live auction, then each re-offer.
  int reoffer = 0;
};

/// Why a buyer took no part in a lead's auction.
struct Ineligibility {
  std::string buyer_id;
  std::string reason;  // "vertical", "paused", "filter:states", "schedule", "cap:daily",
                       // "duplicate", "at_capacity", ...
};

/// One buyer's purchase of a lead: an exclusive sale has one, a shared sale up to the vertical's
/// max_sales (never the same buyer twice).
struct Sale {
  std::string buyer_id;
  Cents price = 0;   // what this buyer paid
  Cents payout = 0;  // this sale's part of the seller's payout
  std::string buyer_lead_id;
};

/// A lead's outcome, written once by the worker that decided it. For a sale, buyer_id, price,
/// payout and buyer_lead_id sum it up: the first (best-paying) buyer, the total revenue, the
/// seller's whole payout; `sales` holds each purchase. An outcome built with no `sales` but
/// delivered stands for one sale made of the summary.
struct Distribution {
  DeliveryStatus status = DeliveryStatus::kPending;
  std::string buyer_id;       // "" unless delivered
  Cents price = 0;            // what the buyers paid, together
  Cents payout = 0;           // what the seller earns
  std::string buyer_lead_id;  // the buyer's reference, if it gave one
  std::vector<Sale> sales;    // delivered (or returned): one per buyer
  std::string reason;         // for unsold/rejected/failed/duplicate: a short cause
  std::int64_t decided_at_ms = 0;
  std::vector<Attempt> attempts;
  std::vector<Ineligibility> ineligible;
};

/// A lead as stored, with its distribution (pending until decided).
struct LeadRecord {
  Lead lead;
  Distribution distribution;
  /// When the person's fields were erased (leadflow/erasure/erasure.hpp: `lead` holds the
  /// tombstone); 0 = never.
  std::int64_t erased_at_ms = 0;
};

}  // namespace leadflow
