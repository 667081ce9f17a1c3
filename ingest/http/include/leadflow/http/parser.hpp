#pragma once
// Private: an HTTP/1.1 request parser for the event-driven front (RFC 9112). Stateless: it is
// handed everything received so far on a connection and says whether a whole request is there.
// Strict where laxness lets requests be smuggled (Content-Length with Transfer-Encoding, bad
// lengths, bare CR), and bounded everywhere (header section, target, body).
#include <cstddef>
#include <string>
#include <string_view>

#include "leadflow/http/message.hpp"

namespace leadflow::http {

struct ParseLimits {
  std::size_t max_header_bytes = 16 * 1024;  // request line + header fields; over it: 431
  std::size_t max_target_bytes = 8 * 1024;   // over it: 414
  std::size_t max_body_bytes = 64 * 1024;    // decoded body; over it: 413
  std::size_t max_header_count = 100;        // over it: 431
};

enum class ParseStatus {
  kIncomplete,  // need more bytes
  kComplete,    // `request` holds one request; `consumed` bytes of the input belong to it
  kError,       // `error_status` (400, 413, 414, 431, 501, 505) and `error_detail` say why
};

struct ParseResult {
  ParseStatus status = ParseStatus::kIncomplete;
  std::size_t consumed = 0;       // with kComplete: the request's length in the input
  bool headers_complete = false;  // the header section is all there (so 100-continue may be sent)
  int error_status = 0;
  std::string error_detail;  // one short sentence for the problem body
};

/// Parses the first request in `input` (bytes received on a connection, possibly with more
/// pipelined requests after it). On kComplete fills `request` (method, target, path, query and
/// its parameters, header fields, body; it keeps its own copy of the bytes); with kIncomplete or
/// kError `request` is unspecified. kIncomplete never hides an error that the bytes already
/// show: an oversized header section, target or declared body is an error as soon as it is
/// seen. With kIncomplete and headers_complete, path(), version_minor(), keep_alive() and
/// expect_continue() are filled in (so the caller can answer "Expect: 100-continue").
/// Keep-alive is HTTP/1.1's default unless "Connection: close"; HTTP/1.0 needs "keep-alive".
ParseResult parse_request(std::string_view input, const ParseLimits& limits,
                          http::Request& request);

/// The reason phrase of a status code (RFC 9110): "Content Too Large" for 413.
std::string_view reason_phrase(int status);

/// Percent-decodes `s` ("%2F" -> "/"); malformed escapes are kept as they are.
std::string percent_decode(std::string_view s);

}  // namespace leadflow::http
