#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "leadflow/http/forms.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/http/parser.hpp"

namespace leadflow::http {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs urlencoded(std::string_view text) {
  Pairs out;
  parse_urlencoded(text, out);
  return out;
}

TEST(HttpResponse, HeaderFieldsAreWrittenInNameOrderAndReplacedBySetHeader) {
  Response res;
  res.set_header("X-Request-Id", "rq_1");
  res.set_header("x-ratelimit-limit", "100");
  res.set_content("{}", "application/json");
  res.set_header("Location", "/v1/leads/ld_1");
  res.set_header("X-Request-Id", "rq_2");  // replaces, whatever the case
  EXPECT_EQ(res.header_block(),
            "Content-Type: application/json\r\n"
            "Location: /v1/leads/ld_1\r\n"
            "x-ratelimit-limit: 100\r\n"
            "X-Request-Id: rq_2\r\n");
  EXPECT_TRUE(res.has_header("x-request-id"));
  EXPECT_EQ(res.header("X-RATELIMIT-LIMIT"), "100");
  EXPECT_EQ(res.header("Retry-After"), "");
  EXPECT_EQ(res.body, "{}");
}

TEST(HttpResponse, FramingFieldsAndLineBreaksAreRefused) {
  Response res;
  res.set_header("Content-Length", "5");
  res.set_header("Connection", "close");
  res.set_header("X-Evil", "a\r\nSet-Cookie: x=1");
  res.set_header("X-Bad\r\nName", "v");
  EXPECT_EQ(res.header_block(), "");
}

TEST(HttpRequest, HeaderLookupIgnoresCaseAndKeepsRepeatsInOrder) {
  Request req;
  const std::string raw =
      "POST /x?b=2&a=1 HTTP/1.1\r\nHost: h\r\nPrefer: wait=1\r\nprefer: respond-async\r\n"
      "Content-Length: 2\r\n\r\nok";
  ASSERT_EQ(parse_request(raw, ParseLimits{}, req).status, ParseStatus::kComplete);
  EXPECT_EQ(req.header("PREFER"), "wait=1");
  EXPECT_EQ(req.header("Prefer", 1), "respond-async");
  EXPECT_EQ(req.header("Prefer", 2), "");
  EXPECT_EQ(req.header_count("prefer"), 2u);
  EXPECT_FALSE(req.has_header("X-Absent"));
  EXPECT_EQ(req.body(), "ok");
  EXPECT_EQ(req.params(), (Pairs{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(req.param("b"), "2");
  EXPECT_FALSE(req.has_param("c"));

  // A request moved elsewhere (as into an exchange) still reads its own bytes.
  Request moved = std::move(req);
  EXPECT_EQ(moved.method(), "POST");
  EXPECT_EQ(moved.header("host"), "h");
  EXPECT_EQ(moved.body(), "ok");
}

TEST(Urlencoded, ReadsFormsAsTheyWereAlwaysRead) {
  EXPECT_EQ(urlencoded("b=2&a=1&b=1"),
            (Pairs{{"a", "1"}, {"b", "2"}, {"b", "1"}}));  // by name, repeats in order
  EXPECT_EQ(urlencoded("a=x+y%21&c=%u00e9"), (Pairs{{"a", "x y!"}, {"c", "\xc3\xa9"}}));
  EXPECT_EQ(urlencoded("a=1&a=1&&=x& k = v "), (Pairs{{"a", "1"}, {"k", "v"}, {"x", ""}}));
  EXPECT_EQ(urlencoded("a=b=c&bad=%zz"), (Pairs{{"a", "c"}, {"bad", "%zz"}}));
  EXPECT_EQ(urlencoded(""), Pairs{});
}

}  // namespace
}  // namespace leadflow::http
