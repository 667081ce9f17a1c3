#pragma once
// A gzip stream (RFC 1952) inflated as it arrives, in pieces of bounded size and held to a limit
// on what it inflates to: a request body sent `Content-Encoding: gzip` (http::read_body) and a
// gzip file imported by leadflow-admin read through the same inflater, with the same limits.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace leadflow {

/// Whether `head`, the first bytes of a file or body, opens a gzip stream: its two magic bytes
/// 1f 8b (RFC 1952 §2.3.1), whatever the file is named. Fewer than two bytes never do.
bool starts_gzip(std::string_view head);

/// Inflates a gzip stream given in pieces cut anywhere (one byte at a time reads the same), and
/// hands out what it inflates in pieces of at most kPiece bytes as it goes: it holds zlib's
/// state (its 32 KiB window) and one piece, never the input or the output whole. Members
/// written one after another (`cat a.gz b.gz`) read as one stream, as gzip(1) reads them. What
/// it inflates is held to `max_inflated` bytes: a piece that would pass it is not handed out and
/// the stream fails (kTooLarge), so a small stream that inflates to gigabytes costs nothing more
/// than any other. Once failed it stays failed. Owned by its one reader; not thread-safe.
class GzipInflater {
 public:
  static constexpr std::size_t kPiece = 64 * 1024;
  enum class Status {
    kOk,
    kCorrupt,    // no gzip stream, or damaged (bad header, data or checksum; bytes after a member)
    kTooLarge,   // it inflates past max_inflated
    kTruncated,  // the stream ended inside a member, or held none
  };

  /// `what` names the stream in detail() ("body": "the gzip body is damaged (…)"; "file").
  explicit GzipInflater(std::size_t max_inflated, std::string_view what = "stream");
  ~GzipInflater();
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;

  /// Inflates `in`, calling `out` with each piece inflated before it goes on.
  Status add(std::string_view in, const std::function<void(std::string_view)>& out);
  /// The stream is over: kTruncated unless it ended right after a whole member.
  Status finish();
  /// The bytes handed out so far.
  std::size_t inflated() const { return inflated_; }
  /// Why it failed, in one sentence ("" while it has not).
  const std::string& detail() const { return detail_; }

 private:
  Status fail(Status s, std::string detail);

  struct Zlib;
  std::unique_ptr<Zlib> z_;
  const std::size_t max_inflated_;
  const std::string what_;
  std::size_t inflated_ = 0;
  bool started_ = false;      // a byte came
  bool member_done_ = false;  // the last member ended, and no byte came after it yet
  Status failed_ = Status::kOk;
  std::string detail_;
};

}  // namespace leadflow
