// The SQLite adapter of the distribution port (leadflow/store/distribution.hpp): duplicates, caps
// and budgets, post intents.
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

/// "Earlier" orders leads by (received_at, id): when the lead itself is stored, only leads
/// before it count, so of two copies of one person decided side by side exactly one is the
/// duplicate. When it is not stored yet (an intake check), every other lead counts. An erased
/// lead keeps no e-mail or phone, only their search keys: it is found by the stored lead's own
/// keys, on the index of erased leads alone (empty until something is erased).
std::string SqliteStore::find_duplicate(std::string_view vertical, std::string_view email,
                                        std::string_view phone, std::int64_t since_ms,
                                        std::string_view lead_id) {
  return guarded("find_duplicate", std::string{}, [&] {
    auto conn = readers_.acquire();
    if (!conn) return std::string{};
    std::int64_t until_ms = std::numeric_limits<std::int64_t>::max();
    std::string email_key, phone_key;
    if (!lead_id.empty()) {
      Query q(*conn, "SELECT received_at, email_key, phone_key FROM leads WHERE id = ?1");
      const int rc = q.bind(lead_id).step();
      if (rc == SQLITE_ROW) {
        until_ms = q.int64(0);
        if (!q.is_null(1)) email_key = q.text(1);
        if (!q.is_null(2)) phone_key = q.text(2);
      } else if (rc != SQLITE_DONE) {
        return (report(*conn, rc, "find_duplicate"), std::string{});
      }
    }
    auto probe = [&](const char* sql, std::string_view key) -> std::string {
      if (key.empty()) return {};
      Query q(*conn, sql);
      const int rc = q.bind(vertical).bind(key).bind(since_ms).bind(until_ms).bind(lead_id).step();
      if (rc == SQLITE_ROW) return q.text(0);
      if (rc != SQLITE_DONE) report(*conn, rc, "find_duplicate");
      return {};
    };
#define LF_EARLIER                                            \
  " AND received_at >= ?3 AND received_at <= ?4 AND id <> ?5" \
  " AND (received_at < ?4 OR id < ?5) AND NOT test ORDER BY received_at DESC LIMIT 1"
    std::string found =
        probe("SELECT id FROM leads WHERE vertical = ?1 AND email = ?2" LF_EARLIER, email);
    if (found.empty())
      found = probe("SELECT id FROM leads WHERE vertical = ?1 AND phone = ?2" LF_EARLIER, phone);
    if (found.empty())
      found = probe(
          "SELECT id FROM leads INDEXED BY leads_erased_by_email_key WHERE"
          " email_key = ?2 AND vertical = ?1 AND erased_at > 0" LF_EARLIER,
          email_key);
    if (found.empty())
      found = probe(
          "SELECT id FROM leads INDEXED BY leads_erased_by_phone_key WHERE"
          " phone_key = ?2 AND vertical = ?1 AND erased_at > 0" LF_EARLIER,
          phone_key);
#undef LF_EARLIER
    return found;
  });
}

/// A newer intent for the same lead replaces the older one (the auction went down its ranking).
/// With caps, the status check, the counts and the write run in one BEGIN IMMEDIATE
/// transaction, so two processes reserving a buyer's last slot cannot both see it free.
StoreStatus SqliteStore::record_post_intent(const PostIntent& p, std::span<const CapWindow> caps) {
  return guarded("record_post_intent", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    return write_post_intent(*writer_, p, caps, /*own_transaction=*/true);
  });
}

/// One transaction (one fsync) for the whole batch. If the store fails on any of them, none is
/// kept and every one answers kUnavailable: also when SQLite rolled the transaction back by
/// itself (it may after an I/O error or a full disk), since the later intents would otherwise
/// be written outside it, one by one.
std::vector<StoreStatus> SqliteStore::record_post_intents(std::span<const PostIntentWrite> writes) {
  const std::vector<StoreStatus> all_failed(writes.size(), StoreStatus::kUnavailable);
  return guarded("record_post_intents", all_failed, [&] {
    std::vector<StoreStatus> results;
    results.reserve(writes.size());
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) {
      report(c, rc, "record_post_intents");
      return all_failed;
    }
    for (const auto& w : writes) {
      const StoreStatus s = write_post_intent(c, w.intent, w.caps, /*own_transaction=*/false);
      if (s == StoreStatus::kUnavailable || !c.in_transaction()) return all_failed;
      results.push_back(s);
    }
    if (int rc = tx.commit()) {
      report(c, rc, "record_post_intents");
      return all_failed;
    }
    return results;
  });
}

std::optional<std::vector<PostIntent>> SqliteStore::get_post_intents(std::string_view lead_id) {
  return read_rows<PostIntent>(
      "get_post_intents",
      "SELECT " LF_POST_INTENT_COLUMNS
      " FROM post_intents WHERE lead_id = ?1 ORDER BY at, buyer_id",
      [&](Query& q) { q.bind(lead_id); }, read_post_intent<Query>);
}

std::optional<std::int64_t> SqliteStore::count_sales(std::string_view buyer_id,
                                                     std::int64_t since_ms) {
  return guarded(
      "count_sales", std::optional<std::int64_t>{}, [&]() -> std::optional<std::int64_t> {
        auto conn = readers_.acquire();
        if (!conn) return std::nullopt;
        Query q(*conn, "SELECT COUNT(*) FROM sales WHERE buyer_id = ?1 AND sold_at >= ?2");
        const int rc = q.bind(buyer_id).bind(since_ms).step();
        if (rc == SQLITE_ROW) return q.int64(0);
        report(*conn, rc, "count_sales");
        return std::nullopt;
      });
}

std::optional<Cents> SqliteStore::sales_cents(std::string_view buyer_id, std::int64_t since_ms) {
  return guarded("sales_cents", std::optional<Cents>{}, [&]() -> std::optional<Cents> {
    auto conn = readers_.acquire();
    if (!conn) return std::nullopt;
    Query q(*conn,
            "SELECT (SELECT COALESCE(SUM(price_cents), 0) FROM sales"
            "  WHERE buyer_id = ?1 AND sold_at >= ?2)"
            " - (SELECT COALESCE(SUM(price_cents), 0) FROM returns"
            "    WHERE buyer_id = ?1 AND sold_at >= ?2)");
    const int rc = q.bind(buyer_id).bind(since_ms).step();
    if (rc == SQLITE_ROW) return q.int64(0);
    report(*conn, rc, "sales_cents");
    return std::nullopt;
  });
}

/// The lead's own search keys against its buyer's sales' copies, one statement: the lead by its
/// key, then a probe of (buyer_id, email_key, sold_at) and one of (buyer_id, phone_key, sold_at).
/// A key the lead lacks (NULL) matches nothing.
std::optional<bool> SqliteStore::buyer_bought_person(std::string_view buyer_id,
                                                     std::string_view lead_id,
                                                     std::int64_t since_ms) {
  return guarded("buyer_bought_person", std::optional<bool>{}, [&]() -> std::optional<bool> {
    auto conn = readers_.acquire();
    if (!conn) return std::nullopt;
    Query q(*conn,
            "SELECT EXISTS (SELECT 1 FROM sales INDEXED BY sales_by_buyer_email_key"
            "  WHERE buyer_id = ?1 AND email_key = l.email_key AND sold_at >= ?3)"
            " OR EXISTS (SELECT 1 FROM sales INDEXED BY sales_by_buyer_phone_key"
            "  WHERE buyer_id = ?1 AND phone_key = l.phone_key AND sold_at >= ?3)"
            " FROM leads l WHERE l.id = ?2");
    const int rc = q.bind(buyer_id).bind(lead_id).bind(since_ms).step();
    if (rc == SQLITE_ROW) return q.int64(0) != 0;
    if (rc == SQLITE_DONE) return false;  // no such lead
    report(*conn, rc, "buyer_bought_person");
    return std::nullopt;
  });
}

}  // namespace leadflow::sqlite
