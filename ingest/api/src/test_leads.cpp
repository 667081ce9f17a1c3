// What the front tells a seller about its test lead: whether its vertical has buyers buying.
#include "test_leads.hpp"

#include <string>

namespace leadflow {

std::optional<bool> vertical_has_active_buyers(AccountsStore& accounts, std::string_view vertical) {
  BuyerQuery q;
  q.active = true;
  q.vertical = std::string(vertical);
  q.limit = 1;
  const auto buyers = accounts.list_buyers(q);
  if (!buyers) return std::nullopt;
  return !buyers->empty();
}

}  // namespace leadflow
