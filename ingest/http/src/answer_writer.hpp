#pragma once
// Private: an answer as the bytes a connection writes.
#include <string>

#include "leadflow/http/message.hpp"

namespace leadflow::http {

/// Appends the status line, `res`'s header fields, the framing fields (Content-Length,
/// Connection when it must be said, Date), Strict-Transport-Security when the answer goes over
/// `tls`, and the body unless `head_only` or bodiless.
void serialize(std::string& out, const Response& res, bool head_only, bool close, bool http10,
               bool tls);

}  // namespace leadflow::http
