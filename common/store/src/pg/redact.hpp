#pragma once
// Keeping the PostgreSQL password out of logs and error messages: libpq repeats the conninfo it
// was given in some of its messages, and a URL carries the password percent-encoded.
#include <string>
#include <vector>

namespace leadflow::pg {

/// The spellings of the password in `conninfo`: as written in a URL (percent-encoded) and as
/// libpq decodes it. Messages are scrubbed of both before they are logged or returned.
std::vector<std::string> password_forms(const std::string& conninfo);

/// `message` with every one of `secrets` replaced by "***", on one line (libpq ends messages
/// with a newline and indents continuation lines; a log field is one line).
std::string redact(std::string message, const std::vector<std::string>& secrets);

}  // namespace leadflow::pg
