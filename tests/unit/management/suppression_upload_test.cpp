// An upload of suppression entries read as it arrives (SuppressionUpload): however the body is
// cut into pieces (inside a line, inside CRLF, inside a multi-byte character), it reads the same
// entries, the same refusals and the same line numbers as the body read whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/management/suppression_lists.hpp"

namespace leadflow {
namespace {

struct UploadRead {
  std::size_t entries = 0;
  std::size_t rejected = 0;
  std::vector<std::size_t> rejected_lines;
  std::vector<SuppressionFingerprint> sorted;
};

UploadRead read_in_pieces(std::string_view body, const std::vector<std::size_t>& cuts) {
  SuppressionUpload upload;
  std::size_t from = 0;
  for (const std::size_t cut : cuts) {
    upload.add(body.substr(from, cut - from));
    from = cut;
  }
  upload.add(body.substr(from));
  upload.finish();
  UploadRead r{upload.entries_read(), upload.rejected(), upload.rejected_lines(), {}};
  r.sorted = upload.take_sorted();
  return r;
}

SuppressionFingerprint of(std::string_view normalised) { return *fingerprint_of_value(normalised); }

// A CSV with a header, CRLF and LF line ends, a blank line, a multi-byte name in a second cell,
// a repeat, a phone, a SHA-256, and two lines that hold no entry (one of them multi-byte), the
// last line without its newline.
constexpr std::string_view kBody =
    "email,name\r\n"
    "Jane@Example.com,Zoë Ünal\r\n"
    "\r\n"
    "+1 (212) 555-0123,Ådne\n"
    "Zoë Ünal,nobody\r\n"
    "jane@example.com\n"
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\r\n"
    "not an entry\n"
    "bob@example.org";

void expect_the_body_read(const UploadRead& r) {
  EXPECT_EQ(r.entries, 5u);  // jane twice, the phone, the SHA-256, bob
  EXPECT_EQ(r.rejected, 2u);
  EXPECT_EQ(r.rejected_lines, (std::vector<std::size_t>{5, 8}));
  std::vector<SuppressionFingerprint> want = {
      of("jane@example.com"), of("+12125550123"), of("bob@example.org"),
      *fingerprint_of_sha256_hex(
          "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(r.sorted, want);
}

TEST(SuppressionUpload, ReadsABodyWhole) { expect_the_body_read(read_in_pieces(kBody, {})); }

TEST(SuppressionUpload, ReadsTheSameWhereverTheBodyIsCutInTwoOrThree) {
  for (std::size_t i = 1; i < kBody.size(); ++i) {
    SCOPED_TRACE("cut at " + std::to_string(i));
    expect_the_body_read(read_in_pieces(kBody, {i}));
    // And a second cut just after (inside CRLF, inside a two-byte character).
    if (i + 1 < kBody.size()) expect_the_body_read(read_in_pieces(kBody, {i, i + 1}));
  }
}

TEST(SuppressionUpload, ReadsTheSameOneByteAtATime) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i < kBody.size(); ++i) cuts.push_back(i);
  expect_the_body_read(read_in_pieces(kBody, cuts));
}

TEST(SuppressionUpload, ALineNumberCountsTheLinesOfEveryPieceBefore) {
  // Eleven bad lines after a good one: the first ten are named, the count is whole, whatever
  // the pieces.
  std::string body = "a@example.com\n";
  for (int i = 0; i < 11; ++i) body += "bad line " + std::to_string(i) + "\n";
  for (const std::size_t cut :
       {std::size_t{3}, std::size_t{14}, std::size_t{15}, body.size() - 1}) {
    const UploadRead r = read_in_pieces(body, {cut});
    EXPECT_EQ(r.rejected, 11u);
    EXPECT_EQ(r.rejected_lines, (std::vector<std::size_t>{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));
    EXPECT_EQ(r.entries, 1u);
  }
}

TEST(SuppressionUpload, AFirstLineThatIsNoEntryIsAHeaderOnlyWhenItIsFirst) {
  // The header's line cut in two is still the first line.
  const UploadRead r = read_in_pieces("e-mail address\r\nx@example.com\r\n", {3});
  EXPECT_EQ(r.rejected, 0u);
  EXPECT_EQ(r.entries, 1u);
}

TEST(SuppressionUpload, ALongSecondCellIsNeverKeptAndAFirstCellLongerThanAnyEntryIsNone) {
  // A note of 300 KB after the entry, and a first cell of 100 KB: whatever the pieces, the
  // first is read and the second refused by its line number (nothing of either is held).
  const std::string note(300'000, 'n');
  const std::string body =
      "a@example.com," + note + "\r\n" + std::string(100'000, 'x') + "\r\nb@example.com\r\n";
  for (const std::size_t cut : {std::size_t{0}, std::size_t{5}, std::size_t{20'000},
                                std::size_t{300'010}, std::size_t{320'000}}) {
    SCOPED_TRACE(cut);
    const UploadRead r =
        cut == 0 ? read_in_pieces(body, {}) : read_in_pieces(body, {cut, cut + 70'000});
    EXPECT_EQ(r.entries, 2u);
    EXPECT_EQ(r.rejected, 1u);
    EXPECT_EQ(r.rejected_lines, (std::vector<std::size_t>{2}));
  }
}

}  // namespace
}  // namespace leadflow
