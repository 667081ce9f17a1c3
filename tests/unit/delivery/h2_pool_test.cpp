// The HTTP/2 client's connection pool on a manual clock: its deadlines, queue waits, connect and
// idle timers fire when the clock says so, not after real seconds. The loop's part (sockets, TLS)
// is played by a fake that hands the codec's bytes to nghttp2's own server session in memory.
#include "h2_pool.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h2_test_server.hpp"
#include "leadflow/base/clock.hpp"

namespace leadflow::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPoolKey = "https://buyer.example";

/// Where requests a host speaking only HTTP/1.1 is handed to: recorded, never answered.
class RecordingHttp1 final : public HttpClient {
 public:
  using HttpClient::send;
  void send(HttpRequest request, std::function<void(HttpResponse)>) override {
    urls.push_back(request.url);
  }
  std::vector<std::string> urls;
};

/// The loop's side: names resolve when the test says, connections are "connecting" until it
/// says they are ready, and each ready connection talks to an in-memory buyer.
class FakeIo final : public H2Io {
 public:
  explicit FakeIo(std::uint32_t max_streams = 100) : max_streams_(max_streams) {}

  void resolve(const H2Host& host) override { lookups.push_back(host.key); }
  void connect(H2Connection& c) override {
    c.state = H2Connection::State::kConnecting;
    ++connects;
  }
  void read(H2Connection& c) override {
    const std::string in = buyer(c).produce();
    if (!in.empty() && !c.codec->receive(in.data(), in.size())) pool->mark_dead(c, "bad frames");
  }
  void flush(H2Connection& c) override {
    if (c.dead || c.codec == nullptr) return;
    std::string out;
    ASSERT_TRUE(c.codec->produce(out, 1 << 20));
    ASSERT_TRUE(buyer(c).receive(out));
  }
  void release(H2Connection& c) override { released.push_back(c.id); }

  H2TestServer& buyer(const H2Connection& c) {
    auto& b = buyers_[c.id];
    if (b == nullptr) b = std::make_unique<H2TestServer>(max_streams_);
    return *b;
  }

  H2Pool* pool = nullptr;
  std::vector<std::string> lookups;
  int connects = 0;
  std::vector<std::uint64_t> released;

 private:
  std::uint32_t max_streams_;
  std::map<std::uint64_t, std::unique_ptr<H2TestServer>> buyers_;
};

class H2PoolTest : public ::testing::Test {
 protected:
  explicit H2PoolTest(std::uint32_t max_streams = 100) : io_(max_streams) {}

  void make_pool(CurlClientOptions options = {}) {
    pool_ = std::make_unique<H2Pool>(options, clock_, http1_, io_);
    io_.pool = pool_.get();
  }

  void SetUp() override { make_pool(); }

  // Sends a request; its answer lands in answers_[n], n its order.
  std::size_t send(std::chrono::milliseconds timeout = 1000ms) {
    auto ex = std::make_unique<H2Exchange>();
    ex->request.url = std::string(kPoolKey) + "/ping";
    ex->request.body = "{}";
    ex->request.timeout = timeout;
    ex->submitted = clock_.steady_now();
    const std::size_t n = answers_.size();
    answers_.emplace_back();
    ex->done = [this, n](HttpResponse r) { answers_[n] = std::move(r); };
    pool_->admit(std::move(ex));
    pool_->reap();
    return n;
  }

  H2Host& host() { return *pool_->host(kPoolKey); }
  H2Connection& connection(std::size_t i = 0) { return *host().connections.at(i); }

  // The name resolves to one public address, and the connection's TLS chooses `alpn`.
  void resolve_and_connect(const std::string& alpn = "h2") {
    Resolution r;
    r.key = kPoolKey;
    r.name = "buyer.example";
    r.port = "443";
    ResolvedAddress a;
    auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(443);
    ::inet_pton(AF_INET, "93.184.216.34", &in->sin_addr);
    a.length = sizeof(sockaddr_in);
    r.addresses.push_back(a);
    pool_->on_resolved(std::move(r));
    pool_->connection_ready(connection(), alpn);
    pool_->reap();
  }

  // Moves frames between the connection and its buyer until both are quiet.
  void pump(H2Connection& c) {
    for (int i = 0; i < 20; ++i) {
      io_.flush(c);
      io_.read(c);
    }
    pool_->reap();
  }

  void tick(std::chrono::milliseconds d) {
    clock_.advance(d);
    pool_->expire_overdue(SteadyTime{});
    pool_->housekeeping();
    pool_->reap();
  }

  ManualClock clock_;
  RecordingHttp1 http1_;
  FakeIo io_;
  // Before the pool: its destructor answers what is still in flight.
  std::vector<std::optional<HttpResponse>> answers_;
  std::unique_ptr<H2Pool> pool_;
};

TEST_F(H2PoolTest, ARequestWhoseConnectionIsNotMadeByItsDeadlineTimesOutOnTheClock) {
  const auto n = send(1000ms);
  EXPECT_EQ(io_.lookups, std::vector<std::string>{kPoolKey});
  tick(999ms);
  EXPECT_FALSE(answers_[n]);
  tick(1ms);
  ASSERT_TRUE(answers_[n]);
  EXPECT_TRUE(answers_[n]->timed_out);
  EXPECT_TRUE(answers_[n]->not_delivered);  // still resolving: the buyer saw nothing
  EXPECT_EQ(answers_[n]->error, "timed out after 1000 ms (resolving buyer.example)");
  EXPECT_EQ(answers_[n]->elapsed, 1000ms);  // exactly: the clock is the test's
}

TEST_F(H2PoolTest, AStreamPastItsDeadlineIsCancelledAndTheConnectionServesTheNext) {
  const auto first = send(1000ms);
  resolve_and_connect();
  pump(connection());
  ASSERT_EQ(io_.buyer(connection()).complete_unanswered(), std::vector<std::int32_t>{1});

  tick(1000ms);
  ASSERT_TRUE(answers_[first]);
  EXPECT_TRUE(answers_[first]->timed_out);
  EXPECT_FALSE(answers_[first]->not_delivered);  // the buyer may have acted on it
  EXPECT_EQ(answers_[first]->elapsed, 1000ms);
  pump(connection());
  EXPECT_EQ(io_.buyer(connection()).request(1).reset_code,
            static_cast<std::uint32_t>(NGHTTP2_CANCEL));

  const auto second = send(1000ms);
  pump(connection());
  ASSERT_EQ(host().connections.size(), 1u);
  io_.buyer(connection()).respond(3, 200, R"({"bid":1})");
  clock_.advance(250ms);
  pump(connection());
  ASSERT_TRUE(answers_[second]);
  EXPECT_EQ(answers_[second]->status, 200);
  EXPECT_EQ(answers_[second]->body, R"({"bid":1})");
  EXPECT_EQ(answers_[second]->elapsed, 250ms);
  EXPECT_EQ(io_.connects, 1);
}

TEST_F(H2PoolTest, AnIdleConnectionIsClosedAfterItsIdleTimeOnTheClock) {
  const auto n = send();
  resolve_and_connect();
  pump(connection());
  io_.buyer(connection()).respond(1, 204, "");
  pump(connection());
  ASSERT_TRUE(answers_[n]);
  EXPECT_EQ(answers_[n]->status, 204);
  const std::uint64_t id = connection().id;

  tick(59'999ms);
  EXPECT_EQ(host().connections.size(), 1u);
  EXPECT_TRUE(io_.released.empty());
  tick(1ms);
  EXPECT_TRUE(host().connections.empty());
  EXPECT_EQ(io_.released, std::vector<std::uint64_t>{id});
}

TEST_F(H2PoolTest, AnIdleConnectionIsPingedAndKeptWhileItsBuyerAnswers) {
  const auto n = send();
  resolve_and_connect();
  pump(connection());
  io_.buyer(connection()).respond(1, 204, "");
  pump(connection());
  ASSERT_TRUE(answers_[n]);
  H2TestServer& buyer = io_.buyer(connection());

  tick(14'999ms);
  EXPECT_EQ(buyer.pings(), 0) << "pinged before 15 s of idleness";
  tick(1ms);
  EXPECT_EQ(buyer.pings(), 1);
  EXPECT_TRUE(connection().codec->awaiting_ping());
  pump(connection());  // the buyer's ACK comes back
  EXPECT_FALSE(connection().codec->awaiting_ping());
  tick(10'000ms);
  EXPECT_EQ(host().connections.size(), 1u) << "a connection whose buyer answered is kept";
  EXPECT_EQ(buyer.pings(), 1) << "asked again before 15 s from the last PING";
  tick(5'000ms);
  EXPECT_EQ(buyer.pings(), 2);
  pump(connection());

  // Still serving: the next request goes on it, with no new connection.
  const auto next = send();
  pump(connection());
  io_.buyer(connection()).respond(3, 200, "{}");
  pump(connection());
  ASSERT_TRUE(answers_[next]);
  EXPECT_EQ(answers_[next]->status, 200);
  EXPECT_EQ(io_.connects, 1);
}

TEST_F(H2PoolTest, AnIdleConnectionWhoseBuyerDoesNotAnswerAPingIsGivenUp) {
  const auto n = send();
  resolve_and_connect();
  pump(connection());
  io_.buyer(connection()).respond(1, 204, "");
  pump(connection());
  ASSERT_TRUE(answers_[n]);
  const std::uint64_t id = connection().id;

  tick(15'000ms);  // the PING goes; nothing comes back (nothing is read from the buyer)
  ASSERT_EQ(io_.buyer(connection()).pings(), 1);
  tick(4'999ms);
  EXPECT_EQ(host().connections.size(), 1u);
  tick(1ms);
  EXPECT_TRUE(host().connections.empty()) << "kept with a PING unanswered for 5 s";
  EXPECT_EQ(io_.released, std::vector<std::uint64_t>{id});

  // The next request opens a connection of its own rather than waiting on the silent one.
  send();
  EXPECT_EQ(io_.connects, 2);
}

TEST_F(H2PoolTest, AConnectionNotMadeWithinTenSecondsIsGivenUp) {
  const auto n = send(30'000ms);
  Resolution r;
  r.key = kPoolKey;
  r.addresses.emplace_back();
  pool_->on_resolved(std::move(r));
  ASSERT_EQ(connection().state, H2Connection::State::kConnecting);
  tick(9'999ms);
  EXPECT_FALSE(answers_[n]);
  tick(1ms);
  ASSERT_TRUE(answers_[n]);
  EXPECT_TRUE(answers_[n]->not_delivered);
  EXPECT_FALSE(answers_[n]->timed_out);
  EXPECT_EQ(answers_[n]->error, "TLS handshake with buyer.example timed out after 10 s");
  EXPECT_TRUE(host().connections.empty());
}

TEST_F(H2PoolTest, AStreamTheBuyerRefusedIsSentAgainWithinItsDeadline) {
  const auto n = send(1000ms);
  resolve_and_connect();
  pump(connection());
  clock_.advance(100ms);
  io_.buyer(connection()).reset(1, NGHTTP2_REFUSED_STREAM);
  pump(connection());
  EXPECT_FALSE(answers_[n]);
  ASSERT_EQ(io_.buyer(connection()).complete_unanswered(), std::vector<std::int32_t>{3});
  io_.buyer(connection()).respond(3, 200, "ok");
  pump(connection());
  ASSERT_TRUE(answers_[n]);
  EXPECT_EQ(answers_[n]->status, 200);
  EXPECT_EQ(answers_[n]->elapsed, 100ms);  // its deadline ran from its first sending
}

TEST_F(H2PoolTest, AHostWhoseTlsDoesNotChooseH2IsHandedToHttp1Unsent) {
  const auto n = send();
  resolve_and_connect("http/1.1");
  EXPECT_EQ(http1_.urls, std::vector<std::string>{std::string(kPoolKey) + "/ping"});
  EXPECT_FALSE(answers_[n]);  // http1's to answer
  send();
  EXPECT_EQ(http1_.urls.size(), 2u);  // remembered: straight to HTTP/1.1
  EXPECT_TRUE(host().connections.empty());
}

class H2PoolOneStreamTest : public H2PoolTest {
 protected:
  H2PoolOneStreamTest() : H2PoolTest(1) {}
  void SetUp() override {
    CurlClientOptions o;
    o.max_host_connections = 1;
    o.max_queue_wait = 5000ms;
    make_pool(o);
  }
};

TEST_F(H2PoolOneStreamTest, ARequestThatWaitsPastMaxQueueWaitFailsAsNotSent) {
  const auto first = send(30'000ms);
  resolve_and_connect();
  pump(connection());
  EXPECT_EQ(connection().codec->stream_limit(), 1u);
  EXPECT_FALSE(pool_->oldest_waiting());  // the first went out
  const SteadyTime queued_at = clock_.steady_now();
  const auto second = send(30'000ms);
  ASSERT_EQ(host().waiting.size(), 1u);  // the only connection is full
  EXPECT_EQ(pool_->oldest_waiting(), queued_at);

  tick(4'999ms);
  EXPECT_FALSE(answers_[second]);
  tick(1ms);
  ASSERT_TRUE(answers_[second]);
  EXPECT_FALSE(pool_->oldest_waiting());
  EXPECT_TRUE(answers_[second]->not_sent);
  EXPECT_TRUE(answers_[second]->not_delivered);
  EXPECT_EQ(answers_[second]->error,
            "not sent: no connection to the buyer came free within 5000 ms");
  EXPECT_FALSE(answers_[first]);  // still in flight
}

}  // namespace
}  // namespace leadflow::testing
