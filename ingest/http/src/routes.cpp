#include "leadflow/http/routes.hpp"

namespace leadflow {

void Exchange::run_guarded(const std::function<void(Exchange&)>& work) {
  try {
    work(*this);
  } catch (const std::exception& e) {
    host_.handler_failed(*this, e.what());
  } catch (...) {
    host_.handler_failed(*this, "unknown");
  }
}

void Routes::add(const char* method, const std::string& pattern, Handler h, InlineHandler ih) {
  Route r;
  r.method = method;
  r.pattern = pattern;
  r.literal = pattern.find_first_of("()[]{}*+?.\\|^$") == std::string::npos;
  if (!r.literal) r.re = std::regex(pattern);
  r.handler = std::move(h);
  r.inline_handler = std::move(ih);
  routes_.push_back(std::move(r));
}

const Routes::Route* Routes::find(httplib::Request& req) const {
  const std::string_view method = req.method == "HEAD" ? std::string_view("GET") : std::string_view(req.method);
  for (const Route& r : routes_) {
    if (r.method != method) continue;
    if (r.literal) {
      if (r.pattern == req.path) return &r;
    } else if (std::regex_match(req.path, req.matches, r.re)) {
      return &r;
    }
  }
  return nullptr;
}

}  // namespace leadflow
