// SqliteStore: the suppression port (suppression lists and their entries).
#include <algorithm>
#include <mutex>
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

// SQLite has one writer: ten million entries are 153 rows of 1 MB, and written in one
// transaction they would hold every lead's write for seconds. So the new entries are written
// under the next entries_version in small transactions, the writer free between them, where no
// reader looks (a reader reads the rows of the version the list names); then one statement moves
// the list to that version, and the old rows are dropped a few at a time. A reader sees the old
// entries or the new, never a mix, as the port says. Rows of a replacement that stopped half way
// (a crash) are dropped by the next replacement or the list's deletion.
StoreStatus SqliteStore::replace_suppression_entries(std::string_view id,
                                                     std::span<const std::uint64_t> fingerprints,
                                                     std::int64_t now_ms) {
  constexpr std::size_t kChunksPerTransaction = 8;
  // One replacement at a time in this process: two would write the same next version.
  static std::mutex replacing;
  std::lock_guard one_at_a_time(replacing);
  // Drops the list's rows of every version but `keep`, a few rows a transaction: freeing a row
  // walks its pages, and 153 rows of 1 MB at once held the writer for a second and a half.
  const auto drop_rows_but = [&](Connection& c, std::int64_t keep) -> StoreStatus {
    for (;;) {
      std::lock_guard lock(write_mu_);
      Query q(c,
              "DELETE FROM suppression_chunks WHERE rowid IN (SELECT rowid FROM suppression_chunks"
              " WHERE list_id = ?1 AND entries_version <> ?2 LIMIT 8)");
      if (int rc = q.bind(id).bind(keep).run()) return report(c, rc, "replace_suppression_entries");
      if (c.changes() == 0) return StoreStatus::kOk;
    }
  };
  return guarded("replace_suppression_entries", StoreStatus::kUnavailable, [&] {
    Connection& c = *writer_;
    std::int64_t version = 0;
    {
      std::lock_guard lock(write_mu_);
      Query q(c, "SELECT entries_version FROM suppression_lists WHERE id = ?1");
      const int rc = q.bind(id).step();
      if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
      if (rc != SQLITE_ROW) return report(c, rc, "replace_suppression_entries");
      version = q.int64(0);
    }
    // Rows of no version the list names (a replacement cut short, or its old rows not dropped).
    if (const StoreStatus s = drop_rows_but(c, version); s != StoreStatus::kOk) return s;
    std::size_t at = 0;
    std::int64_t n = 0;
    while (at < fingerprints.size()) {
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
      for (const std::string& text : texts) {
        Query q(c,
                "INSERT INTO suppression_chunks (list_id, entries_version, n, fingerprints)"
                " VALUES (?1, ?2, ?3, ?4)");
        if (int rc = q.bind(id).bind(version + 1).bind(n++).bind(text).run())
          return report(c, rc, "replace_suppression_entries");
      }
      if (int rc = tx.commit()) return report(c, rc, "replace_suppression_entries");
    }
    {
      // The switch: from here readers read the new rows.
      std::lock_guard lock(write_mu_);
      Query q(c,
              "UPDATE suppression_lists SET entries_version = ?2, entries = ?3, updated_at_ms = ?4"
              " WHERE id = ?1 AND entries_version = ?2 - 1");
      if (int rc = q.bind(id)
                       .bind(version + 1)
                       .bind(static_cast<std::int64_t>(fingerprints.size()))
                       .bind(now_ms)
                       .run())
        return report(c, rc, "replace_suppression_entries");
      // Deleted meanwhile (its rows went with it), or replaced by another process.
      if (c.changes() == 0) return StoreStatus::kNotFound;
    }
    // The old rows, which no reader reads now.
    return drop_rows_but(c, version + 1);
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
