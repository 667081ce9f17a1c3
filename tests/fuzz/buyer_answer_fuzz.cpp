// The buyer protocol (workers/delivery buyer_protocol): a buyer's answer to a ping or a post read
// into a bid or an acceptance (read_ping_answer, read_post_answer) under the buyer's response
// mapping, and the requests built under its request mapping (make_ping_request,
// make_post_request). A buyer's answer is input from outside, its mapping is an operator's; the
// mapping reaches the protocol only through buyer_from_json, so the harness builds buyers that
// way. Properties: a bid is a price within the money bounds; no bid, and a refusal,
// always say why; what is kept of a buyer's text is bounded; the JSON requests are JSON and the
// form requests are form-encoded.
// Input, three parts: a first line with the HTTP status ("200"; not a number: 200), a second line
// with the buyer's "mapping" object (empty: the default protocol; a mapping buyer_from_json
// refuses also means the default protocol), and the rest: the answer's body.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_check.hpp"
#include "leadflow/base/money.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/delivery/buyer_protocol.hpp"
#include "leadflow/delivery/http_client.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"

namespace {

using leadflow::Buyer;
using nlohmann::json;

constexpr std::size_t kMaxKeptText = 200;  // buyer_lead_id and reason are cut there

std::string_view take_line(std::string_view& rest) {
  const std::size_t eol = rest.find('\n');
  const std::string_view line = rest.substr(0, eol);
  rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
  return line;
}

int status_of(std::string_view line) {
  line = leadflow::trim(line);
  if (line.empty() || line.size() > 3 || !leadflow::all_digits(line)) return 200;
  return std::stoi(std::string(line));
}

Buyer buyer_with_mapping(std::string_view mapping_text) {
  json body = {{"name", "Fuzz Buyer"},
               {"verticals", {"auto_insurance"}},
               {"delivery",
                {{"mode", "ping_post"},
                 {"ping_url", "https://buyer.example/ping"},
                 {"post_url", "https://buyer.example/post"},
                 {"headers", {{"X-Api-Key", "k-1234567890abcd"}}}}}};
  const json mapping = json::parse(mapping_text, nullptr, false);
  if (!mapping.is_discarded() && !mapping_text.empty()) body["delivery"]["mapping"] = mapping;
  leadflow::FieldErrors errors;
  Buyer buyer = leadflow::buyer_from_json(body, nullptr, /*allow_private_urls=*/true, errors);
  if (!errors.empty()) {
    body["delivery"].erase("mapping");
    errors.clear();
    buyer = leadflow::buyer_from_json(body, nullptr, true, errors);
    FUZZ_CHECK(errors.empty());
  }
  buyer.id = "by_fuzz";
  return buyer;
}

const leadflow::Lead& sample_lead() {
  static const leadflow::Lead lead = [] {
    leadflow::Lead l;
    l.id = "ld_01J0000000000000000000000";
    l.first_name = "Jane";
    l.last_name = "O'Hara & Sons";
    l.email = "jane@example.com";
    l.phone = "+12125550123";
    l.zip_code = "10001";
    l.zip4 = "1234";
    l.state = "NY";
    l.vertical = "auto_insurance";
    l.source = "fuzz=1&x=é";
    l.ip_address = "203.0.113.7";
    l.tcpa_consent = true;
    l.custom_fields = {{"age", 42.0}, {"credit", std::string("good")}};
    return l;
  }();
  return lead;
}

bool has_header(const leadflow::HttpRequest& r, std::string_view name) {
  for (const auto& [n, v] : r.headers)
    if (leadflow::iequals(n, name)) return true;
  return false;
}

void check_request(const leadflow::HttpRequest& r) {
  FUZZ_CHECK(r.method == "POST" && !r.url.empty());
  bool form = false;
  for (const auto& [n, v] : r.headers)
    if (leadflow::iequals(n, "Content-Type")) form = v == "application/x-www-form-urlencoded";
  if (form) {
    for (const char c : r.body)
      FUZZ_CHECK(leadflow::is_alnum(c) ||
                 std::string_view("-_.~+%=&").find(c) != std::string_view::npos);
  } else {
    FUZZ_CHECK(!json::parse(r.body, nullptr, false).is_discarded());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const int status = status_of(take_line(rest));
  const Buyer buyer = buyer_with_mapping(take_line(rest));

  leadflow::HttpResponse response;
  response.status = status;
  response.body = std::string(rest);
  const bool ok = status >= 200 && status <= 299;

  const leadflow::PingAnswer ping = leadflow::read_ping_answer(buyer, response);
  if (ping.bid) {
    FUZZ_CHECK(ok);
    // A bid under half a cent (0.004) reads as 0 cents; rank_bids drops bids of 0 or less, so
    // it is never posted.
    FUZZ_CHECK(*ping.bid >= 0 && *ping.bid <= leadflow::kMaxPriceCents);
    FUZZ_CHECK(ping.reason.empty());
  } else {
    FUZZ_CHECK(!ping.reason.empty());
  }

  const leadflow::PostAnswer post = leadflow::read_post_answer(buyer, response);
  if (!ok) FUZZ_CHECK(!post.accepted);
  if (!post.accepted) FUZZ_CHECK(!post.reason.empty());
  FUZZ_CHECK(post.buyer_lead_id.size() <= kMaxKeptText && post.reason.size() <= kMaxKeptText);

  // The same buyer's requests, under the same mapping.
  const leadflow::HttpRequest ping_request =
      leadflow::make_ping_request(buyer, sample_lead(), "pg_fuzz");
  check_request(ping_request);
  const leadflow::HttpRequest post_request =
      leadflow::make_post_request(buyer, sample_lead(), "pg_fuzz", ping.bid.value_or(1425));
  check_request(post_request);
  FUZZ_CHECK(has_header(post_request, "Idempotency-Key"));
  return 0;
}
