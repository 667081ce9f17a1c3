#include "leadflow/http/gzip.hpp"

#include <optional>

#include "leadflow/base/text.hpp"
#include "leadflow/compression/gzip_inflater.hpp"
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

BodyRead read_body(const Request& req, std::size_t max_inflated,
                   const std::function<void(std::string_view)>& piece) {
  std::optional<GzipInflater> gzip;
  if (content_coding(req) == ContentCoding::kGzip) gzip.emplace(max_inflated, "body");
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
