#pragma once
// Byte-level text helpers every component needs the same way: ASCII classes and case, trimming,
// case-insensitive comparison, UTF-8 checks, and schedule times ("HH:MM"). One copy, so that
// "whitespace" or "valid UTF-8" means the same at every surface. Pure functions; thread-safe.
//
// Everything here is ASCII-only on purpose: protocol tokens, header names, verticals and enum
// values compare byte for byte after folding A-Z, never through the C locale.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace leadflow {

/// ASCII whitespace: space, \t, \n, \r, \f, \v.
constexpr bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_alnum(char c) { return is_digit(c) || is_alpha(c); }
/// A-Z folded to a-z; every other byte unchanged.
constexpr char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

/// `s` with A-Z folded to a-z.
std::string ascii_lower(std::string_view s);
/// `s` with a-z folded to A-Z.
std::string ascii_upper(std::string_view s);

/// Whether `s` is not empty and every byte is a digit 0-9.
constexpr bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_digit(c)) return false;
  return true;
}

/// `s` without leading and trailing ASCII whitespace (is_space).
constexpr std::string_view trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return s.substr(b, e - b);
}

/// `s` without leading and trailing spaces and tabs only (HTTP's optional white space).
constexpr std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Equality with A-Z and a-z folded ("Content-Type" == "content-type"); other bytes exact.
constexpr bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

/// A control character: C0, DEL or C1 (U+0080-U+009F); a tab only when `allow_tab` is false.
constexpr bool is_control_code_point(std::uint32_t cp, bool allow_tab) {
  if (cp == '\t') return !allow_tab;
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
}

/// Decodes one UTF-8 sequence at s[i]: its length, or 0 when the bytes there are not a valid,
/// shortest-form sequence of a scalar value (overlong forms, surrogates and values above
/// U+10FFFF are invalid); `cp` is the code point.
std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp);

/// Whether all of `s` is valid UTF-8 (see decode_utf8).
bool valid_utf8(std::string_view s);

/// The length of `s` in code points ("200 characters" means what a person counts). Counts the
/// bytes that do not continue a sequence, so `s` should be valid UTF-8.
std::size_t utf8_length(std::string_view s);

/// An invisible formatting character that makes text read other than it is: the bidi
/// embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069: "Trojan Source" reordering),
/// line and paragraph separators (U+2028, U+2029: a line break in disguise), the interlinear
/// annotation marks (U+FFF9-U+FFFB: hidden text), and the zero-width space, word joiner,
/// invisible operators and BOM (U+200B, U+2060-U+2064, U+FEFF: one name spelled two ways).
/// Joiners (U+200C, U+200D: emoji, Indic and Persian scripts) and the bidi marks (U+200E,
/// U+200F, U+061C: right-to-left text) are ordinary text.
constexpr bool is_hidden_format_code_point(std::uint32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 ||
         cp == 0x2029 || (cp >= 0xFFF9 && cp <= 0xFFFB) || cp == 0x200B ||
         (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF;
}

/// What is wrong with a piece of text, if anything: invalid UTF-8, a control character or a
/// hidden formatting character (is_hidden_format_code_point).
enum class TextProblem { kNone, kBadUtf8, kControl, kHidden };

struct TextInfo {
  TextProblem problem = TextProblem::kNone;
  std::size_t chars = 0;  // code points, when problem is kNone
};

/// How a field may break lines. kSingle: no C0 control at all (names, ids, references);
/// kSingleWithTabs: a tab allowed (a lead's user agent, consent text); kMulti: a note a person
/// types in a text box, with tabs and line breaks (LF, or CR only as part of CRLF: a lone CR
/// rewrites a terminal line).
enum class TextLines { kSingle, kSingleWithTabs, kMulti };

/// One pass over `s`: UTF-8 validity, control characters (C0 as `lines` says, DEL, C1), hidden
/// formatting characters and the length in code points.
TextInfo inspect_text(std::string_view s, TextLines lines);
inline TextInfo inspect_text(std::string_view s, bool allow_tab) {
  return inspect_text(s, allow_tab ? TextLines::kSingleWithTabs : TextLines::kSingle);
}

/// The field error's message for a problem ("must not contain control characters").
std::string_view text_problem_message(TextProblem p);

/// Why a free-text field is refused: a field error's code and message.
struct TextRefusal {
  std::string code;  // "invalid_format" or "too_long"
  std::string message;
};

/// The one rule for free text a person writes and others read (names, notes, reasons, key
/// names): valid UTF-8, no control or hidden formatting character (inspect_text), at most
/// `max_chars` characters counted in code points (600 "é" are 600, not 1,200). Empty text is
/// the caller's to judge. nullopt when the text is acceptable.
std::optional<TextRefusal> refuse_free_text(std::string_view s, std::size_t max_chars,
                                            TextLines lines = TextLines::kSingle);

/// A schedule time "HH:MM" as minutes since midnight, 00:00-23:59; "24:00" only as the end of a
/// range (`is_end`). Anything else, leading or trailing spaces included, is nullopt.
std::optional<int> parse_hhmm(std::string_view hhmm, bool is_end);
/// The same for a JSON value: nullopt unless it is a string.
std::optional<int> parse_hhmm_json(const nlohmann::json& v, bool is_end);

}  // namespace leadflow
