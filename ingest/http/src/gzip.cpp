#include "leadflow/http/gzip.hpp"

#include <zlib.h>

#include <optional>
#include <utility>

#include "leadflow/base/text.hpp"
#include "leadflow/http/stream.hpp"

namespace leadflow::http {

ContentCoding content_coding(const Request& req) {
  const std::size_t fields = req.header_count("Content-Encoding");
  if (fields == 0) return ContentCoding::kIdentity;
  if (fields > 1) return ContentCoding::kUnsupported;
  const std::string_view coding = trim_blanks(req.header("Content-Encoding"));
  if (coding.empty() || iequals(coding, "identity")) return ContentCoding::kIdentity;
  if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) return ContentCoding::kGzip;
  return ContentCoding::kUnsupported;  // another coding, or a list of them ("gzip, br")
}

struct GzipInflater::Zlib {
  z_stream s{};
  bool open = false;
  std::string piece = std::string(kPiece, '\0');
};

GzipInflater::GzipInflater(std::size_t max_inflated)
    : z_(std::make_unique<Zlib>()), max_inflated_(max_inflated) {
  // 16 + 15: a gzip wrapper (no zlib or raw deflate), the largest window a member may use.
  z_->open = inflateInit2(&z_->s, 16 + MAX_WBITS) == Z_OK;
  if (!z_->open) fail(Status::kCorrupt, "the gzip body could not be read");
}

GzipInflater::~GzipInflater() {
  if (z_->open) inflateEnd(&z_->s);
}

GzipInflater::Status GzipInflater::fail(Status s, std::string detail) {
  failed_ = s;
  detail_ = std::move(detail);
  return s;
}

GzipInflater::Status GzipInflater::add(std::string_view in,
                                       const std::function<void(std::string_view)>& out) {
  if (failed_ != Status::kOk) return failed_;
  if (in.empty()) return Status::kOk;
  started_ = true;
  z_stream& s = z_->s;
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.avail_in = static_cast<uInt>(in.size());
  for (;;) {
    if (member_done_) {
      if (s.avail_in == 0) break;
      // Bytes after a member: the next member (gzip -c a b, cat a.gz b.gz), or damage.
      inflateReset(&s);
      member_done_ = false;
    }
    s.next_out = reinterpret_cast<Bytef*>(z_->piece.data());
    s.avail_out = static_cast<uInt>(kPiece);
    const int rc = inflate(&s, Z_NO_FLUSH);
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR || rc == Z_MEM_ERROR)
      return fail(Status::kCorrupt, std::string("the gzip body is damaged (") +
                                        (s.msg ? s.msg : "invalid data") + ")");
    const std::size_t made = kPiece - s.avail_out;
    if (made > 0) {
      if (made > max_inflated_ - inflated_)
        return fail(Status::kTooLarge,
                    "the gzip body inflates past " + std::to_string(max_inflated_) + " bytes");
      inflated_ += made;
      out(std::string_view(z_->piece.data(), made));
    }
    if (rc == Z_STREAM_END) {
      member_done_ = true;
      continue;
    }
    // No progress (Z_BUF_ERROR), or every byte taken with room left: it waits for more.
    if (rc == Z_BUF_ERROR || (s.avail_in == 0 && s.avail_out != 0)) break;
  }
  s.next_in = nullptr;
  s.avail_in = 0;
  return Status::kOk;
}

GzipInflater::Status GzipInflater::finish() {
  if (failed_ != Status::kOk) return failed_;
  if (!started_) return fail(Status::kTruncated, "the gzip body is empty");
  if (!member_done_) return fail(Status::kTruncated, "the gzip body ends before its stream does");
  return Status::kOk;
}

BodyRead read_body(const Request& req, std::size_t max_inflated,
                   const std::function<void(std::string_view)>& piece) {
  std::optional<GzipInflater> gzip;
  if (content_coding(req) == ContentCoding::kGzip) gzip.emplace(max_inflated);
  BodyRead r;
  // false: the gzip failed (r says how), so nothing more is read.
  const auto take = [&](std::string_view bytes, bool last) {
    if (!gzip) {
      piece(bytes);
      return true;
    }
    GzipInflater::Status s = gzip->add(bytes, piece);
    if (s == GzipInflater::Status::kOk && last) s = gzip->finish();
    if (s == GzipInflater::Status::kOk) return true;
    r.outcome = s == GzipInflater::Status::kTooLarge ? BodyRead::Outcome::kTooLarge
                                                     : BodyRead::Outcome::kCorrupt;
    r.detail = gzip->detail();
    return false;
  };
  UploadStream* body = req.upload();
  if (!body) {
    take(req.body(), true);
    return r;
  }
  std::string bytes;
  for (;;) {
    switch (body->read(bytes)) {
      case UploadStream::Read::kData:
        if (!take(bytes, false)) return r;
        break;
      case UploadStream::Read::kEnd:
        take({}, true);
        return r;
      case UploadStream::Read::kFailed:
        r.outcome = BodyRead::Outcome::kFailed;
        return r;
    }
  }
}

}  // namespace leadflow::http
