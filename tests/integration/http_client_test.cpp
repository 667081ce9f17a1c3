// The libcurl client against a real BuyerSimulator on loopback.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "leadflow/delivery/http_client.hpp"
#include "leadflow/sim/buyer_sim.hpp"

namespace leadflow {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

int process_threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// A port nothing listens on: bind an ephemeral one, then close it.
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

HttpRequest ping_request(const BuyerSimulator& sim, int n = 1,
                         std::chrono::milliseconds timeout = 2000ms) {
  HttpRequest r;
  r.url = sim.ping_url();
  r.headers = {{"Content-Type", "application/json"}};
  r.body = json{{"ping_id", "pg_" + std::to_string(n)},
                {"lead_id", "ld_" + std::to_string(n)},
                {"vertical", "auto_insurance"},
                {"zip_code", "94107"},
                {"state", "CA"},
                {"source", "web"},
                {"custom_fields", json::object()}}
               .dump();
  r.timeout = timeout;
  return r;
}

/// Collects callbacks from the client's thread; waits with a deadline, never a fixed sleep.
class Collector {
 public:
  std::function<void(HttpResponse)> callback() {
    return [this](HttpResponse r) {
      std::lock_guard lock(mutex_);
      responses_.push_back(std::move(r));
      cv_.notify_all();
    };
  }
  bool wait_for(size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return responses_.size() >= n; });
  }
  std::vector<HttpResponse> responses() {
    std::lock_guard lock(mutex_);
    return responses_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<HttpResponse> responses_;
};

TEST(RetryClassTest, ClassifiesEveryKindOfAnswer) {
  auto with_status = [](int s) {
    HttpResponse r;
    r.status = s;
    return r;
  };
  HttpResponse transport;
  transport.error = "Connection refused";
  HttpResponse timeout;
  timeout.timed_out = true;
  timeout.error = "Operation timed out";

  EXPECT_EQ(classify_retry(transport), RetryClass::kRetryable);
  EXPECT_EQ(classify_retry(timeout), RetryClass::kRetryable);
  EXPECT_EQ(classify_retry(with_status(200)), RetryClass::kNone);
  EXPECT_EQ(classify_retry(with_status(204)), RetryClass::kNone);
  EXPECT_EQ(classify_retry(with_status(302)), RetryClass::kNone);
  EXPECT_EQ(classify_retry(with_status(408)), RetryClass::kRetryable);
  EXPECT_EQ(classify_retry(with_status(429)), RetryClass::kRetryable);
  EXPECT_EQ(classify_retry(with_status(500)), RetryClass::kRetryable);
  EXPECT_EQ(classify_retry(with_status(503)), RetryClass::kRetryable);
  EXPECT_EQ(classify_retry(with_status(400)), RetryClass::kFinal);
  EXPECT_EQ(classify_retry(with_status(401)), RetryClass::kFinal);
  EXPECT_EQ(classify_retry(with_status(404)), RetryClass::kFinal);
  EXPECT_EQ(classify_retry(with_status(422)), RetryClass::kFinal);
}

class HttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BuyerSimOptions o;
    o.name = "acme";
    o.bid = BidModel::fixed(14.25);
    sim_ = std::make_unique<BuyerSimulator>(o);
    sim_->start();
  }
  void TearDown() override {
    client_.reset();  // close keep-alive connections first, so the server stops at once
    sim_->stop();
  }
  // The simulators live on loopback, which production clients refuse.
  HttpClient& client(CurlClientOptions o = {}) {
    o.allow_private_addresses = true;
    if (!client_) client_ = make_curl_client(o);
    return *client_;
  }

  std::unique_ptr<BuyerSimulator> sim_;
  std::unique_ptr<HttpClient> client_;
};

TEST_F(HttpClientTest, RefusesNonPublicAddressesAtConnectTimeByDefault) {
  // A buyer URL is checked when saved; a name may resolve to a private address later, so the
  // client checks every address it connects to unless private buyers are allowed.
  auto strict = make_curl_client(CurlClientOptions{});
  HttpRequest rq;
  rq.url = sim_->ping_url();
  rq.body = "{}";
  rq.timeout = 2s;
  HttpResponse r = strict->send(rq).get();
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.error.find("loopback"), std::string::npos) << r.error;
  EXPECT_EQ(sim_->stats().pings, 0u);
}

TEST_F(HttpClientTest, PingRoundTrip) {
  HttpResponse r = client().send(ping_request(*sim_)).get();
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_EQ(r.error, "");
  EXPECT_FALSE(r.timed_out);
  EXPECT_GT(r.elapsed.count(), 0);
  EXPECT_EQ(json::parse(r.body).at("bid").get<double>(), 14.25);
  EXPECT_EQ(classify_retry(r), RetryClass::kNone);

  auto pings = sim_->pings();
  ASSERT_EQ(pings.size(), 1u);
  EXPECT_EQ(pings[0].header("content-type"), "application/json");
  EXPECT_EQ(json::parse(pings[0].body).at("ping_id"), "pg_1");
  EXPECT_EQ(pings[0].header("Expect"), "");  // no 100-continue round trip
}

TEST_F(HttpClientTest, PostCarriesHeadersAndFinalStatusIsNotRetried) {
  HttpRequest post;
  post.url = sim_->post_url();
  post.headers = {{"Content-Type", "application/json"}, {"Idempotency-Key", "ld_42"}};
  post.body = json{{"ping_id", "pg_1"}, {"price", 14.25}, {"email", "a@b.c"}}.dump();
  HttpResponse r = client().send(post).get();
  ASSERT_EQ(r.status, 200) << r.error;
  EXPECT_TRUE(json::parse(r.body).at("accepted").get<bool>());
  EXPECT_EQ(sim_->posts().at(0).header("Idempotency-Key"), "ld_42");

  sim_->set_fail_next(1, 422);
  HttpResponse rejected = client().send(ping_request(*sim_)).get();
  EXPECT_EQ(rejected.status, 422);
  EXPECT_EQ(rejected.error, "");
  EXPECT_EQ(classify_retry(rejected), RetryClass::kFinal);

  sim_->set_fail_next(1, 503);
  EXPECT_EQ(classify_retry(client().send(ping_request(*sim_)).get()), RetryClass::kRetryable);
}

TEST_F(HttpClientTest, TwoHundredConcurrentRequestsOnOneThread) {
  sim_->set_latency(50ms);
  const int threads_before = process_threads();
  CurlClientOptions o;
  o.max_host_connections = 32;  // the cap this test checks: connections opened and reused
  HttpClient& c = client(o);

  Collector done;
  constexpr int kRequests = 200;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < kRequests; ++i) c.send(ping_request(*sim_, i, 10s), done.callback());
  ASSERT_TRUE(sim_->wait_for_requests(16, 10s));
  const int threads_during = process_threads();
  ASSERT_TRUE(done.wait_for(kRequests, 30s));
  const auto took = std::chrono::steady_clock::now() - started;

  for (const auto& r : done.responses()) EXPECT_EQ(r.status, 200) << r.error;
  // One event-loop thread for 200 requests in flight (a thread per call would add hundreds).
  EXPECT_LE(threads_during - threads_before, 1);
  // 200 x 50 ms serially would be 10 s; over 32 connections it is about 7 rounds.
  EXPECT_LT(took, 5s);
  // At most max_host_connections connections were opened, and they were reused.
  EXPECT_LE(sim_->stats().connections, 32u);
  EXPECT_EQ(sim_->stats().pings, static_cast<std::uint64_t>(kRequests));
}

TEST_F(HttpClientTest, SlowBuyerTimesOutNearTheTimeout) {
  sim_->set_latency(3000ms);
  const auto timeout = 200ms;
  HttpResponse r = client().send(ping_request(*sim_, 1, timeout)).get();
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.timed_out);
  EXPECT_NE(r.error, "");
  EXPECT_EQ(classify_retry(r), RetryClass::kRetryable);
  EXPECT_GE(r.elapsed, std::chrono::microseconds(timeout));
  EXPECT_LT(r.elapsed, std::chrono::microseconds(timeout + 400ms));
}

TEST_F(HttpClientTest, ABuyersTimeoutRunsFromWhenTheRequestIsSentNotWhileItWaitsForAConnection) {
  // One connection to a buyer answering in 200 ms and six 600 ms requests at once: they wait
  // their turn in our own queue (the last one 1 s, longer than its timeout), and each is
  // answered well within its timeout once sent. The buyer did nothing wrong, so none may be
  // reported timed out (and so count against it).
  sim_->set_latency(200ms);
  CurlClientOptions o;
  o.max_host_connections = 1;
  HttpClient& c = client(o);
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::future<HttpResponse>> answers;
  for (int i = 0; i < 6; ++i) answers.push_back(c.send(ping_request(*sim_, i, 600ms)));
  for (auto& a : answers) {
    HttpResponse r = a.get();
    EXPECT_EQ(r.status, 200) << r.error;
    EXPECT_FALSE(r.timed_out) << r.error;
    EXPECT_FALSE(r.not_sent);
    EXPECT_GE(r.elapsed, std::chrono::microseconds(200ms));  // the buyer's own time...
    EXPECT_LT(r.elapsed, std::chrono::microseconds(600ms));  // ...not our queue's
  }
  EXPECT_GE(std::chrono::steady_clock::now() - started, 1200ms);  // one after the other
}

// A second simulator that answers at once, whose answer's callback holds the client's loop
// thread for `hold`, as a process starved of CPU would be held.
class LoopHolder {
 public:
  explicit LoopHolder(HttpClient& client, std::chrono::milliseconds hold) {
    BuyerSimOptions o;
    o.name = "prompt";
    o.bid = BidModel::fixed(1.00);
    sim_ = std::make_unique<BuyerSimulator>(o);
    sim_->start();
    client.send(ping_request(*sim_, 99), [this, hold](HttpResponse) {
      std::this_thread::sleep_for(hold);
      released_.set_value();
    });
  }
  ~LoopHolder() {
    released_.get_future().wait();
    sim_->stop();
  }

 private:
  std::unique_ptr<BuyerSimulator> sim_;
  std::promise<void> released_;
};

TEST_F(HttpClientTest, AnAnswerWaitingInItsSocketIsReadEvenWhenTheLoopRanPastItsTimeout) {
  // The buyer answers in 150 ms, within its 400 ms timeout, while the client's loop is held for
  // 900 ms. The answer waits in the socket meanwhile and is read before any timeout is looked at:
  // the buyer was on time, and a starved worker must not say otherwise.
  sim_->set_latency(150ms);
  HttpClient& c = client();
  auto answer = c.send(ping_request(*sim_, 1, 400ms));
  {
    LoopHolder hold(c, 900ms);
    HttpResponse r = answer.get();
    EXPECT_EQ(r.status, 200) << r.error;
    EXPECT_FALSE(r.timed_out) << r.error;
  }
}

TEST_F(HttpClientTest, ATimeoutWhileTheLoopWasHeldIsMarkedAsOurs) {
  // No answer in the socket when the held loop looks: a timeout, but one that spans this
  // process's own stall, which buyer health must not count.
  sim_->set_latency(3000ms);
  HttpClient& c = client();
  auto answer = c.send(ping_request(*sim_, 1, 200ms));
  {
    LoopHolder hold(c, 600ms);
    HttpResponse r = answer.get();
    EXPECT_TRUE(r.timed_out);
    EXPECT_TRUE(r.stalled_here);
  }
}

TEST_F(HttpClientTest, MaxConnectionsBoundsEveryBuyerTogetherAndTheWaitIsNotTheBuyers) {
  // Two buyers answering in 200 ms, four requests each, two connections in use at once across
  // both: the requests take turns, and each is answered within its 600 ms once sent.
  BuyerSimOptions other_options;
  other_options.name = "other";
  other_options.bid = BidModel::fixed(3.00);
  BuyerSimulator other(other_options);
  other.start();
  sim_->set_latency(200ms);
  other.set_latency(200ms);
  CurlClientOptions o;
  o.max_connections = 2;
  HttpClient& c = client(o);
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::future<HttpResponse>> answers;
  for (int i = 0; i < 4; ++i) {
    answers.push_back(c.send(ping_request(*sim_, i, 600ms)));
    answers.push_back(c.send(ping_request(other, i, 600ms)));
  }
  for (auto& a : answers) {
    HttpResponse r = a.get();
    EXPECT_EQ(r.status, 200) << r.error;
    EXPECT_LT(r.elapsed, std::chrono::microseconds(600ms));
  }
  EXPECT_GE(std::chrono::steady_clock::now() - started, 800ms);  // four turns of two
  client_.reset();
  other.stop();
}

// Sockets open in this process (both ends of loopback connections count).
int open_sockets() {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(entry.path(), ec);
    if (!ec && target.string().rfind("socket:", 0) == 0) ++n;
  }
  return n;
}

// A lane keeps its idle keep-alive connections. Past the lanes max_connections allows, a busy
// buyer's new lane is made by closing an idle lane of another buyer, so the connections held
// open stay near max_connections however many buyers have had a busy moment.
TEST_F(HttpClientTest, AnIdleBuyersConnectionsMakeRoomForAnotherBuyers) {
  std::vector<std::unique_ptr<BuyerSimulator>> others;
  for (int i = 0; i < 3; ++i) {
    BuyerSimOptions so;
    so.name = "other" + std::to_string(i);
    so.bid = BidModel::fixed(3.00);
    others.push_back(std::make_unique<BuyerSimulator>(so));
    others.back()->start();
  }
  std::vector<BuyerSimulator*> buyers{sim_.get()};
  for (auto& o : others) buyers.push_back(o.get());
  for (BuyerSimulator* b : buyers) b->set_latency(100ms);
  CurlClientOptions o;
  o.max_connections = 64;  // one lane's worth
  HttpClient& c = client(o);
  const int before = open_sockets();
  auto burst = [&](BuyerSimulator& b) {
    std::vector<std::future<HttpResponse>> answers;
    for (int i = 0; i < 40; ++i) answers.push_back(c.send(ping_request(b, i, 2s)));
    for (auto& a : answers) EXPECT_EQ(a.get().status, 200);
  };
  for (BuyerSimulator* b : buyers) burst(*b);  // 40 connections each, kept alive
  // Without the bound: 4 × 40 connections, 320 sockets with the simulators' ends. With it, the
  // last buyer's lane took the place of an idle one: about 40 open.
  bool bounded = false;
  for (int i = 0; i < 100 && !bounded; ++i) {
    bounded = open_sockets() - before <= 2 * 64 + 8;
    if (!bounded) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(bounded) << open_sockets() - before << " sockets over the start";
  burst(*sim_);  // a buyer whose idle connections were closed connects again
  client_.reset();
  for (auto& other : others) other->stop();
}

TEST_F(HttpClientTest, ARequestThatNeverGetsAConnectionFailsAsNotSent) {
  sim_->set_latency(500ms);
  CurlClientOptions o;
  o.max_host_connections = 1;
  o.max_queue_wait = 100ms;
  HttpClient& c = client(o);
  auto first = c.send(ping_request(*sim_, 1, 2s));
  auto second = c.send(ping_request(*sim_, 2, 2s));
  const HttpResponse queued = second.get();
  EXPECT_TRUE(queued.not_sent);
  EXPECT_FALSE(queued.timed_out);
  EXPECT_EQ(queued.status, 0);
  EXPECT_EQ(first.get().status, 200);
}

// The worker holds new auctions back while requests wait in our own queue: the client says how
// long the oldest has waited, without waiting for its answer.
TEST_F(HttpClientTest, SaysHowLongItsOldestRequestHasWaitedForAConnection) {
  sim_->set_latency(500ms);
  CurlClientOptions o;
  o.max_host_connections = 1;
  HttpClient& c = client(o);
  EXPECT_EQ(c.oldest_unsent(), 0ns);
  auto first = c.send(ping_request(*sim_, 1, 2s));
  auto second = c.send(ping_request(*sim_, 2, 2s));
  ASSERT_TRUE(sim_->wait_for_requests(1, 10s));
  std::this_thread::sleep_for(300ms);
  EXPECT_GE(c.oldest_unsent(), 300ms);  // the second, behind the first's connection
  EXPECT_LT(c.oldest_unsent(), 2s);
  EXPECT_EQ(first.get().status, 200);
  EXPECT_EQ(second.get().status, 200);
  EXPECT_EQ(c.oldest_unsent(), 0ns);
}

// Out of descriptors in this process: the connection cannot even be opened. That is ours, not
// the buyer's (buyer health ignores a request not sent).
TEST_F(HttpClientTest, NoDescriptorLeftForAConnectionFailsAsNotSent) {
  HttpClient& c = client();
  ASSERT_EQ(c.send(ping_request(*sim_, 1, 2s)).get().status, 200);  // the loop is up
  HttpRequest r = ping_request(*sim_, 2, 2s);
  r.url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/ping";  // a new connection
  std::vector<int> held;
  for (int fd = ::dup(0); fd >= 0; fd = ::dup(0)) held.push_back(fd);
  const HttpResponse out = c.send(r).get();
  for (const int fd : held) ::close(fd);
  EXPECT_TRUE(out.not_sent) << out.error;
  EXPECT_FALSE(out.timed_out);
  EXPECT_EQ(out.status, 0);
}

TEST_F(HttpClientTest, ConnectionRefusedIsARetryableTransportError) {
  HttpRequest r = ping_request(*sim_);
  r.url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/ping";
  HttpResponse resp = client().send(r).get();
  EXPECT_EQ(resp.status, 0);
  EXPECT_FALSE(resp.timed_out);
  EXPECT_NE(resp.error, "");
  EXPECT_EQ(classify_retry(resp), RetryClass::kRetryable);
  EXPECT_TRUE(resp.not_delivered);  // no connection: the buyer cannot have seen it
  EXPECT_FALSE(resp.not_sent);      // but the buyer's endpoint was down, not our client
}

TEST_F(HttpClientTest, MalformedUrlAndHeaderInjectionFailWithoutSending) {
  HttpRequest bad_url = ping_request(*sim_);
  bad_url.url = "file:///etc/passwd";
  HttpResponse r1 = client().send(bad_url).get();
  EXPECT_EQ(r1.status, 0);
  EXPECT_NE(r1.error, "");

  HttpRequest injected = ping_request(*sim_);
  injected.headers.push_back({"X-Token", "a\r\nX-Evil: 1"});
  HttpResponse r2 = client().send(injected).get();
  EXPECT_EQ(r2.status, 0);
  EXPECT_EQ(r2.error, "invalid header");
  EXPECT_EQ(sim_->stats().pings, 0u);
}

TEST_F(HttpClientTest, SequentialRequestsReuseOneKeepAliveConnection) {
  HttpClient& c = client();
  for (int i = 0; i < 50; ++i) {
    HttpResponse r = c.send(ping_request(*sim_, i)).get();
    ASSERT_EQ(r.status, 200) << r.error;
  }
  EXPECT_EQ(sim_->stats().pings, 50u);
  EXPECT_EQ(sim_->stats().connections, 1u);
}

TEST_F(HttpClientTest, SimulatorStopsPromptlyWhileTheClientHoldsIdleConnections) {
  HttpClient& c = client();
  for (int i = 0; i < 4; ++i) ASSERT_EQ(c.send(ping_request(*sim_, i)).get().status, 200);
  const auto started = std::chrono::steady_clock::now();
  sim_->stop();  // the client still pools its keep-alive connection
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);

  // The pooled connection is dead now; the next request fails cleanly instead of hanging.
  HttpResponse r = c.send(ping_request(*sim_, 9, 1000ms)).get();
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(classify_retry(r), RetryClass::kRetryable);
}

TEST_F(HttpClientTest, ResponseBodyOverOneMebibyteIsAnError) {
  sim_->stub("/ping", 200, std::string(2 << 20, 'x'), "text/plain");
  HttpResponse big = client().send(ping_request(*sim_)).get();
  EXPECT_EQ(big.status, 0);
  EXPECT_FALSE(big.timed_out);
  EXPECT_NE(big.error.find("larger than"), std::string::npos) << big.error;
  EXPECT_EQ(big.body, "");

  // Just under the cap still arrives whole.
  sim_->stub("/ping", 200, std::string((1 << 20) - 16, 'y'), "text/plain");
  HttpResponse fits = client().send(ping_request(*sim_)).get();
  EXPECT_EQ(fits.status, 200) << fits.error;
  EXPECT_EQ(fits.body.size(), static_cast<size_t>((1 << 20) - 16));
}

TEST_F(HttpClientTest, DestructorFailsRequestsStillInFlight) {
  sim_->set_latency(10s);
  Collector done;
  constexpr int kInFlight = 20;
  client();
  for (int i = 0; i < kInFlight; ++i) client_->send(ping_request(*sim_, i, 30s), done.callback());
  ASSERT_TRUE(sim_->wait_for_requests(kInFlight, 10s));

  const auto started = std::chrono::steady_clock::now();
  client_.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);  // did not wait for the buyer

  // Every callback ran before the destructor returned.
  auto responses = done.responses();
  ASSERT_EQ(responses.size(), static_cast<size_t>(kInFlight));
  for (const auto& r : responses) {
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.error, "client shut down");
  }
}

TEST_F(HttpClientTest, CallbackMaySendTheNextRequest) {
  // A ping's answer triggers the post from the client's own thread, as the auction does.
  HttpClient& c = client();
  std::promise<HttpResponse> post_done;
  c.send(ping_request(*sim_), [&](HttpResponse ping) {
    HttpRequest post;
    post.url = sim_->post_url();
    post.headers = {{"Content-Type", "application/json"}, {"Idempotency-Key", "ld_1"}};
    post.body = json{{"ping_id", "pg_1"}, {"price", json::parse(ping.body).at("bid")}}.dump();
    c.send(post, [&](HttpResponse r) { post_done.set_value(std::move(r)); });
  });
  auto fut = post_done.get_future();
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  HttpResponse r = fut.get();
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(json::parse(r.body).at("accepted").get<bool>());
}

// Both clients read their deadlines from the Clock they are given: on a manual clock a request
// times out when the clock passes its timeout, however little real time went by, and reports
// exactly the clock's elapsed time.
TEST_F(HttpClientTest, ARequestsTimeoutRunsOnTheClientsClock) {
  sim_->set_latency(60s);
  ManualClock clock;
  CurlClientOptions o;
  o.allow_private_addresses = true;
  o.clock = &clock;
  auto c = make_curl_client(o);  // gone before the clock it reads
  const auto started = std::chrono::steady_clock::now();
  auto answer = c->send(ping_request(*sim_, 1, 10s));
  ASSERT_TRUE(sim_->wait_for_requests(1, 10s));
  EXPECT_EQ(answer.wait_for(100ms), std::future_status::timeout);  // real time does not count
  clock.advance(10s);
  ASSERT_EQ(answer.wait_for(5s), std::future_status::ready);
  const HttpResponse r = answer.get();
  EXPECT_TRUE(r.timed_out) << r.error;
  EXPECT_EQ(r.elapsed, 10s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

// A TCP listener that takes connections and never says a word (nor finishes a TLS handshake).
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 16);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() {
    for (int c : accepted_) ::close(c);
    ::close(fd_);
  }
  int port() const { return port_; }
  // Waits for the next connection (the client is on its way) and keeps it open.
  void accept_one() { accepted_.push_back(::accept(fd_, nullptr, nullptr)); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::vector<int> accepted_;
};

TEST(Http2ClientClockTest, ARequestsTimeoutRunsOnTheClientsClock) {
  SilentListener buyer;
  ManualClock clock;
  CurlClientOptions o;
  o.allow_private_addresses = true;
  o.clock = &clock;
  auto http1 = make_curl_client(o);
  auto h2 = make_h2_client(o, *http1);
  HttpRequest rq;
  rq.url = "https://127.0.0.1:" + std::to_string(buyer.port()) + "/ping";
  rq.body = "{}";
  rq.timeout = 5s;
  const auto started = std::chrono::steady_clock::now();
  auto answer = h2->send(rq);
  buyer.accept_one();
  EXPECT_EQ(answer.wait_for(100ms), std::future_status::timeout);
  clock.advance(5s);
  ASSERT_EQ(answer.wait_for(5s), std::future_status::ready);
  const HttpResponse r = answer.get();
  EXPECT_TRUE(r.timed_out) << r.error;
  EXPECT_TRUE(r.not_delivered);  // its TLS handshake never finished
  EXPECT_EQ(r.error, "timed out after 5000 ms (TLS handshake with 127.0.0.1)");
  EXPECT_EQ(r.elapsed, 5s);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST(HttpClientTlsTest, HttpsWithVerificationOffForASelfSignedLoopbackBuyer) {
  const std::string dir = ::testing::TempDir();
  const std::string cert = dir + "/leadflow_sim_cert.pem";
  const std::string key = dir + "/leadflow_sim_key.pem";
  const std::string cmd =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj "
      "/CN=localhost -keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "openssl CLI not available";

  BuyerSimOptions o;
  o.tls_cert = cert;
  o.tls_key = key;
  o.bid = BidModel::fixed(3.5);
  BuyerSimulator sim(o);
  sim.start();
  ASSERT_EQ(sim.ping_url().rfind("https://", 0), 0u);
  {
    CurlClientOptions verify;  // default: verify, and the certificate is self-signed
    verify.allow_private_addresses = true;
    auto strict = make_curl_client(verify);
    HttpResponse r = strict->send(ping_request(sim)).get();
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.error, "");

    CurlClientOptions loose;
    loose.verify_tls = false;
    loose.allow_private_addresses = true;
    auto lax = make_curl_client(loose);
    HttpResponse ok = lax->send(ping_request(sim)).get();
    ASSERT_EQ(ok.status, 200) << ok.error;
    EXPECT_EQ(json::parse(ok.body).at("bid").get<double>(), 3.5);
  }
  sim.stop();
  std::remove(cert.c_str());
  std::remove(key.c_str());
}

}  // namespace
}  // namespace leadflow
