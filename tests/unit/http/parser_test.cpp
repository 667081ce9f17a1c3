#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "leadflow/http/parser.hpp"

namespace leadflow::http {
namespace {

constexpr std::string_view kJsonBody =
    R"({"first_name":"Ada","last_name":"Lovelace","email":"ada@example.com","phone":"+15551234567"})";

std::string post_with_body(std::string_view body) {
  return "POST /api/v1/leads?src=x HTTP/1.1\r\n"
         "Host: leads.example.com\r\n"
         "Content-Type: application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + std::string(body);
}

ParseResult parse(std::string_view input, http::Request& request, const ParseLimits& limits = {}) {
  return parse_request(input, limits, request);
}

ParseResult parse(std::string_view input, const ParseLimits& limits = {}) {
  http::Request request;
  return parse_request(input, limits, request);
}

// The error status for `input`, or 0 (with a test failure) when it does not fail.
int error_status(std::string_view input, const ParseLimits& limits = {}) {
  const ParseResult result = parse(input, limits);
  EXPECT_EQ(result.status, ParseStatus::kError) << "input: " << input;
  if (result.status != ParseStatus::kError) return 0;
  EXPECT_FALSE(result.error_detail.empty());
  return result.error_status;
}

// A string literal with its embedded NULs.
template <std::size_t N>
std::string bytes(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

// The value of the field whose name is exactly `name` (case as sent), or nullopt.
std::optional<std::string_view> find_header(const http::Request& request, std::string_view name) {
  for (std::size_t i = 0; i < request.header_fields(); ++i) {
    if (request.header_at(i).name == name) return request.header_at(i).value;
  }
  return std::nullopt;
}

// --- Complete requests ---------------------------------------------------------------------

TEST(HttpParser, SimpleGet) {
  const std::string input =
      "GET /api/v1/leads/ld_1?expand=buyer&x=%41 HTTP/1.1\r\nHost: a.example\r\n"
      "Accept: */*\r\n\r\n";
  http::Request req;
  const ParseResult result = parse(input, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete) << result.error_detail;
  EXPECT_EQ(result.consumed, input.size());
  EXPECT_TRUE(result.headers_complete);
  EXPECT_EQ(req.method(), "GET");
  EXPECT_EQ(req.target(), "/api/v1/leads/ld_1?expand=buyer&x=%41");
  EXPECT_EQ(req.path(), "/api/v1/leads/ld_1");
  EXPECT_EQ(req.query(), "expand=buyer&x=%41");
  EXPECT_EQ(req.version_minor(), 1);
  ASSERT_EQ(req.header_fields(), 2u);
  EXPECT_EQ(req.header_at(0).name, "Host");
  EXPECT_EQ(req.header_at(0).value, "a.example");
  EXPECT_EQ(req.header_at(1).name, "Accept");
  EXPECT_EQ(req.header_at(1).value, "*/*");
  EXPECT_TRUE(req.body().empty());
  EXPECT_TRUE(req.keep_alive());
  EXPECT_FALSE(req.expect_continue());
}

TEST(HttpParser, SimplePostWithJsonBody) {
  const std::string input = post_with_body(kJsonBody);
  http::Request req;
  const ParseResult result = parse(input, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete) << result.error_detail;
  EXPECT_EQ(result.consumed, input.size());
  EXPECT_EQ(req.method(), "POST");
  EXPECT_EQ(req.path(), "/api/v1/leads");
  EXPECT_EQ(req.query(), "src=x");
  EXPECT_EQ(req.body(), kJsonBody);
}

TEST(HttpParser, MethodIsKeptAsSent) {
  http::Request req;
  ASSERT_EQ(parse("get / HTTP/1.1\r\nHost: h\r\n\r\n", req).status, ParseStatus::kComplete);
  EXPECT_EQ(req.method(), "get");
  ASSERT_EQ(parse("M-SEARCH * HTTP/1.1\r\nHost: h\r\n\r\n", req).status, ParseStatus::kComplete);
  EXPECT_EQ(req.method(), "M-SEARCH");
  EXPECT_EQ(req.target(), "*");
  EXPECT_EQ(req.path(), "*");
}

TEST(HttpParser, HeaderNamesKeptAsSentButMatchedCaseInsensitively) {
  const std::string input =
      "POST /x HTTP/1.1\r\nhOsT: h\r\ncontent-LENGTH: 3\r\nX-Custom-Thing:  a b \t\r\n"
      "X-Empty:\r\nX-Tab:\tv\r\n\r\nabc";
  http::Request req;
  const ParseResult result = parse(input, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete) << result.error_detail;
  EXPECT_EQ(req.body(), "abc");
  ASSERT_NE(find_header(req, "hOsT"), std::nullopt);
  ASSERT_NE(find_header(req, "content-LENGTH"), std::nullopt);
  EXPECT_EQ(*find_header(req, "X-Custom-Thing"), "a b");
  EXPECT_EQ(*find_header(req, "X-Empty"), "");
  EXPECT_EQ(*find_header(req, "X-Tab"), "v");
}

TEST(HttpParser, ValueMayCarryObsTextAndHtab) {
  http::Request req;
  const std::string input = "GET / HTTP/1.1\r\nHost: h\r\nX-Name: J\xc3\xbcrgen\tM\r\n\r\n";
  ASSERT_EQ(parse(input, req).status, ParseStatus::kComplete);
  EXPECT_EQ(*find_header(req, "X-Name"), "J\xc3\xbcrgen\tM");
}

TEST(HttpParser, AbsoluteFormTargetYieldsPathAndQuery) {
  http::Request req;
  ASSERT_EQ(parse("GET http://leads.example.com/a%20b?q=1 HTTP/1.1\r\nHost: h\r\n\r\n", req).status,
            ParseStatus::kComplete);
  EXPECT_EQ(req.target(), "http://leads.example.com/a%20b?q=1");
  EXPECT_EQ(req.path(), "/a b");
  EXPECT_EQ(req.query(), "q=1");
  ASSERT_EQ(parse("GET HTTPS://h:8443 HTTP/1.1\r\nHost: h\r\n\r\n", req).status,
            ParseStatus::kComplete);
  EXPECT_EQ(req.path(), "/");
  EXPECT_EQ(req.query(), "");
  ASSERT_EQ(parse("GET http://h?z HTTP/1.1\r\nHost: h\r\n\r\n", req).status,
            ParseStatus::kComplete);
  EXPECT_EQ(req.path(), "/");
  EXPECT_EQ(req.query(), "z");
}

TEST(HttpParser, PathIsPercentDecodedQueryStaysRaw) {
  http::Request req;
  ASSERT_EQ(parse("GET /a%2Fb+c%zz?x=%20+y HTTP/1.1\r\nHost: h\r\n\r\n", req).status,
            ParseStatus::kComplete);
  EXPECT_EQ(req.path(), "/a/b+c%zz");
  EXPECT_EQ(req.query(), "x=%20+y");
  ASSERT_EQ(parse("GET /? HTTP/1.1\r\nHost: h\r\n\r\n", req).status, ParseStatus::kComplete);
  EXPECT_EQ(req.path(), "/");
  EXPECT_EQ(req.query(), "");
}

TEST(HttpParser, Http10WithoutHost) {
  http::Request req;
  const ParseResult result = parse("GET /health HTTP/1.0\r\n\r\n", req);
  ASSERT_EQ(result.status, ParseStatus::kComplete) << result.error_detail;
  EXPECT_EQ(req.version_minor(), 0);
  EXPECT_FALSE(req.keep_alive());
}

TEST(HttpParser, BareLfIsALineTerminator) {
  http::Request req;
  const std::string input = "POST /x HTTP/1.1\nHost: h\nContent-Length: 2\n\nok";
  const ParseResult result = parse(input, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete) << result.error_detail;
  EXPECT_EQ(result.consumed, input.size());
  EXPECT_EQ(req.body(), "ok");
}

TEST(HttpParser, LeadingEmptyLinesAreSkippedAndConsumed) {
  const std::string input = "\r\n\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n";
  http::Request req;
  const ParseResult result = parse(input, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete) << result.error_detail;
  EXPECT_EQ(result.consumed, input.size());
  EXPECT_EQ(req.method(), "GET");
  EXPECT_EQ(parse("\r\n").status, ParseStatus::kIncomplete);
  EXPECT_EQ(parse("\r").status, ParseStatus::kIncomplete);
  std::string flood;
  for (int i = 0; i < 50; ++i) flood += "\r\n";
  EXPECT_EQ(error_status(flood + "GET / HTTP/1.1\r\nHost: h\r\n\r\n"), 400);
  EXPECT_EQ(error_status("\rGET / HTTP/1.1\r\nHost: h\r\n\r\n"), 400);
}

TEST(HttpParser, EmptyInputIsIncomplete) {
  const ParseResult result = parse("");
  EXPECT_EQ(result.status, ParseStatus::kIncomplete);
  EXPECT_FALSE(result.headers_complete);
}

// --- Incremental and pipelined input -------------------------------------------------------

void expect_every_prefix_incomplete(const std::string& input) {
  for (std::size_t n = 0; n < input.size(); ++n) {
    const ParseResult result = parse(std::string_view(input).substr(0, n));
    ASSERT_EQ(result.status, ParseStatus::kIncomplete)
        << "prefix length " << n << ": " << result.error_detail;
  }
  const ParseResult whole = parse(input);
  ASSERT_EQ(whole.status, ParseStatus::kComplete) << whole.error_detail;
  EXPECT_EQ(whole.consumed, input.size());
}

TEST(HttpParser, ByteByByteContentLength) {
  expect_every_prefix_incomplete(post_with_body(kJsonBody));
}

TEST(HttpParser, ByteByByteChunkedWithTrailers) {
  expect_every_prefix_incomplete(
      "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=val\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: t\r\n\r\n");
}

TEST(HttpParser, ByteByByteBareLfAndLeadingEmptyLine) {
  expect_every_prefix_incomplete("\r\nGET / HTTP/1.0\nX: y\n\n");
}

TEST(HttpParser, HeadersCompleteWhileBodyIsPartial) {
  const std::string input = post_with_body(kJsonBody);
  const std::size_t header_end = input.find("\r\n\r\n") + 4;
  EXPECT_FALSE(parse(std::string_view(input).substr(0, header_end - 1)).headers_complete);
  const ParseResult at_end = parse(std::string_view(input).substr(0, header_end));
  EXPECT_EQ(at_end.status, ParseStatus::kIncomplete);
  EXPECT_TRUE(at_end.headers_complete);
  const ParseResult partial = parse(std::string_view(input).substr(0, header_end + 10));
  EXPECT_EQ(partial.status, ParseStatus::kIncomplete);
  EXPECT_TRUE(partial.headers_complete);
}

TEST(HttpParser, ExpectContinue) {
  const std::string head =
      "POST /x HTTP/1.1\r\nHost: h\r\nExpect:  100-Continue \r\nContent-Length: 4\r\n\r\n";
  http::Request req;
  const ParseResult waiting = parse(head, req);
  EXPECT_EQ(waiting.status, ParseStatus::kIncomplete);
  EXPECT_TRUE(waiting.headers_complete);
  // The caller decides on "100 Continue" before the body is there, so the header part is filled.
  EXPECT_TRUE(req.expect_continue());
  EXPECT_EQ(req.path(), "/x");
  const ParseResult done = parse(head + "data", req);
  ASSERT_EQ(done.status, ParseStatus::kComplete);
  EXPECT_TRUE(req.expect_continue());
  ASSERT_EQ(parse("POST /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue-ish\r\n\r\n", req).status,
            ParseStatus::kComplete);
  EXPECT_FALSE(req.expect_continue());
  ASSERT_EQ(parse("POST /x HTTP/1.1\r\nHost: h\r\n\r\n", req).status, ParseStatus::kComplete);
  EXPECT_FALSE(req.expect_continue());
}

TEST(HttpParser, PipelinedRequests) {
  const std::string first = post_with_body(kJsonBody);
  const std::string second = "GET /second HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
  const std::string third =
      "POST /third HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n";
  std::string buffer = first + second + third;

  http::Request req;
  ParseResult result = parse(buffer, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete);
  EXPECT_EQ(result.consumed, first.size());
  EXPECT_EQ(req.body(), kJsonBody);
  buffer.erase(0, result.consumed);

  result = parse(buffer, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete);
  EXPECT_EQ(result.consumed, second.size());
  EXPECT_EQ(req.path(), "/second");
  EXPECT_FALSE(req.keep_alive());
  EXPECT_TRUE(req.body().empty());
  buffer.erase(0, result.consumed);

  result = parse(buffer, req);
  EXPECT_EQ(result.status, ParseStatus::kIncomplete);
  EXPECT_TRUE(result.headers_complete);
  buffer += "0\r\n\r\nGET /fourth";
  result = parse(buffer, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete);
  EXPECT_EQ(result.consumed, third.size() + 5);
  EXPECT_EQ(req.body(), "abc");
  buffer.erase(0, result.consumed);
  EXPECT_EQ(buffer, "GET /fourth");
  EXPECT_EQ(parse(buffer, req).status, ParseStatus::kIncomplete);
}

TEST(HttpParser, ReusedRequestObjectIsReset) {
  http::Request req;
  ASSERT_EQ(parse(post_with_body("abc"), req).status, ParseStatus::kComplete);
  ASSERT_EQ(parse("GET /b HTTP/1.1\r\nHost: h\r\n\r\n", req).status, ParseStatus::kComplete);
  EXPECT_TRUE(req.body().empty());
  EXPECT_EQ(req.query(), "");
  EXPECT_EQ(req.header_fields(), 1u);
}

// --- Request line errors -------------------------------------------------------------------

TEST(HttpParser, MalformedRequestLineIs400) {
  for (const char* input : {
           " GET / HTTP/1.1\r\nHost: h\r\n\r\n",         // no method
           "GE(T / HTTP/1.1\r\nHost: h\r\n\r\n",         // non-token method
           "GET  / HTTP/1.1\r\nHost: h\r\n\r\n",         // two spaces
           "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n",         // tab separator
           "GET / HTTP/1.1 \r\nHost: h\r\n\r\n",         // trailing space
           "GET /  HTTP/1.1\r\nHost: h\r\n\r\n",         // two spaces before the version
           "GET /\r\nHost: h\r\n\r\n",                   // HTTP/0.9 style
           "GET / \r\nHost: h\r\n\r\n",                  // empty version
           "GET / http/1.1\r\nHost: h\r\n\r\n",          // lowercase protocol
           "GET / HTTP/1.10\r\nHost: h\r\n\r\n",         // two-digit minor
           "GET / HTTP/11\r\nHost: h\r\n\r\n",           // no dot
           "GET / FOO\r\nHost: h\r\n\r\n",               // not a version
           "GET a/b HTTP/1.1\r\nHost: h\r\n\r\n",        // not origin-form
           "CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n",  // authority-form
           "GET ftp://h/x HTTP/1.1\r\nHost: h\r\n\r\n",  // other scheme
           "GET http:///x HTTP/1.1\r\nHost: h\r\n\r\n",  // absolute-form without host
           "GET /a\x01 HTTP/1.1\r\nHost: h\r\n\r\n",     // control char in target
           "GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n",     // DEL in target
           "GET /a\tb HTTP/1.1\r\nHost: h\r\n\r\n",      // tab in target
           "GET / HTTP/1.1\rHost: h\r\n\r\n",            // bare CR ending the line
       }) {
    EXPECT_EQ(error_status(input), 400) << input;
  }
  EXPECT_EQ(error_status(bytes("GET /a\0b HTTP/1.1\r\nHost: h\r\n\r\n")), 400);
}

TEST(HttpParser, GarbageVersionIsReportedBeforeTheLineEnds) {
  EXPECT_EQ(error_status("GET / HTTQ"), 400);
  EXPECT_EQ(error_status("GET / HTTP/1.1x"), 400);
  EXPECT_EQ(parse("GET / HTTP/1.").status, ParseStatus::kIncomplete);
}

TEST(HttpParser, UnsupportedVersionIs505) {
  for (const char* version : {"HTTP/2.0", "HTTP/1.2", "HTTP/3.0", "HTTP/0.9", "HTTP/9.9"}) {
    EXPECT_EQ(error_status(std::string("GET / ") + version + "\r\nHost: h\r\n\r\n"), 505)
        << version;
  }
}

TEST(HttpParser, LongTargetIs414) {
  ParseLimits limits;
  limits.max_target_bytes = 64;
  const std::string exact = "/" + std::string(63, 'a');
  EXPECT_EQ(parse("GET " + exact + " HTTP/1.1\r\nHost: h\r\n\r\n", limits).status,
            ParseStatus::kComplete);
  EXPECT_EQ(error_status("GET " + exact + "b HTTP/1.1\r\nHost: h\r\n\r\n", limits), 414);
  // Detected before the request line is complete.
  EXPECT_EQ(parse("GET " + exact, limits).status, ParseStatus::kIncomplete);
  EXPECT_EQ(error_status("GET " + exact + "b", limits), 414);
  // Default limit.
  EXPECT_EQ(error_status("GET /" + std::string(9000, 'x')), 414);
}

// --- Header section errors -----------------------------------------------------------------

TEST(HttpParser, MalformedHeaderFieldsAre400) {
  for (const char* fields : {
           "Host : h\r\n",                       // space before colon
           "Host\t: h\r\n",                      // tab before colon
           "Host: h\r\nX-A: 1\r\n  folded\r\n",  // obs-fold
           "Host: h\r\nX-A: 1\r\n\tfolded\r\n",  // obs-fold with tab
           " Host: h\r\n",                       // first field line starts with whitespace
           "Host: h\r\nNoColon\r\n",             // no colon
           "Host: h\r\n: value\r\n",             // empty name
           "Host: h\r\nX(A): 1\r\n",             // non-token name
           "Host: h\r\nX-A: a\rb\r\n",           // bare CR in value
           "Host: h\r\nX-A: a\x01\r\n",          // control char in value
           "Host: h\r\nX-A: a\x7f\r\n",          // DEL in value
           "Host: h\r\nX-A: 1\r\r\n",            // CR CR LF
           "Host: h\r\n\r\r\n",                  // bare CR in the blank line
       }) {
    EXPECT_EQ(error_status(std::string("GET / HTTP/1.1\r\n") + fields + "\r\n"), 400) << fields;
  }
}

TEST(HttpParser, NulInHeaderValueIs400) {
  const std::string input = bytes("GET / HTTP/1.1\r\nHost: h\r\nX-A: a\0b\r\n\r\n");
  EXPECT_EQ(error_status(input), 400);
  // The NUL is reported before the line is complete.
  EXPECT_EQ(error_status(std::string_view(input).substr(0, input.find('\0') + 1)), 400);
}

TEST(HttpParser, NulInHeaderNameIs400) {
  EXPECT_EQ(error_status(bytes("GET / HTTP/1.1\r\nHost: h\r\nX\0A: b\r\n\r\n")), 400);
}

TEST(HttpParser, LargeHeaderSectionIs431) {
  ParseLimits limits;
  limits.max_header_bytes = 200;
  const std::string head = "GET / HTTP/1.1\r\nHost: h\r\nX-Pad: ";
  // Exactly at the limit, blank line included.
  const std::string fits = head + std::string(200 - head.size() - 4, 'p') + "\r\n\r\n";
  ASSERT_EQ(fits.size(), 200u);
  EXPECT_EQ(parse(fits, limits).status, ParseStatus::kComplete);
  const std::string over = head + std::string(200 - head.size() - 3, 'p') + "\r\n\r\n";
  EXPECT_EQ(error_status(over, limits), 431);
  // Reported as soon as the limit is reached without the blank line, body bytes or not.
  EXPECT_EQ(parse(std::string_view(over).substr(0, 199), limits).status, ParseStatus::kIncomplete);
  EXPECT_EQ(error_status(std::string_view(over).substr(0, 200), limits), 431);
  EXPECT_EQ(error_status(head + std::string(100000, 'p')), 431);
  // Leading empty lines do not count towards the section.
  EXPECT_EQ(parse("\r\n\r\n" + fits, limits).status, ParseStatus::kComplete);
}

TEST(HttpParser, TooManyHeaderFieldsIs431) {
  ParseLimits limits;
  limits.max_header_count = 5;
  std::string input = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < 4; ++i) input += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(parse(input + "\r\n", limits).status, ParseStatus::kComplete);
  EXPECT_EQ(error_status(input + "X-5: v\r\n\r\n", limits), 431);
  EXPECT_EQ(error_status(input + "X", limits), 431);
  std::string many = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < 200; ++i) many += "A: b\r\n";
  EXPECT_EQ(error_status(many + "\r\n"), 431);
}

TEST(HttpParser, HostRules) {
  EXPECT_EQ(error_status("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n"), 400);
  EXPECT_EQ(error_status("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"), 400);
  EXPECT_EQ(error_status("GET / HTTP/1.1\r\nHost: a\r\nHOST: a\r\n\r\n"), 400);
  EXPECT_EQ(error_status("GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n"), 400);
  EXPECT_EQ(parse("GET / HTTP/1.1\r\nHost:\r\n\r\n").status, ParseStatus::kComplete);
}

// --- Body framing --------------------------------------------------------------------------

TEST(HttpParser, ContentLengthListsMustAgree) {
  http::Request req;
  ASSERT_EQ(
      parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", req)
          .status,
      ParseStatus::kComplete);
  EXPECT_EQ(req.body(), "abc");
  ASSERT_EQ(parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3 , 3\r\n\r\nabc", req).status,
            ParseStatus::kComplete);
  EXPECT_EQ(req.body(), "abc");
  ASSERT_EQ(parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0003\r\n\r\nabc", req).status,
            ParseStatus::kComplete);
  EXPECT_EQ(error_status(
                "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"),
            400);
  EXPECT_EQ(error_status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 4\r\n\r\nabcd"), 400);
}

TEST(HttpParser, InvalidContentLengthIs400) {
  for (const char* value : {"", "+5", "-5", "5a", "0x5", "5 5", "5,", ",5", "5.0", "1e3",
                            "99999999999999999999999999", "18446744073709551616"}) {
    EXPECT_EQ(error_status(std::string("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ") + value +
                           "\r\n\r\n"),
              400)
        << value;
  }
}

TEST(HttpParser, DeclaredBodyOverLimitIs413AtHeaderCompletion) {
  ParseLimits limits;
  limits.max_body_bytes = 10;
  EXPECT_EQ(parse(post_with_body("0123456789"), limits).status, ParseStatus::kComplete);
  const ParseResult result =
      parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n", limits);
  EXPECT_EQ(result.status, ParseStatus::kError);
  EXPECT_EQ(result.error_status, 413);
  EXPECT_EQ(
      error_status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551615\r\n\r\n"),
      413);
}

TEST(HttpParser, ContentLengthWithTransferEncodingIsSmuggling) {
  const ParseResult result = parse(
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: "
      "chunked\r\n\r\n0\r\n\r\n");
  ASSERT_EQ(result.status, ParseStatus::kError);
  EXPECT_EQ(result.error_status, 400);
  EXPECT_EQ(result.error_detail, "Content-Length and Transfer-Encoding together.");
  EXPECT_EQ(
      error_status(
          "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"),
      400);
  EXPECT_EQ(
      error_status(
          "POST / HTTP/1.1\r\nHost: h\r\ntransfer-encoding: chunked\r\ncontent-length: 0\r\n\r\n"),
      400);
}

TEST(HttpParser, TransferEncodingRules) {
  const std::string head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: ";
  EXPECT_EQ(parse(head + "Chunked\r\n\r\n0\r\n\r\n").status, ParseStatus::kComplete);
  EXPECT_EQ(parse(head + " chunked \r\n\r\n0\r\n\r\n").status, ParseStatus::kComplete);
  EXPECT_EQ(error_status(head + "gzip, chunked\r\n\r\n0\r\n\r\n"), 501);
  EXPECT_EQ(error_status(head + "gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), 501);
  EXPECT_EQ(error_status(head + "deflate,chunked\r\n\r\n"), 501);
  // Without chunked last the body length is unknowable (RFC 9112 6.3): 400.
  EXPECT_EQ(error_status(head + "gzip\r\n\r\n"), 400);
  EXPECT_EQ(error_status(head + "chunked, gzip\r\n\r\n"), 400);
  EXPECT_EQ(error_status(head + "chunked;q=1\r\n\r\n"), 400);
  EXPECT_EQ(error_status(head + "\r\n\r\n"), 400);
  EXPECT_EQ(error_status(head + "chunked, chunked\r\n\r\n"), 400);
  EXPECT_EQ(error_status("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"), 400);
}

TEST(HttpParser, NoFramingMeansEmptyBody) {
  const std::string input = "POST /x HTTP/1.1\r\nHost: h\r\n\r\nGET /y HTTP/1.1\r\n";
  http::Request req;
  const ParseResult result = parse(input, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete);
  EXPECT_EQ(result.consumed, input.find("GET"));
  EXPECT_TRUE(req.body().empty());
}

// --- Chunked bodies ------------------------------------------------------------------------

std::string chunked(std::string_view chunks) {
  return "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(chunks);
}

TEST(HttpParser, ChunkedDecoding) {
  http::Request req;
  const std::string input =
      chunked("4\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\n");
  const ParseResult result = parse(input, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete) << result.error_detail;
  EXPECT_EQ(result.consumed, input.size());
  EXPECT_EQ(req.body(), "Wikipedia in\r\n\r\nchunks.");
}

TEST(HttpParser, ChunkedExtensionsAndTrailersAreIgnored) {
  http::Request req;
  const std::string input = chunked(
      "3;ext=1;other=\"q v\"\r\nabc\r\n2 ; x\r\nde\r\n0;last\r\nX-Checksum: 1\r\nX-More: "
      "2\r\n\r\n");
  const ParseResult result = parse(input, req);
  ASSERT_EQ(result.status, ParseStatus::kComplete) << result.error_detail;
  EXPECT_EQ(result.consumed, input.size());
  EXPECT_EQ(req.body(), "abcde");
  EXPECT_EQ(find_header(req, "X-Checksum"), std::nullopt);
}

TEST(HttpParser, ChunkedWithBareLf) {
  http::Request req;
  ASSERT_EQ(parse(chunked("3\nabc\n0\n\n"), req).status, ParseStatus::kComplete);
  EXPECT_EQ(req.body(), "abc");
}

TEST(HttpParser, ChunkedIncompleteUntilFinalCrlf) {
  EXPECT_EQ(parse(chunked("3\r\nabc\r\n0\r\n")).status, ParseStatus::kIncomplete);
  EXPECT_EQ(parse(chunked("3\r\nabc\r\n0\r\nX-T: 1\r\n")).status, ParseStatus::kIncomplete);
  EXPECT_EQ(parse(chunked("3\r\nab")).status, ParseStatus::kIncomplete);
}

TEST(HttpParser, MalformedChunksAre400) {
  for (const char* chunks : {
           "3\r\nabcX\r\n0\r\n\r\n",                   // data longer than the size
           "3\r\nabc0\r\n\r\n",                        // missing CRLF after data
           "3\r\nabc\rX0\r\n\r\n",                     // bare CR after data
           "xyz\r\nabc\r\n0\r\n\r\n",                  // not hex
           "\r\nabc\r\n0\r\n\r\n",                     // empty size
           "-3\r\nabc\r\n0\r\n\r\n",                   // sign
           "0x3\r\nabc\r\n0\r\n\r\n",                  // hex prefix
           "3 \r\nabc\r\n0\r\n\r\n",                   // whitespace without an extension
           "3;a\x01\r\nabc\r\n0\r\n\r\n",              // control char in an extension
           "3\rabc\r\n0\r\n\r\n",                      // bare CR in the size line
           "3\r\nabc\r\n0\r\nBad Trailer: x\r\n\r\n",  // malformed trailer
           "3\r\nabc\r\n0\r\nX: a\x01\r\n\r\n",        // control char in a trailer
       }) {
    EXPECT_EQ(error_status(chunked(chunks)), 400) << chunks;
  }
}

TEST(HttpParser, HugeChunkSizeIsRejected) {
  // More hex digits than 64 bits hold: overflow attempt.
  EXPECT_EQ(error_status(chunked("1FFFFFFFFFFFFFFFF\r\nabc\r\n0\r\n\r\n")), 400);
  EXPECT_EQ(error_status(chunked("00000000000000000003\r\nabc\r\n0\r\n\r\n")), 400);
  EXPECT_EQ(error_status(chunked("FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF\r\n")), 400);
  // Fits 64 bits but is over the body limit.
  EXPECT_EQ(error_status(chunked("FFFFFFFFFFFFFFFF\r\n")), 413);
}

TEST(HttpParser, ChunkedBodyOverLimitIs413AsSoonAsKnown) {
  ParseLimits limits;
  limits.max_body_bytes = 10;
  EXPECT_EQ(parse(chunked("5\r\n01234\r\n5\r\n56789\r\n0\r\n\r\n"), limits).status,
            ParseStatus::kComplete);
  // The second size line already takes the body over the limit; its data never arrives.
  EXPECT_EQ(error_status(chunked("5\r\n01234\r\n6\r\n"), limits), 413);
  EXPECT_EQ(error_status(chunked("B"), limits), 413);
}

TEST(HttpParser, ChunkFramingIsBounded) {
  ParseLimits limits;
  limits.max_body_bytes = 1000;
  // One-byte chunks with padded sizes: the raw body grows far beyond the decoded one.
  std::string chunks;
  for (int i = 0; i < 200; ++i) chunks += "000000000000001\r\na\r\n";
  const ParseResult result = parse(chunked(chunks), limits);
  ASSERT_EQ(result.status, ParseStatus::kError);
  EXPECT_EQ(result.error_status, 413);
  EXPECT_EQ(result.error_detail, "Chunked body framing is too large.");
  // Ordinary small chunks stay well within the bound.
  std::string small_chunks;
  for (int i = 0; i < 100; ++i) small_chunks += "a\r\n0123456789\r\n";
  EXPECT_EQ(parse(chunked(small_chunks + "0\r\n\r\n"), limits).status, ParseStatus::kComplete);
  // Extensions are bounded in total, whitespace before them included.
  std::string extended;
  for (int i = 0; i < 10; ++i) extended += "1;" + std::string(1000, 'e') + "\r\na\r\n";
  EXPECT_EQ(error_status(chunked(extended + "0\r\n\r\n")), 400);
  EXPECT_EQ(error_status(chunked("1" + std::string(5000, ' '))), 400);
  EXPECT_EQ(parse(chunked("1 \t ")).status, ParseStatus::kIncomplete);
}

TEST(HttpParser, LargeTrailerSectionIs431) {
  ParseLimits limits;
  limits.max_header_bytes = 200;
  EXPECT_EQ(error_status(chunked("1\r\na\r\n0\r\nX-Pad: " + std::string(300, 'p')), limits), 431);
  limits.max_header_count = 3;
  EXPECT_EQ(error_status(chunked("1\r\na\r\n0\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n"), limits),
            431);
}

// --- Connection handling -------------------------------------------------------------------

bool keep_alive_of(const std::string& version, const std::string& connection_headers) {
  http::Request req;
  const ParseResult result =
      parse("GET / HTTP/" + version + "\r\nHost: h\r\n" + connection_headers + "\r\n", req);
  EXPECT_EQ(result.status, ParseStatus::kComplete) << result.error_detail;
  return req.keep_alive();
}

TEST(HttpParser, KeepAliveRules) {
  EXPECT_TRUE(keep_alive_of("1.1", ""));
  EXPECT_TRUE(keep_alive_of("1.1", "Connection: keep-alive\r\n"));
  EXPECT_FALSE(keep_alive_of("1.1", "Connection: close\r\n"));
  EXPECT_FALSE(keep_alive_of("1.1", "Connection: Upgrade, CLOSE\r\n"));
  EXPECT_FALSE(keep_alive_of("1.1", "Connection: te\r\nconnection: close\r\n"));
  EXPECT_TRUE(keep_alive_of("1.1", "Connection: closed\r\n"));
  EXPECT_FALSE(keep_alive_of("1.0", ""));
  EXPECT_TRUE(keep_alive_of("1.0", "Connection: Keep-Alive\r\n"));
  EXPECT_TRUE(keep_alive_of("1.0", "Connection: foo , keep-alive\r\n"));
  EXPECT_FALSE(keep_alive_of("1.0", "Connection: close\r\n"));
  EXPECT_FALSE(keep_alive_of("1.0", "Connection: keep-alive-ish\r\n"));
}

// --- Robustness ----------------------------------------------------------------------------

// A peer that never stops sending must get an error within a bounded number of bytes, or the
// caller would buffer forever.
TEST(HttpParser, EndlessStreamsEndInAnError) {
  ParseLimits limits;
  limits.max_header_bytes = 256;
  limits.max_target_bytes = 64;
  limits.max_body_bytes = 256;
  limits.max_header_count = 8;
  const std::string chunked_head =
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  const struct {
    std::string prefix;
    std::string repeated;
    int status;
  } streams[] = {
      {"", "\r\n", 400},
      {"", "GET", 431},
      {"GET /", "a", 414},
      {"GET / HTTP/1.1\r\nHost: h\r\nX: ", "v", 431},
      {"GET / HTTP/1.1\r\n", "X: v\r\n", 431},
      {chunked_head, "1\r\na\r\n", 413},
      {chunked_head, "000000000000001\r\na\r\n", 413},
      {chunked_head + "1", " ", 400},
      {chunked_head + "1;", "e", 400},
      {chunked_head + "0\r\n", "X: v\r\n", 431},
      {chunked_head + "0\r\nX: ", "v", 431},
  };
  for (const auto& stream : streams) {
    std::string input = stream.prefix;
    while (input.size() < 16 * 1024) input += stream.repeated;
    const ParseResult result = parse(input, limits);
    ASSERT_EQ(result.status, ParseStatus::kError) << stream.prefix << stream.repeated;
    EXPECT_EQ(result.error_status, stream.status) << stream.prefix << stream.repeated;
  }
}

TEST(HttpParser, RandomMutationsNeverCrash) {
  const std::vector<std::string> seeds = {
      post_with_body(kJsonBody),
      chunked("5;e=1\r\nhello\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"),
      "GET /a%20b?c=d HTTP/1.0\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n\r\n",
  };
  const std::string interesting = bytes("\r\n :;\t\0%0123456789abcdefABCDEF,\x7f\xff");
  std::mt19937 rng(20240611);
  ParseLimits small;
  small.max_header_bytes = 128;
  small.max_target_bytes = 16;
  small.max_body_bytes = 32;
  small.max_header_count = 4;
  http::Request req;
  for (int iteration = 0; iteration < 5000; ++iteration) {
    std::string input = seeds[rng() % seeds.size()];
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations && !input.empty(); ++m) {
      const std::size_t at = rng() % input.size();
      switch (rng() % 5) {
        case 0:
          input[at] = static_cast<char>(rng() % 256);
          break;
        case 1:
          input.insert(at, 1, interesting[rng() % interesting.size()]);
          break;
        case 2:
          input.erase(at, 1 + rng() % 8);
          break;
        case 3:
          input.resize(at);
          break;
        case 4:
          input.insert(at, input.substr(at, rng() % 32));
          break;
      }
    }
    const ParseLimits limits = (iteration % 3 == 0) ? small : ParseLimits{};
    const ParseResult result = parse_request(input, limits, req);
    ASSERT_LE(result.consumed, input.size());
    switch (result.status) {
      case ParseStatus::kIncomplete:
        break;
      case ParseStatus::kComplete: {
        ASSERT_GT(result.consumed, 0u);
        ASSERT_TRUE(result.headers_complete);
        ASSERT_LE(req.body().size(), limits.max_body_bytes);
        // The request is self-delimiting: the same bytes alone parse the same way.
        http::Request again;
        const ParseResult alone =
            parse_request(std::string_view(input).substr(0, result.consumed), limits, again);
        ASSERT_EQ(alone.status, ParseStatus::kComplete) << input;
        ASSERT_EQ(alone.consumed, result.consumed);
        ASSERT_EQ(again.body(), req.body());
        break;
      }
      case ParseStatus::kError:
        ASSERT_TRUE(result.error_status == 400 || result.error_status == 413 ||
                    result.error_status == 414 || result.error_status == 431 ||
                    result.error_status == 501 || result.error_status == 505)
            << result.error_status;
        ASSERT_FALSE(result.error_detail.empty());
        break;
      default:
        FAIL() << "unexpected status";
    }
  }
}

// --- RequestReader: a connection's input as it arrives ----------------------------------------

// Feeds `input` to a reader in prefixes growing by `step` bytes, as reads would bring it, and
// returns the first answer that is not kIncomplete (or the last one).
ParseResult read_in_steps(std::string_view input, std::size_t step, http::Request& request,
                          RequestReader& reader) {
  ParseResult result;
  for (std::size_t have = std::min(step, input.size());;
       have = std::min(have + step, input.size())) {
    result = reader.read(input.substr(0, have), request);
    if (result.status != ParseStatus::kIncomplete || have == input.size()) return result;
  }
}

std::string chunked_request(std::size_t body_bytes, std::size_t chunk, bool extensions = true) {
  std::string out = "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (std::size_t done = 0; done < body_bytes; done += chunk) {
    const std::size_t n = std::min(chunk, body_bytes - done);
    char size[32];
    std::snprintf(size, sizeof size, extensions ? "%zx;e=1\r\n" : "%zx\r\n", n);
    out += size;
    out.append(n, static_cast<char>('a' + done % 26));
    out += "\r\n";
  }
  return out + "0\r\nTrailer: x\r\n\r\n";
}

// Whatever the reads, the reader ends where parse_request on the whole input does; an error in a
// header section it may only see once the section is over.
void expect_reader_agrees(std::string_view input, const ParseLimits& limits = {}) {
  http::Request whole;
  const ParseResult expected = parse_request(input, limits, whole);
  for (const std::size_t step : {std::size_t{1}, std::size_t{2}, std::size_t{7}, input.size()}) {
    if (step == 0) continue;
    RequestReader reader(limits);
    http::Request request;
    const ParseResult got = read_in_steps(input, step, request, reader);
    if (expected.status == ParseStatus::kError && got.status == ParseStatus::kIncomplete) continue;
    ASSERT_EQ(got.status, expected.status) << "step " << step << ": " << input;
    ASSERT_EQ(got.headers_complete, expected.headers_complete) << input;
    if (expected.status == ParseStatus::kError) {
      EXPECT_EQ(got.error_status, expected.error_status) << input;
      EXPECT_EQ(got.error_detail, expected.error_detail) << input;
    } else if (expected.status == ParseStatus::kComplete) {
      EXPECT_EQ(got.consumed, expected.consumed);
      EXPECT_EQ(request.method(), whole.method());
      EXPECT_EQ(request.target(), whole.target());
      EXPECT_EQ(request.body(), whole.body());
      EXPECT_EQ(request.header_fields(), whole.header_fields());
      EXPECT_EQ(request.keep_alive(), whole.keep_alive());
    }
  }
}

TEST(RequestReader, AgreesWithTheWholeParseWhateverTheReads) {
  const std::string inputs[] = {
      post_with_body(kJsonBody),
      "GET /a?x=1 HTTP/1.1\r\nHost: h\r\n\r\n",
      "\r\n\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
      "GET / HTTP/1.1\nHost: h\n\n",
      chunked_request(300, 7),
      "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\n0\n\n",
      "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3  ; "
      "a=b\r\nabc\r\n0\r\n\r\n",
      post_with_body(kJsonBody) + "GET /pipelined HTTP/1.1\r\nHost: h\r\n\r\n",
      // Errors, in the header section and in the body.
      "GET / HTTP/1.1\r\nBad Header\r\n\r\n",
      "GET / HTTP/2.0\r\nHost: h\r\n\r\n",
      "GET /\x01 HTTP/1.1\r\nHost: h\r\n\r\n",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999\r\n\r\n",
      "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3 x\r\nabc\r\n0\r\n\r\n",
      "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n",
      "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nfffff\r\n",
      "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: h\r\n" + std::string(20000, 'x') + "\r\n\r\n",
      std::string(9, '\n') + "GET / HTTP/1.1\r\nHost: h\r\n\r\n",
  };
  for (const std::string& input : inputs) expect_reader_agrees(input);
  ParseLimits small;
  small.max_header_bytes = 64;
  small.max_body_bytes = 16;
  for (const std::string& input : inputs) expect_reader_agrees(input, small);
}

TEST(RequestReader, ReportsAHeaderErrorOnceTheSectionIsOver) {
  RequestReader reader(ParseLimits{});
  http::Request request;
  const std::string head = "GET / HTTP/1.1\r\nBad Header\r\n";
  EXPECT_EQ(reader.read(head, request).status, ParseStatus::kIncomplete);
  const ParseResult r = reader.read(head + "\r\n", request);
  ASSERT_EQ(r.status, ParseStatus::kError);
  EXPECT_EQ(r.error_status, 400);
}

TEST(RequestReader, SaysWhenTheHeadersAreWholeSoThat100ContinueCanBeSent) {
  RequestReader reader(ParseLimits{});
  http::Request request;
  const std::string head =
      "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n";
  const ParseResult r = reader.read(head, request);
  ASSERT_EQ(r.status, ParseStatus::kIncomplete);
  EXPECT_TRUE(r.headers_complete);
  EXPECT_TRUE(request.expect_continue());
  EXPECT_TRUE(reader.read(head + "ab", request).headers_complete);
  ASSERT_EQ(reader.read(head + "abc", request).status, ParseStatus::kComplete);
  EXPECT_EQ(request.body(), "abc");
}

TEST(RequestReader, ReadsOneRequestAfterAnotherOnceReset) {
  RequestReader reader(ParseLimits{});
  const std::string first = post_with_body(kJsonBody);
  const std::string input = first + chunked_request(100, 9);
  http::Request a;
  ParseResult r = reader.read(input, a);
  ASSERT_EQ(r.status, ParseStatus::kComplete);
  EXPECT_EQ(r.consumed, first.size());
  reader.reset();
  http::Request b;
  const std::string_view rest = std::string_view(input).substr(r.consumed);
  r = read_in_steps(rest, 5, b, reader);
  ASSERT_EQ(r.status, ParseStatus::kComplete);
  EXPECT_EQ(b.body().size(), 100u);
}

// The work is counted, not timed: bytes looked at while a request arrives one byte per read.
// A parse of everything received on each read would look at about size²/2 of them.
TEST(RequestReader, WorkIsLinearInTheBytesReceived) {
  ParseLimits limits;
  limits.max_body_bytes = 64 * 1024;
  std::string many_headers = "POST /h HTTP/1.1\r\nHost: h\r\n";
  while (many_headers.size() < 15 * 1024)
    many_headers += "X-Padding: " + std::string(160, 'p') + "\r\n";
  many_headers += "Content-Length: 0\r\n\r\n";
  const std::string cases[] = {
      chunked_request(60 * 1024, 100),       // ~64 KiB on the wire, 600 chunks
      chunked_request(60 * 1024, 1, false),  // one byte per chunk: framing is most of it
      post_with_body(std::string(64 * 1024 - 200, 'b')),
      many_headers,
  };
  for (const std::string& input : cases) {
    RequestReader reader(limits);
    http::Request request;
    const ParseResult r = read_in_steps(input, 1, request, reader);
    if (input.find("\r\n1\r\n") != std::string::npos) {
      // One-byte chunks: over the framing bound, refused as soon as that is known.
      ASSERT_EQ(r.status, ParseStatus::kError);
      EXPECT_EQ(r.error_status, 413);
    } else {
      ASSERT_EQ(r.status, ParseStatus::kComplete) << r.error_detail;
      EXPECT_EQ(r.consumed, input.size());
      EXPECT_GE(reader.examined(), input.size());  // the counting itself is not broken
    }
    // One look per read, the bytes once while reading and once more when the request is copied
    // or the header section parsed: a few times the size, never its square.
    EXPECT_LE(reader.examined(), 4 * input.size()) << input.substr(0, 80);
  }
}

// --- percent_decode ------------------------------------------------------------------------

TEST(PercentDecode, DecodesEscapes) {
  EXPECT_EQ(percent_decode("%2F"), "/");
  EXPECT_EQ(percent_decode("a%20b%2fc"), "a b/c");
  EXPECT_EQ(percent_decode("%41%42%43"), "ABC");
  EXPECT_EQ(percent_decode("%e2%82%AC"), "\xe2\x82\xac");
  EXPECT_EQ(percent_decode("%00"), std::string(1, '\0'));
}

TEST(PercentDecode, KeepsMalformedEscapesAndPlus) {
  EXPECT_EQ(percent_decode(""), "");
  EXPECT_EQ(percent_decode("plain/path"), "plain/path");
  EXPECT_EQ(percent_decode("a+b"), "a+b");
  EXPECT_EQ(percent_decode("%"), "%");
  EXPECT_EQ(percent_decode("%4"), "%4");
  EXPECT_EQ(percent_decode("ab%"), "ab%");
  EXPECT_EQ(percent_decode("%zz"), "%zz");
  EXPECT_EQ(percent_decode("%4g%41"), "%4gA");
  EXPECT_EQ(percent_decode("%%41"), "%A");
  EXPECT_EQ(percent_decode("100%"), "100%");
}

}  // namespace
}  // namespace leadflow::http
