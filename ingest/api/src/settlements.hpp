#pragma once
// Private: the operator's settlement of a lead whose post outcome stayed unknown
// (POST /v1/leads/{id}/settle); its route is registered by register_settlements (returns.hpp).
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "errors.hpp"
#include "leadflow/base/audit.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/distribution.hpp"
#include "leadflow/store/intake.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// What the settlement handler uses besides the key that authorised the request. The route binds
/// them to IngestContext; tests hand in fakes.
struct SettlePorts {
  IntakeStore& intake;              // the lead, its seller and campaign
  DistributionStore& distribution;  // the lead's post intents: whom it was posted to, at what
  AccountsStore& accounts;          // the payout rule of the lead's campaign, else its seller
  MoneyStore& money;                // the settlement
  const Clock& clock;
  /// Writes an audit record with the request's route and client address.
  std::function<void(const AuditRecord&)> audit;
};

/// A settlement as asked: the buyer's answer about one post of the lead.
struct SettleAsk {
  std::string lead_id;
  bool sold = false;
  std::optional<Cents> price;  // sold: the price agreed; none for the post intent's
  std::string buyer_id;        // "" for the lead's only post intent
  std::string buyer_lead_id;
  std::string note;
};

/// What a settlement came to: the settlement made, or why not. `settlement` is the one made, or
/// with kAlreadySettled the one made before; none with any other refusal.
struct SettleDone {
  std::optional<SettleRefused> refused;
  std::optional<Settlement> settlement;
  std::string seller_id;  // the lead's seller, paid by the sale a settlement makes
};

/// Makes the settlement `ask` of the operator's `key`: the post intent it settles (the one
/// named, or the lead's only one; a lead posted to several buyers needs the buyer named), its
/// price (the intent's unless another is agreed), the seller's payout rule
/// (leadflow/money/payout.hpp), then the store's transaction, which checks that the outcome is
/// still unknown and settles once per lead and buyer. A settlement made is audited.
SettleDone make_settlement(const SettlePorts& ports, const ApiKey& key, const SettleAsk& ask);

/// POST /v1/leads/{id}/settle of the lead `lead_id` by the operator's `key`, whose reader is
/// `viewer`: the body checked ({"sold", "price", "buyer_id", "buyer_lead_id", "note"}),
/// make_settlement, and the settlement as `viewer` may see it (201), or the refusal of errors.hpp.
void answer_settlement(const SettlePorts& ports, const ApiKey& key, const Viewer& viewer,
                       std::string_view lead_id, const http::Request& req, http::Response& res);

}  // namespace leadflow
