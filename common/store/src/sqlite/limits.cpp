// The SQLite adapter of the limits port (leadflow/store/limits.hpp): shared rate-limit buckets and
// attempt windows.
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

/// BEGIN IMMEDIATE takes the database write lock before the read, so the read, `update` and
/// the write are one critical section across processes. If `update` throws, nothing is
/// written (the transaction rolls back) and the answer is kUnavailable.
StoreStatus SqliteStore::update_rate_bucket(std::string_view key,
                                            const std::function<void(RateBucketState&)>& update) {
  return guarded("update_rate_bucket", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "update_rate_bucket");
    RateBucketState state;
    {
      Query q(c, "SELECT tokens, refilled_at, day, day_count FROM rate_buckets WHERE key = ?1");
      const int rc = q.bind(key).step();
      if (rc == SQLITE_ROW) {
        state.exists = true;
        state.tokens = q.real(0);
        state.refilled_at_ms = q.int64(1);
        state.day = q.int64(2);
        state.day_count = q.int64(3);
      } else if (rc != SQLITE_DONE) {
        return report(c, rc, "update_rate_bucket");
      }
    }
    update(state);
    {
      Query q(c,
              "INSERT INTO rate_buckets (key, tokens, refilled_at, day, day_count)"
              " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (key) DO UPDATE SET"
              " tokens = excluded.tokens, refilled_at = excluded.refilled_at,"
              " day = excluded.day, day_count = excluded.day_count");
      if (int rc = q.bind(key)
                       .bind(state.tokens)
                       .bind(state.refilled_at_ms)
                       .bind(state.day)
                       .bind(state.day_count)
                       .run())
        return report(c, rc, "update_rate_bucket");
    }
    if (int rc = tx.commit()) return report(c, rc, "update_rate_bucket");
    return StoreStatus::kOk;
  });
}

std::optional<std::vector<RateBucketRow>> SqliteStore::list_rate_buckets(std::string_view after,
                                                                         int limit) {
  return read_rows<RateBucketRow>(
      "list_rate_buckets",
      "SELECT b.key, b.refilled_at, b.day, COALESCE(k.revoked_at, 0) <> 0 FROM rate_buckets b"
      " LEFT JOIN api_keys k ON k.id = b.key WHERE b.key > ?1 ORDER BY b.key LIMIT ?2",
      [&](Query& q) { q.bind(after).bind(static_cast<std::int64_t>(limit)); },
      [](Query& q) {
        return RateBucketRow{q.text(0), q.int64(1), q.int64(2), q.int64(3) != 0};
      });
}

std::optional<std::int64_t> SqliteStore::delete_rate_buckets(
    const std::vector<RateBucketRow>& rows) {
  return guarded("delete_rate_buckets", std::optional<std::int64_t>{},
                 [&]() -> std::optional<std::int64_t> {
                   std::lock_guard lock(write_mu_);
                   Connection& c = *writer_;
                   Transaction tx(c);
                   if (int rc = tx.begin()) {
                     report(c, rc, "delete_rate_buckets");
                     return std::nullopt;
                   }
                   std::int64_t deleted = 0;
                   for (const RateBucketRow& r : rows) {
                     Query q(c,
                             "DELETE FROM rate_buckets WHERE key = ?1 AND refilled_at = ?2"
                             " AND day = ?3");
                     if (int rc = q.bind(r.key).bind(r.refilled_at_ms).bind(r.day).run()) {
                       report(c, rc, "delete_rate_buckets");
                       return std::nullopt;
                     }
                     deleted += c.changes();
                   }
                   if (int rc = tx.commit()) {
                     report(c, rc, "delete_rate_buckets");
                     return std::nullopt;
                   }
                   return deleted;
                 });
}

/// BEGIN IMMEDIATE, as above: the reads, `update` and the writes of every key are one critical
/// section across processes.
StoreStatus SqliteStore::update_attempt_windows(
    const std::vector<std::string>& keys,
    const std::function<void(std::vector<std::vector<std::int64_t>>&)>& update) {
  return guarded("update_attempt_windows", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "update_attempt_windows");
    std::vector<std::vector<std::int64_t>> windows(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      Query q(c, "SELECT times FROM attempt_windows WHERE key = ?1");
      const int rc = q.bind(keys[i]).step();
      if (rc == SQLITE_ROW)
        windows[i] = store_rows::decode_attempt_times(q.text(0));
      else if (rc != SQLITE_DONE)
        return report(c, rc, "update_attempt_windows");
    }
    update(windows);
    for (std::size_t i = 0; i < keys.size() && i < windows.size(); ++i) {
      if (windows[i].empty()) {
        Query q(c, "DELETE FROM attempt_windows WHERE key = ?1");
        if (int rc = q.bind(keys[i]).run()) return report(c, rc, "update_attempt_windows");
        continue;
      }
      const std::string times = store_rows::encode_attempt_times(windows[i]);
      Query q(c,
              "INSERT INTO attempt_windows (key, times, newest_at) VALUES (?1, ?2, ?3)"
              " ON CONFLICT (key) DO UPDATE SET times = excluded.times,"
              " newest_at = excluded.newest_at");
      if (int rc =
              q.bind(keys[i]).bind(times).bind(store_rows::newest_attempt_time(windows[i])).run())
        return report(c, rc, "update_attempt_windows");
    }
    if (int rc = tx.commit()) return report(c, rc, "update_attempt_windows");
    return StoreStatus::kOk;
  });
}

StoreStatus SqliteStore::forget_attempt_windows(std::int64_t before_ms) {
  return guarded("forget_attempt_windows", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Query q(c, "DELETE FROM attempt_windows WHERE newest_at < ?1");
    if (int rc = q.bind(before_ms).run()) return report(c, rc, "forget_attempt_windows");
    return StoreStatus::kOk;
  });
}

}  // namespace leadflow::sqlite
