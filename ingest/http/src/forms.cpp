#include "leadflow/http/forms.hpp"
#include "leadflow/base/text.hpp"

#include <algorithm>
#include <cstring>

namespace leadflow::http {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The value of `count` hex digits at s[at], or -1.
int hex_value(std::string_view s, std::size_t at, std::size_t count) {
  if (at + count > s.size()) return -1;
  int value = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const int d = hex_digit(s[at + i]);
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  return value;
}

// UTF-8 of a code point below 0x10000; surrogates (D800-DFFF) yield nothing.
void append_utf8(std::string& out, int code) {
  if (code < 0x80) {
    out.push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code >> 6)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0xD800 || code >= 0xE000) {
    out.push_back(static_cast<char>(0xE0 | (code >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

std::string form_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%' && i + 1 < s.size()) {
      if (s[i + 1] == 'u') {
        if (const int code = hex_value(s, i + 2, 4); code >= 0) {
          append_utf8(out, code);
          i += 5;
          continue;
        }
      } else if (const int byte = hex_value(s, i + 1, 2); byte >= 0) {
        out.push_back(static_cast<char>(byte));
        i += 2;
        continue;
      }
      out.push_back(c);
    } else {
      out.push_back(c == '+' ? ' ' : c);
    }
  }
  return out;
}

// Calls fn on each non-empty, trimmed piece of `s` between `delimiter`s.
template <typename Fn>
void for_each_piece(std::string_view s, char delimiter, Fn&& fn) {
  for (;;) {
    const std::size_t at = s.find(delimiter);
    const std::string_view piece = trim_blanks(s.substr(0, at));
    if (!piece.empty()) fn(piece);
    if (at == std::string_view::npos) return;
    s.remove_prefix(at + 1);
  }
}

std::string lower_copy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c;
  return out;
}

// The boundary parameter of a multipart Content-Type, unquoted; "" when absent.
std::string multipart_boundary(std::string_view content_type) {
  const std::size_t at = lower_copy(content_type).find("boundary=");
  if (at == std::string::npos) return "";
  std::string_view b = content_type.substr(at + 9);
  if (!b.empty() && b.front() == '"') {
    const std::size_t end = b.find('"', 1);
    return end == std::string_view::npos ? "" : std::string(b.substr(1, end - 1));
  }
  b = b.substr(0, b.find(';'));
  while (!b.empty() && (b.back() == ' ' || b.back() == '\t')) b.remove_suffix(1);
  return b.size() <= 70 ? std::string(b) : "";  // RFC 2046: at most 70 characters
}

// Fills the name and filename of a part from its Content-Disposition value. false: malformed.
bool read_disposition(std::string_view value, http::FormPart& part) {
  for (const char* key : {"name=\"", "filename=\""}) {
    std::size_t k = 0;
    // "name=" must not match inside "filename=".
    while ((k = value.find(key, k)) != std::string_view::npos && k > 0 && value[k - 1] != ' ' &&
           value[k - 1] != ';') {
      ++k;
    }
    if (k == std::string_view::npos) continue;
    const std::size_t from = k + std::strlen(key);
    const std::size_t to = value.find('"', from);
    if (to == std::string_view::npos) return false;
    (key[0] == 'n' ? part.name : part.filename) = std::string(value.substr(from, to - from));
  }
  return true;
}

}  // namespace

void parse_urlencoded(std::string_view text,
                      std::vector<std::pair<std::string, std::string>>& out) {
  std::vector<std::string_view> seen;
  for_each_piece(text, '&', [&](std::string_view piece) {
    if (std::find(seen.begin(), seen.end(), piece) != seen.end()) return;
    seen.push_back(piece);
    // The first piece between '=' is the name and the last the value ("a=b=c": a, c).
    std::string_view name, value;
    bool named = false;
    for_each_piece(piece, '=', [&](std::string_view part) {
      if (!named) {
        name = part;
        named = true;
      } else {
        value = part;
      }
    });
    if (named) out.emplace_back(form_decode(name), form_decode(value));
  });
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
}

bool parse_multipart(std::string_view content_type, std::string_view body,
                     std::vector<http::FormPart>& out) {
  const std::string boundary = multipart_boundary(content_type);
  if (boundary.empty()) return false;
  const std::string delimiter = "--" + boundary;
  const std::string next_delimiter = "\r\n" + delimiter;
  std::size_t at = body.find(delimiter);
  if (at == std::string_view::npos) return false;
  for (;;) {
    at += delimiter.size();
    if (body.substr(at, 2) == "--") break;  // the closing delimiter
    if (body.substr(at, 2) != "\r\n") return false;
    at += 2;
    const std::size_t head_end = body.find("\r\n\r\n", at);
    if (head_end == std::string_view::npos) return false;
    http::FormPart part;
    std::size_t line = at;
    while (line < head_end) {
      std::size_t eol = body.find("\r\n", line);
      if (eol == std::string_view::npos || eol > head_end) eol = head_end;
      const std::string_view field = body.substr(line, eol - line);
      const std::size_t colon = field.find(':');
      if (colon != std::string_view::npos) {
        const std::string_view name = field.substr(0, colon);
        std::string_view value = field.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
          value.remove_prefix(1);
        if (iequals(name, "Content-Type")) {
          part.content_type = std::string(value);
        } else if (iequals(name, "Content-Disposition") && !read_disposition(value, part)) {
          return false;
        }
      }
      line = eol + 2;
    }
    const std::size_t content_from = head_end + 4;
    const std::size_t next = body.find(next_delimiter, content_from);
    if (next == std::string_view::npos) return false;
    part.content = std::string(body.substr(content_from, next - content_from));
    if (part.name.empty()) return false;
    out.push_back(std::move(part));
    at = next + 2;
  }
  std::stable_sort(out.begin(), out.end(), [](const http::FormPart& a, const http::FormPart& b) {
    return a.name < b.name;
  });
  return true;
}

}  // namespace leadflow::http
