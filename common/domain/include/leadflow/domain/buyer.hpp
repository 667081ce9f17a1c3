#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/base/money.hpp"
#include "leadflow/domain/address_policy.hpp"
#include "leadflow/domain/field_error.hpp"

namespace leadflow {

enum class DeliveryMode { kPingPost, kDirectPost };
enum class PricingModel { kFixed, kBid };

struct CustomRule {
  enum class Op { kEq, kNe, kIn, kNin, kGt, kGte, kLt, kLte, kExists };
  std::string field;
  Op op = Op::kEq;
  nlohmann::json value;
};

/// A buyer's configuration (SPEC §2 "Buyers"). Plain data; validated by buyer_from_json.
struct Buyer {
  std::string id;
  std::string name;
  bool active = true;
  std::vector<std::string> verticals;

  DeliveryMode mode = DeliveryMode::kPingPost;
  std::string ping_url;
  std::string post_url;
  int timeout_ms = 1000;
  std::vector<std::pair<std::string, std::string>> headers;
  nlohmann::json mapping;  // null when the default protocol is used

  PricingModel pricing = PricingModel::kBid;
  Cents price = 0;    // fixed price
  Cents min_bid = 0;  // bids below are ignored (exclusive bids only)
  /// What the buyer pays for a shared (non-exclusive) purchase where the vertical allows
  /// max_sales > 1; 0: the buyer buys exclusively only. A bid buyer's ping answer may name its
  /// own shared bid ("shared_bid"), which takes the place of this price for that lead.
  Cents shared_price = 0;
  /// Whether the buyer takes aged leads: leads nobody bought live, offered again later where the
  /// vertical's re-offer policy allows (docs/reoffers.md). Its price for one is `aged_price`
  /// (pricing.aged_price) when set, else the "aged_bid" of its answer to the aged ping.
  bool accepts_aged = false;
  Cents aged_price = 0;

  std::vector<std::string> states;
  std::vector<std::string> exclude_states;
  std::vector<std::string> zip_prefixes;
  std::vector<std::string> sources;
  std::vector<CustomRule> custom_rules;

  nlohmann::json schedule;  // {"timezone": "...", "hours": {...}} or null (always open)
  nlohmann::json caps;      // {"hourly":n, "daily":n, ...} or null

  int priority = 0;  // higher wins ties
  int weight = 1;    // rotation weight inside a priority
  /// The ping tree: tier 1 is pinged first; a lead moves to tier 2 only when tier 1 does not
  /// sell it, and so on (1-10).
  int tier = 1;
  /// Pings and posts to this buyer in flight at once (0: no limit). A buyer at capacity sits
  /// out an auction with the reason at_capacity, which is not a failure.
  int max_concurrency = 0;
  int duplicate_lookback_days = 30;
  /// Days after a sale in which the buyer may return the lead (0: no returns).
  int return_window_days = 7;
  /// The share of its sales of the last return window a buyer may return before it is flagged
  /// (0: never flagged).
  double max_return_rate = 0;
  /// The operator's choice to show this buyer the names and ids of the sellers of the leads it
  /// bought instead of their opaque source codes ({"visibility": {"seller_names": true}};
  /// docs/visibility.md). Never the sellers' payouts.
  bool show_seller_names = false;
  /// The operator's choice of what the buyer may change of its own configuration
  /// ({"self_service": {"caps": true, "filters": false}}; docs/api.md, "A buyer's own account").
  /// Pausing and resuming its own buying needs no such choice.
  bool self_caps = false;
  bool self_filters = false;

  std::int64_t created_at_ms = 0;
  std::int64_t updated_at_ms = 0;
  std::int64_t version = 1;  // one more with every change (docs/versions.md); not in the doc
};

/// Builds a buyer from a request body. With `base` (PUT), fields the body does not name keep the
/// base's value. Every offending field is appended to `errors` with its JSON path; the result is
/// meaningful only when `errors` stayed empty. `allow_private_urls` lifts the loopback/private
/// address refusal (LEADFLOW_ALLOW_PRIVATE_BUYERS).
Buyer buyer_from_json(const nlohmann::json& body, const Buyer* base, bool allow_private_urls,
                      FieldErrors& errors);

/// The API view. With `mask_secrets`, header values of Authorization-like headers read back masked.
nlohmann::json buyer_to_json(const Buyer& b, bool mask_secrets);

}  // namespace leadflow
