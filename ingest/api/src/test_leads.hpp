#pragma once
// Private: what the front tells a seller about its test lead (leadflow/domain/test_mode.hpp).
#include <optional>
#include <string_view>

#include "leadflow/store/accounts.hpp"

namespace leadflow {

/// Whether some active buyer takes leads of `vertical` now: one indexed read of at most one
/// buyer, made for test posts only. nullopt when the store could not say.
std::optional<bool> vertical_has_active_buyers(AccountsStore& accounts, std::string_view vertical);

}  // namespace leadflow
