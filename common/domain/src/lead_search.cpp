#include "leadflow/domain/lead_search.hpp"

#include "leadflow/base/crypto.hpp"

namespace leadflow {
namespace {

// 128 bits: two leads of different people collide once in 2^64 pairs, far beyond any store.
constexpr std::size_t kKeyBytes = 16;

}  // namespace

std::string new_installation_secret() { return hex_of(random_bytes(32)); }

std::string search_key(std::string_view secret, SearchField field, std::string_view normalised) {
  if (normalised.empty()) return {};
  std::string data(field == SearchField::kEmail ? "email" : "phone");
  data.push_back('\0');
  data.append(normalised);
  return hex_of(std::string_view(hmac_sha256(secret, data)).substr(0, kKeyBytes));
}

SearchKeys search_keys_of(const Lead& lead, std::string_view secret) {
  if (secret.empty()) return {};
  return {search_key(secret, SearchField::kEmail, lead.email),
          search_key(secret, SearchField::kPhone, lead.phone)};
}

}  // namespace leadflow
