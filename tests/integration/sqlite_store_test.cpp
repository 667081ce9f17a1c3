// The storage contract against a real SQLite file, plus what only the SQLite adapter promises:
// LEADFLOW_STORE parsing, the parent directory, durability across reopening.

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/store/store.hpp"
#include "store_contract.hpp"

namespace leadflow::contract {
namespace {

/// A private directory under the system temp directory, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "leadflow-store-XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Runs `sql` on the database file through a connection of its own; fails the test on error.
void exec_on_file(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << "cannot open " << path << ": " << sqlite3_errmsg(db);
  } else {
    sqlite3_busy_timeout(db, 10'000);
    char* message = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK)
      ADD_FAILURE() << sql << ": " << (message != nullptr ? message : "");
    sqlite3_free(message);
  }
  sqlite3_close(db);
}

/// Runs `sql` on the database file through a connection of its own; whether it succeeded.
bool try_on_file(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  bool ok = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK;
  if (ok) {
    sqlite3_busy_timeout(db, 10'000);
    ok = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  sqlite3_close(db);
  return ok;
}

StoreFactory sqlite_factory() {
  return {
      "sqlite", [] {
        auto dir = std::make_shared<TempDir>();
        const std::string path = dir->path() + "/data/leadflow.db";
        std::string error;
        // A missing parent directory: open_store creates it.
        auto store = open_store("sqlite:" + path, error);
        EXPECT_NE(store, nullptr) << error;
        StoreHandle handle;
        handle.store = std::move(store);
        handle.cleanup = [dir]() mutable { dir.reset(); };
        handle.open_again = [path] {
          std::string error;
          auto again = open_store("sqlite:" + path, error);
          EXPECT_NE(again, nullptr) << error;
          return again;
        };
        handle.try_sql = [path](const std::string& sql) { return try_on_file(path, sql); };
        // RAISE(ROLLBACK) ends the writer's transaction, as SQLite does after an I/O error.
        handle.fail_post_intent_of = [path](const std::string& lead_id) {
          exec_on_file(path,
                       "CREATE TRIGGER test_fault BEFORE INSERT ON post_intents"
                       " WHEN NEW.lead_id = '" +
                           lead_id + "' BEGIN SELECT RAISE(ROLLBACK, 'injected fault'); END");
          return std::function<void()>([path] { exec_on_file(path, "DROP TRIGGER test_fault"); });
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

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreContract, ::testing::Values(sqlite_factory()),
                         store_factory_name);

// --- SQLite only --------------------------------------------------------------------------------

namespace {

TEST(SqliteStore, OpenStoreCreatesMissingParentDirectories) {
  TempDir dir;
  const std::string file = dir.path() + "/a/b/c/leadflow.db";
  std::string error;
  auto store = open_store("sqlite:" + file, error);
  ASSERT_NE(store, nullptr) << error;
  EXPECT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(store->migrate(), StoreStatus::kOk);
  EXPECT_TRUE(store->healthy());
}

TEST(SqliteStore, OpenStoreAcceptsTheUrlSpellingOfAnAbsolutePath) {
  TempDir dir;
  std::string error;
  auto store = open_store("sqlite://" + dir.path() + "/leadflow.db", error);  // sqlite:///tmp/...
  ASSERT_NE(store, nullptr) << error;
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/leadflow.db"));
}

TEST(SqliteStore, DataSurvivesReopeningAndMigratingAgain) {
  TempDir dir;
  const std::string url = "sqlite:" + dir.path() + "/leadflow.db";
  Lead lead;
  lead.id = new_id(kLeadPrefix, kT0);
  lead.email = "reopen@example.com";
  lead.phone = "+14155550123";
  lead.vertical = "solar";
  lead.received_at_ms = kT0;
  {
    std::string error;
    auto store = open_store(url, error);
    ASSERT_NE(store, nullptr) << error;
    ASSERT_EQ(store->migrate(), StoreStatus::kOk);
    ASSERT_EQ(store->insert_leads(std::vector<Lead>{lead}).size(), 1u);
    Distribution d;
    d.status = DeliveryStatus::kDelivered;
    d.buyer_id = "by_x";
    d.price = 1500;
    d.decided_at_ms = kT0 + kSecond;
    ASSERT_EQ(store->record_outcomes(std::vector<OutcomeRecord>{{lead.id, d}}),
              std::vector<StoreStatus>{StoreStatus::kOk});
  }
  std::string error;
  auto store = open_store(url, error);
  ASSERT_NE(store, nullptr) << error;
  EXPECT_EQ(store->migrate(), StoreStatus::kOk);
  const auto got = store->get_lead(lead.id).value;
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->distribution.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(store->count_sales("by_x", 0), 1);
}

TEST(SqliteStore, AnnouncesToNoOtherProcess) {
  // One process owns the embedded shape: outcomes travel in memory, never through the store.
  TempDir dir;
  std::string error;
  auto store = open_store("sqlite:" + dir.path() + "/leadflow.db", error);
  ASSERT_NE(store, nullptr) << error;
  EXPECT_FALSE(store->announces());
  EXPECT_EQ(store->announce("leadflow_outcomes", std::vector<std::string>{"x"}),
            StoreStatus::kUnavailable);
  EXPECT_EQ(store->watch(
                "leadflow_outcomes", [](std::string_view) {}, nullptr),
            nullptr);
}

// The process's SQLite keeps statement journals in memory (driver.cpp). A spill to a file past a
// size above 128 KiB fails in SQLite 3.40 (the journal is copied in chunks of that size, and its
// file layer writes at most 128 KiB at once): with the 4 MiB once set, a statement whose journal
// outgrew it inside a transaction (a migration's backfill) failed with "database or disk is
// full". Once a store is open, every connection of the process has its setting.
TEST(SqliteStore, AStatementWithAJournalOfManyMegabytesInATransactionIsWritten) {
  TempDir dir;
  const std::string path = dir.path() + "/leadflow.db";
  std::string error;
  auto store = open_store("sqlite:" + path, error);
  ASSERT_NE(store, nullptr) << error;
  ASSERT_EQ(store->migrate(), StoreStatus::kOk);
  // 200,000 rows of about 80 bytes (16 MB); the CHECK makes the UPDATE keep a statement journal
  // of every page it changes.
  exec_on_file(path,
               "CREATE TABLE spill (id INTEGER PRIMARY KEY, a TEXT NOT NULL"
               " CHECK (length(a) < 1000));"
               "WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 200000)"
               " INSERT INTO spill SELECT i, printf('%.*c', 60, 'x') FROM k;");
  exec_on_file(path, "BEGIN IMMEDIATE; UPDATE spill SET a = a || 'y'; COMMIT;");
  EXPECT_TRUE(try_on_file(path,
                          "CREATE TABLE probe (v INTEGER CHECK (v = 200001));"
                          "INSERT INTO probe SELECT count(*) FROM spill"
                          " WHERE length(a) = 61"));
}

TEST(SqliteStore, TwoStoresOnOneFileShareOneTruth) {
  // Two processes (here: two stores) on one file: a lead decided by one is decided for both.
  TempDir dir;
  const std::string url = "sqlite:" + dir.path() + "/leadflow.db";
  std::string error;
  auto a = open_store(url, error);
  ASSERT_NE(a, nullptr) << error;
  auto b = open_store(url, error);
  ASSERT_NE(b, nullptr) << error;
  ASSERT_EQ(a->migrate(), StoreStatus::kOk);
  ASSERT_EQ(b->migrate(), StoreStatus::kOk);

  Lead lead;
  lead.id = new_id(kLeadPrefix, kT0);
  lead.vertical = "solar";
  ASSERT_EQ(a->insert_leads(std::vector<Lead>{lead}).size(), 1u);
  Distribution d;
  d.status = DeliveryStatus::kDelivered;
  d.buyer_id = "by_a";
  EXPECT_EQ(a->record_outcomes(std::vector<OutcomeRecord>{{lead.id, d}}),
            std::vector<StoreStatus>{StoreStatus::kOk});
  d.buyer_id = "by_b";
  EXPECT_EQ(b->record_outcomes(std::vector<OutcomeRecord>{{lead.id, d}}),
            std::vector<StoreStatus>{StoreStatus::kConflict});
  EXPECT_EQ(b->get_lead(lead.id).value->distribution.buyer_id, "by_a");
}

TEST(SqliteStore, OpenStoreRefusesAFileThatIsNotADatabase) {
  TempDir dir;
  const std::string file = dir.path() + "/not-a-db";
  std::ofstream(file) << "this is not an SQLite database, just some text long enough to matter";
  std::string error;
  EXPECT_EQ(open_store("sqlite:" + file, error), nullptr);
  EXPECT_NE(error.find(file), std::string::npos) << error;
}

TEST(SqliteStore, OpenStoreReportsADirectoryItCannotCreate) {
  TempDir dir;
  const std::string file = dir.path() + "/plain-file";
  std::ofstream(file) << "x";
  std::string error;
  EXPECT_EQ(open_store("sqlite:" + file + "/sub/leadflow.db", error), nullptr);
  EXPECT_NE(error.find("cannot create directory"), std::string::npos) << error;
}

TEST(SqliteStore, OpenStoreRefusesMissingPathsAndMemoryDatabases) {
  for (const std::string url : {"sqlite:", "sqlite://", "sqlite::memory:", "sqlite:file:x.db"}) {
    std::string error;
    EXPECT_EQ(open_store(url, error), nullptr) << url;
    EXPECT_NE(error.find("sqlite:PATH"), std::string::npos) << url << ": " << error;
  }
}

// Callers prefix errors with "LEADFLOW_STORE: "; an unusable value names the setting itself.
TEST(SqliteStore, OpenStoreNamesTheSettingForUnknownSchemes) {
  for (const std::string url : {"", "mysql://db/leads", "leadflow.db", "SQLITE:x.db"}) {
    std::string error;
    EXPECT_EQ(open_store(url, error), nullptr) << url;
    EXPECT_NE(error.find("LEADFLOW_STORE"), std::string::npos) << url << ": " << error;
  }
}

}  // namespace
}  // namespace leadflow::contract
