// Configuration from a map instead of the process environment, for the unit tests of the settings.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "leadflow/base/config.hpp"

namespace leadflow::testing {

using ConfigVars = std::map<std::string, std::string>;

// Reads `vars` as getenv would; the map must outlive the answer.
inline Getenv env_of(const ConfigVars& vars) {
  return [&vars](const char* n) -> const char* {
    auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// The names set, as the environment's listing gives them (unknown LEADFLOW_* names are refused).
inline std::vector<std::string> names_of(const ConfigVars& vars) {
  std::vector<std::string> out;
  for (const auto& [k, v] : vars) out.push_back(k);
  return out;
}

inline std::optional<Config> load_from(const ConfigVars& vars, std::string& error) {
  return load_config(env_of(vars), names_of(vars), error);
}

}  // namespace leadflow::testing
