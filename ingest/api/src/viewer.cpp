#include "viewer.hpp"

namespace leadflow {

bool BuyerVisibilityCache::shows_seller_names(const std::string& buyer_id) {
  const SteadyTime now = clock_.steady_now();
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(buyer_id);
    if (it != cache_.end() && now - it->second.second < std::chrono::seconds(1))
      return it->second.first;
  }
  // Reading the buyer parses its whole configuration: once a second, not once a request.
  const auto buyer = store_.get_buyer(buyer_id);
  if (!buyer) return false;
  std::lock_guard lock(mu_);
  if (cache_.size() > 100'000) cache_.clear();
  cache_[buyer_id] = {buyer->show_seller_names, now};
  return buyer->show_seller_names;
}

void BuyerVisibilityCache::forget(const std::string& buyer_id) {
  std::lock_guard lock(mu_);
  cache_.erase(buyer_id);
}

Viewer viewer_of(IngestContext& ctx, const ApiKey& key) {
  Viewer v = Viewer::of(key);
  if (v.is_buyer()) v.seller_names = ctx.buyer_visibility.shows_seller_names(v.buyer_id);
  return v;
}

SellerLabels seller_labels(IngestContext& ctx, const Viewer& viewer) {
  SellerLabels labels;
  labels.secret = ctx.visibility_secret;
  if (viewer.is_buyer() && viewer.seller_names)
    labels.name_of = [&ctx](const std::string& seller_id) {
      const auto seller = ctx.accounts.get_seller(seller_id);
      return seller ? seller->name : std::string();
    };
  return labels;
}

}  // namespace leadflow
