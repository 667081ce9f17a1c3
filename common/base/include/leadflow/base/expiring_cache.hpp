#pragma once
// A map whose entries are believed for a fixed time after they were put, on an injectable clock:
// what the front keeps of a record it reads on every request (an API key, a campaign, a buyer's
// visibility option) so that the store is asked once a second rather than once a request, and a
// change made elsewhere shows within that second. Thread-safe (one mutex; what it guards is a
// hash lookup and a copy).
#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "leadflow/base/clock.hpp"

namespace leadflow {

template <typename Value>
class ExpiringCache {
 public:
  /// Entries live `ttl` of `clock`'s steady time. Past `capacity` entries, a put drops them all
  /// first: a flood of distinct keys costs lookups, never unbounded memory.
  ExpiringCache(const Clock& clock, std::chrono::milliseconds ttl, std::size_t capacity = 100'000)
      : clock_(clock), ttl_(ttl), capacity_(capacity) {}

  /// The value put under `key` less than `ttl` ago, or nullopt.
  std::optional<Value> get(const std::string& key) const {
    const SteadyTime now = clock_.steady_now();
    std::lock_guard lock(mu_);
    const auto it = entries_.find(key);
    if (it == entries_.end() || now - it->second.second >= ttl_) return std::nullopt;
    return it->second.first;
  }

  /// Believes `value` for `key` from now on, for `ttl`.
  void put(const std::string& key, Value value) {
    const SteadyTime now = clock_.steady_now();
    std::lock_guard lock(mu_);
    if (entries_.size() >= capacity_ && entries_.find(key) == entries_.end()) entries_.clear();
    entries_.insert_or_assign(key, std::make_pair(std::move(value), now));
  }

  /// Applies `change` to a live entry's value without making it live longer: what this process
  /// itself wrote of the record (a key's last use) and nothing the store has to confirm.
  template <typename Change>
  void amend(const std::string& key, Change&& change) {
    const SteadyTime now = clock_.steady_now();
    std::lock_guard lock(mu_);
    const auto it = entries_.find(key);
    if (it != entries_.end() && now - it->second.second < ttl_) change(it->second.first);
  }

  void erase(const std::string& key) {
    std::lock_guard lock(mu_);
    entries_.erase(key);
  }

  void clear() {
    std::lock_guard lock(mu_);
    entries_.clear();
  }

 private:
  const Clock& clock_;
  const std::chrono::milliseconds ttl_;
  const std::size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::pair<Value, SteadyTime>> entries_;
};

}  // namespace leadflow
