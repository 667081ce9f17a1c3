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

}  // namespace
}  // namespace leadflow
