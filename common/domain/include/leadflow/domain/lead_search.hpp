#pragma once
// Finding a lead by its person without a second plain copy of the person: the keyed hashes
// ("search keys") of a lead's normalised e-mail and phone, stored beside the lead and indexed.
// The rule is written here once; the store only keeps and compares what it is given.
#include <string>
#include <string_view>

#include "leadflow/domain/lead.hpp"

namespace leadflow {

/// The shared secret (Store::shared_secret) that keys search keys: the installation's one
/// secret, which also keys buyers' source codes (visibility's kVisibilitySecretName names it).
inline constexpr std::string_view kInstallationSecretName = "visibility";
/// A new random installation secret (64 hex digits), for the first process that asks to offer.
std::string new_installation_secret();

enum class SearchField { kEmail, kPhone };

/// The search key of a normalised e-mail (trimmed and lower-cased, as validation keeps it) or
/// phone (E.164, "+15551234567"): the first 128 bits of HMAC-SHA256(secret, label ‖ NUL ‖ value)
/// as 32 hex digits. The label ("email", "phone") keeps the two fields apart, and apart from the
/// secret's other use (a source code hashes a buyer id, which never reads "email" or "phone").
/// "" for an empty value only.
std::string search_key(std::string_view secret, SearchField field, std::string_view normalised);

/// The search keys of one lead, which its writer hands the store beside the lead (the lead
/// itself stays the person as posted). "" = that lead is found by its id only.
struct SearchKeys {
  std::string email;
  std::string phone;
};

/// The search keys of a lead's e-mail and phone, which a validated lead holds normalised.
/// Without a secret (a writer that has none) there are none.
SearchKeys search_keys_of(const Lead& lead, std::string_view secret);

}  // namespace leadflow
