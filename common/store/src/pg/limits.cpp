// The PostgreSQL adapter of the limits port (leadflow/store/limits.hpp): shared rate-limit buckets
// and attempt windows.
#include "pg/adapter.hpp"

namespace leadflow::pg {

StoreStatus PgStore::update_rate_bucket(std::string_view key,
                                        const std::function<void(RateBucketState&)>& update) {
  return run("update_rate_bucket", StoreStatus::kUnavailable, [&](Connection& c) {
    Transaction tx(c);
    const RateBucketState fresh;
    // A bucket the clean-up deletes between the insert and the lock is not returned by the
    // lock: it is made again, so no bucket is updated without its lock.
    bool made = false;
    std::optional<Result> row;
    for (int round = 0;; ++round) {
      const Result created = c.exec(
          "INSERT INTO rate_buckets (key, tokens, refilled_at, day, day_count)"
          " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key) DO NOTHING RETURNING 1",
          Params()
              .add(key)
              .add(fresh.tokens)
              .add(fresh.refilled_at_ms)
              .add(fresh.day)
              .add(fresh.day_count),
          Effect::kWrite);
      made = made || created.rows() == 1;
      row.emplace(
          c.exec("SELECT tokens, refilled_at, day, day_count FROM rate_buckets WHERE key = $1"
                 " FOR UPDATE",
                 Params().add(key), Effect::kRead));
      if (row->rows() == 1) break;
      if (round == 3) {
        PgError e;
        e.message = "the rate bucket row keeps vanishing under its lock";
        throw e;
      }
    }
    RateBucketState state;
    // A bucket made again after the clean-up took it is new too: it starts full.
    state.exists = !made;
    state.tokens = row->real(0, 0);
    state.refilled_at_ms = row->int64(0, 1);
    state.day = row->int64(0, 2);
    state.day_count = row->int64(0, 3);
    // `update` runs once: a retry after this point would run it twice.
    c.mark_not_retryable();
    update(state);
    c.exec(
        "UPDATE rate_buckets SET tokens = $2, refilled_at = $3, day = $4, day_count = $5"
        " WHERE key = $1",
        Params()
            .add(key)
            .add(state.tokens)
            .add(state.refilled_at_ms)
            .add(state.day)
            .add(state.day_count),
        Effect::kWrite);
    tx.commit();
    return StoreStatus::kOk;
  });
}

/// The rows are made if missing and locked FOR UPDATE in key order (byte order, the column's
/// "C" collation), so two processes updating overlapping keys never wait on each other in a
/// circle. A row removed by forget_attempt_windows between the insert and the lock is not
/// returned by the lock: it is made again, so no key is ever updated without its lock. A
/// window left empty keeps its row (newest_at 0) until forget_attempt_windows: deleting it here
/// would send a waiting process round that loop.
StoreStatus PgStore::update_attempt_windows(
    const std::vector<std::string>& keys,
    const std::function<void(std::vector<std::vector<std::int64_t>>&)>& update) {
  if (keys.empty()) return StoreStatus::kOk;
  return run("update_attempt_windows", StoreStatus::kUnavailable, [&](Connection& c) {
    std::vector<std::size_t> order(keys.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    ArrayText sorted;
    for (std::size_t i : order) sorted.add(keys[i]);
    Transaction tx(c);
    std::vector<std::vector<std::int64_t>> windows(keys.size());
    for (int round = 0;; ++round) {
      c.exec(
          "INSERT INTO attempt_windows (key, times, newest_at)"
          " SELECT k, '', 0 FROM unnest($1::TEXT[]) WITH ORDINALITY AS u (k, n) ORDER BY n"
          " ON CONFLICT (key) DO NOTHING",
          Params().add(sorted.str()), Effect::kWrite);
      const Result rows = c.exec(
          "SELECT key, times FROM attempt_windows WHERE key = ANY ($1::TEXT[])"
          " ORDER BY key FOR UPDATE",
          Params().add(sorted.str()), Effect::kRead);
      if (static_cast<std::size_t>(rows.rows()) == keys.size()) {
        std::unordered_map<std::string, int> row_of;
        for (int r = 0; r < rows.rows(); ++r) row_of[rows.text(r, 0)] = r;
        for (std::size_t i = 0; i < keys.size(); ++i)
          windows[i] = store_rows::decode_attempt_times(rows.text(row_of.at(keys[i]), 1));
        break;
      }
      if (round == 3) {
        PgError e;
        e.message = "attempt window rows keep vanishing under their lock";
        throw e;
      }
    }
    // `update` runs once: a retry after this point would run it twice.
    c.mark_not_retryable();
    update(windows);
    ArrayText written, times, newest;
    for (std::size_t i = 0; i < keys.size() && i < windows.size(); ++i) {
      written.add(keys[i]);
      times.add(store_rows::encode_attempt_times(windows[i]));
      newest.add(store_rows::newest_attempt_time(windows[i]));
    }
    c.exec(
        "UPDATE attempt_windows AS w SET times = v.times, newest_at = v.newest"
        " FROM unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[]) AS v (key, times, newest)"
        " WHERE w.key = v.key",
        Params().add(written.str()).add(times.str()).add(newest.str()), Effect::kWrite);
    tx.commit();
    return StoreStatus::kOk;
  });
}

std::optional<std::vector<RateBucketRow>> PgStore::list_rate_buckets(std::string_view after,
                                                                     int limit) {
  return read_rows<RateBucketRow>(
      "list_rate_buckets",
      "SELECT b.key, b.refilled_at, b.day, COALESCE(k.revoked_at, 0) <> 0 FROM rate_buckets b"
      " LEFT JOIN api_keys k ON k.id = b.key WHERE b.key > $1 ORDER BY b.key LIMIT $2",
      Params().add(after).add(static_cast<std::int64_t>(limit)), [](const Row& r) {
        return RateBucketRow{r.text(0), r.int64(1), r.int64(2), r.boolean(3)};
      });
}

/// A bucket locked by a lease under way is left for the next round (SKIP LOCKED): the clean-up
/// never makes a request wait.
std::optional<std::int64_t> PgStore::delete_rate_buckets(const std::vector<RateBucketRow>& rows) {
  if (rows.empty()) return 0;
  return run("delete_rate_buckets", std::optional<std::int64_t>{},
             [&](Connection& c) -> std::optional<std::int64_t> {
               ArrayText keys, at, days;
               for (const RateBucketRow& r : rows) {
                 keys.add(r.key);
                 at.add(r.refilled_at_ms);
                 days.add(r.day);
               }
               const Result r = c.exec(
                   "DELETE FROM rate_buckets WHERE key IN (SELECT b.key FROM rate_buckets b"
                   " JOIN unnest($1::TEXT[], $2::BIGINT[], $3::BIGINT[]) AS v (k, refilled, d)"
                   " ON b.key = v.k AND b.refilled_at = v.refilled AND b.day = v.d"
                   " FOR UPDATE OF b SKIP LOCKED) RETURNING 1",
                   Params().add(keys.str()).add(at.str()).add(days.str()), Effect::kWrite);
               return static_cast<std::int64_t>(r.rows());
             });
}

StoreStatus PgStore::forget_attempt_windows(std::int64_t before_ms) {
  return write("forget_attempt_windows", "DELETE FROM attempt_windows WHERE newest_at < $1",
               Params().add(before_ms));
}

}  // namespace leadflow::pg
