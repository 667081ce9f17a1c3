// A gzip request body read by http::read_body, without a server: the coding is read from
// Content-Encoding, a gzip body is inflated (by the compression component's GzipInflater, whose
// own tests are in tests/unit/compression) and held to its limit, a damaged or cut one fails.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "gzip_member.hpp"
#include "leadflow/http/gzip.hpp"
#include "leadflow/http/parser.hpp"

namespace leadflow::http {
namespace {

using leadflow::testing::gzip_member;
using leadflow::testing::sample_email_csv;

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
  const std::string csv = sample_email_csv(500);
  std::string got;
  const auto keep = [&got](std::string_view piece) { got.append(piece); };
  BodyRead r = read_body(request_with("gzip", gzip_member(csv)), 1 << 30, keep);
  EXPECT_EQ(r.outcome, BodyRead::Outcome::kWhole);
  EXPECT_EQ(got, csv);
  got.clear();
  r = read_body(request_with("", csv), 1 << 30, keep);  // clear: as sent
  EXPECT_EQ(r.outcome, BodyRead::Outcome::kWhole);
  EXPECT_EQ(got, csv);
  got.clear();
  r = read_body(request_with("gzip", gzip_member(csv)), 1000, keep);
  EXPECT_EQ(r.outcome, BodyRead::Outcome::kTooLarge);
  EXPECT_LE(got.size(), 1000u);
  r = read_body(request_with("gzip", gzip_member(csv).substr(0, 100)), 1 << 30, keep);
  EXPECT_EQ(r.outcome, BodyRead::Outcome::kCorrupt);
  EXPECT_NE(r.detail.find("ends before"), std::string::npos) << r.detail;
  r = read_body(request_with("gzip", csv), 1 << 30, keep);
  EXPECT_EQ(r.outcome, BodyRead::Outcome::kCorrupt);
  EXPECT_NE(r.detail.find("damaged"), std::string::npos) << r.detail;
}

}  // namespace
}  // namespace leadflow::http
