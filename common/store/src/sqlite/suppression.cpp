// SqliteStore: the suppression port (suppression lists and their entries).
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

StoreStatus SqliteStore::replace_suppression_entries(std::string_view id,
                                                     std::span<const std::uint64_t> fingerprints,
                                                     std::int64_t now_ms) {
  return guarded("replace_suppression_entries", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "replace_suppression_entries");
    std::int64_t version = 0;
    {
      Query q(c,
              "UPDATE suppression_lists SET entries_version = entries_version + 1, entries = ?2,"
              " updated_at_ms = ?3 WHERE id = ?1 RETURNING entries_version");
      const int rc =
          q.bind(id).bind(static_cast<std::int64_t>(fingerprints.size())).bind(now_ms).step();
      if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
      if (rc != SQLITE_ROW) return report(c, rc, "replace_suppression_entries");
      version = q.int64(0);
    }
    {
      Query q(c, "DELETE FROM suppression_chunks WHERE list_id = ?1");
      if (int rc = q.bind(id).run()) return report(c, rc, "replace_suppression_entries");
    }
    std::int64_t n = 0;
    for (std::size_t at = 0; at < fingerprints.size(); at += kSuppressionChunkEntries, ++n) {
      const std::string text = suppression_chunk_text(
          fingerprints.subspan(at, std::min(kSuppressionChunkEntries, fingerprints.size() - at)));
      Query q(c,
              "INSERT INTO suppression_chunks (list_id, entries_version, n, fingerprints)"
              " VALUES (?1, ?2, ?3, ?4)");
      if (int rc = q.bind(id).bind(version).bind(n).bind(text).run())
        return report(c, rc, "replace_suppression_entries");
    }
    if (int rc = tx.commit()) return report(c, rc, "replace_suppression_entries");
    return StoreStatus::kOk;
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
