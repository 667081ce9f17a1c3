#pragma once
// Form data: application/x-www-form-urlencoded (query strings and form bodies) and
// multipart/form-data. Both read the way cpp-httplib read them before leadflow served its own
// HTTP, so sellers' form posts and query strings mean what they always meant.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leadflow/http/message.hpp"

namespace leadflow::http {

/// Decodes "a=1&b=x+y" into name/value pairs ("+" is a space, %XX and %uXXXX escapes decoded),
/// ordered by name (a name's repeats in the order sent). Pieces are trimmed of spaces and tabs;
/// empty pieces, pieces without a name and exact repeats of a "name=value" piece are dropped.
/// Appends to `out`, which it then orders.
void parse_urlencoded(std::string_view text, std::vector<std::pair<std::string, std::string>>& out);

/// Parses a multipart/form-data body into its parts, ordered by name. false when the body does
/// not follow the boundary of `content_type`.
bool parse_multipart(std::string_view content_type, std::string_view body,
                     std::vector<http::FormPart>& out);

}  // namespace leadflow::http
