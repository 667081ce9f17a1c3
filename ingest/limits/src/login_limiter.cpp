#include "leadflow/limits/login_limiter.hpp"

#include <algorithm>
#include <vector>

namespace leadflow {

LoginLimiter::Decision LoginLimiter::check(std::string_view key) {
  const SteadyTime now = clock_.steady_now();
  std::lock_guard lock(mu_);
  auto it = failures_.find(std::string(key));
  if (it == failures_.end()) return {};
  auto& times = it->second;
  while (!times.empty() && now - times.front() >= window_) times.pop_front();
  if (times.empty()) {
    failures_.erase(it);
    return {};
  }
  if (static_cast<int>(times.size()) < max_failures_) return {};
  const auto wait =
      std::chrono::duration_cast<std::chrono::milliseconds>(times.front() + window_ - now);
  return {false, static_cast<int>(std::max<std::int64_t>(1, (wait.count() + 999) / 1000))};
}

void LoginLimiter::record_failure(std::string_view key) {
  const SteadyTime now = clock_.steady_now();
  std::lock_guard lock(mu_);
  if (failures_.size() >= kMaxKeys) forget_old(now);
  auto& times = failures_[std::string(key)];
  while (!times.empty() && now - times.front() >= window_) times.pop_front();
  times.push_back(now);
  while (static_cast<int>(times.size()) > max_failures_) times.pop_front();
}

void LoginLimiter::forget_old(SteadyTime now) {
  std::erase_if(failures_, [&](const auto& kv) {
    return kv.second.empty() || now - kv.second.back() >= window_;
  });
  // Still full (a flood from very many keys): forget the half that failed longest ago.
  if (failures_.size() < kMaxKeys) return;
  std::vector<SteadyTime> last;
  last.reserve(failures_.size());
  for (const auto& kv : failures_) last.push_back(kv.second.back());
  auto mid = last.begin() + static_cast<std::ptrdiff_t>(last.size() / 2);
  std::nth_element(last.begin(), mid, last.end());
  const SteadyTime cut = *mid;
  std::erase_if(failures_, [&](const auto& kv) { return kv.second.back() <= cut; });
}

}  // namespace leadflow
