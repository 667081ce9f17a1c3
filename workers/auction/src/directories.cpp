// What the auctions read of the store's configuration, kept close: the buyers as a snapshot
// reloaded when their version moves, the campaigns' and sellers' payout rules in a short cache.
// Declared in distributor.hpp.
#include <chrono>

#include "leadflow/auction/distributor.hpp"

namespace leadflow {

std::shared_ptr<const std::vector<Buyer>> BuyerDirectory::snapshot() {
  std::lock_guard lock(mu_);
  const SteadyTime now = clock_.steady_now();
  if (buyers_ && now - checked_at_ < refresh_) return buyers_;
  checked_at_ = now;
  const std::int64_t version = store_.buyers_version();
  // The store cannot answer (-1): keep the buyers we know rather than an empty list.
  if (buyers_ && (version == version_ || version < 0)) return buyers_;
  auto fresh = std::make_shared<std::vector<Buyer>>();
  BuyerQuery q;
  q.limit = 1000;
  for (;;) {
    auto page = store_.list_buyers(q);
    // A page the store could not read: the buyers known stay (none if never read), and the
    // version is asked again at the next refresh. A short or empty list believed until the
    // version moves would leave buyers out of every auction meanwhile.
    if (!page) return buyers_;
    for (auto& b : *page) fresh->push_back(std::move(b));
    if (static_cast<int>(page->size()) < q.limit) break;
    q.after_id = fresh->back().id;
  }
  buyers_ = std::move(fresh);
  version_ = version;
  return buyers_;
}

template <class T, class Get>
Lookup<T> CampaignDirectory::cached(
    std::unordered_map<std::string, std::pair<T, SteadyTime>>& cache, const std::string& id,
    Get&& get) {
  const SteadyTime now = clock_.steady_now();
  {
    std::lock_guard lock(mu_);
    auto it = cache.find(id);
    if (it != cache.end() && now - it->second.second < std::chrono::seconds(5))
      return {StoreStatus::kOk, it->second.first};
  }
  Lookup<T> found = get(id);
  std::lock_guard lock(mu_);
  if (found.status == StoreStatus::kUnavailable) {
    // The store cannot say now: the rule last read, however old, rather than a guessed one.
    auto it = cache.find(id);
    if (it != cache.end()) return {StoreStatus::kOk, it->second.first};
    return found;
  }
  if (found.value) {
    if (cache.size() > 10'000) cache.clear();
    cache[id] = {*found.value, now};
  } else {
    cache.erase(id);
  }
  return found;
}

Lookup<Campaign> CampaignDirectory::find(const std::string& id) {
  return cached(cache_, id, [this](const std::string& i) { return store_.get_campaign(i); });
}

Lookup<Seller> CampaignDirectory::find_seller(const std::string& id) {
  return cached(sellers_, id, [this](const std::string& i) { return store_.get_seller(i); });
}

Lookup<ReofferPolicy> CampaignDirectory::vertical_reoffer(const std::string& vertical) {
  const SteadyTime now = clock_.steady_now();
  std::unique_lock lock(mu_);
  if (!vertical_reoffers_ || now - vertical_reoffers_at_ >= std::chrono::seconds(5)) {
    lock.unlock();
    auto read = store_.list_vertical_reoffers();
    lock.lock();
    // The store cannot say now: the policies last read, however old, rather than the configured
    // ones, which the operator may have replaced.
    if (read) {
      vertical_reoffers_ = std::move(read);
      vertical_reoffers_at_ = now;
    } else if (!vertical_reoffers_) {
      return {};
    }
  }
  if (const VerticalReoffer* set = operator_policy(*vertical_reoffers_, vertical))
    return {StoreStatus::kOk, set->policy};
  return {StoreStatus::kNotFound, std::nullopt};
}

}  // namespace leadflow
