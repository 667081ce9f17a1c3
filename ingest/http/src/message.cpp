#include "leadflow/http/message.hpp"
#include "leadflow/base/text.hpp"

#include <algorithm>

namespace leadflow::http {
namespace {

// The order httplib kept response fields in (a case-insensitive multimap), so answers keep
// their byte layout.
bool iless(std::string_view a, std::string_view b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return ascii_lower(x) < ascii_lower(y);
  });
}

// One "Name: value\r\n" line of a header block, found by its name.
struct Line {
  std::size_t start = std::string::npos;
  std::size_t end = 0;  // past its CRLF
  std::string_view value;
};

// The line named `name`, or (start npos) with `end` at where such a line belongs in the order.
Line find_line(std::string_view block, std::string_view name) {
  Line found;
  std::size_t at = 0;
  while (at < block.size()) {
    const std::size_t colon = block.find(':', at);
    const std::size_t eol = block.find("\r\n", colon);
    const std::string_view line_name = block.substr(at, colon - at);
    if (iequals(line_name, name)) {
      found.start = at;
      found.end = eol + 2;
      found.value = block.substr(colon + 2, eol - colon - 2);
      return found;
    }
    if (iless(name, line_name)) break;
    at = eol + 2;
  }
  found.end = at;
  return found;
}

}  // namespace

std::string_view Request::header(std::string_view name) const { return header(name, 0); }

std::string_view Request::header(std::string_view name, std::size_t index) const {
  for (const Field& f : headers_) {
    if (iequals(view(f.name), name) && index-- == 0) return view(f.value);
  }
  return {};
}

std::size_t Request::header_count(std::string_view name) const {
  std::size_t n = 0;
  for (const Field& f : headers_) n += iequals(view(f.name), name) ? 1 : 0;
  return n;
}

HeaderField Request::header_at(std::size_t i) const {
  return {view(headers_[i].name), view(headers_[i].value)};
}

bool Request::has_param(std::string_view name) const {
  for (const auto& [k, v] : params_) {
    if (k == name) return true;
  }
  return false;
}

std::string Request::param(std::string_view name) const {
  for (const auto& [k, v] : params_) {
    if (k == name) return v;
  }
  return {};
}

std::string_view Request::match(std::size_t index) const {
  if (index == 0) return path_;
  if (index > match_count_) return {};
  const Span s = matches_[index - 1];
  return std::string_view(path_).substr(s.offset, s.size);
}

void Response::set_content(std::string content, std::string_view content_type) {
  body = std::move(content);
  set_header("Content-Type", content_type);
}

void Response::set_header(std::string_view name, std::string_view value) {
  if (name.empty() || name.find_first_of(":\r\n") != std::string_view::npos ||
      value.find_first_of("\r\n") != std::string_view::npos) {
    return;
  }
  if (iequals(name, "Content-Length") || iequals(name, "Connection") || iequals(name, "Date")) {
    return;
  }
  if (headers_.empty()) headers_.reserve(256);
  const Line line = find_line(headers_, name);
  const std::size_t size = name.size() + value.size() + 4;
  if (line.start != std::string::npos) {
    headers_.erase(line.start, line.end - line.start);
  }
  const std::size_t at = line.start != std::string::npos ? line.start : line.end;
  headers_.insert(at, size, ' ');
  char* out = headers_.data() + at;
  out = std::copy(name.begin(), name.end(), out);
  *out++ = ':';
  *out++ = ' ';
  out = std::copy(value.begin(), value.end(), out);
  *out++ = '\r';
  *out = '\n';
}

bool Response::has_header(std::string_view name) const {
  return find_line(headers_, name).start != std::string::npos;
}

std::string_view Response::header(std::string_view name) const {
  return find_line(headers_, name).value;
}

}  // namespace leadflow::http
