#pragma once
// Private helpers of the HTTP front: problem bodies, headers every response carries, content
// types, Prefer.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include "leadflow/http/message.hpp"

#include "leadflow/domain/field_error.hpp"
#include "leadflow/limits/rate_limiter.hpp"

namespace leadflow::http {

/// Sends a JSON body with the given status.
void send_json(http::Response& res, int status, const nlohmann::json& body,
               const char* content_type = "application/json");
/// RFC 9457 problem+json with success:false, and `errors` when there are field errors.
void send_problem(http::Response& res, int status, std::string_view detail,
                  const FieldErrors& errors = {});

/// send_problem with more members in the body (a conflict naming the record it conflicts with).
void send_problem_with(http::Response& res, int status, std::string_view detail,
                       const nlohmann::json& members);

/// Whether the request's body is JSON; otherwise answers 415.
bool require_json(const http::Request& req, http::Response& res);
/// The body as a JSON object; otherwise answers 400 and returns nothing.
std::optional<nlohmann::json> parse_body(const http::Request& req, http::Response& res);

/// Adds X-RateLimit-* (and Retry-After on a refusal).
void set_rate_headers(http::Response& res, const RateDecision& d);

/// The media type without parameters, lower-cased ("application/json").
std::string media_type(const http::Request& req);
bool is_json(const http::Request& req);

/// Prefer: respond-async -> 0; Prefer: wait=N -> N*1000 clamped to max_ms; otherwise default_ms.
int wait_budget_ms(const http::Request& req, int default_ms, int max_ms);
bool prefers_async(const http::Request& req);

/// Opaque list cursors: base64url of the last id seen.
std::string encode_cursor(std::string_view id);
std::string decode_cursor(std::string_view cursor);

/// Whether `addr` falls in one of the CIDRs ("10.0.0.0/8", "::1/128", "192.0.2.7").
bool address_in_cidrs(const std::string& addr, const std::vector<std::string>& cidrs);

/// The client's address. `peer` when it is not one of the trusted proxies (`trusted`, CIDRs);
/// otherwise the X-Forwarded-For hops (every field, in order, read as one comma-separated list)
/// are walked from the last: the first that is not a trusted proxy is the client (what a client
/// puts in the header itself comes before its proxy's entry, and is never believed). A hop that
/// is not an IP address (ports and IPv6 brackets are dropped first) ends the walk at the hop
/// that wrote it. Only trusted hops: the earliest of them.
std::string client_address(std::string_view peer,
                           const std::vector<std::string_view>& forwarded_for,
                           const std::vector<std::string>& trusted);

}  // namespace leadflow::http
