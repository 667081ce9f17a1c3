// A gzip request body inflated as it arrives (leadflow/http/gzip.hpp), without a server: cut
// anywhere it reads the same, members one after another read as one body, and a body that is
// damaged, cut short or inflates past its limit fails, saying which, without handing out more
// than the limit.
#include <gtest/gtest.h>

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "leadflow/http/gzip.hpp"
#include "leadflow/http/parser.hpp"

namespace leadflow::http {
namespace {

using Status = GzipInflater::Status;

// `text` as gzip(1) writes it: one member.
std::string gzip(std::string_view text, int level = Z_DEFAULT_COMPRESSION) {
  z_stream s{};
  EXPECT_EQ(deflateInit2(&s, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&s, text.size()) + 64, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  s.avail_in = static_cast<uInt>(text.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

struct Inflated {
  Status added = Status::kOk;  // the first add() that failed, or kOk
  Status finished = Status::kOk;
  std::string text;
  std::size_t largest_piece = 0;
  std::string detail;
};

// Feeds `body` to an inflater `step` bytes at a time, then ends it.
Inflated inflate_in_steps(std::string_view body, std::size_t step,
                          std::size_t max = std::size_t{1} << 30) {
  GzipInflater z(max);
  Inflated r;
  const auto out = [&r](std::string_view piece) {
    r.text.append(piece);
    r.largest_piece = std::max(r.largest_piece, piece.size());
  };
  for (std::size_t at = 0; at < body.size() && r.added == Status::kOk; at += step)
    r.added = z.add(body.substr(at, step), out);
  r.finished = z.finish();
  r.detail = z.detail();
  EXPECT_EQ(z.inflated(), r.text.size());
  return r;
}

std::string sample_csv(int lines) {
  std::string csv = "email,note\r\n";
  for (int i = 0; i < lines; ++i)
    csv += "person." + std::to_string(i) + "@example.com,a customer since " +
           std::to_string(2000 + i % 25) + "\r\n";
  return csv;
}

TEST(GzipInflater, ABodyCutAnywhereReadsTheSameInPiecesOfBoundedSize) {
  const std::string csv = sample_csv(20'000);  // about 900 KB
  const std::string body = gzip(csv);
  ASSERT_LT(body.size(), csv.size() / 4);
  for (const std::size_t step : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{4096},
                                 std::size_t{65'537}, body.size()}) {
    const Inflated r = inflate_in_steps(body, step);
    EXPECT_EQ(r.added, Status::kOk) << step;
    EXPECT_EQ(r.finished, Status::kOk) << step;
    EXPECT_EQ(r.text, csv) << step;
    EXPECT_LE(r.largest_piece, GzipInflater::kPiece) << step;
  }
  // Stored blocks (level 0) and the best compression read the same.
  EXPECT_EQ(inflate_in_steps(gzip(csv, 0), 1000).text, csv);
  EXPECT_EQ(inflate_in_steps(gzip(csv, 9), 3).text, csv);
  // A member of no bytes is a body of none.
  const Inflated empty = inflate_in_steps(gzip(""), 1);
  EXPECT_EQ(empty.finished, Status::kOk);
  EXPECT_EQ(empty.text, "");
}

TEST(GzipInflater, MembersOneAfterAnotherReadAsOneBody) {
  const std::string a = sample_csv(3000), b = "last@example.com\n";
  const std::string body = gzip(a) + gzip(b) + gzip("");
  for (const std::size_t step : {std::size_t{1}, std::size_t{13}, body.size()}) {
    const Inflated r = inflate_in_steps(body, step);
    EXPECT_EQ(r.finished, Status::kOk) << step;
    EXPECT_EQ(r.text, a + b) << step;
  }
}

TEST(GzipInflater, ABodyCutShortIsTruncatedWhereverItIsCut) {
  const std::string body = gzip(sample_csv(2000));
  // Inside the header, the data and the trailer (CRC and length: its last 8 bytes).
  for (const std::size_t keep : {std::size_t{1}, std::size_t{9}, std::size_t{12}, body.size() / 2,
                                 body.size() - 8, body.size() - 1}) {
    for (const std::size_t step : {std::size_t{1}, std::size_t{512}}) {
      const Inflated r = inflate_in_steps(std::string_view(body).substr(0, keep), step);
      EXPECT_EQ(r.added, Status::kOk) << keep;  // nothing wrong with what came
      EXPECT_EQ(r.finished, Status::kTruncated) << keep;
      EXPECT_NE(r.detail.find("ends before"), std::string::npos) << r.detail;
    }
  }
  // No byte at all is no gzip body either.
  const Inflated none = inflate_in_steps("", 1);
  EXPECT_EQ(none.finished, Status::kTruncated);
  EXPECT_NE(none.detail.find("empty"), std::string::npos) << none.detail;
  // A second member cut short: the first one's text is handed out, the body still fails.
  const std::string two = gzip("first@example.com\n") + gzip(sample_csv(100)).substr(0, 30);
  const Inflated cut = inflate_in_steps(two, 1);
  EXPECT_EQ(cut.finished, Status::kTruncated);
  EXPECT_EQ(cut.text.rfind("first@example.com\n", 0), 0u);
}

TEST(GzipInflater, ADamagedBodyIsCorruptAndStaysSo) {
  const std::string csv = sample_csv(2000);
  const std::string body = gzip(csv);
  // Not gzip at all: a clear CSV sent as gzip, or a zlib stream (another wrapper).
  for (const std::string& bad : {csv, std::string("\x78\x9c\x03\x00\x00\x00\x00\x01", 8)}) {
    const Inflated r = inflate_in_steps(bad, 1);
    EXPECT_EQ(r.added, Status::kCorrupt);
    EXPECT_EQ(r.finished, Status::kCorrupt);  // it stays failed
    EXPECT_NE(r.detail.find("damaged"), std::string::npos) << r.detail;
    EXPECT_EQ(r.text, "");
  }
  // A byte of the data flipped, the CRC or the length of the trailer changed.
  for (const std::size_t at : {body.size() / 2, body.size() - 6, body.size() - 2}) {
    std::string bad = body;
    bad[at] = static_cast<char>(bad[at] ^ 0x55);
    const Inflated r = inflate_in_steps(bad, 64);
    EXPECT_EQ(r.added, Status::kCorrupt) << at;
    EXPECT_EQ(r.finished, Status::kCorrupt) << at;
  }
  // Bytes after the last member that are no member.
  const Inflated trailing = inflate_in_steps(body + "garbage", 1);
  EXPECT_EQ(trailing.added, Status::kCorrupt);
  EXPECT_EQ(trailing.text, csv);
}

TEST(GzipInflater, ABombFailsAtItsLimitHandingOutNoMoreThanIt) {
  // 200 MB of zeros: about 200 KB of gzip, a thousand to one.
  const std::string zeros(200'000'000, '0');
  const std::string bomb = gzip(zeros, 9);
  ASSERT_LT(bomb.size(), 400'000u);
  const std::size_t limit = 10'000'000;
  GzipInflater z(limit);
  std::size_t handed = 0;
  Status s = Status::kOk;
  for (std::size_t at = 0; at < bomb.size() && s == Status::kOk; at += 1000)
    s = z.add(std::string_view(bomb).substr(at, 1000),
              [&handed](std::string_view piece) { handed += piece.size(); });
  EXPECT_EQ(s, Status::kTooLarge);
  EXPECT_LE(handed, limit);
  EXPECT_GT(handed, limit - GzipInflater::kPiece);
  EXPECT_EQ(z.inflated(), handed);
  EXPECT_EQ(z.finish(), Status::kTooLarge);
  EXPECT_NE(z.detail().find("inflates past 10000000 bytes"), std::string::npos) << z.detail();
  // The limit itself is allowed: a body that inflates to exactly it is whole.
  const std::string csv = sample_csv(100);
  EXPECT_EQ(inflate_in_steps(gzip(csv), 1, csv.size()).finished, Status::kOk);
  EXPECT_EQ(inflate_in_steps(gzip(csv), 1, csv.size() - 1).added, Status::kTooLarge);
}

// A request as the parser makes it, with `coding` as its Content-Encoding ("" for none).
Request request_with(std::string_view coding, std::string_view body) {
  std::string raw = "PUT /up HTTP/1.1\r\nHost: h\r\nContent-Type: text/csv\r\n";
  if (!coding.empty()) raw += "Content-Encoding: " + std::string(coding) + "\r\n";
  raw += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
  Request req;
  ParseLimits limits;
  limits.max_body_bytes = 1 << 20;
  EXPECT_EQ(parse_request(raw, limits, req).status, ParseStatus::kComplete);
  return req;
}

TEST(GzipBody, TheCodingIsReadFromContentEncoding) {
  EXPECT_EQ(content_coding(request_with("", "x")), ContentCoding::kIdentity);
  EXPECT_EQ(content_coding(request_with("identity", "x")), ContentCoding::kIdentity);
  EXPECT_EQ(content_coding(request_with("gzip", "x")), ContentCoding::kGzip);
  EXPECT_EQ(content_coding(request_with("GZip ", "x")), ContentCoding::kGzip);
  EXPECT_EQ(content_coding(request_with("x-gzip", "x")), ContentCoding::kGzip);
  for (const char* other : {"br", "deflate", "compress", "zstd", "gzip, gzip", "gzip, br"})
    EXPECT_EQ(content_coding(request_with(other, "x")), ContentCoding::kUnsupported) << other;
}

TEST(GzipBody, AWholeBodyIsInflatedAndHeldToTheLimit) {
  const std::string csv = sample_csv(500);
  std::string got;
  const auto keep = [&got](std::string_view piece) { got.append(piece); };
  BodyRead r = read_body(request_with("gzip", gzip(csv)), 1 << 30, keep);
  EXPECT_EQ(r.outcome, BodyRead::Outcome::kWhole);
  EXPECT_EQ(got, csv);
  got.clear();
  r = read_body(request_with("", csv), 1 << 30, keep);  // clear: as sent
  EXPECT_EQ(r.outcome, BodyRead::Outcome::kWhole);
  EXPECT_EQ(got, csv);
  got.clear();
  r = read_body(request_with("gzip", gzip(csv)), 1000, keep);
  EXPECT_EQ(r.outcome, BodyRead::Outcome::kTooLarge);
  EXPECT_LE(got.size(), 1000u);
  r = read_body(request_with("gzip", gzip(csv).substr(0, 100)), 1 << 30, keep);
  EXPECT_EQ(r.outcome, BodyRead::Outcome::kCorrupt);
  EXPECT_NE(r.detail.find("ends before"), std::string::npos) << r.detail;
  r = read_body(request_with("gzip", csv), 1 << 30, keep);
  EXPECT_EQ(r.outcome, BodyRead::Outcome::kCorrupt);
  EXPECT_NE(r.detail.find("damaged"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace leadflow::http
