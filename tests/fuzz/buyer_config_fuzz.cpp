// The buyer configuration parser (common/domain buyer_from_json) and its API view
// (buyer_to_json), on bodies of POST /v1/buyers and PUT /v1/buyers/{id} read as the API reads
// them (nlohmann::json without exceptions). A configuration the parser accepts must be storable:
// the store keeps buyer_to_json's document and reads it back through buyer_from_json, so that
// document must parse without errors into the same buyer; otherwise an accepted buyer would
// vanish from the auction as "unreadable".
// Input: the body. URLs are not resolved (LEADFLOW_ALLOW_PRIVATE_BUYERS=1's path): a fuzzer must
// not wait for DNS.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/field_error.hpp"

namespace {

using leadflow::Buyer;
using leadflow::FieldErrors;
using nlohmann::json;

std::string stored_document(const Buyer& b) {
  // As the stores write it (common/store rows.hpp).
  return leadflow::buyer_to_json(b, /*mask_secrets=*/false)
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

void check_storable(const Buyer& b) {
  const std::string doc = stored_document(b);
  const json read = json::parse(doc, nullptr, false);
  FUZZ_CHECK(!read.is_discarded());
  FieldErrors errors;
  Buyer back = leadflow::buyer_from_json(read, nullptr, /*allow_private_urls=*/true, errors);
  if (!errors.empty()) {
    std::fprintf(stderr, "stored buyer unreadable: %s %s: %s\n%s\n", errors[0].field.c_str(),
                 errors[0].code.c_str(), errors[0].message.c_str(), doc.c_str());
  }
  FUZZ_CHECK(errors.empty());
  // The row's own columns, as read_buyer sets them.
  back.id = b.id;
  back.active = b.active;
  back.created_at_ms = b.created_at_ms;
  back.updated_at_ms = b.updated_at_ms;
  const std::string again = stored_document(back);
  if (again != doc) std::fprintf(stderr, "stored:  %s\nread as: %s\n", doc.c_str(), again.c_str());
  FUZZ_CHECK(again == doc);
  // The masked view of GET /v1/buyers serialises too.
  (void)leadflow::buyer_to_json(b, /*mask_secrets=*/true)
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

// A stored buyer for PUT to merge over: every optional part set.
const Buyer& base_buyer() {
  static const Buyer base = [] {
    const json body = json::parse(R"({
      "name": "Base Buyer", "verticals": ["auto_insurance", "solar"],
      "delivery": {"mode": "ping_post", "ping_url": "https://buyer.example/ping",
                   "post_url": "https://buyer.example/post", "timeout_ms": 1500,
                   "headers": {"X-Api-Key": "k-1234567890abcd"},
                   "mapping": {"request": {"format": "form", "rename": {"zip_code": "zip"}},
                               "response": {"bid": "/price"}}},
      "pricing": {"model": "bid", "min_bid": 2.5},
      "filters": {"states": ["CA"], "custom": [{"field": "age", "op": "gte", "value": 18}]},
      "schedule": {"timezone": "America/New_York", "hours": {"mon": [["09:00", "17:00"]]}},
      "caps": {"daily": 100, "daily_budget": 500.5}, "tier": 2, "max_concurrency": 10})");
    FieldErrors errors;
    Buyer b = leadflow::buyer_from_json(body, nullptr, true, errors);
    FUZZ_CHECK(errors.empty());
    b.id = "by_base";
    return b;
  }();
  return base;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const json body =
      json::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (body.is_discarded()) return 0;

  FieldErrors created_errors;
  const Buyer created = leadflow::buyer_from_json(body, nullptr, true, created_errors);
  // A field is named in every error; the name is "" only for a body's key "" ({"": 1}).
  for (const auto& e : created_errors)
    FUZZ_CHECK((!e.field.empty() || e.code == "unknown_field") && !e.code.empty());
  if (created_errors.empty()) check_storable(created);

  FieldErrors updated_errors;
  Buyer updated = leadflow::buyer_from_json(body, &base_buyer(), true, updated_errors);
  if (updated_errors.empty()) {
    updated.id = base_buyer().id;  // as update_buyer does
    check_storable(updated);
  }
  return 0;
}
