// The HTTP/2 codec on plain bytes: what it sends is read by nghttp2's own server session, and the
// frames that server answers with become the codec's stream ends. No socket anywhere.
#include "h2_codec.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "h2_test_server.hpp"

namespace leadflow::testing {
namespace {

struct CodecAndBuyer {
  explicit CodecAndBuyer(std::uint32_t max_streams = 100)
      : buyer(max_streams), codec([this](H2StreamEnd end) { ends.push_back(std::move(end)); }) {}

  // Moves bytes both ways until neither side has anything more to say.
  void exchange() {
    for (int round = 0; round < 100; ++round) {
      std::string out;
      ASSERT_TRUE(codec.produce(out, 1 << 20)) << codec.error();
      ASSERT_TRUE(buyer.receive(out));
      const std::string in = buyer.produce();
      ASSERT_TRUE(codec.receive(in.data(), in.size())) << codec.error();
      if (out.empty() && in.empty()) return;
    }
    FAIL() << "the codec and the buyer never went quiet";
  }

  H2TestServer buyer;
  std::vector<H2StreamEnd> ends;
  H2Codec codec;
};

HttpRequest post(std::string body) {
  HttpRequest r;
  r.method = "POST";
  r.url = "https://buyer.example/ping";
  r.headers = {{"Content-Type", "application/json"}, {"Connection", "keep-alive"}};
  r.body = std::move(body);
  return r;
}

TEST(H2CodecTest, ARequestBecomesFramesAndTheBuyersFramesBecomeItsAnswer) {
  CodecAndBuyer t;
  const HttpRequest rq = post(R"({"lead":1})");
  const std::int32_t id = t.codec.submit(rq, "buyer.example:8443", "/ping?v=2");
  ASSERT_EQ(id, 1);
  t.exchange();

  const auto& seen = t.buyer.request(id);
  EXPECT_TRUE(seen.complete);
  EXPECT_EQ(seen.fields.at(":method"), "POST");
  EXPECT_EQ(seen.fields.at(":scheme"), "https");
  EXPECT_EQ(seen.fields.at(":authority"), "buyer.example:8443");
  EXPECT_EQ(seen.fields.at(":path"), "/ping?v=2");
  EXPECT_EQ(seen.fields.at("content-type"), "application/json");  // names in lower case
  EXPECT_EQ(seen.fields.at("content-length"), "10");
  EXPECT_EQ(seen.fields.at("user-agent"), "leadflow/0.1");
  EXPECT_EQ(seen.fields.count("connection"), 0u);  // HTTP/2 forbids it
  EXPECT_EQ(seen.body, R"({"lead":1})");
  EXPECT_TRUE(t.ends.empty());

  t.buyer.respond(id, 201, R"({"bid":2.5})");
  t.exchange();
  ASSERT_EQ(t.ends.size(), 1u);
  EXPECT_EQ(t.ends[0].stream_id, id);
  EXPECT_FALSE(t.ends[0].refused);
  const HttpResponse r = response_of(t.ends[0]);
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.body, R"({"bid":2.5})");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(t.codec.open_streams(), 0u);
}

TEST(H2CodecTest, TheBuyersStreamLimitIsHeldToAtMostAHundred) {
  CodecAndBuyer few(3);
  few.exchange();
  EXPECT_EQ(few.codec.stream_limit(), 3u);
  CodecAndBuyer many(1000);
  many.exchange();
  EXPECT_EQ(many.codec.stream_limit(), 100u);
}

TEST(H2CodecTest, AStreamTheBuyerRefusedIsMarkedUnprocessed) {
  CodecAndBuyer t;
  const HttpRequest rq = post("{}");
  const std::int32_t id = t.codec.submit(rq, "buyer.example", "/");
  t.exchange();
  t.buyer.reset(id, NGHTTP2_REFUSED_STREAM);
  t.exchange();
  ASSERT_EQ(t.ends.size(), 1u);
  EXPECT_TRUE(t.ends[0].refused);
  const HttpResponse r = response_of(t.ends[0]);
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.not_delivered);
  EXPECT_EQ(r.error.rfind("stream refused by the buyer: ", 0), 0u) << r.error;
}

TEST(H2CodecTest, AResetAfterProcessingIsNotMarkedUnprocessed) {
  CodecAndBuyer t;
  const HttpRequest rq = post("{}");
  const std::int32_t id = t.codec.submit(rq, "buyer.example", "/");
  t.exchange();
  t.buyer.reset(id, NGHTTP2_INTERNAL_ERROR);
  t.exchange();
  ASSERT_EQ(t.ends.size(), 1u);
  EXPECT_FALSE(t.ends[0].refused);
  const HttpResponse r = response_of(t.ends[0]);
  EXPECT_FALSE(r.not_delivered);
  EXPECT_EQ(r.error.rfind("stream reset: ", 0), 0u) << r.error;
}

TEST(H2CodecTest, StreamsPastAGoawaysLastStreamAreRefusedAndTheOthersStillAnswered) {
  CodecAndBuyer t;
  const HttpRequest first = post("1");
  const HttpRequest second = post("2");
  const std::int32_t a = t.codec.submit(first, "buyer.example", "/");
  const std::int32_t b = t.codec.submit(second, "buyer.example", "/");
  t.exchange();
  t.buyer.goaway(a);
  t.buyer.respond(a, 200, "ok");
  t.exchange();
  EXPECT_TRUE(t.codec.goaway());
  EXPECT_FALSE(t.codec.refused(a));
  EXPECT_TRUE(t.codec.refused(b));
  ASSERT_EQ(t.ends.size(), 2u);
  for (auto& end : t.ends) {
    if (end.stream_id == a) {
      EXPECT_EQ(response_of(end).status, 200);
    } else {
      EXPECT_TRUE(end.refused);
    }
  }
}

TEST(H2CodecTest, ACancelledStreamIsResetAndItsLateAnswerDropped) {
  CodecAndBuyer t;
  const HttpRequest rq = post("{}");
  const std::int32_t id = t.codec.submit(rq, "buyer.example", "/");
  t.exchange();
  t.codec.cancel(id);
  t.exchange();
  EXPECT_EQ(t.buyer.request(id).reset_code, static_cast<std::uint32_t>(NGHTTP2_CANCEL));
  ASSERT_EQ(t.ends.size(), 1u);
  EXPECT_TRUE(t.ends[0].cancelled);
  EXPECT_TRUE(t.ends[0].body.empty());
}

TEST(H2CodecTest, AnAnswerOverOneMebibyteIsCutOff) {
  CodecAndBuyer t;
  const HttpRequest rq = post("{}");
  const std::int32_t id = t.codec.submit(rq, "buyer.example", "/");
  t.exchange();
  t.buyer.respond(id, 200, std::string((1 << 20) + 1, 'x'));
  t.exchange();
  ASSERT_EQ(t.ends.size(), 1u);
  EXPECT_TRUE(t.ends[0].too_large);
  const HttpResponse r = response_of(t.ends[0]);
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.error, "response body larger than 1048576 bytes");
}

TEST(H2CodecTest, ReadsTheHostAuthorityAndPathOfAnHttpsUrl) {
  auto t = parse_https_url("https://Buyer.example:8443/p/ing?q=1#frag");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->key, "https://buyer.example:8443");
  EXPECT_EQ(t->name, "Buyer.example");
  EXPECT_EQ(t->port, "8443");
  EXPECT_EQ(t->authority, "Buyer.example:8443");
  EXPECT_EQ(t->path, "/p/ing?q=1");

  auto v6 = parse_https_url("https://[::1]?x=1");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->name, "::1");
  EXPECT_EQ(v6->port, "443");
  EXPECT_EQ(v6->path, "/?x=1");

  EXPECT_FALSE(parse_https_url("http://buyer.example/"));
  EXPECT_FALSE(parse_https_url("https://user@buyer.example/"));
  EXPECT_FALSE(parse_https_url("https://buyer.example:123456/"));
  EXPECT_FALSE(parse_https_url("https://:443/"));
}

}  // namespace
}  // namespace leadflow::testing
