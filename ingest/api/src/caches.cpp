// What the front keeps of the records it reads on every request: campaigns and API keys by the
// hash of their secret, and each buyer's visibility option (leadflow/api/api.hpp).
#include "leadflow/api/api.hpp"
#include "leadflow/base/crypto.hpp"

namespace leadflow {

std::optional<Campaign> CampaignCache::find_by_key(const std::string& key, bool& unavailable) {
  unavailable = false;
  const std::string hash = sha256_hex(key);
  if (auto kept = cache_.get(hash)) return std::move(*kept);
  Lookup<Campaign> found = store_.find_campaign_by_key_hash(hash);
  // A store that cannot answer has said nothing: neither believed nor cached.
  if (found.status == StoreStatus::kUnavailable) {
    unavailable = true;
    return std::nullopt;
  }
  cache_.put(hash, found.value);
  return std::move(found.value);
}

bool CampaignCache::find_cached(const std::string& key, std::optional<Campaign>& out) {
  auto kept = cache_.get(sha256_hex(key));
  if (!kept) return false;
  out = std::move(*kept);
  return true;
}

Lookup<ApiKey> ApiKeyCache::find_by_hash(const std::string& key_hash) {
  if (auto kept = cache_.get(key_hash)) return {StoreStatus::kOk, std::move(*kept)};
  Lookup<ApiKey> found = store_.find_api_key_by_hash(key_hash);
  if (found.value) cache_.put(key_hash, *found.value);
  return found;
}

void ApiKeyCache::used(const std::string& key_hash, std::int64_t at_ms) {
  cache_.amend(key_hash, [at_ms](ApiKey& k) {
    if (k.last_used_at_ms < at_ms) k.last_used_at_ms = at_ms;
  });
}

bool BuyerVisibilityCache::shows_seller_names(const std::string& buyer_id) {
  if (const auto kept = cache_.get(buyer_id)) return *kept;
  // Reading the buyer parses its whole configuration: once a second, not once a request.
  const auto buyer = store_.get_buyer(buyer_id).value;
  if (!buyer) return false;
  cache_.put(buyer_id, buyer->show_seller_names);
  return buyer->show_seller_names;
}

}  // namespace leadflow
