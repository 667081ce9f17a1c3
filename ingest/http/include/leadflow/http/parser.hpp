#pragma once
// Private: an HTTP/1.1 request parser for the event-driven front (RFC 9112). parse_request is
// handed everything received so far on a connection and says whether a whole request is there;
// RequestReader does the same for a connection's input as it arrives, in time linear in it.
// Strict where laxness lets requests be smuggled (Content-Length with Transfer-Encoding, bad
// lengths, bare CR), and bounded everywhere (header section, target, body).
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "leadflow/http/message.hpp"

namespace leadflow::http {

struct ParseLimits {
  std::size_t max_header_bytes = 16 * 1024;  // request line + header fields; over it: 431
  std::size_t max_target_bytes = 8 * 1024;   // over it: 414
  std::size_t max_body_bytes = 64 * 1024;    // decoded body; over it: 413
  std::size_t max_header_count = 100;        // over it: 431
  /// A larger body limit for the requests of some routes (an upload's: Routes::put_upload), by
  /// method and path, asked once the header section is in; below max_body_bytes it changes
  /// nothing. None: max_body_bytes for every request.
  std::function<std::size_t(std::string_view method, std::string_view path)> larger_body;
  /// Whether a request's body larger than max_body_bytes is handed out in pieces as it arrives
  /// (RequestReader::take_body) rather than held whole (Routes::put_streamed). None: never.
  std::function<bool(std::string_view method, std::string_view path)> streamed_body;
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
  std::size_t body_bound = 0;     // with headers_complete: the declared body length (chunked: the
                                  // body limit), which the body's deadline is scaled by
  bool body_streamed = false;     // with headers_complete: the body is not kept in the request
                                  // but handed out as it is read (RequestReader::take_body)
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

class RequestParser;

/// Reads one request off a connection as its bytes arrive, resuming where the previous call
/// stopped, so that a request trickled in one byte at a time costs work linear in its size (a
/// stateless parse of everything received on each read costs its square). The header section is
/// parsed once it can be whole (an empty line has arrived, or the header limit is passed); a body
/// with a Content-Length is copied once all of it is there; chunk framing is read once.
/// For a whole request it answers as parse_request does. Until then it says kIncomplete, and an
/// error in the header section shows once the section is over rather than at its first bad byte:
/// the header deadline bounds how long that can take.
class RequestReader {
 public:
  explicit RequestReader(const ParseLimits& limits);
  ~RequestReader();
  RequestReader(RequestReader&&) noexcept;
  RequestReader& operator=(RequestReader&&) noexcept;

  /// `input`: the bytes received for this request so far (and any after it); each call's input
  /// begins with the previous call's. `request` is the same object on every call.
  ParseResult read(std::string_view input, http::Request& request);
  /// Starts over, for the next request (after kComplete or kError).
  void reset();
  /// A streamed body (ParseResult::body_streamed): appends to `out` what was decoded since the
  /// last call, so the request never holds its body.
  void take_body(std::string& out);
  /// A streamed body: how many bytes at the front of the input the reading is done with. The
  /// caller drops them from its input before the next read(), which goes on from there.
  std::size_t release_input();
  /// Input bytes looked at since construction, counted as the reading goes: what the tests use
  /// to show that the work is linear.
  std::size_t examined() const;

 private:
  std::unique_ptr<RequestParser> parser_;
  std::size_t examined_before_ = 0;
};

/// The reason phrase of a status code (RFC 9110): "Content Too Large" for 413.
std::string_view reason_phrase(int status);

/// Percent-decodes `s` ("%2F" -> "/"); malformed escapes are kept as they are.
std::string percent_decode(std::string_view s);

}  // namespace leadflow::http
