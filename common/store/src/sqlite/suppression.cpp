// SqliteStore: the suppression port (suppression lists and their entries).
#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sqlite/adapter.hpp"
#include "suppression_rows.hpp"

namespace leadflow::sqlite {

StoreStatus SqliteStore::create_suppression_list(const SuppressionList& l) {
  return write_one(
      "create_suppression_list",
      "INSERT INTO suppression_lists (" LF_SUPPRESSION_LIST_COLUMNS
      ") VALUES (?1, ?2, ?3, 0, 0, ?4, ?4)",
      [&](Query& q) { q.bind(l.id).bind(l.buyer_id).bind(l.name).bind(l.created_at_ms); });
}

Lookup<SuppressionList> SqliteStore::get_suppression_list(std::string_view id) {
  return lookup<SuppressionList>(
      "get_suppression_list",
      "SELECT " LF_SUPPRESSION_LIST_COLUMNS " FROM suppression_lists WHERE id = ?1",
      [&](Query& q) { q.bind(id); }, read_suppression_list<Query>);
}

std::optional<std::vector<SuppressionList>> SqliteStore::list_suppression_lists(
    std::optional<std::string_view> buyer_id) {
  return read_rows<SuppressionList>(
      "list_suppression_lists",
      "SELECT " LF_SUPPRESSION_LIST_COLUMNS
      " FROM suppression_lists WHERE ?1 = 0 OR buyer_id = ?2 ORDER BY id",
      [&](Query& q) { q.bind(buyer_id.has_value()).bind(buyer_id.value_or("")); },
      read_suppression_list<Query>);
}

namespace {

// Where the rows of a replacement wait until its switch: a negative entries_version, which no
// reader asks for, of its own: the wall clock's milliseconds times 1,024 plus a random number.
// Two replacements of one list at once (two processes on the file: the ingest and
// leadflow-admin) never write the same rows, and the rows a crash left behind say when they were
// written.
std::int64_t staging_version() {
  const std::int64_t wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count();
  thread_local std::mt19937 random{std::random_device{}()};
  return -(wall_ms * 1024 + static_cast<std::int64_t>(random() % 1024));
}

// Staged rows older than this are a replacement's that stopped half way (a crash): an upload of
// ten million entries is written in well under a minute.
constexpr std::int64_t kStagingAbandonedMs = 3'600'000;

}  // namespace

// SQLite has one writer: ten million entries are 153 rows of 1 MB, and written in one
// transaction they would hold every lead's write for seconds. So the new entries are written
// under a staging version of their own (staging_version) in small transactions, the writer free
// between them, where no reader looks (a reader reads the rows of the version the list names);
// then one transaction gives them the list's next version and moves the list to it, and the old
// rows are dropped a few at a time. A reader sees the old entries or the new, never a mix, as the
// port says. Each small transaction first checks that the list still exists, so a list deleted
// meanwhile (its rows go with it) gets none written after; two replacements at once both land,
// the later switch last. Rows a crash left staged are dropped by the list's next replacement an
// hour on, or by its deletion.
StoreStatus SqliteStore::replace_suppression_entries(std::string_view id,
                                                     std::span<const std::uint64_t> fingerprints,
                                                     std::int64_t now_ms) {
  constexpr std::size_t kChunksPerTransaction = 8;
  const std::int64_t staging = staging_version();
  // Drops, a few rows a transaction, the list's rows that `which` selects: freeing a row walks
  // its pages, and 153 rows of 1 MB at once held the writer for a second and a half.
  const auto drop_rows = [&](Connection& c, const char* which,
                             std::optional<std::int64_t> a) -> StoreStatus {
    const std::string sql = std::string(
                                "DELETE FROM suppression_chunks WHERE rowid IN (SELECT rowid FROM "
                                "suppression_chunks WHERE list_id = ?1 AND ") +
                            which + " LIMIT 8)";
    for (;;) {
      std::lock_guard lock(write_mu_);
      Query q(c, sql.c_str());
      q.bind(id);
      if (a) q.bind(*a);
      if (int rc = q.run()) return report(c, rc, "replace_suppression_entries");
      if (c.changes() == 0) return StoreStatus::kOk;
    }
  };
  // Whether the list still exists, inside the caller's write transaction.
  const auto list_exists = [&](Connection& c, bool& exists) -> int {
    Query q(c, "SELECT 1 FROM suppression_lists WHERE id = ?1");
    const int rc = q.bind(id).step();
    exists = rc == SQLITE_ROW;
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
  };
  // This replacement's staged rows, when it ends without its switch.
  const auto drop_staged = [&](Connection& c) {
    return drop_rows(c, "entries_version = ?2", staging);
  };
  return guarded("replace_suppression_entries", StoreStatus::kUnavailable, [&] {
    Connection& c = *writer_;
    // Rows staged by a replacement that stopped half way, an hour or more ago, and rows of a
    // version past the list's (an earlier build staged under the next version).
    const std::int64_t abandoned = -((-staging / 1024 - kStagingAbandonedMs) * 1024);
    if (const StoreStatus s =
            drop_rows(c, "entries_version < 0 AND entries_version > ?2", abandoned);
        s != StoreStatus::kOk)
      return s;
    // The list's version is read in each statement: a replacement from another process that
    // switches meanwhile keeps its rows.
    if (const StoreStatus s = drop_rows(
            c, "entries_version > (SELECT entries_version FROM suppression_lists WHERE id = ?1)",
            std::nullopt);
        s != StoreStatus::kOk)
      return s;
    std::size_t at = 0;
    std::int64_t n = 0;
    do {
      // The rows' text is made before the writer is taken.
      std::vector<std::string> texts;
      for (std::size_t k = 0; k < kChunksPerTransaction && at < fingerprints.size(); ++k) {
        const std::size_t size = std::min(kSuppressionChunkEntries, fingerprints.size() - at);
        texts.push_back(suppression_chunk_text(fingerprints.subspan(at, size)));
        at += size;
      }
      std::lock_guard lock(write_mu_);
      Transaction tx(c);
      if (int rc = tx.begin()) return report(c, rc, "replace_suppression_entries");
      bool exists = false;
      if (int rc = list_exists(c, exists)) return report(c, rc, "replace_suppression_entries");
      if (!exists) {
        // Deleted meanwhile: the deletion took the rows staged before it.
        return StoreStatus::kNotFound;
      }
      for (const std::string& text : texts) {
        Query q(c,
                "INSERT INTO suppression_chunks (list_id, entries_version, n, fingerprints)"
                " VALUES (?1, ?2, ?3, ?4)");
        if (int rc = q.bind(id).bind(staging).bind(n++).bind(text).run())
          return report(c, rc, "replace_suppression_entries");
      }
      if (int rc = tx.commit()) return report(c, rc, "replace_suppression_entries");
    } while (at < fingerprints.size());
    std::int64_t version = 0;
    bool lost_rows = false;
    {
      // The switch: the staged rows become the list's next version, and from here readers read
      // them. The version is read here, in the switch's transaction: a replacement that switched
      // meanwhile is followed, never undone.
      std::lock_guard lock(write_mu_);
      Transaction tx(c);
      if (int rc = tx.begin()) return report(c, rc, "replace_suppression_entries");
      {
        Query q(c, "SELECT entries_version FROM suppression_lists WHERE id = ?1");
        const int rc = q.bind(id).step();
        if (rc == SQLITE_DONE) return StoreStatus::kNotFound;  // deleted, rows and all
        if (rc != SQLITE_ROW) return report(c, rc, "replace_suppression_entries");
        version = q.int64(0);
      }
      // A row a statement: statement journals are held in memory (driver.cpp), and one
      // statement moving every row of ten million entries would hold 153 MB of them.
      for (std::int64_t k = 0; k < n && !lost_rows; ++k) {
        Query q(c,
                "UPDATE suppression_chunks SET entries_version = ?3"
                " WHERE list_id = ?1 AND entries_version = ?2 AND n = ?4");
        if (int rc = q.bind(id).bind(staging).bind(version + 1).bind(k).run())
          return report(c, rc, "replace_suppression_entries");
        // A row gone: the list was deleted and made again under the same id meanwhile.
        // Nothing is switched (the transaction is rolled back as it ends).
        lost_rows = c.changes() != 1;
      }
      if (!lost_rows) {
        Query q(
            c,
            "UPDATE suppression_lists SET entries_version = ?2, entries = ?3, updated_at_ms = ?4"
            " WHERE id = ?1");
        if (int rc = q.bind(id)
                         .bind(version + 1)
                         .bind(static_cast<std::int64_t>(fingerprints.size()))
                         .bind(now_ms)
                         .run())
          return report(c, rc, "replace_suppression_entries");
        if (int rc = tx.commit()) return report(c, rc, "replace_suppression_entries");
      }
    }
    if (lost_rows) {
      log(LogLevel::kWarn, "suppression_replacement_lost_rows", {{"list_id", std::string(id)}});
      (void)drop_staged(c);
      return StoreStatus::kUnavailable;  // the caller replaces the list again
    }
    // The rows of earlier versions, which no reader reads now (a staged replacement's, negative,
    // are left to it).
    return drop_rows(c, "entries_version >= 0 AND entries_version < ?2", version + 1);
  });
}

std::optional<std::vector<std::uint64_t>> SqliteStore::suppression_entries(
    std::string_view id, std::int64_t entries_version) {
  using Entries = std::optional<std::vector<std::uint64_t>>;
  return read_snapshot("suppression_entries", Entries{}, [&](Connection& c) -> Entries {
    std::int64_t expected = 0;
    {
      Query q(c, "SELECT entries FROM suppression_lists WHERE id = ?1 AND entries_version = ?2");
      const int rc = q.bind(id).bind(entries_version).step();
      if (rc == SQLITE_DONE) return std::nullopt;  // replaced or deleted meanwhile
      if (rc != SQLITE_ROW) return (report(c, rc, "suppression_entries"), std::nullopt);
      expected = q.int64(0);
    }
    std::vector<std::uint64_t> out;
    out.reserve(static_cast<std::size_t>(expected));
    Query q(c,
            "SELECT fingerprints FROM suppression_chunks WHERE list_id = ?1"
            " AND entries_version = ?2 ORDER BY n");
    q.bind(id).bind(entries_version);
    int rc;
    while ((rc = q.step()) == SQLITE_ROW)
      if (!append_suppression_chunk(q.text(0), out)) return std::nullopt;
    if (rc != SQLITE_DONE) return (report(c, rc, "suppression_entries"), std::nullopt);
    if (static_cast<std::int64_t>(out.size()) != expected) return std::nullopt;
    return out;
  });
}

StoreStatus SqliteStore::delete_suppression_list(std::string_view id) {
  return guarded("delete_suppression_list", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "delete_suppression_list");
    {
      Query q(c, "DELETE FROM suppression_chunks WHERE list_id = ?1");
      if (int rc = q.bind(id).run()) return report(c, rc, "delete_suppression_list");
    }
    {
      Query q(c, "DELETE FROM suppression_lists WHERE id = ?1");
      if (int rc = q.bind(id).run()) return report(c, rc, "delete_suppression_list");
    }
    if (c.changes() == 0) return StoreStatus::kNotFound;
    if (int rc = tx.commit()) return report(c, rc, "delete_suppression_list");
    return StoreStatus::kOk;
  });
}

}  // namespace leadflow::sqlite
