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

const Routes::Route* Routes::find(http::Request& req) const {
  const std::string_view method = req.method() == "HEAD" ? std::string_view("GET") : req.method();
  const std::string_view path = req.path();
  for (const Route& r : routes_) {
    if (r.method != method) continue;
    std::size_t matches = 0;
    std::size_t at = 0;
    bool ok = true;
    for (std::size_t i = 0; ok && i < r.segments.size(); ++i) {
      if (at > path.size()) {
        ok = false;
        break;
      }
      const bool last = i + 1 == r.segments.size();
      if (last && r.segments[i] == "*") break;  // the rest of the path, whatever it holds
      const std::size_t slash = path.find('/', at);
      const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
      if (last != (slash == std::string_view::npos)) {
        ok = false;  // the path has fewer or more segments than the pattern
        break;
      }
      const std::string_view segment = path.substr(at, end - at);
      const std::string& want = r.segments[i];
      if (is_parameter(want)) {
        if (segment.empty() || matches == http::Request::kMaxMatches) {
          ok = false;
          break;
        }
        req.matches_[matches++] = {static_cast<std::uint32_t>(at),
                                   static_cast<std::uint32_t>(segment.size())};
      } else if (segment != want) {
        ok = false;
      }
      at = end + 1;
    }
    if (!ok) continue;
    req.match_count_ = matches;
    req.route_ = r.pattern;
    return &r;
  }
  return nullptr;
}

}  // namespace leadflow
