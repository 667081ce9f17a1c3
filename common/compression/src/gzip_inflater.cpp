#include "leadflow/compression/gzip_inflater.hpp"

#include <zlib.h>

#include <utility>

namespace leadflow {

bool starts_gzip(std::string_view head) {
  return head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
         static_cast<unsigned char>(head[1]) == 0x8b;
}

struct GzipInflater::Zlib {
  z_stream s{};
  bool open = false;
  std::string piece = std::string(kPiece, '\0');
};

GzipInflater::GzipInflater(std::size_t max_inflated, std::string_view what)
    : z_(std::make_unique<Zlib>()), max_inflated_(max_inflated), what_(what) {
  // 16 + 15: a gzip wrapper (no zlib or raw deflate), the largest window a member may use.
  z_->open = inflateInit2(&z_->s, 16 + MAX_WBITS) == Z_OK;
  if (!z_->open) fail(Status::kCorrupt, "the gzip " + what_ + " could not be read");
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
      return fail(Status::kCorrupt,
                  "the gzip " + what_ + " is damaged (" + (s.msg ? s.msg : "invalid data") + ")");
    const std::size_t made = kPiece - s.avail_out;
    if (made > 0) {
      if (made > max_inflated_ - inflated_)
        return fail(Status::kTooLarge, "the gzip " + what_ + " inflates past " +
                                           std::to_string(max_inflated_) + " bytes");
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
  if (!started_) return fail(Status::kTruncated, "the gzip " + what_ + " is empty");
  if (!member_done_)
    return fail(Status::kTruncated, "the gzip " + what_ + " ends before its stream does");
  return Status::kOk;
}

}  // namespace leadflow
