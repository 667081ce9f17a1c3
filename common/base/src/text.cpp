#include "leadflow/base/text.hpp"

#include <nlohmann/json.hpp>

namespace leadflow {
std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t len;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1Fu;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0Fu;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07u;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (cc & 0x3Fu);
  }
  if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;  // overlong, surrogate
  if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return len;
}

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t len = decode_utf8(s, i, cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

TextInfo inspect_text(std::string_view s, TextLines lines) {
  TextInfo info;
  const bool allow_tab = lines != TextLines::kSingle;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {  // ASCII fast path
      if (is_control_code_point(c, allow_tab)) {
        const bool line_break = lines == TextLines::kMulti &&
                                (c == '\n' || (c == '\r' && i + 1 < s.size() && s[i + 1] == '\n'));
        if (!line_break) {
          info.problem = TextProblem::kControl;
          return info;
        }
      }
      ++i;
      ++info.chars;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t len = decode_utf8(s, i, cp);
    if (len == 0) {
      info.problem = TextProblem::kBadUtf8;
      return info;
    }
    if (is_control_code_point(cp, allow_tab)) {
      info.problem = TextProblem::kControl;
      return info;
    }
    if (is_hidden_format_code_point(cp)) {
      info.problem = TextProblem::kHidden;
      return info;
    }
    i += len;
    ++info.chars;
  }
  return info;
}

std::string_view text_problem_message(TextProblem p) {
  switch (p) {
    case TextProblem::kNone:
      break;
    case TextProblem::kBadUtf8:
      return "must be valid UTF-8";
    case TextProblem::kControl:
      return "must not contain control characters";
    case TextProblem::kHidden:
      return "must not contain invisible formatting characters (bidi overrides and isolates, "
             "zero-width spaces, line separators)";
  }
  return "";
}

std::optional<TextRefusal> refuse_free_text(std::string_view s, std::size_t max_chars,
                                            TextLines lines) {
  const TextInfo info = inspect_text(s, lines);
  if (info.problem != TextProblem::kNone)
    return TextRefusal{"invalid_format", std::string(text_problem_message(info.problem))};
  if (info.chars > max_chars)
    return TextRefusal{"too_long", "at most " + std::to_string(max_chars) + " characters"};
  return std::nullopt;
}

std::optional<int> parse_hhmm(std::string_view s, bool is_end) {
  if (s.size() != 5 || !is_digit(s[0]) || !is_digit(s[1]) || s[2] != ':' || !is_digit(s[3]) ||
      !is_digit(s[4]))
    return std::nullopt;
  const int h = (s[0] - '0') * 10 + (s[1] - '0');
  const int m = (s[3] - '0') * 10 + (s[4] - '0');
  if (m > 59) return std::nullopt;
  if (h == 24 && m == 0 && is_end) return 24 * 60;
  if (h > 23) return std::nullopt;
  return h * 60 + m;
}

std::optional<int> parse_hhmm_json(const nlohmann::json& v, bool is_end) {
  if (!v.is_string()) return std::nullopt;
  return parse_hhmm(v.get_ref<const std::string&>(), is_end);
}

}  // namespace leadflow
