#pragma once
// A request body sent with `Content-Encoding: gzip`, inflated as it arrives (RFC 9110 §8.4):
// the coding a request names, and read_body, which feeds a handler a body (streamed or whole,
// clear or gzip) held to one limit on its inflated size. The inflating itself is the
// compression component's (GzipInflater), which leadflow-admin's imports share.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "leadflow/http/message.hpp"

namespace leadflow::http {

/// The content coding of a request's body (its Content-Encoding): none or "identity" (clear),
/// "gzip" (or "x-gzip"), or any other, several codings or several fields (unsupported: the
/// route answers 415).
enum class ContentCoding { kIdentity, kGzip, kUnsupported };
ContentCoding content_coding(const Request& req);

/// What became of a body read by read_body.
struct BodyRead {
  enum class Outcome {
    kWhole,     // every byte was handed out
    kFailed,    // a streamed body will never be whole (the client went away, stalled, framed it
                // badly, or sent more than the route takes): the server answers for it
    kTooLarge,  // it inflates past the limit (413)
    kCorrupt,   // its gzip is damaged or cut short (400): `detail` says how
  };
  Outcome outcome = Outcome::kWhole;
  std::string detail;
};

/// Hands `req`'s body to `piece` as it arrives: a streamed upload's (Routes::put_streamed) piece
/// by piece, any other's whole; inflated as it comes when it is sent gzip (the caller refused
/// any other coding: content_coding), held then to `max_inflated` bytes inflated. A clear body
/// is held to its route's limit by the server already.
BodyRead read_body(const Request& req, std::size_t max_inflated,
                   const std::function<void(std::string_view)>& piece);

}  // namespace leadflow::http
