// The one copy of the text helpers: ASCII classes, trim, iequals, UTF-8, "HH:MM".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "leadflow/base/text.hpp"

namespace leadflow {
namespace {

TEST(Text, AsciiClasses) {
  EXPECT_TRUE(is_digit('0'));
  EXPECT_TRUE(is_digit('9'));
  EXPECT_FALSE(is_digit('a'));
  EXPECT_FALSE(is_digit('\xd9'));  // a UTF-8 lead byte, never a digit whatever the locale
  EXPECT_TRUE(is_alpha('z'));
  EXPECT_TRUE(is_alpha('Q'));
  EXPECT_FALSE(is_alpha('_'));
  EXPECT_TRUE(is_alnum('7'));
  EXPECT_FALSE(is_alnum('-'));
  for (char c : std::string_view(" \t\n\r\f\v")) EXPECT_TRUE(is_space(c)) << int(c);
  EXPECT_FALSE(is_space('\0'));
  EXPECT_FALSE(is_space('\xa0'));
  EXPECT_EQ(ascii_lower('A'), 'a');
  EXPECT_EQ(ascii_lower('z'), 'z');
  EXPECT_EQ(ascii_lower('\xc4'), '\xc4');
}

TEST(Text, AsciiCaseOfStrings) {
  EXPECT_EQ(ascii_lower("Api.Example.COM"), "api.example.com");
  EXPECT_EQ(ascii_upper("ca-x"), "CA-X");
  EXPECT_EQ(ascii_lower("\xc3\x84"), "\xc3\x84");
}

TEST(Text, AllDigits) {
  EXPECT_TRUE(all_digits("0123456789"));
  EXPECT_FALSE(all_digits(""));
  EXPECT_FALSE(all_digits("12a"));
  EXPECT_FALSE(all_digits(" 12"));
  EXPECT_FALSE(all_digits("-1"));
}

TEST(Text, TrimRemovesAsciiWhitespaceAtBothEnds) {
  EXPECT_EQ(trim("  a b \t\r\n"), "a b");
  EXPECT_EQ(trim("\v\fx"), "x");
  EXPECT_EQ(trim("   "), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("\xc2\xa0x"), "\xc2\xa0x");  // a no-break space is not ASCII whitespace
}

TEST(Text, IequalsFoldsAsciiLettersOnly) {
  EXPECT_TRUE(iequals("Content-Type", "content-TYPE"));
  EXPECT_TRUE(iequals("", ""));
  EXPECT_FALSE(iequals("abc", "abcd"));
  EXPECT_FALSE(iequals("[", "{"));                // '[' + 32 is '{': only A-Z fold
  EXPECT_FALSE(iequals("\xc3\x84", "\xc3\xa4"));  // Ä and ä: not ASCII
}

TEST(Text, DecodeUtf8) {
  std::uint32_t cp = 0;
  EXPECT_EQ(decode_utf8("A", 0, cp), 1u);
  EXPECT_EQ(cp, 0x41u);
  EXPECT_EQ(decode_utf8("\xc3\xa9", 0, cp), 2u);
  EXPECT_EQ(cp, 0xE9u);
  EXPECT_EQ(decode_utf8("\xe2\x82\xac", 0, cp), 3u);
  EXPECT_EQ(cp, 0x20ACu);
  EXPECT_EQ(decode_utf8("\xf0\x9f\x98\x80", 0, cp), 4u);
  EXPECT_EQ(cp, 0x1F600u);
  EXPECT_EQ(decode_utf8("\xc0\xaf", 0, cp), 0u);          // overlong '/'
  EXPECT_EQ(decode_utf8("\xe0\x80\xaf", 0, cp), 0u);      // overlong, 3 bytes
  EXPECT_EQ(decode_utf8("\xed\xa0\x80", 0, cp), 0u);      // surrogate D800
  EXPECT_EQ(decode_utf8("\xf4\x90\x80\x80", 0, cp), 0u);  // above U+10FFFF
  EXPECT_EQ(decode_utf8("\xc3", 0, cp), 0u);              // cut short
  EXPECT_EQ(decode_utf8("\x80", 0, cp), 0u);              // a lone continuation byte
}

TEST(Text, ValidUtf8AndLength) {
  EXPECT_TRUE(valid_utf8(""));
  EXPECT_TRUE(valid_utf8("plain"));
  EXPECT_TRUE(valid_utf8("caf\xc3\xa9 \xe2\x82\xac"));
  EXPECT_FALSE(valid_utf8("caf\xc3"));
  EXPECT_FALSE(valid_utf8("\xff"));
  EXPECT_EQ(utf8_length("caf\xc3\xa9"), 4u);
  EXPECT_EQ(utf8_length("\xf0\x9f\x98\x80"), 1u);
  EXPECT_EQ(utf8_length(""), 0u);
}

TEST(Text, InspectText) {
  EXPECT_EQ(inspect_text("caf\xc3\xa9", false).problem, TextProblem::kNone);
  EXPECT_EQ(inspect_text("caf\xc3\xa9", false).chars, 4u);
  EXPECT_EQ(inspect_text("a\tb", false).problem, TextProblem::kControl);
  EXPECT_EQ(inspect_text("a\tb", true).problem, TextProblem::kNone);
  EXPECT_EQ(inspect_text("a\nb", true).problem, TextProblem::kControl);
  EXPECT_EQ(inspect_text("\x7f", true).problem, TextProblem::kControl);
  EXPECT_EQ(inspect_text("\xc2\x85", true).problem, TextProblem::kControl);  // C1 NEL
  EXPECT_EQ(inspect_text("ok\xc3", true).problem, TextProblem::kBadUtf8);
}

TEST(Text, ParseHhmm) {
  EXPECT_EQ(parse_hhmm("00:00", false), 0);
  EXPECT_EQ(parse_hhmm("09:30", false), 9 * 60 + 30);
  EXPECT_EQ(parse_hhmm("23:59", true), 23 * 60 + 59);
  EXPECT_EQ(parse_hhmm("24:00", true), 24 * 60);
  EXPECT_EQ(parse_hhmm("24:00", false), std::nullopt);  // only as the end of a range
  EXPECT_EQ(parse_hhmm("24:01", true), std::nullopt);
  EXPECT_EQ(parse_hhmm("12:60", false), std::nullopt);
  EXPECT_EQ(parse_hhmm("9:30", false), std::nullopt);
  EXPECT_EQ(parse_hhmm(" 09:30", false), std::nullopt);
  EXPECT_EQ(parse_hhmm("09-30", false), std::nullopt);
  EXPECT_EQ(parse_hhmm_json(nlohmann::json("17:00"), true), 17 * 60);
  EXPECT_EQ(parse_hhmm_json(nlohmann::json(1700), true), std::nullopt);
  EXPECT_EQ(parse_hhmm_json(nlohmann::json(), false), std::nullopt);
}

// The one free-text rule (docs/hardening.md): names, notes, reasons and key names.
TEST(FreeText, RefusesControlAndHiddenFormattingCharactersAndCountsCharacters) {
  for (const std::string& bad :
       {std::string("a\0b", 3), std::string("esc\x1b[2J"), std::string("del\x7f"),
        std::string("c1 \xc2\x9b"), std::string("tab\there"), std::string("two\nlines"),
        std::string("rlo \xe2\x80\xae"), std::string("lre \xe2\x80\xaa"),
        std::string("fsi \xe2\x81\xa8"), std::string("pdi \xe2\x81\xa9"),
        std::string("zwsp \xe2\x80\x8b"), std::string("ls \xe2\x80\xa8"),
        std::string("bom \xef\xbb\xbf"), std::string("wj \xe2\x81\xa0"),
        std::string("anchor \xef\xbf\xb9"), std::string("bad \xc3")}) {
    const auto refused = refuse_free_text(bad, 1000);
    ASSERT_TRUE(refused.has_value()) << bad;
    EXPECT_EQ(refused->code, "invalid_format") << bad;
  }
  // Right-to-left text, its marks, joiners (emoji, Persian) are text.
  for (const std::string& good :
       {std::string("Zo\xc3\xab \xe6\x9d\x8e"), std::string("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d"),
        std::string("a\xe2\x80\x8f b"), std::string("\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x92\xbb"),
        std::string("\xd9\x85\xe2\x80\x8c\xd9\x8a")})
    EXPECT_FALSE(refuse_free_text(good, 1000).has_value()) << good;

  // Multi-line text (a note): LF, CRLF and tabs, never a lone CR.
  EXPECT_FALSE(refuse_free_text("one\nline\r\nanother\tcol", 1000, TextLines::kMulti));
  EXPECT_TRUE(refuse_free_text("over\rwrite", 1000, TextLines::kMulti));
  EXPECT_TRUE(refuse_free_text("end\r", 1000, TextLines::kMulti));
  EXPECT_TRUE(refuse_free_text("rlo \xe2\x80\xae", 1000, TextLines::kMulti));

  // Characters, not bytes: 600 "é" (1,200 bytes) fit 1,000; 1,001 do not.
  std::string e600, e1001;
  for (int i = 0; i < 600; ++i) e600 += "\xc3\xa9";
  for (int i = 0; i < 1001; ++i) e1001 += "\xc3\xa9";
  EXPECT_FALSE(refuse_free_text(e600, 1000).has_value());
  const auto long_one = refuse_free_text(e1001, 1000);
  ASSERT_TRUE(long_one.has_value());
  EXPECT_EQ(long_one->code, "too_long");
}

}  // namespace
}  // namespace leadflow
