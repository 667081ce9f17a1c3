#pragma once
// A request body sent with `Content-Encoding: gzip`, inflated as it arrives (RFC 9110 §8.4,
// RFC 1952): the coding a request names, an inflater that takes the body in pieces and hands
// out what it inflates in pieces of bounded size, and read_body, which feeds a handler a body
// (streamed or whole, clear or gzip) held to one limit on its inflated size.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "leadflow/http/message.hpp"

namespace leadflow::http {

/// The content coding of a request's body (its Content-Encoding): none or "identity" (clear),
/// "gzip" (or "x-gzip"), or any other, several codings or several fields (unsupported: the
/// route answers 415).
enum class ContentCoding { kIdentity, kGzip, kUnsupported };
ContentCoding content_coding(const Request& req);

/// Inflates a gzip stream given in pieces cut anywhere (one byte at a time reads the same), and
/// hands out what it inflates in pieces of at most kPiece bytes as it goes: it holds zlib's
/// state (its 32 KiB window) and one piece, never the input or the output whole. Members
/// written one after another (`cat a.gz b.gz`) read as one body, as gzip(1) reads them. What it
/// inflates is held to `max_inflated` bytes: a piece that would pass it is not handed out and
/// the stream fails (kTooLarge), so a small body that inflates to gigabytes costs nothing more
/// than any other. Once failed it stays failed. Not thread-safe.
class GzipInflater {
 public:
  static constexpr std::size_t kPiece = 64 * 1024;
  enum class Status {
    kOk,
    kCorrupt,    // no gzip stream, or damaged (bad header, data or checksum; bytes after a member)
    kTooLarge,   // it inflates past max_inflated
    kTruncated,  // the body ended inside a member, or held none
  };

  explicit GzipInflater(std::size_t max_inflated);
  ~GzipInflater();
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;

  /// Inflates `in`, calling `out` with each piece inflated before it goes on.
  Status add(std::string_view in, const std::function<void(std::string_view)>& out);
  /// The body is over: kTruncated unless it ended right after a whole member.
  Status finish();
  /// The bytes handed out so far.
  std::size_t inflated() const { return inflated_; }
  /// Why it failed, in one sentence for a problem body ("" while it has not).
  const std::string& detail() const { return detail_; }

 private:
  Status fail(Status s, std::string detail);

  struct Zlib;
  std::unique_ptr<Zlib> z_;
  const std::size_t max_inflated_;
  std::size_t inflated_ = 0;
  bool started_ = false;      // a byte came
  bool member_done_ = false;  // the last member ended, and no byte came after it yet
  Status failed_ = Status::kOk;
  std::string detail_;
};

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
