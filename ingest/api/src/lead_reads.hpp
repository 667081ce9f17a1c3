#pragma once
// Private: Surface A's lead reads (GET /v1/leads/{id} and GET /v1/leads); their routes are
// registered by register_surface_a.
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/base/clock.hpp"
#include "leadflow/store/accounts.hpp"

#include "leadflow/http/message.hpp"
#include "leadflow/store/intake.hpp"
#include "leadflow/store/money.hpp"
#include "leadflow/visibility/projections.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// What the lead reads use besides the reader. The route binds them to IngestContext for one
/// request (the labels are seller_labels of that request's reader); tests hand in fakes.
struct LeadReadPorts {
  IntakeStore& intake;          // the lead, and a page of leads
  MoneyStore& money;            // a lead's returns, settlements and ledger entries
  const SellerLabels& labels;   // how the reader is shown sellers
  std::string_view search_key;  // the key of the leads' search keys (visibility_secret)
  /// The zone of bare dates without `tz`: a session's user's (ApiKey::time_zone), else "UTC".
  std::string_view default_zone = "UTC";
  /// A buyer's lead view adds its `return_window` with these (none without them): its return
  /// window, the clock, and the reason codes a return may give (LEADFLOW_RETURN_REASONS). The
  /// clock also names an empty export after today.
  AccountsStore* accounts = nullptr;
  const Clock* clock = nullptr;
  const std::vector<std::string>* return_reasons = nullptr;
};

/// GET /v1/leads/{id} by `viewer`: the lead as it may see it, with its returns, settlements and
/// ledger entries each projected (200), in two store reads (the lead, then its money unless it
/// was never sold). A lead it may not see is a 404, the same answer as an unknown id.
void answer_lead(const LeadReadPorts& ports, const Viewer& viewer, std::string_view lead_id,
                 http::Response& res);

/// GET /v1/leads by `viewer`: its own leads (a seller's) or purchases (a buyer's), one page, as
/// the query filters them, `q=` finding a lead by its id, e-mail or phone. 400 naming each
/// parameter that is unknown, malformed or names a party the reader may not see.
void answer_lead_list(const LeadReadPorts& ports, const Viewer& viewer, const http::Request& req,
                      http::Response& res);

}  // namespace leadflow
