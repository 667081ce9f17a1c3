// Attempts limited in a sliding window, reserved before the check they guard; see
// attempt_limiter.hpp. The rule (what a window holds, when it is full) is written once, here; the
// windows themselves live in this process's memory or in the store.
#include "leadflow/limits/attempt_limiter.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "leadflow/base/log.hpp"
#include "leadflow/store/limits.hpp"

namespace leadflow {

using Windows = std::vector<std::vector<std::int64_t>>;

/// Where the windows of an AttemptLimiter live: each key's attempt times (ms, oldest first).
class AttemptWindows {
 public:
  virtual ~AttemptWindows() = default;
  /// Runs `update` once on the windows of `keys`, atomically; false when they could not be read
  /// or written (then nothing changed).
  virtual bool update(const std::vector<std::string>& keys,
                      const std::function<void(Windows&)>& update) = 0;
  /// Housekeeping after an update: windows whose newest time is before `before_ms` may go.
  virtual void forget_before(std::int64_t before_ms) = 0;
};

namespace {

// This process's windows. Memory is bounded: a window holds at most its limit (the rule adds
// nothing to a full one), empty windows are dropped, and past kMaxLocalKeys keys those whose
// newest time left the window go, then, if still full (a flood from very many keys), the half
// that was used longest ago.
class LocalWindows final : public AttemptWindows {
 public:
  bool update(const std::vector<std::string>& keys,
              const std::function<void(Windows&)>& update) override {
    std::lock_guard lock(mu_);
    Windows windows(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (auto it = map_.find(keys[i]); it != map_.end()) windows[i] = it->second;
    update(windows);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (windows[i].empty())
        map_.erase(keys[i]);
      else
        map_[keys[i]] = std::move(windows[i]);
    }
    return true;
  }

  void forget_before(std::int64_t before_ms) override {
    std::lock_guard lock(mu_);
    if (map_.size() < AttemptLimiter::kMaxLocalKeys) return;
    std::erase_if(map_, [&](const auto& kv) { return kv.second.back() < before_ms; });
    if (map_.size() < AttemptLimiter::kMaxLocalKeys) return;
    std::vector<std::int64_t> newest;
    newest.reserve(map_.size());
    for (const auto& kv : map_) newest.push_back(kv.second.back());
    auto mid = newest.begin() + static_cast<std::ptrdiff_t>(newest.size() / 2);
    std::nth_element(newest.begin(), mid, newest.end());
    const std::int64_t cut = *mid;
    std::erase_if(map_, [&](const auto& kv) { return kv.second.back() <= cut; });
  }

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::vector<std::int64_t>> map_;
};

// Windows shared through the store. Quiet windows are removed once a minute by whichever
// replica gets there (one indexed DELETE).
class StoreWindows final : public AttemptWindows {
 public:
  explicit StoreWindows(LimitsStore& store) : store_(store) {}

  bool update(const std::vector<std::string>& keys,
              const std::function<void(Windows&)>& update) override {
    return store_.update_attempt_windows(keys, update) == StoreStatus::kOk;
  }

  void forget_before(std::int64_t before_ms) override {
    std::int64_t last = last_forget_ms_.load();
    if (before_ms - last < 60'000 || !last_forget_ms_.compare_exchange_strong(last, before_ms))
      return;
    store_.forget_attempt_windows(before_ms);
  }

 private:
  LimitsStore& store_;
  std::atomic<std::int64_t> last_forget_ms_{0};
};

void drop_expired(std::vector<std::int64_t>& times, std::int64_t now_ms, std::int64_t window_ms) {
  std::erase_if(times, [&](std::int64_t t) { return now_ms - t >= window_ms; });
}

}  // namespace

AttemptLimiter::AttemptLimiter(const Clock& clock, std::chrono::milliseconds window)
    : clock_(clock), window_(window), windows_(std::make_unique<LocalWindows>()) {}

AttemptLimiter::AttemptLimiter(const Clock& clock, std::chrono::milliseconds window,
                               LimitsStore& store)
    : clock_(clock), window_(window), windows_(std::make_unique<StoreWindows>(store)) {}

AttemptLimiter::~AttemptLimiter() = default;

AttemptDecision AttemptLimiter::reserve(const std::vector<AttemptKey>& keys) {
  const std::int64_t now = clock_.now_ms();
  const std::int64_t window_ms = window_.count();
  std::vector<std::string> names;
  names.reserve(keys.size());
  for (const auto& k : keys) names.push_back(k.key);

  AttemptDecision d;
  const bool done = windows_->update(names, [&](Windows& windows) {
    d = AttemptDecision{};
    bool full = false;
    std::int64_t wait_ms = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      auto& times = windows[i];
      drop_expired(times, now, window_ms);
      const auto max = static_cast<std::size_t>(std::max(1, keys[i].max_attempts));
      if (times.size() < max) continue;
      if (!full) d.refused_by = i;
      full = true;
      // Room again when all but max - 1 of the times have left: the (size - max)th, oldest
      // first. With a limit of 5 and times at minutes 0..4 of a 15-minute window, at minute 15.
      wait_ms = std::max(wait_ms, times[times.size() - max] + window_ms - now);
    }
    if (full) {
      d.status = AttemptStatus::kRefused;
      // A replica whose clock runs ahead may have written a time past ours: never beyond a window.
      wait_ms = std::clamp<std::int64_t>(wait_ms, 1, window_ms);
      d.retry_after_s = static_cast<int>((wait_ms + 999) / 1000);
      return;
    }
    for (auto& times : windows)
      times.insert(std::upper_bound(times.begin(), times.end(), now), now);
    d.status = AttemptStatus::kReserved;
    d.reservation = {names, now};
  });
  if (!done) return AttemptDecision{};  // kUnavailable
  windows_->forget_before(now - window_ms);
  return d;
}

void AttemptLimiter::release(AttemptReservation& reservation) {
  if (!reservation.held()) return;
  const std::int64_t now = clock_.now_ms();
  const std::int64_t window_ms = window_.count();
  const std::int64_t at = reservation.at_ms;
  const bool done = windows_->update(reservation.keys, [&](Windows& windows) {
    for (auto& times : windows) {
      if (auto it = std::find(times.begin(), times.end(), at); it != times.end()) times.erase(it);
      drop_expired(times, now, window_ms);
    }
  });
  if (!done) {
    static std::atomic<std::int64_t> last_warned{0};
    if (now - last_warned.exchange(now) > 10'000)
      log(LogLevel::kWarn, "attempt_release_failed", {{"kept", "as a failure"}});
  }
  reservation = {};
}

}  // namespace leadflow
