// The gzip inflater (leadflow/compression/gzip_inflater.hpp) on streams made in memory: cut
// anywhere it reads the same, members one after another read as one stream, and a stream that is
// damaged, cut short or inflates past its limit fails, saying which, without handing out more
// than the limit; and the magic bytes that tell a gzip file from a clear one.
#include <gtest/gtest.h>

#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "gzip_member.hpp"
#include "leadflow/compression/gzip_inflater.hpp"

namespace leadflow {
namespace {

using Status = GzipInflater::Status;
using leadflow::testing::gzip_member;
using leadflow::testing::sample_email_csv;

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

TEST(GzipInflater, ABodyCutAnywhereReadsTheSameInPiecesOfBoundedSize) {
  const std::string csv = sample_email_csv(20'000);  // about 900 KB
  const std::string body = gzip_member(csv);
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
  EXPECT_EQ(inflate_in_steps(gzip_member(csv, 0), 1000).text, csv);
  EXPECT_EQ(inflate_in_steps(gzip_member(csv, 9), 3).text, csv);
  // A member of no bytes is a body of none.
  const Inflated empty = inflate_in_steps(gzip_member(""), 1);
  EXPECT_EQ(empty.finished, Status::kOk);
  EXPECT_EQ(empty.text, "");
}

TEST(GzipInflater, MembersOneAfterAnotherReadAsOneBody) {
  const std::string a = sample_email_csv(3000), b = "last@example.com\n";
  const std::string body = gzip_member(a) + gzip_member(b) + gzip_member("");
  for (const std::size_t step : {std::size_t{1}, std::size_t{13}, body.size()}) {
    const Inflated r = inflate_in_steps(body, step);
    EXPECT_EQ(r.finished, Status::kOk) << step;
    EXPECT_EQ(r.text, a + b) << step;
  }
}

TEST(GzipInflater, ABodyCutShortIsTruncatedWhereverItIsCut) {
  const std::string body = gzip_member(sample_email_csv(2000));
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
  const std::string two =
      gzip_member("first@example.com\n") + gzip_member(sample_email_csv(100)).substr(0, 30);
  const Inflated cut = inflate_in_steps(two, 1);
  EXPECT_EQ(cut.finished, Status::kTruncated);
  EXPECT_EQ(cut.text.rfind("first@example.com\n", 0), 0u);
}

TEST(GzipInflater, ADamagedBodyIsCorruptAndStaysSo) {
  const std::string csv = sample_email_csv(2000);
  const std::string body = gzip_member(csv);
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
  const std::string bomb = gzip_member(zeros, 9);
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
  const std::string csv = sample_email_csv(100);
  EXPECT_EQ(inflate_in_steps(gzip_member(csv), 1, csv.size()).finished, Status::kOk);
  EXPECT_EQ(inflate_in_steps(gzip_member(csv), 1, csv.size() - 1).added, Status::kTooLarge);
}

TEST(GzipMagic, AGzipStreamIsToldByItsFirstTwoBytes) {
  EXPECT_TRUE(starts_gzip(gzip_member("a@example.com\n")));
  EXPECT_TRUE(starts_gzip(gzip_member("")));
  EXPECT_TRUE(starts_gzip(std::string("\x1f\x8b", 2)));
  EXPECT_FALSE(starts_gzip(std::string("\x1f", 1)));
  EXPECT_FALSE(starts_gzip(""));
  EXPECT_FALSE(starts_gzip("email\na@example.com\n"));
  EXPECT_FALSE(starts_gzip(std::string("\x8b\x1f", 2)));
  EXPECT_FALSE(starts_gzip(std::string("\x78\x9c\x03\x00", 4)));  // zlib, not gzip
}

TEST(GzipInflater, ItsDetailNamesWhatItReads) {
  GzipInflater file(1 << 20, "file");
  EXPECT_EQ(file.add("not gzip", [](std::string_view) {}), Status::kCorrupt);
  EXPECT_EQ(file.detail().rfind("the gzip file is damaged (", 0), 0u) << file.detail();
  GzipInflater body(1 << 20, "body");
  EXPECT_EQ(body.finish(), Status::kTruncated);
  EXPECT_EQ(body.detail(), "the gzip body is empty");
}

}  // namespace
}  // namespace leadflow
