#include "leadflow/http/routes.hpp"

namespace leadflow {
namespace {

bool is_parameter(std::string_view segment) {
  return segment.size() >= 2 && segment.front() == '{' && segment.back() == '}';
}

std::vector<std::string> split_segments(std::string_view path) {
  std::vector<std::string> out;
  for (;;) {
    const std::size_t slash = path.find('/');
    out.emplace_back(path.substr(0, slash));
    if (slash == std::string_view::npos) return out;
    path.remove_prefix(slash + 1);
  }
}

}  // namespace

void Exchange::run_guarded(const std::function<void(Exchange&)>& work) {
  try {
    work(*this);
  } catch (const std::exception& e) {
    host_.handler_failed(*this, e.what());
  } catch (...) {
    host_.handler_failed(*this, "unknown");
  }
}

void Routes::add(const char* method, std::string pattern, Handler h, InlineHandler ih) {
  Route r;
  r.method = method;
  r.segments = split_segments(pattern);
  r.pattern = std::move(pattern);
  r.handler = std::move(h);
  r.inline_handler = std::move(ih);
  routes_.push_back(std::move(r));
}

// Whether `path` matches the route's pattern; the parameters' places go into `matches` (at most
// http::Request::kMaxMatches of them), their number into `count`.
bool Routes::matches(const Route& r, std::string_view path, Match* matches, std::size_t& count) {
  count = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < r.segments.size(); ++i) {
    if (at > path.size()) return false;
    const bool last = i + 1 == r.segments.size();
    if (last && r.segments[i] == "*") return true;  // the rest of the path, whatever it holds
    const std::size_t slash = path.find('/', at);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    // The path has fewer or more segments than the pattern.
    if (last != (slash == std::string_view::npos)) return false;
    const std::string_view segment = path.substr(at, end - at);
    const std::string& want = r.segments[i];
    if (is_parameter(want)) {
      if (segment.empty() || count == http::Request::kMaxMatches) return false;
      matches[count++] = {static_cast<std::uint32_t>(at),
                          static_cast<std::uint32_t>(segment.size())};
    } else if (segment != want) {
      return false;
    }
    at = end + 1;
  }
  return true;
}

const Routes::Route* Routes::find(http::Request& req) const {
  const std::string_view method = req.method() == "HEAD" ? std::string_view("GET") : req.method();
  const std::string_view path = req.path();
  Match found[http::Request::kMaxMatches];
  for (const Route& r : routes_) {
    if (r.method != method) continue;
    std::size_t count = 0;
    if (!matches(r, path, found, count)) continue;
    for (std::size_t i = 0; i < count; ++i) req.matches_[i] = {found[i].first, found[i].second};
    req.match_count_ = count;
    req.route_ = r.pattern;
    return &r;
  }
  return nullptr;
}

std::size_t Routes::body_limit(std::string_view method, std::string_view path) const {
  Match found[http::Request::kMaxMatches];
  for (const Route& r : routes_) {
    if (r.method != method) continue;
    std::size_t count = 0;
    // The first route that takes the request decides, as find() routes it.
    if (matches(r, path, found, count)) return r.max_body_bytes;
  }
  return 0;
}

bool Routes::streams_body(std::string_view method, std::string_view path) const {
  Match found[http::Request::kMaxMatches];
  for (const Route& r : routes_) {
    if (r.method != method) continue;
    std::size_t count = 0;
    if (matches(r, path, found, count)) return r.streamed;
  }
  return false;
}

bool Routes::has_body_limits() const {
  for (const Route& r : routes_)
    if (r.max_body_bytes > 0) return true;
  return false;
}

}  // namespace leadflow
