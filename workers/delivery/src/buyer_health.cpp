#include "leadflow/delivery/buyer_health.hpp"

#include <algorithm>

namespace leadflow {

bool BuyerHealth::record(const std::string& buyer_id, bool failed) {
  std::lock_guard lock(mu_);
  State& s = states_[buyer_id];
  const SteadyTime now = clock_.steady_now();
  if (now < s.paused_until) return false;  // answers still arriving from before the pause
  s.recent.push_back(failed);
  while (static_cast<int>(s.recent.size()) > options_.window) s.recent.pop_front();
  const int known = static_cast<int>(s.recent.size());
  if (known < options_.min_requests) return false;
  const int failures = static_cast<int>(std::count(s.recent.begin(), s.recent.end(), true));
  if (failures < options_.failure_ratio * known) return false;
  s.paused_until = now + options_.cool_down;
  s.recent.clear();  // back after the cool-down with a clean record
  return true;
}

bool BuyerHealth::paused(const std::string& buyer_id) {
  std::lock_guard lock(mu_);
  auto it = states_.find(buyer_id);
  return it != states_.end() && clock_.steady_now() < it->second.paused_until;
}

}  // namespace leadflow
