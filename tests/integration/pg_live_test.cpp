// GET /v1/live over real HTTPS on loopback, on SQLite and on PostgreSQL: a seller's stream
// carries its own leads, received then decided, and never another seller's; a buyer's carries
// its purchases and never a seller's identity; a reader that never reads is dropped while every
// lead post is still answered promptly; past LEADFLOW_LIVE_MAX_CONNECTIONS a stream is refused; a
// lead recorded long after it was received is sent; a reconnect to another process resumes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/ingest_app/ingest_app.hpp"
#include "leadflow/store/store.hpp"
#include "pg_test_database.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;
using std::chrono::steady_clock;

// A client of GET /v1/live on its own TLS socket, reading only when asked: so a test can hold a
// reader that never reads.
class LiveClient {
 public:
  LiveClient(int port, const std::string& key, int receive_buffer = 0,
             const std::string& last_event_id = "") {
    ctx_ = SSL_CTX_new(TLS_client_method());
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0)
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    timeval tv{0, 200'000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return;
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    // Blocking, with the receive timeout: the handshake may need a few tries.
    for (int i = 0; i < 50 && SSL_connect(ssl_) != 1; ++i) {
    }
    const std::string req =
        "GET /v1/live HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + key +
        "\r\nAccept: text/event-stream\r\n" +
        (last_event_id.empty() ? "" : "Last-Event-ID: " + last_event_id + "\r\n") + "\r\n";
    SSL_write(ssl_, req.data(), static_cast<int>(req.size()));
  }
  ~LiveClient() {
    if (ssl_) SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
    SSL_CTX_free(ctx_);
  }
  /// Reads until `done(all bytes so far)` or `seconds` pass or the stream ends.
  bool read_until(const std::function<bool(const std::string&)>& done, double seconds = 20) {
    const auto until = steady_clock::now() + std::chrono::duration<double>(seconds);
    char buf[16384];
    while (!done(got_)) {
      if (steady_clock::now() > until) return false;
      const int n = SSL_read(ssl_, buf, sizeof buf);
      if (n > 0) {
        got_.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      const int err = SSL_get_error(ssl_, n);
      if (err != SSL_ERROR_WANT_READ && !(err == SSL_ERROR_SYSCALL && errno == EAGAIN)) {
        ended_ = true;
        return done(got_);
      }
    }
    return true;
  }
  const std::string& got() const { return got_; }
  bool ended() const { return ended_; }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  std::string got_;
  bool ended_ = false;
};

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The decided event of `lead_id` is in the stream.
std::function<bool(const std::string&)> decided(const std::string& lead_id) {
  return [lead_id](const std::string& s) {
    std::size_t at = 0;
    while ((at = s.find("data: ", at)) != std::string::npos) {
      const std::size_t end = s.find('\n', at);
      if (end == std::string::npos) return false;
      const std::string line = s.substr(at, end - at);
      if (has(line, "\"decided\"") && has(line, lead_id)) return true;
      at = end;
    }
    return false;
  };
}

// The `kind` event of `lead_id` is in the stream.
std::function<bool(const std::string&)> event(const std::string& kind, const std::string& lead_id) {
  return [kind, lead_id](const std::string& s) {
    std::size_t at = 0;
    while ((at = s.find("data: ", at)) != std::string::npos) {
      const std::size_t end = s.find('\n', at);
      if (end == std::string::npos) return false;
      const std::string line = s.substr(at, end - at);
      if (has(line, "\"" + kind + "\"") && has(line, lead_id)) return true;
      at = end;
    }
    return false;
  };
}

// The id of the last event in the stream.
std::string last_id(const std::string& s) {
  const std::size_t at = s.rfind("\nid: ");
  if (at == std::string::npos) return "";
  return s.substr(at + 5, s.find('\n', at + 5) - at - 5);
}

double metric(ServiceFixture& svc, const std::string& name) {
  auto r = svc.get("/metrics", svc.operator_key());
  if (!r) return -1;
  const std::size_t at = r->body.find("\n" + name);
  if (at == std::string::npos) return 0;
  const std::size_t sp = r->body.find(' ', at + 1);
  return std::stod(r->body.substr(sp + 1, r->body.find('\n', sp) - sp - 1));
}

class Live : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ServiceOptions o;
    o.live_max_connections = 4;
    if (GetParam() == "postgresql") {
      admin_ = pg_admin_url();
      ASSERT_FALSE(admin_.empty()) << "no PostgreSQL: run through ctest (postgres_start)";
      database_ = "lf_live_" + new_id("t").substr(2);
      for (auto& ch : database_)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      ASSERT_TRUE(psql(admin_, "CREATE DATABASE " + database_));
      o.store_url = admin_.substr(0, admin_.rfind('/') + 1) + database_ + "?pool_size=4";
      store_url_ = o.store_url;
    }
    svc_ = std::make_unique<ServiceFixture>(o);
    sim_ = start_buyer("live-buyer", 12.0);
    buyer_id_ = svc_->add_buyer(*sim_);
    seller_a_ = svc_->add_seller("Seller A");
    seller_b_ = svc_->add_seller("Seller B");
    // Enterprise: 1,000 leads a minute, room for the stalled reader's 400.
    key_a_ = svc_->add_api_key({{"name", "a"}, {"seller_id", seller_a_}, {"plan", "enterprise"}});
    key_b_ = svc_->add_api_key({{"name", "b"}, {"seller_id", seller_b_}});
    buyer_key_ = svc_->add_api_key({{"name", "x"}, {"buyer_id", buyer_id_}});
  }
  void TearDown() override {
    svc_.reset();
    if (!database_.empty()) psql(admin_, "DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
  }
  std::string post_lead(int salt, const std::string& key) {
    auto r = svc_->post("/v1/leads", sample_lead(salt), key, {{"Prefer", "respond-async"}});
    if (!r || r->status >= 300) return "";
    return json::parse(r->body)["lead_id"].get<std::string>();
  }
  int port() { return svc_->app().tls_port(); }

  std::string admin_, database_, store_url_;
  std::unique_ptr<ServiceFixture> svc_;
  std::unique_ptr<BuyerSimulator> sim_;
  std::string buyer_id_, seller_a_, seller_b_, key_a_, key_b_, buyer_key_;
};

TEST_P(Live, EachStreamCarriesItsReadersOwnLeadsOnly) {
  LiveClient a(port(), key_a_), buyer(port(), buyer_key_);
  ASSERT_TRUE(a.read_until([](const std::string& s) { return has(s, "retry: 3000"); }));
  EXPECT_TRUE(has(a.got(), "HTTP/1.1 200"));
  EXPECT_TRUE(has(a.got(), "text/event-stream"));
  ASSERT_TRUE(buyer.read_until([](const std::string& s) { return has(s, "retry: 3000"); }));

  const std::string lead_b = post_lead(2, key_b_);
  const std::string lead_a = post_lead(1, key_a_);
  ASSERT_FALSE(lead_a.empty());
  ASSERT_FALSE(lead_b.empty());
  ASSERT_TRUE(a.read_until(decided(lead_a))) << a.got();
  EXPECT_TRUE(has(a.got(), "\"received\"") || has(a.got(), "\"decided\""));
  EXPECT_FALSE(has(a.got(), lead_b)) << "another seller's lead";
  EXPECT_FALSE(has(a.got(), buyer_id_)) << "a buyer's identity";

  // The buyer bought both (its only buyer): it sees each, and neither seller.
  ASSERT_TRUE(buyer.read_until(decided(lead_a))) << buyer.got();
  ASSERT_TRUE(buyer.read_until(decided(lead_b))) << buyer.got();
  EXPECT_FALSE(has(buyer.got(), seller_a_));
  EXPECT_FALSE(has(buyer.got(), seller_b_));
  EXPECT_FALSE(has(buyer.got(), "\"payout\""));
  EXPECT_TRUE(has(buyer.got(), "source_code"));
}

TEST_P(Live, AReaderThatNeverReadsIsDroppedAndPostsStayPrompt) {
  LiveClient stalled(port(), svc_->operator_key(), 4096);
  LiveClient reading(port(), svc_->operator_key());
  ASSERT_TRUE(reading.read_until([](const std::string& s) { return has(s, "retry: 3000"); }));
  // The reader that reads takes its events while the leads are posted (each lead is two events,
  // received and decided: 400 leads are more than a stream's bound), the stalled one never.
  std::mutex mu;
  std::string last;  // the last lead posted, once all are
  bool read_last = false;
  std::thread reader([&] {
    read_last = reading.read_until(
        [&](const std::string& got) {
          std::lock_guard lock(mu);
          return !last.empty() && decided(last)(got);
        },
        120);
  });
  std::vector<double> seconds;
  std::string posted;
  for (int i = 0; i < 400; ++i) {
    const auto t0 = steady_clock::now();
    posted = post_lead(1000 + i, key_a_);
    EXPECT_FALSE(posted.empty()) << "post " << i;
    seconds.push_back(std::chrono::duration<double>(steady_clock::now() - t0).count());
  }
  {
    std::lock_guard lock(mu);
    last = posted;
  }
  reader.join();
  std::sort(seconds.begin(), seconds.end());
  EXPECT_LT(seconds.back(), 2.0) << "the slowest post";
  // The reader that reads gets every decision; the stalled one is let go.
  ASSERT_TRUE(read_last) << "the last decision";
  const auto until = steady_clock::now() + std::chrono::seconds(30);
  while (metric(*svc_, "leadflow_live_dropped_total") < 1 && steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GE(metric(*svc_, "leadflow_live_dropped_total"), 1);
  EXPECT_EQ(metric(*svc_, "leadflow_live_connections"), 1);
}

TEST_P(Live, PastTheCapAStreamIsRefusedWithRetryAfter) {
  std::vector<std::unique_ptr<LiveClient>> open;
  for (int i = 0; i < 4; ++i) {
    open.push_back(std::make_unique<LiveClient>(port(), key_a_));
    ASSERT_TRUE(open.back()->read_until([](const std::string& s) { return has(s, "retry:"); }));
  }
  LiveClient refused(port(), key_a_);
  ASSERT_TRUE(refused.read_until([](const std::string& s) { return has(s, "\r\n\r\n{"); }));
  EXPECT_TRUE(has(refused.got(), "HTTP/1.1 503")) << refused.got();
  EXPECT_TRUE(has(refused.got(), "Retry-After: 1"));
  EXPECT_GE(metric(*svc_, "leadflow_live_refused_total"), 1);
  open.pop_back();  // one goes: room again within a poll
  const auto until = steady_clock::now() + std::chrono::seconds(10);
  bool admitted = false;
  while (!admitted && steady_clock::now() < until) {
    LiveClient again(port(), key_a_);
    again.read_until([](const std::string& s) { return has(s, "\r\n\r\n"); }, 5);
    admitted = has(again.got(), "HTTP/1.1 200");
    if (!admitted) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(admitted);
}

// A backlog: a lead received an hour ago (workers stopped, the queue drained later) is recorded
// and decided only now. The feed follows what the store recorded, so it is sent as received and
// then as decided, once each.
TEST_P(Live, ALeadRecordedLongAfterItWasReceivedIsSentReceivedThenDecided) {
  LiveClient a(port(), key_a_);
  ASSERT_TRUE(a.read_until([](const std::string& s) { return has(s, "retry: 3000"); }));
  const std::int64_t now = SystemClock().now_ms();
  Lead l;
  l.id = new_id(kLeadPrefix, now - 3'600'000);
  l.seller_id = seller_a_;
  l.api_key_id = "key_backlog";
  l.first_name = "Late";
  l.last_name = "Comer";
  l.email = "late@example.com";
  l.phone = "+14155550123";
  l.vertical = "auto_insurance";
  l.received_at_ms = now - 3'600'000;
  Store& store = svc_->app().store();
  const std::vector<Lead> leads{l};
  ASSERT_TRUE(store.insert_leads(leads).at(0).inserted);
  ASSERT_TRUE(a.read_until(event("received", l.id))) << a.got();
  Distribution d;
  d.status = DeliveryStatus::kUnsold;
  d.reason = "no_bids";
  d.decided_at_ms = now;
  std::vector<OutcomeRecord> outcome{{l.id, d}};
  ASSERT_EQ(store.record_outcomes(outcome).at(0), StoreStatus::kOk);
  ASSERT_TRUE(a.read_until(decided(l.id))) << a.got();
  const std::string& got = a.got();
  EXPECT_EQ(got.find(l.id), got.rfind(l.id, got.find("\"decided\""))) << "sent as received once";
}

// Behind a load balancer a reconnect reaches another leadflow-ingest: the event id carries the
// store's position, so that process sends what the stream missed, from the store they share.
TEST_P(Live, AReconnectToAnotherProcessOnTheSameStoreGetsWhatItMissed) {
  if (GetParam() != "postgresql") GTEST_SKIP() << "two processes share a PostgreSQL store";
  ServiceOptions o;
  o.workers = 0;
  o.store_url = store_url_;
  ServiceFixture second(o);
  std::string first, last;
  {
    LiveClient a(port(), key_a_);
    ASSERT_TRUE(a.read_until([](const std::string& s) { return has(s, "retry: 3000"); }));
    first = post_lead(1, key_a_);
    ASSERT_TRUE(a.read_until(decided(first))) << a.got();
    last = last_id(a.got());
  }  // the stream goes away, with the process it was on as far as the browser knows
  ASSERT_NE(last.find('/'), std::string::npos) << last;
  const std::string missed_1 = post_lead(2, key_a_), missed_2 = post_lead(3, key_a_);
  const std::string other = post_lead(4, key_b_);
  ASSERT_FALSE(missed_2.empty());
  // Decided before the reconnect: only a resume from the store can send them.
  for (const std::string& id : {missed_1, missed_2, other}) {
    const auto until = steady_clock::now() + std::chrono::seconds(30);
    std::string status = "pending";
    while (status == "pending" && steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      auto r = svc_->get("/v1/leads/" + id, svc_->operator_key());
      if (r && r->status == 200) status = json::parse(r->body)["data"].value("status", "pending");
    }
    ASSERT_NE(status, "pending") << id;
  }
  LiveClient b(second.app().tls_port(), key_a_, 0, last);
  ASSERT_TRUE(b.read_until(decided(missed_1))) << b.got();
  ASSERT_TRUE(b.read_until(decided(missed_2))) << b.got();
  EXPECT_TRUE(has(b.got(), "HTTP/1.1 200"));
  EXPECT_FALSE(has(b.got(), first)) << "sent before the reconnect";
  EXPECT_FALSE(has(b.got(), other)) << "another seller's lead";
  EXPECT_FALSE(has(b.got(), "event: reset"));
}

INSTANTIATE_TEST_SUITE_P(Stores, Live, ::testing::Values("sqlite", "postgresql"));

}  // namespace
}  // namespace leadflow::testing
