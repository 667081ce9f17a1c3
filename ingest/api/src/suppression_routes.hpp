#pragma once
// Private: the suppression list routes (docs/suppression.md): GET and POST /v1/suppression-lists,
// GET and DELETE /v1/suppression-lists/{id}, PUT /v1/suppression-lists/{id}/entries (an upload
// that replaces the list's entries). The operator manages its own lists and any buyer's; a buyer
// its own only (leadflow/visibility/suppression.hpp); a seller is refused by the routes' scopes.
#include <cstddef>
#include <string_view>

#include "leadflow/api/api.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/domain/change_log.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/management/suppression_lists.hpp"  // kMaxSuppressionUploadBytes
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/audit.hpp"
#include "leadflow/store/suppression.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

/// What the routes use besides the reader. The routes bind them to IngestContext; tests hand in
/// fakes.
struct SuppressionPorts {
  SuppressionStore& lists;
  AccountsStore& accounts;  // a buyer named by a new list must exist
  AuditStore& changes;      // the change log: each list made, replaced or deleted
  const Clock& clock;
};

/// GET /v1/suppression-lists: the lists the reader may see, by id: the operator's all (or one
/// owner's: `buyer_id`, "operator" for its own), a buyer's its own. 503 when the store cannot say.
void answer_suppression_lists(const SuppressionPorts& ports, const Viewer& viewer,
                              const http::Request& req, http::Response& res);
/// POST /v1/suppression-lists {name, buyer_id}: a new empty list (201 with Location). A buyer's
/// list is its own whatever it names (another buyer: 403). 400 naming each field refused. Written
/// to the change log as `by`'s, as are a replacement and a deletion below.
void answer_suppression_list_create(const SuppressionPorts& ports, const Viewer& viewer,
                                    const ChangeActor& by, const http::Request& req,
                                    http::Response& res);
/// GET /v1/suppression-lists/{id}: the list; 404 when there is none the reader may see.
void answer_suppression_list(const SuppressionPorts& ports, const Viewer& viewer,
                             std::string_view id, http::Response& res);
/// PUT /v1/suppression-lists/{id}/entries: the body (text/csv or text/plain, one e-mail, phone or
/// SHA-256 a line, or the first cell of a CSV line; a first line that is none is a header)
/// replaces the list's entries in one transaction; only their fingerprints are kept. 422 naming
/// the first ten lines that are none of them (nothing replaced), 422 past 10 million entries.
/// A body sent gzip (Content-Encoding) is inflated as it arrives, held to the same limit: 413
/// past it, 400 for a damaged or cut gzip, 415 for any other coding; nothing replaced.
void answer_suppression_upload(const SuppressionPorts& ports, const Viewer& viewer,
                               const ChangeActor& by, std::string_view id, const http::Request& req,
                               http::Response& res);
/// DELETE /v1/suppression-lists/{id}: the list and its entries are gone (204).
void answer_suppression_list_delete(const SuppressionPorts& ports, const Viewer& viewer,
                                    const ChangeActor& by, std::string_view id,
                                    http::Response& res);

/// Registers the routes above, with the upload's own body limit (kMaxSuppressionUploadBytes).
void register_suppression_lists(Routes& routes, IngestContext& ctx);

}  // namespace leadflow
