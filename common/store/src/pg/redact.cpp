#include "pg/redact.hpp"

#include <algorithm>
#include <string_view>

#include <libpq-fe.h>

namespace leadflow::pg {

std::vector<std::string> password_forms(const std::string& conninfo) {
  std::vector<std::string> forms;
  const auto scheme_end = conninfo.find("://");
  if (scheme_end != std::string::npos) {
    const std::string_view rest = std::string_view(conninfo).substr(scheme_end + 3);
    const std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
    const auto at = authority.rfind('@');
    if (at != std::string_view::npos) {
      const std::string_view userinfo = authority.substr(0, at);
      const auto colon = userinfo.find(':');
      if (colon != std::string_view::npos && colon + 1 < userinfo.size())
        forms.emplace_back(userinfo.substr(colon + 1));
    }
  }
  char* parse_error = nullptr;
  if (PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &parse_error)) {
    for (PQconninfoOption* o = options; o->keyword != nullptr; ++o)
      if (std::string_view(o->keyword) == "password" && o->val != nullptr && *o->val != '\0')
        forms.emplace_back(o->val);
    PQconninfoFree(options);
  }
  if (parse_error != nullptr) PQfreemem(parse_error);
  return forms;
}

std::string redact(std::string message, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (auto pos = message.find(secret); pos != std::string::npos;
         pos = message.find(secret, pos + 3))
      message.replace(pos, secret.size(), "***");
  }
  // libpq ends its messages with a newline and indents continuation lines; a log field is one line.
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::replace(message.begin(), message.end(), '\t', ' ');
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

}  // namespace leadflow::pg
