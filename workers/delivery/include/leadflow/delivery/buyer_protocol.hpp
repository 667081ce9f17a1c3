#pragma once
#include <optional>
#include <string>

#include "leadflow/delivery/http_client.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/lead.hpp"

namespace leadflow {

/// The ping a buyer gets: no name, e-mail, phone, street or IP (SPEC §5), shaped by its mapping.
/// `aged`: the lead is offered again after nobody bought it live ("aged": true in the body), and
/// the buyer answers its price for it as "aged_bid" (docs/reoffers.md).
HttpRequest make_ping_request(const Buyer& buyer, const Lead& lead, const std::string& ping_id,
                              bool aged = false);
/// The post with the full lead, the ping id and the price. It carries Idempotency-Key:
/// <lead_id> for an exclusive sale, and <lead_id>:<buyer_id> for a share of a shared sale, so
/// the key is unique per lead and buyer and a share never answers for an exclusive post.
HttpRequest make_post_request(const Buyer& buyer, const Lead& lead, const std::string& ping_id,
                              Cents price, bool shared = false);

/// A parsed ping answer. No bid for non-2xx, bad JSON, a missing/invalid bid or a timeout.
/// A buyer may bid for the lead exclusively ("bid"), shared ("shared_bid", where the vertical
/// allows shared sales), or both; an answer with either is a bid.
struct PingAnswer {
  std::optional<Cents> bid;
  std::string reason;  // why there is no bid
  std::optional<Cents> shared_bid;
  std::optional<Cents> aged_bid;  // the answer to an aged ping
};
PingAnswer read_ping_answer(const Buyer& buyer, const HttpResponse& response);

struct PostAnswer {
  bool accepted = false;
  std::string buyer_lead_id;
  std::string reason;
};
PostAnswer read_post_answer(const Buyer& buyer, const HttpResponse& response);

}  // namespace leadflow
