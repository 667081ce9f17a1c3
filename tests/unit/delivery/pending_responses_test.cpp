// Waiting for buyers' answers on simulated time: answers arrive when the clock gets there, a
// deadline ends the wait without losing the answer, and the request's own timeout is reported as
// the real client reports it.
#include <gtest/gtest.h>

#include <memory>

#include "fake_http_client.hpp"
#include "leadflow/delivery/pending_responses.hpp"
#include "simulated_clock.hpp"

namespace leadflow::testing {
namespace {

using namespace std::chrono_literals;

HttpRequest request_to(const std::string& url, std::chrono::milliseconds timeout = 1s) {
  HttpRequest r;
  r.url = url;
  r.headers = {{"Idempotency-Key", "ld_1"}};
  r.body = R"({"lead_id":"ld_1"})";
  r.timeout = timeout;
  return r;
}

TEST(PendingResponses, AnswersArriveWhenTheClockGetsThere) {
  SimulatedClock clock;
  FakeHttpClient http(clock);
  http.answer("https://a/ping", FakeAnswer::bid(10.0, 300ms));
  http.answer("https://b/ping", FakeAnswer::no_bid(100ms));
  PendingResponses pending(clock);
  const auto a = pending.send(http, request_to("https://a/ping"));
  const auto b = pending.send(http, request_to("https://b/ping"));

  const auto first = pending.wait(a, clock.steady_now() + 1s);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(first->elapsed, 300ms);
  EXPECT_EQ(clock.elapsed(), 300ms);  // not a moment longer than the answer took
  const auto second = pending.wait(b, clock.steady_now());
  ASSERT_TRUE(second);  // came at 100 ms, while waiting for the first
  EXPECT_EQ(second->body, R"({"bid":0})");
}

TEST(PendingResponses, ADeadlineEndsTheWaitAndTheAnswerStillCounts) {
  SimulatedClock clock;
  FakeHttpClient http(clock);
  http.answer("https://slow/ping", FakeAnswer::bid(10.0, 2s));
  PendingResponses pending(clock);
  const auto i = pending.send(http, request_to("https://slow/ping", 5s));
  EXPECT_FALSE(pending.wait(i, clock.steady_now() + 500ms));
  EXPECT_EQ(clock.elapsed(), 500ms);
  EXPECT_TRUE(pending.wait(i));  // no deadline: until the client answers
  EXPECT_EQ(clock.elapsed(), 2s);
}

TEST(PendingResponses, AnAnswerAfterTheWaiterIsGoneIsDropped) {
  SimulatedClock clock;
  FakeHttpClient http(clock);
  http.answer("https://late/ping", FakeAnswer::bid(10.0, 800ms));
  {
    PendingResponses pending(clock);
    pending.send(http, request_to("https://late/ping"));
  }
  EXPECT_EQ(clock.scheduled(), 1u);
  clock.advance(1s);  // the answer lands in state the callback shares, not in a dead waiter
  EXPECT_EQ(clock.scheduled(), 0u);
}

TEST(FakeHttpClient, ReportsTimeoutsAndTransportErrorsAsTheRealClientDoes) {
  SimulatedClock clock;
  FakeHttpClient http(clock);
  http.answer("https://hang/post", FakeAnswer::no_answer());
  http.answer("https://slow/post", FakeAnswer::accept("x", 3s));
  http.answer("https://reset/post", FakeAnswer::transport_error("connection reset", 20ms));

  const HttpResponse hung = send_and_wait(http, clock, request_to("https://hang/post", 400ms));
  EXPECT_TRUE(hung.timed_out);
  EXPECT_EQ(hung.status, 0);
  EXPECT_EQ(hung.elapsed, 400ms);
  EXPECT_EQ(classify_retry(hung), RetryClass::kRetryable);
  const HttpResponse slow = send_and_wait(http, clock, request_to("https://slow/post", 1s));
  EXPECT_TRUE(slow.timed_out);  // later than its timeout is no answer
  const HttpResponse reset = send_and_wait(http, clock, request_to("https://reset/post"));
  EXPECT_FALSE(reset.timed_out);
  EXPECT_EQ(reset.status, 0);
  EXPECT_EQ(reset.error, "connection reset");
  EXPECT_FALSE(reset.not_delivered);  // it may have reached the buyer
  const HttpResponse nobody = send_and_wait(http, clock, request_to("https://unscripted/post"));
  EXPECT_EQ(nobody.error, "Failed to connect: Connection refused");
  EXPECT_TRUE(nobody.not_delivered);
  EXPECT_EQ(clock.elapsed(), 400ms + 1s + 20ms);
}

TEST(FakeHttpClient, OneOffAnswersComeFirstAndEveryRequestIsRecorded) {
  SimulatedClock clock;
  FakeHttpClient http(clock);
  http.answer_next("https://b/post", FakeAnswer::http_error(429));
  http.answer_next("https://b/post", FakeAnswer::reject("dup"));
  http.answer("https://b/post", FakeAnswer::accept());
  EXPECT_EQ(send_and_wait(http, clock, request_to("https://b/post")).status, 429);
  EXPECT_NE(send_and_wait(http, clock, request_to("https://b/post")).body.find("dup"),
            std::string::npos);
  EXPECT_NE(send_and_wait(http, clock, request_to("https://b/post")).body.find("true"),
            std::string::npos);
  EXPECT_NE(send_and_wait(http, clock, request_to("https://b/post")).body.find("true"),
            std::string::npos);
  const auto sent = http.requests_to("https://b/post");
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[0].header("idempotency-key"), "ld_1");
  EXPECT_EQ(sent[0].request.body, R"({"lead_id":"ld_1"})");
}

}  // namespace
}  // namespace leadflow::testing
