#include <gtest/gtest.h>

#include "leadflow/api/http_util.hpp"
#include "leadflow/http/parser.hpp"

namespace leadflow::http {
namespace {

// A GET request carrying `fields`, read by the server's own parser.
http::Request request_with(std::initializer_list<std::pair<const char*, const char*>> fields) {
  std::string raw = "GET / HTTP/1.1\r\nHost: test\r\n";
  for (const auto& [name, value] : fields)
    raw.append(name).append(": ").append(value).append("\r\n");
  raw.append("\r\n");
  http::Request req;
  EXPECT_EQ(parse_request(raw, ParseLimits{}, req).status, ParseStatus::kComplete);
  return req;
}

http::Request with_prefer(std::initializer_list<const char*> values) {
  std::string raw = "GET / HTTP/1.1\r\nHost: test\r\n";
  for (const char* v : values) raw.append("Prefer: ").append(v).append("\r\n");
  raw.append("\r\n");
  http::Request req;
  EXPECT_EQ(parse_request(raw, ParseLimits{}, req).status, ParseStatus::kComplete);
  return req;
}

TEST(Prefer, WaitBudget) {
  EXPECT_EQ(wait_budget_ms(with_prefer({}), 3000, 30000), 3000);
  EXPECT_EQ(wait_budget_ms(with_prefer({"respond-async"}), 3000, 30000), 0);
  EXPECT_EQ(wait_budget_ms(with_prefer({"wait=5"}), 3000, 30000), 5000);
  EXPECT_EQ(wait_budget_ms(with_prefer({"wait=999999"}), 3000, 30000), 30000);
  EXPECT_EQ(wait_budget_ms(with_prefer({"handling=lenient, wait=1"}), 3000, 30000), 1000);
  EXPECT_EQ(wait_budget_ms(with_prefer({"wait=abc"}), 3000, 30000), 3000);
  EXPECT_TRUE(prefers_async(with_prefer({"Respond-Async"})));
  EXPECT_FALSE(prefers_async(with_prefer({"wait=2"})));
}

TEST(MediaType, IgnoresParametersAndCase) {
  const http::Request req = request_with({{"Content-Type", " Application/JSON ; charset=utf-8"}});
  EXPECT_EQ(media_type(req), "application/json");
  EXPECT_TRUE(is_json(req));
  const http::Request form = request_with({{"Content-Type", "application/x-www-form-urlencoded"}});
  EXPECT_FALSE(is_json(form));
  const http::Request none = request_with({});
  EXPECT_FALSE(is_json(none));
}

TEST(Cursor, RoundTripsAndRefusesJunk) {
  const std::string id = "ld_01KAP3ZJ6Q8X5E7R9T2W4Y6B8D";
  EXPECT_EQ(decode_cursor(encode_cursor(id)), id);
  EXPECT_EQ(decode_cursor("%%%"), "");
}

TEST(Cidr, MatchesV4AndV6) {
  const std::vector<std::string> cidrs = {"10.0.0.0/8", "::1/128", "192.0.2.7"};
  EXPECT_TRUE(address_in_cidrs("10.1.2.3", cidrs));
  EXPECT_TRUE(address_in_cidrs("::1", cidrs));
  EXPECT_TRUE(address_in_cidrs("192.0.2.7", cidrs));
  EXPECT_FALSE(address_in_cidrs("192.0.2.8", cidrs));
  EXPECT_FALSE(address_in_cidrs("11.0.0.1", cidrs));
  EXPECT_FALSE(address_in_cidrs("garbage", cidrs));
}

}  // namespace
}  // namespace leadflow::http
