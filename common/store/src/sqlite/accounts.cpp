// The SQLite adapter of the accounts port (leadflow/store/accounts.hpp): sellers, campaigns, API
// keys, buyers and dashboard users.
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

StoreStatus SqliteStore::insert_seller(const Seller& s) {
  return write_one("insert_seller",
                   "INSERT INTO sellers (" LF_SELLER_COLUMNS
                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                   [&](Query& q) {
                     q.bind(s.id)
                         .bind(s.name)
                         .bind(s.active)
                         .bind(s.created_at_ms)
                         .bind(s.payout_fixed)
                         .bind(s.payout_value)
                         .bind(s.test_mode)
                         .bind(s.time_zone);
                   });
}

Lookup<Seller> SqliteStore::get_seller(std::string_view id) {
  return lookup<Seller>(
      "get_seller", "SELECT " LF_SELLER_READ_COLUMNS " FROM sellers WHERE id = ?1",
      [&](Query& q) { q.bind(id); }, read_seller<Query>);
}

StoreStatus SqliteStore::update_seller(Seller& s) {
  return guarded("update_seller", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    return write_versioned(
        *writer_, "update_seller",
        "UPDATE sellers SET name = ?2, active = ?3, payout_fixed = ?4, payout_value = ?5,"
        " test_mode = ?7, time_zone = ?8, version = version + 1"
        " WHERE id = ?1 AND (?6 = 0 OR version = ?6)"
        " RETURNING version",
        "SELECT 1 FROM sellers WHERE id = ?1", s.id,
        [&](Query& q) {
          q.bind(s.id)
              .bind(s.name)
              .bind(s.active)
              .bind(s.payout_fixed)
              .bind(s.payout_value)
              .bind(s.version)
              .bind(s.test_mode)
              .bind(s.time_zone);
        },
        s.version);
  });
}

std::optional<std::vector<Seller>> SqliteStore::list_sellers() {
  return read_rows<Seller>(
      "list_sellers", "SELECT " LF_SELLER_READ_COLUMNS " FROM sellers ORDER BY id", [](Query&) {},
      read_seller<Query>);
}

StoreStatus SqliteStore::insert_campaign(const Campaign& c) {
  return write_one("insert_campaign",
                   "INSERT INTO campaigns (" LF_CAMPAIGN_COLUMNS
                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                   [&, reoffer = reoffer_column(c)](Query& q) {
                     q.bind(c.id)
                         .bind(c.seller_id)
                         .bind(c.name)
                         .bind(c.vertical)
                         .bind(c.active)
                         .bind(c.async_mode)
                         .bind(c.sync_timeout_ms)
                         .bind(c.rate_limit_per_minute)
                         .bind(c.payout_fixed)
                         .bind(c.payout_value)
                         .bind(c.key_hash)
                         .bind(c.key_hint)
                         .bind(c.created_at_ms)
                         .bind(c.test_mode)
                         .bind_or_null(reoffer);
                   });
}

Lookup<Campaign> SqliteStore::get_campaign(std::string_view id) {
  return lookup<Campaign>(
      "get_campaign", "SELECT " LF_CAMPAIGN_READ_COLUMNS " FROM campaigns WHERE id = ?1",
      [&](Query& q) { q.bind(id); }, read_campaign<Query>);
}

StoreStatus SqliteStore::update_campaign(Campaign& c) {
  return guarded("update_campaign", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    return write_versioned(
        *writer_, "update_campaign",
        "UPDATE campaigns SET name = ?2, active = ?3, async_mode = ?4, sync_timeout_ms = ?5,"
        " rate_limit_per_minute = ?6, payout_fixed = ?7, payout_value = ?8, test_mode = ?10,"
        " reoffer = ?11, version = version + 1 WHERE id = ?1 AND (?9 = 0 OR version = ?9)"
        " RETURNING version",
        "SELECT 1 FROM campaigns WHERE id = ?1", c.id,
        [&, reoffer = reoffer_column(c)](Query& q) {
          q.bind(c.id)
              .bind(c.name)
              .bind(c.active)
              .bind(c.async_mode)
              .bind(c.sync_timeout_ms)
              .bind(c.rate_limit_per_minute)
              .bind(c.payout_fixed)
              .bind(c.payout_value)
              .bind(c.version)
              .bind(c.test_mode)
              .bind_or_null(reoffer);
        },
        c.version);
  });
}

Lookup<Campaign> SqliteStore::find_campaign_by_key_hash(std::string_view key_hash) {
  return lookup<Campaign>(
      "find_campaign_by_key_hash",
      "SELECT " LF_CAMPAIGN_READ_COLUMNS " FROM campaigns WHERE key_hash = ?1",
      [&](Query& q) { q.bind(key_hash); }, read_campaign<Query>);
}

std::optional<std::vector<Campaign>> SqliteStore::list_campaigns(std::string_view seller_id) {
  return read_rows<Campaign>(
      "list_campaigns",
      "SELECT " LF_CAMPAIGN_READ_COLUMNS
      " FROM campaigns WHERE ?1 = '' OR seller_id = ?1 ORDER BY id",
      [&](Query& q) { q.bind(seller_id); }, read_campaign<Query>);
}

StoreStatus SqliteStore::insert_api_key(const ApiKey& k) {
  return write_one("insert_api_key",
                   "INSERT INTO api_keys (" LF_API_KEY_COLUMNS
                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                   [&](Query& q) {
                     q.bind(k.id)
                         .bind_or_null(k.seller_id)
                         .bind(k.name)
                         .bind(to_string(k.plan))
                         .bind(static_cast<std::int64_t>(k.scopes))
                         .bind(k.key_hash)
                         .bind(k.key_hint)
                         .bind(k.created_at_ms)
                         .bind(k.revoked_at_ms)
                         .bind_or_null(k.buyer_id);
                   });
}

Lookup<ApiKey> SqliteStore::find_api_key_by_hash(std::string_view key_hash) {
  return lookup<ApiKey>(
      "find_api_key_by_hash",
      "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys WHERE key_hash = ?1",
      [&](Query& q) { q.bind(key_hash); }, read_api_key<Query>);
}

std::optional<std::vector<ApiKey>> SqliteStore::list_api_keys() {
  return read_rows<ApiKey>(
      "list_api_keys", "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys ORDER BY id",
      [](Query&) {}, read_api_key<Query>);
}

Lookup<ApiKey> SqliteStore::get_api_key(std::string_view id) {
  return lookup<ApiKey>(
      "get_api_key", "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys WHERE id = ?1",
      [&](Query& q) { q.bind(id); }, read_api_key<Query>);
}

/// Revoking a revoked key is kOk and keeps the first revocation time.
StoreStatus SqliteStore::revoke_api_key(std::string_view id, std::int64_t at_ms,
                                        std::int64_t if_version) {
  return guarded("revoke_api_key", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    {
      Query q(c,
              "UPDATE api_keys SET revoked_at = ?2, version = version + 1"
              " WHERE id = ?1 AND revoked_at = 0 AND (?3 = 0 OR version = ?3)");
      // 0 means "live": a revocation is never recorded as 0.
      if (int rc = q.bind(id).bind(std::max<std::int64_t>(at_ms, 1)).bind(if_version).run())
        return report(c, rc, "revoke_api_key");
    }
    if (c.changes() > 0) return StoreStatus::kOk;
    // Nothing changed: no such key, a version moved on, or a key revoked before.
    Query q(c, "SELECT version FROM api_keys WHERE id = ?1");
    const int rc = q.bind(id).step();
    if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
    if (rc != SQLITE_ROW) return report(c, rc, "revoke_api_key");
    return if_version == kAnyVersion || q.int64(0) == if_version ? StoreStatus::kOk
                                                                 : StoreStatus::kConflict;
  });
}

StoreStatus SqliteStore::touch_api_key(std::string_view id, std::int64_t at_ms) {
  return changed_one("touch_api_key",
                     "UPDATE api_keys SET last_used_at = ?2 WHERE id = ?1 AND last_used_at < ?2",
                     [&](Query& q) { q.bind(id).bind(at_ms); });
}

StoreStatus SqliteStore::insert_user(const User& u) {
  return write_one("insert_user",
                   "INSERT INTO users (" LF_USER_COLUMNS
                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                   [&](Query& q) {
                     q.bind(u.id)
                         .bind(u.email)
                         .bind(u.name)
                         .bind_or_null(u.seller_id)
                         .bind_or_null(u.buyer_id)
                         .bind(u.password_hash)
                         .bind(u.active)
                         .bind(u.created_at_ms)
                         .bind(u.last_login_at_ms);
                   });
}

Lookup<User> SqliteStore::get_user(std::string_view id) {
  return lookup<User>(
      "get_user", "SELECT " LF_USER_READ_COLUMNS " FROM users WHERE id = ?1",
      [&](Query& q) { q.bind(id); }, read_user<Query>);
}

Lookup<User> SqliteStore::find_user_by_email(std::string_view email) {
  return lookup<User>(
      "find_user_by_email", "SELECT " LF_USER_READ_COLUMNS " FROM users WHERE email = ?1",
      [&](Query& q) { q.bind(email); }, read_user<Query>);
}

std::optional<std::vector<User>> SqliteStore::list_users() {
  return read_rows<User>(
      "list_users", "SELECT " LF_USER_READ_COLUMNS " FROM users ORDER BY id", [](Query&) {},
      read_user<Query>);
}

StoreStatus SqliteStore::update_user(User& u, std::string_view keep_session) {
  return guarded("update_user", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "update_user");
    bool new_password = false;
    {
      Query q(c, "SELECT password_hash <> ?2 FROM users WHERE id = ?1");
      const int rc = q.bind(u.id).bind(u.password_hash).step();
      if (rc == SQLITE_DONE) return StoreStatus::kNotFound;
      if (rc != SQLITE_ROW) return report(c, rc, "update_user");
      new_password = q.int64(0) != 0;
    }
    const StoreStatus written = write_versioned(
        c, "update_user",
        "UPDATE users SET name = ?2, active = ?3, password_hash = ?4, version = version + 1"
        " WHERE id = ?1 AND (?5 = 0 OR version = ?5) RETURNING version",
        "SELECT 1 FROM users WHERE id = ?1", u.id,
        [&](Query& q) {
          q.bind(u.id).bind(u.name).bind(u.active).bind(u.password_hash).bind(u.version);
        },
        u.version);
    if (written != StoreStatus::kOk) return written;  // the transaction rolls back
    if (!u.active || new_password) {
      Query q(c, "DELETE FROM user_sessions WHERE user_id = ?1 AND token_hash <> ?2");
      if (int rc = q.bind(u.id).bind(keep_session).run()) return report(c, rc, "update_user");
    }
    if (int rc = tx.commit()) return report(c, rc, "update_user");
    return StoreStatus::kOk;
  });
}

StoreStatus SqliteStore::set_user_password(std::string_view user_id, std::string_view password_hash,
                                           std::string_view keep_session) {
  return guarded("set_user_password", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "set_user_password");
    {
      Query q(c,
              "UPDATE users SET password_hash = ?2, version = version + 1"
              " WHERE id = ?1 AND active = 1");
      if (int rc = q.bind(user_id).bind(password_hash).run())
        return report(c, rc, "set_user_password");
    }
    if (c.changes() == 0) return StoreStatus::kNotFound;
    {
      Query q(c, "DELETE FROM user_sessions WHERE user_id = ?1 AND token_hash <> ?2");
      if (int rc = q.bind(user_id).bind(keep_session).run())
        return report(c, rc, "set_user_password");
    }
    if (int rc = tx.commit()) return report(c, rc, "set_user_password");
    return StoreStatus::kOk;
  });
}

StoreStatus SqliteStore::set_user_time_zone(std::string_view user_id, std::string_view zone) {
  return changed_one("set_user_time_zone",
                     "UPDATE users SET time_zone = ?2 WHERE id = ?1 AND active = 1",
                     [&](Query& q) { q.bind(user_id).bind(zone); });
}

StoreStatus SqliteStore::insert_buyer(const Buyer& b) {
  return guarded("insert_buyer", StoreStatus::kUnavailable, [&] {
    const std::string doc = dump(buyer_to_json(b, /*mask_secrets=*/false));
    const std::string verticals = verticals_json(b);
    return write_buyer("insert_buyer", [&](Connection& c) {
      Query q(c, "INSERT INTO buyers (" LF_BUYER_COLUMNS
                 ", verticals) "
                 "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
      if (int rc = q.bind(b.id)
                       .bind(b.active)
                       .bind(doc)
                       .bind(b.created_at_ms)
                       .bind(b.updated_at_ms)
                       .bind(verticals)
                       .run())
        return report(c, rc, "insert_buyer");
      return StoreStatus::kOk;
    });
  });
}

/// Replaces the configuration; the creation time stays the one first stored.
StoreStatus SqliteStore::update_buyer(Buyer& b) {
  return guarded("update_buyer", StoreStatus::kUnavailable, [&] {
    const std::string doc = dump(buyer_to_json(b, /*mask_secrets=*/false));
    const std::string verticals = verticals_json(b);
    return write_buyer("update_buyer", [&](Connection& c) {
      return write_versioned(
          c, "update_buyer",
          "UPDATE buyers SET active = ?2, doc = ?3, updated_at = ?4, verticals = ?5,"
          " version = version + 1 WHERE id = ?1 AND (?6 = 0 OR version = ?6) RETURNING version",
          "SELECT 1 FROM buyers WHERE id = ?1", b.id,
          [&](Query& q) {
            q.bind(b.id)
                .bind(b.active)
                .bind(doc)
                .bind(b.updated_at_ms)
                .bind(verticals)
                .bind(b.version);
          },
          b.version);
    });
  });
}

/// A buyer whose document no longer decodes is none (read_buyer logs it), as in the list.
Lookup<Buyer> SqliteStore::get_buyer(std::string_view id) {
  return guarded("get_buyer", Lookup<Buyer>{}, [&]() -> Lookup<Buyer> {
    auto conn = readers_.acquire();
    if (!conn) return {};
    Query q(*conn, "SELECT " LF_BUYER_READ_COLUMNS " FROM buyers WHERE id = ?1");
    const int rc = q.bind(id).step();
    if (rc == SQLITE_ROW) {
      auto b = read_buyer(q);
      return {b ? StoreStatus::kOk : StoreStatus::kNotFound, std::move(b)};
    }
    if (rc == SQLITE_DONE) return {StoreStatus::kNotFound, std::nullopt};
    return (report(*conn, rc, "get_buyer"), Lookup<Buyer>{});
  });
}

std::optional<std::vector<Buyer>> SqliteStore::list_buyers(const BuyerQuery& bq) {
  using Page = std::optional<std::vector<Buyer>>;
  return guarded("list_buyers", Page{}, [&]() -> Page {
    std::vector<Buyer> out;
    auto conn = readers_.acquire();
    if (!conn) return std::nullopt;
    Query q(*conn, "SELECT " LF_BUYER_READ_COLUMNS
                   " FROM buyers"
                   " WHERE (?1 < 0 OR active = ?1)"
                   " AND (?2 = '' OR EXISTS (SELECT 1 FROM json_each(buyers.verticals)"
                   "                         WHERE json_each.value = ?2))"
                   " AND id > ?3 ORDER BY id LIMIT ?4");
    q.bind(static_cast<std::int64_t>(bq.active ? (*bq.active ? 1 : 0) : -1))
        .bind(bq.vertical)
        .bind(bq.after_id)
        .bind(clamp_limit(bq.limit));
    int rc;
    while ((rc = q.step()) == SQLITE_ROW)
      if (auto b = read_buyer(q)) out.push_back(std::move(*b));
    if (rc != SQLITE_DONE) return (report(*conn, rc, "list_buyers"), Page{});
    return out;
  });
}

/// On a failed read, the last value seen: a transient error must not look like a change
/// (a reload that then fails too would leave a worker with no buyers).
std::int64_t SqliteStore::buyers_version() {
  return guarded("buyers_version", last_buyers_version_.load(), [&] {
    auto conn = readers_.acquire();
    if (!conn) return last_buyers_version_.load();
    Query q(*conn, "SELECT version FROM buyers_version WHERE id = 1");
    const int rc = q.step();
    if (rc != SQLITE_ROW) {
      if (rc != SQLITE_DONE) report(*conn, rc, "buyers_version");
      return last_buyers_version_.load();
    }
    const std::int64_t v = q.int64(0);
    last_buyers_version_ = v;
    return v;
  });
}

std::optional<std::vector<VerticalReoffer>> SqliteStore::list_vertical_reoffers() {
  return read_rows<VerticalReoffer>(
      "list_vertical_reoffers",
      "SELECT " LF_VERTICAL_REOFFER_COLUMNS " FROM vertical_reoffers ORDER BY vertical",
      [](Query&) {}, read_vertical_reoffer<Query>);
}

// A vertical never set is inserted only if still absent; one set (or reset) before, changed only
// at the version read. Either way, nothing written is kConflict.
StoreStatus SqliteStore::set_vertical_reoffer(VerticalReoffer& v) {
  const std::string doc = reoffer_policy_json(v.policy).dump();
  const StoreStatus s =
      v.version == 0
          ? changed_one(
                "set_vertical_reoffer",
                "INSERT INTO vertical_reoffers (vertical, reoffer, set_at_ms, version, active)"
                " VALUES (?1, ?2, ?3, 1, 1) ON CONFLICT (vertical) DO NOTHING",
                [&](Query& q) { q.bind(v.vertical).bind(doc).bind(v.set_at_ms); })
          : changed_one(
                "set_vertical_reoffer",
                "UPDATE vertical_reoffers SET reoffer = ?2, set_at_ms = ?3,"
                " version = version + 1, active = 1 WHERE vertical = ?1 AND version = ?4",
                [&](Query& q) { q.bind(v.vertical).bind(doc).bind(v.set_at_ms).bind(v.version); });
  return vertical_reoffer_written(s, v);
}

StoreStatus SqliteStore::reset_vertical_reoffer(std::string_view vertical, std::int64_t version) {
  const StoreStatus s = changed_one("reset_vertical_reoffer",
                                    "UPDATE vertical_reoffers SET active = 0, version = version + 1"
                                    " WHERE vertical = ?1 AND version = ?2 AND active = 1",
                                    [&](Query& q) { q.bind(vertical).bind(version); });
  return s == StoreStatus::kNotFound ? StoreStatus::kConflict : s;
}

}  // namespace leadflow::sqlite
