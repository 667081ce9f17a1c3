// The storage contract against a real PostgreSQL server, plus what only the PostgreSQL adapter
// promises: recovery from lost connections and outages without reopening, concurrent migration
// by several processes, cap reservations serialised across stores, URL handling.
//
// The server: LEADFLOW_TEST_PG_URL (a superuser URL), else the one scripts/pg_server.sh started
// for this build (ctest runs it as the postgres_start fixture). Each test gets a database of its
// own, created with a random name and dropped afterwards.

#include <gtest/gtest.h>

#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "leadflow/domain/accounts.hpp"
#include "leadflow/store/store.hpp"
#include "pg/driver.hpp"
#include "store_contract.hpp"

namespace leadflow::contract {
namespace {

constexpr const char* kHowToProvideAServer =
    "no PostgreSQL server for the tests: set LEADFLOW_TEST_PG_URL to a superuser URL "
    "(postgresql://postgres@127.0.0.1:5432/postgres), or start one for this build with "
    "scripts/pg_server.sh start " LEADFLOW_BINARY_DIR
    "/pg (ctest does this itself through its "
    "postgres_start fixture)";

/// The admin URL of the test server, or "" when none is configured.
std::string admin_url() {
  if (const char* env = std::getenv("LEADFLOW_TEST_PG_URL"); env != nullptr && *env != '\0')
    return env;
  std::ifstream file(LEADFLOW_BINARY_DIR "/pg/url");
  std::string url;
  std::getline(file, url);
  return url;
}

/// `url` naming database `name` instead of its own.
std::string with_database(const std::string& url, const std::string& name) {
  const auto scheme_end = url.find("://");
  const auto path = url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  const auto query = url.find('?');
  std::string base = url.substr(0, std::min(path, query));
  std::string rest = query == std::string::npos ? "" : url.substr(query);
  return base + "/" + name + rest;
}

/// A plain libpq connection for what the Store does not offer: creating and dropping
/// databases, killing backends. Test-only; fails the test on any error.
class AdminConnection {
 public:
  explicit AdminConnection(const std::string& url) : conn_(PQconnectdb(url.c_str())) {
    if (PQstatus(conn_) != CONNECTION_OK)
      ADD_FAILURE() << "cannot connect to the test server: " << PQerrorMessage(conn_);
  }
  AdminConnection(const AdminConnection&) = delete;
  AdminConnection& operator=(const AdminConnection&) = delete;
  ~AdminConnection() { PQfinish(conn_); }

  bool ok() const { return PQstatus(conn_) == CONNECTION_OK; }

  /// Runs `sql` with text parameters; the first column of the first row, "" if none.
  std::string exec(const std::string& sql, const std::vector<std::string>& params = {}) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    PGresult* r = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), nullptr, nullptr, 0);
    const auto status = PQresultStatus(r);
    std::string first;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
      ADD_FAILURE() << "admin query failed: " << PQerrorMessage(conn_);
    else if (PQntuples(r) > 0 && PQnfields(r) > 0)
      first = PQgetvalue(r, 0, 0);
    PQclear(r);
    return first;
  }

  /// `name` quoted as an SQL identifier (database names cannot be parameters).
  std::string identifier(const std::string& name) {
    char* quoted = PQescapeIdentifier(conn_, name.c_str(), name.size());
    std::string out = quoted != nullptr ? quoted : "";
    PQfreemem(quoted);
    return out;
  }

 private:
  PGconn* conn_;
};

/// A database of its own for one test, dropped (with any connection still open) at the end.
class TestDatabase {
 public:
  TestDatabase() : admin_url_(admin_url()) {
    if (admin_url_.empty()) return;
    std::random_device seed;
    std::mt19937_64 random(seed() ^ (static_cast<std::uint64_t>(getpid()) << 32));
    name_ = "leadflow_test_" + std::to_string(random() % 1'000'000'000'000ULL);
    AdminConnection admin(admin_url_);
    if (!admin.ok()) return;
    admin.exec("CREATE DATABASE " + admin.identifier(name_));
    url_ = with_database(admin_url_, name_);
  }
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;
  ~TestDatabase() {
    if (url_.empty()) return;
    AdminConnection admin(admin_url_);
    if (admin.ok())
      admin.exec("DROP DATABASE IF EXISTS " + admin.identifier(name_) + " WITH (FORCE)");
  }

  /// The database's URL; "" when there is no server (the test has failed already).
  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }
  const std::string& admin() const { return admin_url_; }

 private:
  std::string admin_url_;
  std::string name_;
  std::string url_;
};

StoreFactory postgresql_factory() {
  return {"postgresql", [] {
            if (admin_url().empty()) {
              ADD_FAILURE() << kHowToProvideAServer;
              return StoreHandle{};
            }
            auto db = std::make_shared<TestDatabase>();
            std::string error;
            auto store = db->url().empty() ? nullptr : open_store(db->url(), error);
            EXPECT_NE(store, nullptr) << error;
            const std::string url = db->url();
            StoreHandle handle;
            handle.store = std::move(store);
            handle.cleanup = [db]() mutable { db.reset(); };
            handle.open_again = [url] {
              std::string error;
              auto again = open_store(url, error);
              EXPECT_NE(again, nullptr) << error;
              return again;
            };
            handle.try_sql = [url](const std::string& sql) {
              PGconn* conn = PQconnectdb(url.c_str());
              PGresult* r = PQexec(conn, sql.c_str());
              const auto status = PQresultStatus(r);
              PQclear(r);
              PQfinish(conn);
              return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
            };
            // XX000 (internal error): a failure, not an integrity violation.
            handle.fail_post_intent_of = [url](const std::string& lead_id) {
              AdminConnection admin(url);
              admin.exec(
                  "CREATE FUNCTION test_fault() RETURNS trigger LANGUAGE plpgsql AS $$"
                  " BEGIN IF NEW.lead_id = '" +
                  lead_id +
                  "' THEN RAISE EXCEPTION 'injected fault' USING ERRCODE = 'XX000'; END IF;"
                  " RETURN NEW; END $$");
              admin.exec(
                  "CREATE TRIGGER test_fault BEFORE INSERT OR UPDATE ON post_intents"
                  " FOR EACH ROW EXECUTE FUNCTION test_fault()");
              return std::function<void()>([url] {
                AdminConnection again(url);
                again.exec("DROP TRIGGER test_fault ON post_intents");
                again.exec("DROP FUNCTION test_fault()");
              });
            };
            return handle;
          }};
}

}  // namespace

#include "store_contract_accounts.inc"
#include "store_contract_audit.inc"
#include "store_contract_distribution.inc"
#include "store_contract_erasure.inc"
#include "store_contract_intake.inc"
#include "store_contract_limits.inc"
#include "store_contract_money.inc"
#include "store_contract_postbacks.inc"
#include "store_contract_reoffers.inc"
#include "store_contract_reporting.inc"
#include "store_contract_sign_in.inc"
#include "store_contract_statements.inc"
#include "store_contract_suppression.inc"
#include "store_contract_test_mode.inc"
#include "store_contract_tests.inc"
#include "store_contract_versions.inc"

// After the money and re-offer tests: it uses their helpers.
#include "store_contract_aged_returns.inc"

INSTANTIATE_TEST_SUITE_P(Postgresql, StoreContract, ::testing::Values(postgresql_factory()),
                         store_factory_name);

// --- PostgreSQL only ----------------------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// A migrated store on a fresh database.
class PgStore : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(admin_url().empty()) << kHowToProvideAServer;
    db_ = std::make_unique<TestDatabase>();
    ASSERT_FALSE(db_->url().empty());
    store_ = open(db_->url());
    ASSERT_NE(store_, nullptr);
    ASSERT_EQ(store_->migrate(), StoreStatus::kOk);
  }

  void TearDown() override {
    store_.reset();
    db_.reset();
  }

  static std::unique_ptr<Store> open(const std::string& url) {
    std::string error;
    auto store = open_store(url, error);
    EXPECT_NE(store, nullptr) << error;
    return store;
  }

  /// Ends every server process serving this test's database (as a server restart would).
  int kill_connections() {
    AdminConnection admin(db_->admin());
    return std::stoi(
        admin.exec("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity"
                   " WHERE datname = $1 AND pid <> pg_backend_pid()",
                   {db_->name()}));
  }

  /// Keeps new connections out of this test's database (or lets them in again).
  void allow_connections(bool allow) {
    AdminConnection admin(db_->admin());
    admin.exec("ALTER DATABASE " + admin.identifier(db_->name()) +
               (allow ? " WITH ALLOW_CONNECTIONS true" : " WITH ALLOW_CONNECTIONS false"));
  }

  static Seller seller(const std::string& name) {
    Seller s;
    s.id = new_id(kSellerPrefix, kT0);
    s.name = name;
    s.created_at_ms = kT0;
    return s;
  }

  static Lead lead() {
    Lead l;
    l.id = new_id(kLeadPrefix, kT0);
    l.vertical = "solar";
    l.email = l.id + "@example.com";
    l.received_at_ms = kT0;
    return l;
  }

  /// Calls `call` until it succeeds (at most `attempts` times); the number of failures first.
  template <class Call>
  static int failures_before_success(Call&& call, int attempts = 10) {
    for (int i = 0; i < attempts; ++i)
      if (call()) return i;
    return attempts;
  }

  std::unique_ptr<TestDatabase> db_;
  std::unique_ptr<Store> store_;
};

TEST_F(PgStore, RecoversByItselfAfterItsConnectionsAreKilled) {
  const Seller s = seller("Before");
  ASSERT_EQ(store_->insert_seller(s), StoreStatus::kOk);
  // Several connections in the pool, all idle when the server ends them.
  {
    std::vector<std::thread> readers;
    for (int t = 0; t < 6; ++t)
      readers.emplace_back([&] {
        for (int i = 0; i < 20; ++i) (void)store_->list_sellers().value();
      });
    for (auto& th : readers) th.join();
  }
  ASSERT_GE(kill_connections(), 1);

  // The first calls may fail; then everything works again through the same store.
  EXPECT_LT(failures_before_success([&] { return store_->get_seller(s.id).value.has_value(); }), 3);
  EXPECT_LT(failures_before_success([&] { return store_->healthy(); }), 3);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(store_->get_seller(s.id).value.has_value()) << i;
    ASSERT_EQ(store_->insert_seller(seller("After " + std::to_string(i))), StoreStatus::kOk);
  }

  // Killed again, a writer finds its way back too.
  ASSERT_GE(kill_connections(), 1);
  const Lead l = lead();
  EXPECT_LT(failures_before_success(
                [&] { return store_->insert_leads(std::vector<Lead>{l}).size() == 1; }),
            3);
  EXPECT_EQ(store_->get_lead(l.id).value->distribution.status, DeliveryStatus::kPending);
  EXPECT_EQ(store_->list_sellers().value().size(), 21u);
}

TEST_F(PgStore, AnswersQuicklyWhileTheDatabaseIsUnreachableAndRecoversAfter) {
  const Seller s = seller("Outage");
  ASSERT_EQ(store_->insert_seller(s), StoreStatus::kOk);
  const Lead l = lead();
  ASSERT_EQ(store_->insert_leads(std::vector<Lead>{l}).size(), 1u);
  Buyer b;
  b.id = new_id(kBuyerPrefix, kT0);
  b.name = "Outage buyer";
  b.active = true;
  b.verticals = {"solar"};
  b.mode = DeliveryMode::kPingPost;
  b.ping_url = "https://buyer.example.com/ping";
  b.post_url = "https://buyer.example.com/post";
  b.timeout_ms = 800;
  b.pricing = PricingModel::kBid;
  b.min_bid = 500;
  b.created_at_ms = b.updated_at_ms = kT0;
  ASSERT_EQ(store_->insert_buyer(b), StoreStatus::kOk);
  allow_connections(false);
  kill_connections();

  const auto started = Clock::now();
  EXPECT_FALSE(store_->healthy());
  EXPECT_FALSE(store_->get_seller(s.id).value.has_value());
  EXPECT_EQ(store_->list_sellers(), std::nullopt) << "never an empty list for an outage";
  EXPECT_EQ(store_->list_campaigns(""), std::nullopt);
  EXPECT_EQ(store_->list_api_keys(), std::nullopt);
  EXPECT_EQ(store_->list_users(), std::nullopt);
  EXPECT_EQ(store_->count_sales("by_x", 0), std::nullopt) << "callers fail closed on caps";
  // The reads of the API's lead and buyer views say "unavailable", never "none" (a 503, not a
  // 404 or an empty page).
  EXPECT_EQ(store_->get_lead(l.id).status, StoreStatus::kUnavailable);
  EXPECT_EQ(store_->list_leads({}), std::nullopt);
  EXPECT_EQ(store_->get_buyer(b.id).status, StoreStatus::kUnavailable);
  EXPECT_EQ(store_->list_buyers({}), std::nullopt);
  EXPECT_EQ(store_->buyer_bought_person("by_x", l.id, 0), std::nullopt);
  EXPECT_EQ(store_->insert_seller(seller("During")), StoreStatus::kUnavailable);
  EXPECT_TRUE(store_->insert_leads(std::vector<Lead>{lead()}).empty());
  EXPECT_EQ(store_->update_rate_bucket("key", [](RateBucketState&) {}), StoreStatus::kUnavailable);
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(5));

  allow_connections(true);
  EXPECT_LT(failures_before_success([&] { return store_->healthy(); }), 2);
  EXPECT_TRUE(store_->get_seller(s.id).value.has_value());
  EXPECT_EQ(store_->get_lead(l.id).status, StoreStatus::kOk);
  EXPECT_EQ(store_->get_buyer(b.id).status, StoreStatus::kOk);
  EXPECT_EQ(store_->list_buyers({}).value_or(std::vector<Buyer>{}).size(), 1u);
  EXPECT_EQ(store_->insert_seller(seller("After")), StoreStatus::kOk);
}

TEST_F(PgStore, StoresMigratingAtOnceAllSucceed) {
  // Fresh database: several processes start together and race to create the schema.
  TestDatabase fresh;
  ASSERT_FALSE(fresh.url().empty());
  constexpr int kStores = 4;
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < kStores; ++i) {
    stores.push_back(open(fresh.url()));
    ASSERT_NE(stores.back(), nullptr);
  }
  std::vector<StoreStatus> results(kStores, StoreStatus::kUnavailable);
  std::latch start(kStores);
  std::vector<std::thread> threads;
  for (int i = 0; i < kStores; ++i)
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      results[i] = stores[i]->migrate();
    });
  for (auto& th : threads) th.join();
  for (int i = 0; i < kStores; ++i) EXPECT_EQ(results[i], StoreStatus::kOk) << i;

  // One schema, shared.
  const Seller s = seller("Shared");
  ASSERT_EQ(stores[0]->insert_seller(s), StoreStatus::kOk);
  for (auto& store : stores) EXPECT_TRUE(store->get_seller(s.id).value.has_value());
  EXPECT_EQ(stores[1]->migrate(), StoreStatus::kOk);
  stores.clear();
}

TEST_F(PgStore, CapReservationsOfTwoProcessesAdmitExactlyTheLimit) {
  // Two stores, two connection pools: as two worker processes would reserve.
  auto other = open(db_->url());
  ASSERT_NE(other, nullptr);
  Store* stores[] = {store_.get(), other.get()};
  constexpr int kLeads = 30;
  constexpr int kThreads = 8;
  constexpr int kCap = 7;
  std::vector<Lead> leads;
  for (int i = 0; i < kLeads; ++i) leads.push_back(lead());
  ASSERT_EQ(store_->insert_leads(leads).size(), leads.size());
  // One earlier sale in the window takes a slot.
  Distribution sold;
  sold.status = DeliveryStatus::kDelivered;
  sold.buyer_id = "by_shared";
  sold.decided_at_ms = kT0 + kMinute;
  ASSERT_EQ(other->record_outcomes(std::vector<OutcomeRecord>{{leads[0].id, sold}}),
            std::vector<StoreStatus>{StoreStatus::kOk});
  const std::vector<CapWindow> caps{{kT0, kCap}};

  std::atomic<int> admitted{0}, refused{0}, failed{0};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Store& store = *stores[t % 2];
      start.arrive_and_wait();
      for (int i = 1 + t; i < kLeads; i += kThreads) {
        switch (
            store.record_post_intent({leads[i].id, "by_shared", 500, "pg", kT0 + kHour}, caps)) {
          case StoreStatus::kOk:
            ++admitted;
            break;
          case StoreStatus::kLimitReached:
            ++refused;
            break;
          default:
            ++failed;
            break;
        }
      }
    });
  for (auto& th : threads) th.join();

  EXPECT_EQ(admitted.load(), kCap - 1);
  EXPECT_EQ(refused.load(), kLeads - 1 - (kCap - 1));
  EXPECT_EQ(failed.load(), 0);
}

/// What a watch heard, and how often it started listening, for tests to wait on.
class Heard {
 public:
  std::function<void(std::string_view)> sink() {
    return [this](std::string_view payload) {
      {
        std::lock_guard lock(mu_);
        payloads_.emplace_back(payload);
      }
      cv_.notify_all();
    };
  }
  std::function<void()> on_listening() {
    return [this] {
      {
        std::lock_guard lock(mu_);
        ++listens_;
      }
      cv_.notify_all();
    };
  }
  /// The payloads once there are at least `n`, or what there is after `timeout`.
  std::vector<std::string> wait_for(std::size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return payloads_.size() >= n; });
    return payloads_;
  }
  /// Whether the watch started listening at least `n` times within `timeout`.
  bool listened(int n, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return listens_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> payloads_;
  int listens_ = 0;
};

TEST_F(PgStore, AnnouncementsReachEveryWatcherInOrder) {
  EXPECT_TRUE(store_->announces());
  auto other = open(db_->url());
  ASSERT_NE(other, nullptr);
  Heard here, there, elsewhere;
  auto watch_here = store_->watch("test_channel", here.sink(), here.on_listening());
  auto watch_there = other->watch("test_channel", there.sink(), there.on_listening());
  auto watch_elsewhere =
      store_->watch("another_channel", elsewhere.sink(), elsewhere.on_listening());
  ASSERT_NE(watch_here, nullptr);
  ASSERT_NE(watch_there, nullptr);
  for (Heard* h : {&here, &there, &elsewhere}) ASSERT_TRUE(h->listened(1, 10s));
  EXPECT_TRUE(watch_here->listening());

  const std::vector<std::string> payloads{"first", "second", "{\"lead_id\":\"ld_x\"}"};
  ASSERT_EQ(other->announce("test_channel", payloads), StoreStatus::kOk);
  EXPECT_EQ(here.wait_for(3, 5s), payloads);
  EXPECT_EQ(there.wait_for(3, 5s), payloads);
  EXPECT_TRUE(elsewhere.wait_for(1, 100ms).empty()) << "another channel heard nothing";
  EXPECT_EQ(store_->announce("test_channel", std::vector<std::string>{}), StoreStatus::kOk);
  EXPECT_EQ(store_->announce("Not A Channel", payloads), StoreStatus::kUnavailable);
  EXPECT_EQ(store_->watch("bad;channel", here.sink(), nullptr), nullptr);
}

TEST_F(PgStore, AWatchListensAgainAfterItsConnectionIsKilled) {
  Heard heard;
  auto watch = store_->watch("test_channel", heard.sink(), heard.on_listening());
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(heard.listened(1, 10s));
  ASSERT_EQ(store_->announce("test_channel", std::vector<std::string>{"before"}), StoreStatus::kOk);
  ASSERT_EQ(heard.wait_for(1, 5s), std::vector<std::string>{"before"});

  ASSERT_GE(kill_connections(), 1);
  // It connects and listens again by itself, and says so (announcements made in between are
  // missed: the caller reads what it needs from the store then).
  ASSERT_TRUE(heard.listened(2, 10s)) << "the watch did not listen again";
  EXPECT_TRUE(watch->listening());
  bool sent = false;
  for (int i = 0; i < 5 && !sent; ++i)  // the pool's first call may meet a killed connection
    sent = store_->announce("test_channel", std::vector<std::string>{"after"}) == StoreStatus::kOk;
  ASSERT_TRUE(sent);
  EXPECT_EQ(heard.wait_for(2, 5s), (std::vector<std::string>{"before", "after"}));
  watch.reset();  // stops and joins its thread
}

TEST_F(PgStore, PoolSizeComesFromTheUrlAndOtherParametersPassThrough) {
  auto small = open(db_->url() + "?pool_size=2&connect_timeout=3");
  ASSERT_NE(small, nullptr);
  // More threads than connections: the extra callers wait their turn.
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i)
        if (!small->healthy()) ++failures;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);

  for (const std::string bad : {"?pool_size=0", "?pool_size=abc", "?sslmode=disable&pool_size="}) {
    std::string error;
    EXPECT_EQ(open_store(db_->url() + bad, error), nullptr) << bad;
    EXPECT_NE(error.find("pool_size"), std::string::npos) << bad << ": " << error;
  }
}

// Behind a pooler in transaction mode (the Kubernetes workers') a LISTEN is not held: the URL's
// listen_ parameters send the listening connections to the server itself while the pool goes
// through the pooler. Here both reach the one test server, told apart by their
// application_name, one of them given only to the listening connections.
TEST_F(PgStore, ListeningConnectionsTakeTheUrlsListenParameters) {
  auto split = open(db_->url() +
                    "?pool_size=2&application_name=lf_pool&listen_application_name=lf%5Flisten");
  ASSERT_NE(split, nullptr);
  Heard heard;
  auto watch = split->watch("test_channel", heard.sink(), heard.on_listening());
  ASSERT_NE(watch, nullptr);
  ASSERT_TRUE(heard.listened(1, 10s));
  ASSERT_TRUE(split->healthy());
  AdminConnection admin(db_->admin());
  const auto named = [&](const std::string& name, const std::string& query) {
    return admin.exec(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2"
        " AND query ILIKE $3",
        {db_->name(), name, query});
  };
  EXPECT_EQ(named("lf_listen", "LISTEN%"), "1") << "the watch listens with the listen_ settings";
  EXPECT_EQ(named("lf_pool", "LISTEN%"), "0");
  EXPECT_NE(named("lf_pool", "%"), "0") << "the pool connects with the URL's own";
  ASSERT_EQ(split->announce("test_channel", std::vector<std::string>{"heard"}), StoreStatus::kOk);
  EXPECT_EQ(heard.wait_for(1, 5s), std::vector<std::string>{"heard"});
  watch.reset();

  // Refused at start, the value never echoed: a malformed one, and a setting libpq lacks.
  for (const std::string bad :
       {"?listen_host", "?listen_=x", "?listen_host=%zz", "?listen_no_such_setting=s3cret",
        "?listen_password=s3cret&listen_port=1"}) {
    std::string error;
    EXPECT_EQ(open_store(db_->url() + bad, error), nullptr) << bad;
    EXPECT_NE(error.find("listen"), std::string::npos) << bad << ": " << error;
    EXPECT_EQ(error.find("s3cret"), std::string::npos) << bad << ": " << error;
  }
}

/// A loopback port nothing listens on (bound, then closed again).
int closed_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// A pooler in transaction mode that keeps no prepared statements (PgBouncer before 1.21, or
// without max_prepared_statements) hands each transaction another server session, where a
// statement prepared on the last one is unknown (26000). The connection then prepares nothing
// more and runs every statement unnamed: one failed call, never a run of them. The session
// losing its statements is played here by DEALLOCATE ALL on the connection itself.
TEST(PgConnection, OnceItsPreparedStatementsVanishItRunsThemUnnamed) {
  const std::string url = admin_url();
  if (url.empty()) GTEST_SKIP() << kHowToProvideAServer;
  pg::ConnectSettings settings;
  settings.keywords = {"dbname"};
  settings.values = {url};
  settings.secrets = std::make_shared<const std::vector<std::string>>();
  std::string error;
  auto c = pg::Connection::open(settings, error);
  ASSERT_NE(c, nullptr) << error;
  const char* sql = "SELECT $1::INTEGER + 1";
  const auto run = [&](int n, bool pipelined) {
    pg::Params p;
    p.add(n);
    if (!pipelined) return c->exec_prepared(sql, p, pg::Effect::kRead).int64(0, 0);
    std::vector<pg::Statement> one;
    one.push_back({sql, std::move(p), /*prepared=*/true});
    return c->exec_pipeline(one, pg::Effect::kRead).front().int64(0, 0);
  };
  for (const bool pipelined : {false, true}) {
    SCOPED_TRACE(pipelined ? "in a pipeline" : "alone");
    EXPECT_EQ(run(1, pipelined), 2);
    EXPECT_EQ(run(2, pipelined), 3);
    c->exec("DEALLOCATE ALL", pg::Effect::kRead);  // another session behind the pooler
    EXPECT_THROW(run(3, pipelined), pg::PgError);
    EXPECT_EQ(run(4, pipelined), 5);
    EXPECT_EQ(run(5, pipelined), 6);
    // Unnamed from then on: nothing prepared again on this session.
    EXPECT_EQ(c->exec("SELECT count(*) FROM pg_prepared_statements", pg::Effect::kRead).int64(0, 0),
              0);
    c = pg::Connection::open(settings, error);  // a fresh one prepares again
    ASSERT_NE(c, nullptr) << error;
  }
}

TEST(PgStoreOpen, AnUnreachableServerFailsFastWithoutEchoingThePassword) {
  const std::string port = std::to_string(closed_port());
  for (const std::string& url :
       {"postgresql://leadflow:s3cret@127.0.0.1:" + port + "/leadflow",
        "postgres://leadflow:s3%63ret@127.0.0.1:" + port + "/leadflow",
        "postgresql://leadflow:s3cret@127.0.0.1:" + port + "/leadflow?pool_size=3"}) {
    const auto started = Clock::now();
    std::string error;
    EXPECT_EQ(open_store(url, error), nullptr) << url;
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(5));
    EXPECT_NE(error.find("PostgreSQL"), std::string::npos) << error;
    EXPECT_EQ(error.find("s3cret"), std::string::npos) << error;
    EXPECT_EQ(error.find("s3%63ret"), std::string::npos) << error;
  }
}

TEST(PgStoreOpen, AMalformedUrlIsRefusedWithoutEchoingThePassword) {
  std::string error;
  EXPECT_EQ(open_store("postgresql://leadflow:s3cret@127.0.0.1:1/db?no_such_option=1", error),
            nullptr);
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(error.find("s3cret"), std::string::npos) << error;
}

}  // namespace
}  // namespace leadflow::contract

namespace leadflow::contract {
namespace {

// One sequence of operations, the same on both stores: leads, sales (some shared) and other
// outcomes in batches, redelivered outcomes, post intents (some shares) and settlements buyer by
// buyer, returns (some refused). Returns
// what each store answered and holds afterwards, for the two to be compared line by line.
std::vector<std::string> money_script(Store& store) {
  std::vector<std::string> log;
  std::mt19937_64 rng(7);
  std::vector<Lead> leads;
  for (int i = 0; i < 400; ++i) {
    Lead l;
    l.id = "ld_" + std::to_string(100000 + i);  // the same ids in both stores
    l.seller_id = "sl_" + std::to_string(i % 3);
    l.campaign_id = i % 2 ? "cp_" + std::to_string(i % 4) : "";
    l.surface = i % 2 ? Surface::kCampaign : Surface::kApi;
    l.vertical = "solar";
    l.email = "p" + std::to_string(i) + "@example.com";
    l.received_at_ms = kT0 + i;
    leads.push_back(std::move(l));
  }
  const auto inserted = store.insert_leads(leads);
  log.push_back("inserted " + std::to_string(inserted.size()));
  std::vector<std::pair<std::string, std::string>> sold;
  std::vector<OutcomeRecord> batch;
  for (std::size_t i = 0; i < leads.size(); ++i) {
    const std::string buyer = "by_" + std::to_string(rng() % 3);
    const auto roll = rng() % 10;
    Distribution d;
    d.decided_at_ms = kT0 + kMinute + static_cast<std::int64_t>(i);
    if (roll < 5) {
      d.status = DeliveryStatus::kDelivered;
      d.buyer_id = buyer;
      d.price = 100 + static_cast<Cents>(rng() % 3000);
      d.payout = d.price * static_cast<Cents>(rng() % 90) / 100;
      sold.emplace_back(leads[i].id, buyer);
    } else if (roll < 6) {
      // A shared sale to two or three of the buyers, the payout split over the shares.
      d.status = DeliveryStatus::kDelivered;
      const std::size_t n = 2 + rng() % 2;
      std::vector<Cents> prices;
      for (std::size_t k = 0; k < n; ++k) {
        const std::string share = "by_" + std::to_string((rng() % 3 + k) % 3);
        if (std::any_of(d.sales.begin(), d.sales.end(),
                        [&](const Sale& s) { return s.buyer_id == share; }))
          continue;
        d.sales.push_back({share, 100 + static_cast<Cents>(rng() % 900), 0, "r" + share});
        prices.push_back(d.sales.back().price);
        d.price += d.sales.back().price;
        sold.emplace_back(leads[i].id, share);
      }
      d.payout = d.price * 7 / 10;
      const auto parts = money::split_payout(prices, d.payout);
      for (std::size_t k = 0; k < parts.size(); ++k) d.sales[k].payout = parts[k];
      d.buyer_id = d.sales.front().buyer_id;
    } else if (roll < 8) {
      d.status = DeliveryStatus::kUnsold;
    } else {
      // An unknown post outcome: the intents stay (one, or two shares), the lead fails, to be
      // settled below.
      const bool shares = rng() % 2;
      store.record_post_intent({leads[i].id, buyer, 500 + static_cast<Cents>(i), "pg", kT0, shares},
                               {});
      if (shares)
        store.record_post_intent(
            {leads[i].id, buyer == "by_0" ? "by_1" : "by_0", 400, "pg", kT0 + 1, true}, {});
      d.status = DeliveryStatus::kFailed;
    }
    batch.push_back({leads[i].id, d});
    if (batch.size() == 29 || i + 1 == leads.size()) {
      for (auto s : store.record_outcomes(batch))
        log.push_back("outcome " + std::to_string(int(s)));
      for (auto s : store.record_outcomes(batch)) log.push_back("again " + std::to_string(int(s)));
      batch.clear();
    }
  }
  for (std::size_t i = 0; i < leads.size(); ++i) {
    if (rng() % 2) continue;
    // Unnamed first (a lead with two intents refuses it), then each buyer that may hold it.
    for (const std::string named : {"", "by_0", "by_1"}) {
      Settlement s;
      s.lead_id = leads[i].id;
      s.buyer_id = named;
      s.sold = rng() % 2;
      s.price = s.sold ? 700 : 0;
      s.by_key_id = "key_op";
      s.at_ms = kT0 + kHour;
      const SettleResult r = store.settle_lead(s, [](Cents total) { return total / 2; });
      log.push_back("settle " + leads[i].id + " " + named + " " + std::to_string(int(r.status)) +
                    " " + r.settlement.buyer_id + " " + std::to_string(r.settlement.payout));
      if (r.status == SettleStatus::kSettled && s.sold)
        sold.emplace_back(s.lead_id, r.settlement.buyer_id);
    }
  }
  for (std::size_t i = 0; i < sold.size(); ++i) {
    if (rng() % 3) continue;
    ReturnRequest r;
    r.lead_id = sold[i].first;
    r.buyer_id = rng() % 5 ? sold[i].second : "by_other";
    r.reason = "fraud";
    r.by_key_id = "key_b";
    r.at_ms = kT0 + kHour + static_cast<std::int64_t>(rng() % (8 * kDay));  // some too late
    r.window_ms = 7 * kDay;
    const ReturnResult got = store.record_return(r);
    log.push_back("return " + r.lead_id + " " + std::to_string(int(got.status)));
  }
  for (const auto& l : leads) {
    const auto r = store.get_lead(l.id).value;
    log.push_back(
        "lead " + l.id + " " + std::string(r ? to_string(r->distribution.status) : "missing") +
        " " + (r ? r->distribution.buyer_id : "") + " " +
        (r ? std::to_string(r->distribution.price) + "/" + std::to_string(r->distribution.payout)
           : ""));
    if (r)
      for (const auto& s : r->distribution.sales)
        log.push_back("sale " + l.id + " " + s.buyer_id + " " + std::to_string(s.price) + "/" +
                      std::to_string(s.payout) + " " + s.buyer_lead_id);
  }
  // Entries compared as a set: the order of the entries one transaction writes is the store's
  // (PostgreSQL writes a batch's sales in the revenue rollup's key order).
  LedgerQuery q;
  q.limit = 1000;
  std::vector<std::string> entries;
  for (;;) {
    const auto page = store.list_ledger(q);
    if (!page || page->empty()) break;
    for (const auto& e : *page)
      entries.push_back("ledger " + e.kind + " " + e.lead_id + " " + e.buyer_id + " " +
                        e.seller_id + " " + e.campaign_id + " " + std::to_string(e.revenue) + " " +
                        std::to_string(e.payout) + " " + std::to_string(e.at_ms));
    q.after_id = page->back().id;
    q.after_at_ms = page->back().at_ms;
  }
  std::sort(entries.begin(), entries.end());
  log.insert(log.end(), entries.begin(), entries.end());
  for (int b = 0; b < 3; ++b) {
    const std::string buyer = "by_" + std::to_string(b);
    log.push_back("budget " + buyer + " " +
                  std::to_string(store.sales_cents(buyer, 0).value_or(-1)));
    const auto stats = store.return_stats(buyer, 0);
    log.push_back("stats " + buyer + " " + std::to_string(stats ? stats->sales : -1) + " " +
                  std::to_string(stats ? stats->returns : -1));
  }
  return log;
}

TEST(BothStores, TheSameOperationsLeaveTheSameLeadsLedgerAndBudgets) {
  ASSERT_FALSE(admin_url().empty()) << kHowToProvideAServer;
  TestDatabase db;
  std::string error;
  auto pg = open_store(db.url(), error);
  ASSERT_NE(pg, nullptr) << error;
  ASSERT_EQ(pg->migrate(), StoreStatus::kOk);
  char dir_template[] = "/tmp/leadflow-both-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  auto sqlite = open_store("sqlite:" + dir + "/leadflow.db", error);
  ASSERT_NE(sqlite, nullptr) << error;
  ASSERT_EQ(sqlite->migrate(), StoreStatus::kOk);

  const auto from_pg = money_script(*pg);
  const auto from_sqlite = money_script(*sqlite);
  ASSERT_EQ(from_pg.size(), from_sqlite.size());
  std::size_t ledger_lines = 0;
  for (std::size_t i = 0; i < from_pg.size(); ++i) {
    EXPECT_EQ(from_pg[i], from_sqlite[i]) << "line " << i;
    if (from_pg[i].rfind("ledger ", 0) == 0) ++ledger_lines;
  }
  EXPECT_GT(ledger_lines, 200u);  // sales, settled sales and returns
  sqlite.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace leadflow::contract
