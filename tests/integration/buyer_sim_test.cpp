// The buyer simulator on loopback, driven by a plain cpp-httplib client (independent of the
// libcurl client it is used to test), and by raw sockets for thousands of requests at once.
#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "leadflow/sim/buyer_sim.hpp"

namespace leadflow {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

json ping_body(int n) {
  return json{{"ping_id", "pg_" + std::to_string(n)},
              {"lead_id", "ld_" + std::to_string(n)},
              {"vertical", "auto_insurance"},
              {"zip_code", "94107"},
              {"state", "CA"},
              {"source", "web"},
              {"custom_fields", {{"vehicle_year", 2019}}}};
}

json post_body(int n, double price) {
  json b = ping_body(n);
  b["first_name"] = "Ada";
  b["email"] = "ada@example.com";
  b["phone"] = "+15551234567";
  b["price"] = price;
  return b;
}

/// A sim plus a client to it; the client asks for one connection per call, so stop() is prompt.
struct Fixture {
  explicit Fixture(BuyerSimOptions o) : sim(std::move(o)) {
    sim.start();
    client = std::make_unique<httplib::Client>("127.0.0.1", sim.port());
    client->set_read_timeout(10, 0);
  }
  httplib::Result ping(int n) {
    return client->Post("/ping", ping_body(n).dump(), "application/json");
  }
  httplib::Result post(int n, double price, const std::string& key) {
    httplib::Headers h;
    if (!key.empty()) h.emplace("Idempotency-Key", key);
    return client->Post("/post", h, post_body(n, price).dump(), "application/json");
  }
  BuyerSimulator sim;
  std::unique_ptr<httplib::Client> client;
};

std::vector<double> bids_for_seed(std::uint64_t seed, int n) {
  BuyerSimOptions o;
  o.seed = seed;
  o.bid = BidModel::uniform(5.0, 20.0);
  o.no_bid_rate = 0.2;
  Fixture f(o);
  std::vector<double> bids;
  for (int i = 0; i < n; ++i) {
    auto r = f.ping(i);
    EXPECT_TRUE(r) << httplib::to_string(r.error());
    if (!r) return bids;
    EXPECT_EQ(r->status, 200);
    bids.push_back(json::parse(r->body).at("bid").get<double>());
  }
  return bids;
}

TEST(BuyerSimTest, BidsAreDeterministicForASeed) {
  const auto a = bids_for_seed(7, 40);
  const auto b = bids_for_seed(7, 40);
  const auto c = bids_for_seed(8, 40);
  ASSERT_EQ(a.size(), 40u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);

  int no_bids = 0;
  for (double bid : a) {
    if (bid == 0) {
      ++no_bids;
      continue;
    }
    EXPECT_GE(bid, 5.0);
    EXPECT_LE(bid, 20.0);
    EXPECT_DOUBLE_EQ(bid, std::round(bid * 100) / 100) << "bids are whole cents";
  }
  EXPECT_GT(no_bids, 0);  // 20% no-bid rate over 40 pings
  EXPECT_LT(no_bids, 40);
}

TEST(BuyerSimTest, FixedBidAndRuntimeOverride) {
  BuyerSimOptions o;
  o.bid = BidModel::fixed(12.5);
  Fixture f(o);
  EXPECT_EQ(json::parse(f.ping(1)->body), json::parse(R"({"bid": 12.5})"));
  f.sim.set_bid(3.75);
  EXPECT_EQ(json::parse(f.ping(2)->body).at("bid").get<double>(), 3.75);
  f.sim.set_no_bid_rate(1.0);
  EXPECT_EQ(json::parse(f.ping(3)->body).at("bid").get<double>(), 0.0);
  auto s = f.sim.stats();
  EXPECT_EQ(s.pings, 3u);
  EXPECT_EQ(s.bids, 2u);
  EXPECT_EQ(s.no_bids, 1u);
}

TEST(BuyerSimTest, RejectRateOneRejectsEveryPost) {
  BuyerSimOptions o;
  o.reject_rate = 1.0;
  o.reject_reason = "outside service area";
  Fixture f(o);
  for (int i = 0; i < 5; ++i) {
    auto r = f.post(i, 10.0, "ld_" + std::to_string(i));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    json body = json::parse(r->body);
    EXPECT_FALSE(body.at("accepted").get<bool>());
    EXPECT_EQ(body.at("reason"), "outside service area");
  }
  EXPECT_EQ(f.sim.stats().rejected, 5u);
  EXPECT_EQ(f.sim.stats().accepted, 0u);
}

TEST(BuyerSimTest, RejectNextThenAccepts) {
  Fixture f(BuyerSimOptions{});
  f.sim.set_reject_next(1, "test says no");
  EXPECT_EQ(json::parse(f.post(1, 9.0, "k1")->body).at("reason"), "test says no");
  json ok = json::parse(f.post(2, 9.0, "k2")->body);
  EXPECT_TRUE(ok.at("accepted").get<bool>());
  EXPECT_EQ(ok.at("buyer_lead_id"), "sim-1");
}

TEST(BuyerSimTest, RepeatedIdempotencyKeyGetsTheSameAnswer) {
  BuyerSimOptions o;
  o.name = "acme";
  Fixture f(o);
  auto first = f.post(1, 14.25, "ld_1");
  auto again = f.post(1, 14.25, "ld_1");
  auto other = f.post(2, 14.25, "ld_2");
  ASSERT_TRUE(first && again && other);
  EXPECT_EQ(first->body, again->body);
  EXPECT_EQ(json::parse(first->body).at("buyer_lead_id"), "acme-1");
  EXPECT_EQ(json::parse(other->body).at("buyer_lead_id"), "acme-2");

  // A reject is remembered too: the replay does not turn into an accept.
  f.sim.set_reject_next(1, "no thanks");
  auto rejected = f.post(3, 1.0, "ld_3");
  auto replay = f.post(3, 1.0, "ld_3");
  EXPECT_EQ(rejected->body, replay->body);
  EXPECT_FALSE(json::parse(replay->body).at("accepted").get<bool>());

  auto s = f.sim.stats();
  EXPECT_EQ(s.posts, 5u);
  EXPECT_EQ(s.accepted, 2u);
  EXPECT_EQ(s.rejected, 1u);
  EXPECT_EQ(s.duplicate_posts, 2u);
  EXPECT_EQ(f.sim.posts().at(1).header("idempotency-key"), "ld_1");
}

TEST(BuyerSimTest, ConcurrentPostsWithOneKeyAreAcceptedOnce) {
  BuyerSimOptions o;
  o.latency_ms = 20;
  BuyerSimulator sim(o);
  sim.start();
  std::vector<std::future<std::string>> answers;
  for (int i = 0; i < 8; ++i) {
    answers.push_back(std::async(std::launch::async, [&] {
      httplib::Client c("127.0.0.1", sim.port());
      auto r = c.Post("/post", httplib::Headers{{"Idempotency-Key", "ld_same"}},
                      post_body(1, 5.0).dump(), "application/json");
      return r ? r->body : std::string("transport error");
    }));
  }
  std::set<std::string> distinct;
  for (auto& a : answers) distinct.insert(a.get());
  EXPECT_EQ(distinct.size(), 1u);
  EXPECT_EQ(sim.stats().accepted, 1u);
  EXPECT_EQ(sim.stats().duplicate_posts, 7u);
}

TEST(BuyerSimTest, FailuresAreInjectedAndNotRemembered) {
  Fixture f(BuyerSimOptions{});
  f.sim.set_fail_next(1, 503);
  EXPECT_EQ(f.ping(1)->status, 503);
  EXPECT_EQ(f.ping(2)->status, 200);

  f.sim.set_fail_next(1);
  EXPECT_EQ(f.post(1, 5.0, "ld_1")->status, 500);
  auto retry = f.post(1, 5.0, "ld_1");  // after a 5xx the retry is heard afresh
  EXPECT_EQ(retry->status, 200);
  EXPECT_TRUE(json::parse(retry->body).at("accepted").get<bool>());
  EXPECT_EQ(f.sim.stats().duplicate_posts, 0u);

  f.sim.set_error_rate(1.0);
  EXPECT_EQ(f.ping(3)->status, 500);
  EXPECT_EQ(f.sim.stats().errors, 3u);

  EXPECT_EQ(f.client->Post("/ping", "not json", "application/json")->status, 400);
}

TEST(BuyerSimTest, StubAnswersVerbatim) {
  Fixture f(BuyerSimOptions{});
  f.sim.stub("/ping", 200, R"({"price": "7.00"})");
  EXPECT_EQ(f.ping(1)->body, R"({"price": "7.00"})");
  f.sim.clear_stubs();
  EXPECT_TRUE(json::parse(f.ping(2)->body).contains("bid"));
}

TEST(BuyerSimTest, RecordsPingsAndCountsPii) {
  Fixture f(BuyerSimOptions{});
  f.ping(1);
  json leaky = ping_body(2);
  leaky["email"] = "ada@example.com";
  f.client->Post("/ping", leaky.dump(), "application/json");
  auto pings = f.sim.pings();
  ASSERT_EQ(pings.size(), 2u);
  EXPECT_EQ(json::parse(pings[0].body).at("ping_id"), "pg_1");
  EXPECT_EQ(pings[0].header("Content-Type"), "application/json");
  EXPECT_EQ(f.sim.stats().pii_pings, 1u);
}

TEST(BuyerSimTest, StatsAndHealthEndpoints) {
  BuyerSimOptions o;
  o.name = "acme";
  o.reject_rate = 0.0;
  Fixture f(o);
  f.ping(1);
  f.ping(2);
  f.post(1, 10.0, "ld_1");
  f.post(1, 10.0, "ld_1");

  auto health = f.client->Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(json::parse(health->body).at("status"), "ok");

  auto stats = f.client->Get("/stats");
  ASSERT_TRUE(stats);
  json s = json::parse(stats->body);
  EXPECT_EQ(s.at("name"), "acme");
  EXPECT_EQ(s.at("pings"), 2);
  EXPECT_EQ(s.at("bids"), 2);
  EXPECT_EQ(s.at("posts"), 2);
  EXPECT_EQ(s.at("accepted"), 1);
  EXPECT_EQ(s.at("rejected"), 0);
  EXPECT_EQ(s.at("duplicate_posts"), 1);

  f.sim.reset_records();
  EXPECT_EQ(f.sim.stats().pings, 0u);
  EXPECT_TRUE(f.sim.pings().empty());
}

TEST(BuyerSimTest, LatencyDelaysTheAnswer) {
  Fixture f(BuyerSimOptions{});
  f.sim.set_latency(150ms);
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(f.ping(1));
  EXPECT_GE(std::chrono::steady_clock::now() - started, 150ms);
}

// The number of threads this process runs now.
int process_threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// Lets this process hold `fds` descriptors if its hard limit allows.
bool allow_descriptors(rlim_t fds) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return false;
  if (lim.rlim_cur >= fds) return true;
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < fds) return false;
  lim.rlim_cur = fds;
  return ::setrlimit(RLIMIT_NOFILE, &lim) == 0;
}

// A blocking loopback connection with a receive timeout, or -1.
int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{};
  tv.tv_sec = 10;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// Everything the peer sends until it closes (or the receive timeout passes).
std::string read_to_end(int fd) {
  std::string in;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return in;
    in.append(buf, static_cast<std::size_t>(n));
  }
}

// The auction engine sends thousands of pings at once; the simulator must hold them all, each
// answered after its latency, on its one event loop. With a thread per request (64 of them, as
// it had), 2,000 answers of 300 ms would take 2000 / 64 x 300 ms = 9.4 s.
TEST(BuyerSimTest, HoldsThousandsOfConcurrentRequestsEachAnsweredAfterItsLatency) {
  constexpr int kRequests = 2000;
  constexpr auto kLatency = 300ms;
  if (!allow_descriptors(2 * kRequests + 256))
    GTEST_SKIP() << "the descriptor limit is below " << 2 * kRequests + 256;
  BuyerSimOptions o;
  o.bid = BidModel::fixed(7.25);
  o.latency_ms = static_cast<int>(kLatency.count());
  BuyerSimulator sim(o);
  sim.start();
  const int threads_before = process_threads();

  std::vector<int> fds;
  std::vector<std::chrono::steady_clock::time_point> sent;
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < kRequests; ++i) {
    const int fd = connect_to(sim.port());
    ASSERT_GE(fd, 0) << "connection " << i << ": " << std::strerror(errno);
    fds.push_back(fd);
    const std::string body = ping_body(i).dump();
    const std::string request =
        "POST /ping HTTP/1.1\r\nHost: buyer\r\nConnection: close\r\n"
        "Content-Type: application/json\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    sent.push_back(std::chrono::steady_clock::now());
    ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
  }
  ASSERT_TRUE(sim.wait_for_requests(kRequests, 10s));
  EXPECT_EQ(process_threads(), threads_before) << "a thread per request";

  // Read in the order sent, which is the order they are due.
  int answered = 0;
  for (int i = 0; i < kRequests; ++i) {
    const std::string answer = read_to_end(fds[i]);
    const auto took = std::chrono::steady_clock::now() - sent[i];
    ::close(fds[i]);
    const std::size_t body_at = answer.find("\r\n\r\n");
    if (answer.rfind("HTTP/1.1 200 ", 0) != 0 || body_at == std::string::npos) {
      ADD_FAILURE() << "request " << i << ": " << answer.substr(0, 200);
      continue;
    }
    EXPECT_EQ(json::parse(answer.substr(body_at + 4)), json::parse(R"({"bid": 7.25})")) << i;
    EXPECT_GE(took, kLatency) << "request " << i << " was answered early";
    ++answered;
  }
  const auto all = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(answered, kRequests);
  EXPECT_LT(all, 5s) << "took "
                     << std::chrono::duration_cast<std::chrono::milliseconds>(all).count() << " ms";
  EXPECT_EQ(sim.stats().pings, static_cast<std::uint64_t>(kRequests));
  EXPECT_EQ(sim.stats().bids, static_cast<std::uint64_t>(kRequests));
}

TEST(BuyerSimTest, StopWakesAHangingAnswer) {
  BuyerSimOptions o;
  o.hang_ms = 60'000;
  auto f = std::make_unique<Fixture>(o);
  f->sim.set_hang_next(1);
  auto pending = std::async(std::launch::async, [&] { return static_cast<bool>(f->ping(1)); });
  ASSERT_TRUE(f->sim.wait_for_requests(1, 10s));
  const auto started = std::chrono::steady_clock::now();
  f->sim.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  ASSERT_EQ(pending.wait_for(10s), std::future_status::ready);
  pending.get();
  EXPECT_EQ(f->sim.stats().timeouts, 1u);
}

TEST(BuyerSimTest, BindFailureThrows) {
  BuyerSimulator first(BuyerSimOptions{});
  first.start();
  BuyerSimOptions o;
  o.port = first.port();
  BuyerSimulator second(o);
  EXPECT_THROW(second.start(), std::runtime_error);
}

#ifdef LEADFLOW_BINARY_DIR
// The leadflow-buyer-sim tool as a user runs it: flags, the "listening" line, SIGTERM -> exit 0.
class BuyerSimCliTest : public ::testing::Test {
 protected:
  static std::string binary() {
    return std::string(LEADFLOW_BINARY_DIR) + "/workers/leadflow-buyer-sim";
  }

  // Starts the tool; returns its pid and a stream of its stdout.
  pid_t spawn(std::vector<std::string> args, FILE** out, bool quiet_stderr = false) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return -1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    if (quiet_stderr)
      posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    args.insert(args.begin(), binary());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    *out = ::fdopen(pipe_fds[0], "r");
    return pid;
  }

  static int wait_exit(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  void SetUp() override {
    if (::access(binary().c_str(), X_OK) != 0) GTEST_SKIP() << binary() << " not built";
  }
};

TEST_F(BuyerSimCliTest, ServesUntilSigterm) {
  FILE* out = nullptr;
  pid_t pid = spawn({"--port", "0", "--bid", "12.50", "--name", "acme", "--seed", "42"}, &out);
  ASSERT_GT(pid, 0);
  char line[512] = {0};
  ASSERT_NE(std::fgets(line, sizeof line, out), nullptr);  // blocks until the tool is ready
  json ready = json::parse(line);
  EXPECT_EQ(ready.at("event"), "listening");
  const int port = ready.at("port").get<int>();
  ASSERT_GT(port, 0);

  httplib::Client c("127.0.0.1", port);
  auto r = c.Post("/ping", ping_body(1).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body).at("bid").get<double>(), 12.5);
  auto stats = c.Get("/stats");
  ASSERT_TRUE(stats);
  EXPECT_EQ(json::parse(stats->body).at("pings"), 1);

  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_exit(pid), 0);
  std::fclose(out);
}

TEST_F(BuyerSimCliTest, UnknownFlagExitsTwo) {
  FILE* out = nullptr;
  pid_t pid = spawn({"--bogus", "1"}, &out, /*quiet_stderr=*/true);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(wait_exit(pid), 2);
  std::fclose(out);
}
#endif  // LEADFLOW_BINARY_DIR

}  // namespace
}  // namespace leadflow
