#pragma once
// Private: returns of bought leads (POST /v1/leads/{id}/return) and settlements; what the lead
// views show of them is projected by leadflow/visibility/projections.hpp.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "leadflow/api/api.hpp"
#include "leadflow/base/audit.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// What the return handler uses besides the key that authorised the request. The route binds
/// them to IngestContext; tests hand in fakes.
struct ReturnPorts {
  IntakeStore& intake;      // the lead, and whom it was sold to
  AccountsStore& accounts;  // the returning buyer: its window, its max_return_rate
  MoneyStore& money;        // the return, and the buyer's return rate after it
  const Clock& clock;
  const std::vector<std::string>& reasons;  // the configured reason codes
  /// Writes an audit record with the request's route and client address.
  std::function<void(const AuditRecord&)> audit;
};

/// A return as asked: of which lead, why, and (the operator's alone) for which buyer.
struct ReturnAsk {
  std::string lead_id;
  std::string reason;
  std::string note;
  std::string buyer_id;  // named by the operator; "" for the lead's only buyer
};

/// What a return came to: the return made, or why not. `ret` is the return made, or with
/// kAlreadyReturned the one made before; none with any other refusal.
struct ReturnDone {
  std::optional<ReturnRefusal> refused;
  std::optional<LeadReturn> ret;
  std::string seller_id;  // the lead's seller, whose payout the return reverses
};

/// Makes the return `ask` of `key` (a buyer's key, or the operator's): who returns the lead and
/// whether its buyer takes returns at all (leadflow/money/returns.hpp), then the store's
/// transaction, which checks the sale and its window. A buyer learns nothing of a lead it did
/// not buy: it is refused as kNoSuchLead before its own window is looked at. A return made is
/// counted (leadflow_returns_total), audited, and updates the buyer's return rate.
ReturnDone make_return(const ReturnPorts& ports, const ApiKey& key, const ReturnAsk& ask);

/// POST /v1/leads/{id}/return of the lead `lead_id` by `key`, whose reader is `viewer`: the body
/// checked ({"reason", "note"} and the operator's "buyer_id"), make_return, and the return as
/// `viewer` may see it (201), or the refusal of errors.hpp.
void answer_return(const ReturnPorts& ports, const ApiKey& key, const Viewer& viewer,
                   std::string_view lead_id, const http::Request& req, http::Response& res);

/// POST /v1/leads/{id}/return: by the buyer the lead was sold to (a buyer key with
/// returns:write) or the operator on its behalf.
void register_returns(Routes& routes, IngestContext& ctx);

/// POST /v1/leads/{id}/settle: the operator settles a lead whose post outcome stayed unknown.
void register_settlements(Routes& routes, IngestContext& ctx);

/// The buyer's returns over its return window, for its view: {"window_days", "sales",
/// "returned", "rate", "max_return_rate", "flagged"}; null when the store cannot say.
nlohmann::json buyer_return_summary(MoneyStore& store, const Clock& clock, const Buyer& b);

}  // namespace leadflow
