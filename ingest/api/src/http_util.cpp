#include "leadflow/api/http_util.hpp"

#include "leadflow/base/text.hpp"
#include "leadflow/http/parser.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

namespace leadflow::http {

void send_json(http::Response& res, int status, const nlohmann::json& body,
               const char* content_type) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  content_type);
}

namespace {
nlohmann::json problem_body(int status, std::string_view detail) {
  return {{"type", "about:blank"},
          {"title", reason_phrase(status)},
          {"status", status},
          {"detail", detail},
          {"success", false}};
}
}  // namespace

void send_problem(http::Response& res, int status, std::string_view detail,
                  const FieldErrors& errors) {
  nlohmann::json body = problem_body(status, detail);
  if (!errors.empty()) {
    auto& list = body["errors"] = nlohmann::json::array();
    for (const auto& e : errors)
      list.push_back({{"field", e.field}, {"code", e.code}, {"message", e.message}});
  }
  send_json(res, status, body, "application/problem+json");
}

void send_problem_with(http::Response& res, int status, std::string_view detail,
                       const nlohmann::json& members) {
  nlohmann::json body = problem_body(status, detail);
  for (const auto& [name, value] : members.items()) body[name] = value;
  send_json(res, status, body, "application/problem+json");
}

bool require_json(const http::Request& req, http::Response& res) {
  if (is_json(req)) return true;
  send_problem(res, 415, "Content-Type must be application/json");
  return false;
}

std::optional<nlohmann::json> parse_body(const http::Request& req, http::Response& res) {
  nlohmann::json body = nlohmann::json::parse(req.body(), nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    send_problem(res, 400, "the body must be a JSON object",
                 {{"body", "invalid_json", "not a JSON object"}});
    return std::nullopt;
  }
  return body;
}

void set_rate_headers(http::Response& res, const RateDecision& d) {
  res.set_header("X-RateLimit-Limit", std::to_string(d.limit));
  res.set_header("X-RateLimit-Remaining", std::to_string(d.remaining));
  res.set_header("X-RateLimit-Reset", std::to_string(d.reset_unix));
  if (!d.allowed) res.set_header("Retry-After", std::to_string(d.retry_after_s));
}

std::string media_type(const http::Request& req) {
  const std::string_view ct = req.header("Content-Type");
  return ascii_lower(trim(ct.substr(0, ct.find(';'))));
}

bool is_json(const http::Request& req) {
  const std::string mt = media_type(req);
  return mt == "application/json" ||
         (mt.rfind("application/", 0) == 0 && mt.size() > 5 && mt.ends_with("+json"));
}

namespace {
// Splits a Prefer header into its preferences ("respond-async", "wait=5").
std::vector<std::string> preferences(const http::Request& req) {
  std::vector<std::string> out;
  const auto count = req.header_count("Prefer");
  for (std::size_t i = 0; i < count; ++i) {
    std::string v(req.header("Prefer", i));
    std::size_t start = 0;
    while (start <= v.size()) {
      auto comma = v.find(',', start);
      std::string item =
          v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      std::erase_if(item, is_space);
      item = ascii_lower(item);
      if (!item.empty()) out.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}
}  // namespace

bool prefers_async(const http::Request& req) {
  for (const auto& p : preferences(req))
    if (p == "respond-async") return true;
  return false;
}

int wait_budget_ms(const http::Request& req, int default_ms, int max_ms) {
  int budget = default_ms;
  for (const auto& p : preferences(req)) {
    if (p == "respond-async") return 0;
    if (p.rfind("wait=", 0) == 0) {
      int seconds = 0;
      auto [ptr, ec] = std::from_chars(p.data() + 5, p.data() + p.size(), seconds);
      if (ec == std::errc{} && ptr == p.data() + p.size() && seconds >= 0)
        budget = seconds > max_ms / 1000 ? max_ms : seconds * 1000;
    }
  }
  return std::min(budget, max_ms);
}

namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
}

std::string encode_cursor(std::string_view id) {
  std::string out;
  std::uint32_t buf = 0;
  int bits = 0;
  for (unsigned char c : id) {
    buf = (buf << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kB64[(buf >> bits) & 63]);
    }
  }
  if (bits > 0) out.push_back(kB64[(buf << (6 - bits)) & 63]);
  return out;
}

std::string decode_cursor(std::string_view cursor) {
  std::string out;
  std::uint32_t buf = 0;
  int bits = 0;
  for (char c : cursor) {
    const char* p = std::strchr(kB64, c);
    if (p == nullptr || c == '\0') return "";
    buf = (buf << 6) | static_cast<std::uint32_t>(p - kB64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buf >> bits) & 0xff));
    }
  }
  return out;
}

bool address_in_cidrs(const std::string& addr, const std::vector<std::string>& cidrs) {
  unsigned char a[16];
  int family = AF_INET;
  if (inet_pton(AF_INET, addr.c_str(), a) != 1) {
    family = AF_INET6;
    if (inet_pton(AF_INET6, addr.c_str(), a) != 1) return false;
  }
  for (const auto& cidr : cidrs) {
    const auto slash = cidr.find('/');
    const std::string net = cidr.substr(0, slash);
    unsigned char n[16];
    if (inet_pton(family, net.c_str(), n) != 1) continue;
    const int max_bits = family == AF_INET ? 32 : 128;
    int bits = slash == std::string::npos ? max_bits : std::atoi(cidr.c_str() + slash + 1);
    bool match = true;
    for (int i = 0; i < bits && match; ++i) {
      const int byte = i / 8, bit = 7 - i % 8;
      match = ((a[byte] >> bit) & 1) == ((n[byte] >> bit) & 1);
    }
    if (match) return true;
  }
  return false;
}

namespace {

// An X-Forwarded-For entry as an address: "198.51.100.7", "198.51.100.7:4711", "2001:db8::1",
// "[2001:db8::1]:443". "" when it is none.
std::string forwarded_address(std::string_view entry) {
  entry = trim(entry);
  if (!entry.empty() && entry.front() == '[') {
    const auto close = entry.find(']');
    if (close == std::string_view::npos) return "";
    entry = entry.substr(1, close - 1);
  } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
    entry = entry.substr(0, entry.find(':'));
  }
  const std::string text(entry);
  unsigned char buf[16];
  if (inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1)
    return text;
  return "";
}

}  // namespace

std::string client_address(std::string_view peer,
                           const std::vector<std::string_view>& forwarded_for,
                           const std::vector<std::string>& trusted) {
  std::string client(peer);
  if (!address_in_cidrs(client, trusted)) return client;
  std::vector<std::string_view> hops;
  for (std::string_view field : forwarded_for) {
    std::size_t start = 0;
    while (start <= field.size()) {
      const auto comma = field.find(',', start);
      hops.push_back(field.substr(start, comma == std::string_view::npos ? comma : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  for (auto it = hops.rbegin(); it != hops.rend(); ++it) {
    std::string hop = forwarded_address(*it);
    if (hop.empty()) break;  // the trusted hop that wrote this is as far as we can see
    client = std::move(hop);
    if (!address_in_cidrs(client, trusted)) break;
  }
  return client;
}

}  // namespace leadflow::http
