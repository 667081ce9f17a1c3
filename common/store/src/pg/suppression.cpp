// PgStore: the suppression port (suppression lists and their entries).
#include "pg/adapter.hpp"
#include "suppression_rows.hpp"

namespace leadflow::pg {

StoreStatus PgStore::create_suppression_list(const SuppressionList& l) {
  return write("create_suppression_list",
               "INSERT INTO suppression_lists (" LF_SUPPRESSION_LIST_COLUMNS
               ") VALUES ($1, $2, $3, 0, 0, $4, $4)",
               Params().add(l.id).add(l.buyer_id).add(l.name).add(l.created_at_ms));
}

Lookup<SuppressionList> PgStore::get_suppression_list(std::string_view id) {
  return lookup<SuppressionList>("get_suppression_list",
                                 "SELECT " LF_SUPPRESSION_LIST_COLUMNS
                                 " FROM suppression_lists WHERE id = $1",
                                 Params().add(id), read_suppression_list<Row>);
}

std::optional<std::vector<SuppressionList>> PgStore::list_suppression_lists(
    std::optional<std::string_view> buyer_id) {
  return read_rows<SuppressionList>(
      "list_suppression_lists",
      "SELECT " LF_SUPPRESSION_LIST_COLUMNS
      " FROM suppression_lists WHERE NOT $1::BOOLEAN OR buyer_id = $2 ORDER BY id",
      Params().add(buyer_id.has_value()).add(buyer_id.value_or("")), read_suppression_list<Row>);
}

StoreStatus PgStore::replace_suppression_entries(std::string_view id,
                                                 std::span<const std::uint64_t> fingerprints,
                                                 std::int64_t now_ms) {
  return run("replace_suppression_entries", StoreStatus::kUnavailable, [&](Connection& c) {
    Transaction tx(c);
    // The row lock taken here orders two replacements of one list.
    const Result r = c.exec(
        "UPDATE suppression_lists SET entries_version = entries_version + 1, entries = $2,"
        " updated_at_ms = $3 WHERE id = $1 RETURNING entries_version",
        Params().add(id).add(static_cast<std::int64_t>(fingerprints.size())).add(now_ms),
        Effect::kWrite);
    if (r.rows() == 0) return StoreStatus::kNotFound;
    const std::int64_t version = r.int64(0, 0);
    c.exec("DELETE FROM suppression_chunks WHERE list_id = $1", Params().add(id), Effect::kWrite);
    std::int64_t n = 0;
    for (std::size_t at = 0; at < fingerprints.size(); at += kSuppressionChunkEntries, ++n)
      c.exec(
          "INSERT INTO suppression_chunks (list_id, entries_version, n, fingerprints)"
          " VALUES ($1, $2, $3, $4)",
          Params().add(id).add(version).add(n).add(suppression_chunk_text(fingerprints.subspan(
              at, std::min(kSuppressionChunkEntries, fingerprints.size() - at)))),
          Effect::kWrite);
    tx.commit();
    return StoreStatus::kOk;
  });
}

std::optional<std::vector<std::uint64_t>> PgStore::suppression_entries(
    std::string_view id, std::int64_t entries_version) {
  using Entries = std::optional<std::vector<std::uint64_t>>;
  return run("suppression_entries", Entries{}, [&](Connection& c) -> Entries {
    // One statement: one snapshot of the list and its chunks.
    const Result r = c.exec(
        "SELECT l.entries, c.fingerprints FROM suppression_lists l"
        " LEFT JOIN suppression_chunks c ON c.list_id = l.id"
        " AND c.entries_version = l.entries_version"
        " WHERE l.id = $1 AND l.entries_version = $2 ORDER BY c.n",
        Params().add(id).add(entries_version), Effect::kRead);
    if (r.rows() == 0) return std::nullopt;  // replaced or deleted meanwhile
    std::vector<std::uint64_t> out;
    out.reserve(static_cast<std::size_t>(r.int64(0, 0)));
    for (int i = 0; i < r.rows(); ++i)
      if (!r.is_null(i, 1) && !append_suppression_chunk(r.text(i, 1), out)) return std::nullopt;
    if (static_cast<std::int64_t>(out.size()) != r.int64(0, 0)) return std::nullopt;
    return out;
  });
}

StoreStatus PgStore::delete_suppression_list(std::string_view id) {
  return run("delete_suppression_list", StoreStatus::kUnavailable, [&](Connection& c) {
    Transaction tx(c);
    c.exec("DELETE FROM suppression_chunks WHERE list_id = $1", Params().add(id), Effect::kWrite);
    const Result r = c.exec("DELETE FROM suppression_lists WHERE id = $1 RETURNING 1",
                            Params().add(id), Effect::kWrite);
    if (r.rows() == 0) return StoreStatus::kNotFound;
    tx.commit();
    return StoreStatus::kOk;
  });
}

}  // namespace leadflow::pg
