#pragma once
// Leads and buyers for the distribution core's unit tests.
#include <string>

#include "leadflow/base/ids.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"

namespace leadflow::testing {

/// A valid auto_insurance lead received at `received_at_ms`; `n` makes its person unique, so
/// intake dedupe leaves it be.
inline Lead sample_core_lead(int n, std::int64_t received_at_ms = 1'700'000'000'000) {
  Lead l;
  l.id = new_id(kLeadPrefix);
  l.seller_id = "sl_test";
  l.api_key_id = "key_test";
  l.surface = Surface::kApi;
  l.first_name = "Ada";
  l.last_name = "Lovelace";
  l.email = "ada" + std::to_string(n) + "@example.com";
  l.phone = "+1415555" + std::to_string(1000 + n);
  l.zip_code = "94107";
  l.state = "CA";
  l.vertical = "auto_insurance";
  l.source = "google";
  l.received_at_ms = received_at_ms;
  return l;
}

/// An active ping/post auto_insurance buyer whose endpoints are https://<name>.example/ping and
/// /post, with a 1 s timeout.
inline Buyer sample_core_buyer(const std::string& name) {
  Buyer b;
  b.id = new_id(kBuyerPrefix);
  b.name = name;
  b.verticals = {"auto_insurance"};
  b.ping_url = "https://" + name + ".example/ping";
  b.post_url = "https://" + name + ".example/post";
  b.timeout_ms = 1000;
  return b;
}

}  // namespace leadflow::testing
