// The PostgreSQL adapter of the accounts port (leadflow/store/accounts.hpp): sellers, campaigns,
// API keys, buyers and dashboard users.
#include "pg/adapter.hpp"

namespace leadflow::pg {

StoreStatus PgStore::insert_seller(const Seller& s) {
  return write("insert_seller",
               "INSERT INTO sellers (" LF_SELLER_COLUMNS
               ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
               Params()
                   .add(s.id)
                   .add(s.name)
                   .add(s.active)
                   .add(s.created_at_ms)
                   .add(s.payout_fixed)
                   .add(s.payout_value)
                   .add(s.test_mode)
                   .add(s.time_zone));
}

Lookup<Seller> PgStore::get_seller(std::string_view id) {
  return lookup<Seller>("get_seller",
                        "SELECT " LF_SELLER_READ_COLUMNS " FROM sellers WHERE id = $1",
                        Params().add(id), read_seller<Row>);
}

StoreStatus PgStore::update_seller(Seller& s) {
  return run("update_seller", StoreStatus::kUnavailable, [&](Connection& c) {
    const Result r = c.exec(
        "WITH changed AS (UPDATE sellers SET name = $2, active = $3, payout_fixed = $4,"
        " payout_value = $5, test_mode = $7, time_zone = $8, version = version + 1"
        " WHERE id = $1 AND ($6::BIGINT = 0 OR version = $6::BIGINT) RETURNING version)"
        " SELECT (SELECT version FROM changed), EXISTS (SELECT 1 FROM sellers WHERE id = $1)",
        Params()
            .add(s.id)
            .add(s.name)
            .add(s.active)
            .add(s.payout_fixed)
            .add(s.payout_value)
            .add(s.version)
            .add(s.test_mode)
            .add(s.time_zone),
        Effect::kWrite);
    return versioned(r, s.version);
  });
}

std::optional<std::vector<Seller>> PgStore::list_sellers() {
  return read_rows<Seller>("list_sellers",
                           "SELECT " LF_SELLER_READ_COLUMNS " FROM sellers ORDER BY id", Params(),
                           read_seller<Row>);
}

StoreStatus PgStore::insert_campaign(const Campaign& c) {
  return write("insert_campaign",
               "INSERT INTO campaigns (" LF_CAMPAIGN_COLUMNS
               ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
               Params()
                   .add(c.id)
                   .add(c.seller_id)
                   .add(c.name)
                   .add(c.vertical)
                   .add(c.active)
                   .add(c.async_mode)
                   .add(c.sync_timeout_ms)
                   .add(c.rate_limit_per_minute)
                   .add(c.payout_fixed)
                   .add(c.payout_value)
                   .add(c.key_hash)
                   .add(c.key_hint)
                   .add(c.created_at_ms)
                   .add(c.test_mode)
                   .add_or_null(reoffer_column(c)));
}

Lookup<Campaign> PgStore::get_campaign(std::string_view id) {
  return lookup<Campaign>("get_campaign",
                          "SELECT " LF_CAMPAIGN_READ_COLUMNS " FROM campaigns WHERE id = $1",
                          Params().add(id), read_campaign<Row>);
}

StoreStatus PgStore::update_campaign(Campaign& cp) {
  return run("update_campaign", StoreStatus::kUnavailable, [&](Connection& c) {
    const Result r = c.exec(
        "WITH changed AS (UPDATE campaigns SET name = $2, active = $3, async_mode = $4,"
        " sync_timeout_ms = $5, rate_limit_per_minute = $6, payout_fixed = $7,"
        " payout_value = $8, test_mode = $10, reoffer = $11, version = version + 1"
        " WHERE id = $1 AND ($9::BIGINT = 0 OR version = $9::BIGINT) RETURNING version)"
        " SELECT (SELECT version FROM changed), EXISTS (SELECT 1 FROM campaigns WHERE id = $1)",
        Params()
            .add(cp.id)
            .add(cp.name)
            .add(cp.active)
            .add(cp.async_mode)
            .add(cp.sync_timeout_ms)
            .add(cp.rate_limit_per_minute)
            .add(cp.payout_fixed)
            .add(cp.payout_value)
            .add(cp.version)
            .add(cp.test_mode)
            .add_or_null(reoffer_column(cp)),
        Effect::kWrite);
    return versioned(r, cp.version);
  });
}

Lookup<Campaign> PgStore::find_campaign_by_key_hash(std::string_view key_hash) {
  return lookup<Campaign>("find_campaign_by_key_hash",
                          "SELECT " LF_CAMPAIGN_READ_COLUMNS " FROM campaigns WHERE key_hash = $1",
                          Params().add(key_hash), read_campaign<Row>);
}

std::optional<std::vector<Campaign>> PgStore::list_campaigns(std::string_view seller_id) {
  return read_rows<Campaign>("list_campaigns",
                             "SELECT " LF_CAMPAIGN_READ_COLUMNS
                             " FROM campaigns"
                             " WHERE $1 = '' OR seller_id = $1 ORDER BY id",
                             Params().add(seller_id), read_campaign<Row>);
}

StoreStatus PgStore::insert_api_key(const ApiKey& k) {
  return write("insert_api_key",
               "INSERT INTO api_keys (" LF_API_KEY_COLUMNS
               ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
               Params()
                   .add(k.id)
                   .add_or_null(k.seller_id)
                   .add(k.name)
                   .add(to_string(k.plan))
                   .add(static_cast<std::int64_t>(k.scopes))
                   .add(k.key_hash)
                   .add(k.key_hint)
                   .add(k.created_at_ms)
                   .add(k.revoked_at_ms)
                   .add_or_null(k.buyer_id));
}

Lookup<ApiKey> PgStore::find_api_key_by_hash(std::string_view key_hash) {
  return lookup<ApiKey>("find_api_key_by_hash",
                        "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys WHERE key_hash = $1",
                        Params().add(key_hash), read_api_key<Row>);
}

std::optional<std::vector<ApiKey>> PgStore::list_api_keys() {
  return read_rows<ApiKey>("list_api_keys",
                           "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys ORDER BY id", Params(),
                           read_api_key<Row>);
}

Lookup<ApiKey> PgStore::get_api_key(std::string_view id) {
  return lookup<ApiKey>("get_api_key",
                        "SELECT " LF_API_KEY_READ_COLUMNS " FROM api_keys WHERE id = $1",
                        Params().add(id), read_api_key<Row>);
}

/// Revoking a revoked key is kOk and keeps the first revocation time.
StoreStatus PgStore::revoke_api_key(std::string_view id, std::int64_t at_ms,
                                    std::int64_t if_version) {
  return run("revoke_api_key", StoreStatus::kUnavailable, [&](Connection& c) {
    // 0 means "live": a revocation is never recorded as 0. The version read beside the
    // update is the one before it (one snapshot): it tells a key that moved on from one
    // revoked before at the version asked.
    const Result r = c.exec(
        "WITH revoked AS (UPDATE api_keys SET revoked_at = $2, version = version + 1"
        "                 WHERE id = $1 AND revoked_at = 0"
        "                 AND ($3::BIGINT = 0 OR version = $3::BIGINT) RETURNING 1)"
        " SELECT EXISTS (SELECT 1 FROM revoked), (SELECT version FROM api_keys WHERE id = $1)",
        Params().add(id).add(std::max<std::int64_t>(at_ms, 1)).add(if_version), Effect::kWrite);
    if (r.boolean(0, 0)) return StoreStatus::kOk;
    if (r.is_null(0, 1)) return StoreStatus::kNotFound;
    return if_version == kAnyVersion || r.int64(0, 1) == if_version ? StoreStatus::kOk
                                                                    : StoreStatus::kConflict;
  });
}

StoreStatus PgStore::touch_api_key(std::string_view id, std::int64_t at_ms) {
  return changed_one("touch_api_key",
                     "UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND last_used_at < $2"
                     " RETURNING 1",
                     Params().add(id).add(at_ms));
}

StoreStatus PgStore::insert_user(const User& u) {
  return write("insert_user",
               "INSERT INTO users (" LF_USER_COLUMNS
               ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
               Params()
                   .add(u.id)
                   .add(u.email)
                   .add(u.name)
                   .add_or_null(u.seller_id)
                   .add_or_null(u.buyer_id)
                   .add(u.password_hash)
                   .add(u.active)
                   .add(u.created_at_ms)
                   .add(u.last_login_at_ms));
}

Lookup<User> PgStore::get_user(std::string_view id) {
  return lookup<User>("get_user", "SELECT " LF_USER_READ_COLUMNS " FROM users WHERE id = $1",
                      Params().add(id), read_user<Row>);
}

Lookup<User> PgStore::find_user_by_email(std::string_view email) {
  return lookup<User>("find_user_by_email",
                      "SELECT " LF_USER_READ_COLUMNS " FROM users WHERE email = $1",
                      Params().add(email), read_user<Row>);
}

std::optional<std::vector<User>> PgStore::list_users() {
  return read_rows<User>("list_users", "SELECT " LF_USER_READ_COLUMNS " FROM users ORDER BY id",
                         Params(), read_user<Row>);
}

StoreStatus PgStore::update_user(User& u, std::string_view keep_session) {
  return run("update_user", StoreStatus::kUnavailable, [&](Connection& c) {
    Transaction tx(c);
    const Result before = c.exec("SELECT password_hash <> $2 FROM users WHERE id = $1 FOR UPDATE",
                                 Params().add(u.id).add(u.password_hash), Effect::kWrite);
    if (before.rows() == 0) return StoreStatus::kNotFound;  // the transaction rolls back
    const Result changed = c.exec(
        "UPDATE users SET name = $2, active = $3, password_hash = $4,"
        " version = version + 1"
        " WHERE id = $1 AND ($5::BIGINT = 0 OR version = $5::BIGINT) RETURNING version",
        Params().add(u.id).add(u.name).add(u.active).add(u.password_hash).add(u.version),
        Effect::kWrite);
    // The row is locked and there: another change came first.
    if (changed.rows() == 0) return StoreStatus::kConflict;
    u.version = changed.int64(0, 0);
    if (!u.active || before.boolean(0, 0))
      c.exec("DELETE FROM user_sessions WHERE user_id = $1 AND token_hash <> $2",
             Params().add(u.id).add(keep_session), Effect::kWrite);
    tx.commit();
    return StoreStatus::kOk;
  });
}

StoreStatus PgStore::set_user_password(std::string_view user_id, std::string_view password_hash,
                                       std::string_view keep_session) {
  return run("set_user_password", StoreStatus::kUnavailable, [&](Connection& c) {
    Transaction tx(c);
    const Result changed = c.exec(
        "UPDATE users SET password_hash = $2, version = version + 1"
        " WHERE id = $1 AND active RETURNING 1",
        Params().add(user_id).add(password_hash), Effect::kWrite);
    if (changed.rows() == 0) return StoreStatus::kNotFound;  // the transaction rolls back
    c.exec("DELETE FROM user_sessions WHERE user_id = $1 AND token_hash <> $2",
           Params().add(user_id).add(keep_session), Effect::kWrite);
    tx.commit();
    return StoreStatus::kOk;
  });
}

StoreStatus PgStore::set_user_time_zone(std::string_view user_id, std::string_view zone) {
  return changed_one("set_user_time_zone",
                     "UPDATE users SET time_zone = $2 WHERE id = $1 AND active RETURNING 1",
                     Params().add(user_id).add(zone));
}

/// The buyer and the version bump in one statement (so in one transaction).
StoreStatus PgStore::insert_buyer(const Buyer& b) {
  return run("insert_buyer", StoreStatus::kUnavailable, [&](Connection& c) {
    c.exec("WITH inserted AS (INSERT INTO buyers (" LF_BUYER_COLUMNS
           ", verticals)"
           "                  VALUES ($1, $2, $3, $4, $5, $6) RETURNING 1)"
           " UPDATE buyers_version SET version = version + 1"
           " WHERE id = 1 AND EXISTS (SELECT 1 FROM inserted)",
           Params()
               .add(b.id)
               .add(b.active)
               .add(dump(buyer_to_json(b, /*mask_secrets=*/false)))
               .add(b.created_at_ms)
               .add(b.updated_at_ms)
               .add(dump(json(b.verticals))),
           Effect::kWrite);
    return StoreStatus::kOk;
  });
}

/// Replaces the configuration; the creation time stays the one first stored.
StoreStatus PgStore::update_buyer(Buyer& b) {
  return run("update_buyer", StoreStatus::kUnavailable, [&](Connection& c) {
    const Result r = c.exec(
        "WITH updated AS (UPDATE buyers SET active = $2, doc = $3, updated_at = $4,"
        "                 verticals = $5, version = version + 1"
        "                 WHERE id = $1 AND ($6::BIGINT = 0 OR version = $6::BIGINT)"
        "                 RETURNING version),"
        " bumped AS (UPDATE buyers_version SET version = version + 1"
        "            WHERE id = 1 AND EXISTS (SELECT 1 FROM updated))"
        " SELECT (SELECT version FROM updated), EXISTS (SELECT 1 FROM buyers WHERE id = $1)",
        Params()
            .add(b.id)
            .add(b.active)
            .add(dump(buyer_to_json(b, /*mask_secrets=*/false)))
            .add(b.updated_at_ms)
            .add(dump(json(b.verticals)))
            .add(b.version),
        Effect::kWrite);
    return versioned(r, b.version);
  });
}

/// A buyer whose document no longer decodes is none (read_buyer logs it), as in the list.
Lookup<Buyer> PgStore::get_buyer(std::string_view id) {
  return run("get_buyer", Lookup<Buyer>{}, [&](Connection& c) -> Lookup<Buyer> {
    const Result r = c.exec("SELECT " LF_BUYER_READ_COLUMNS " FROM buyers WHERE id = $1",
                            Params().add(id), Effect::kRead);
    auto b = r.rows() == 0 ? std::nullopt : read_buyer(Row{r, 0});
    return {b ? StoreStatus::kOk : StoreStatus::kNotFound, std::move(b)};
  });
}

std::optional<std::vector<Buyer>> PgStore::list_buyers(const BuyerQuery& bq) {
  using Page = std::optional<std::vector<Buyer>>;
  return run("list_buyers", Page{}, [&](Connection& c) -> Page {
    Params params;
    if (bq.active)
      params.add(*bq.active);
    else
      params.add_null();
    params.add(bq.vertical).add(bq.after_id).add(clamp_limit(bq.limit));
    // Unnamed statements are planned with their parameter values, so the "$n IS NULL OR"
    // branches fold away before planning.
    const Result r = c.exec("SELECT " LF_BUYER_READ_COLUMNS
                            " FROM buyers"
                            " WHERE ($1::BOOLEAN IS NULL OR active = $1::BOOLEAN)"
                            " AND ($2 = '' OR verticals::JSONB ? $2)"
                            " AND id > $3 ORDER BY id LIMIT $4",
                            params, Effect::kRead);
    std::vector<Buyer> out;
    for (int i = 0; i < r.rows(); ++i)
      if (auto b = read_buyer(Row{r, i})) out.push_back(std::move(*b));
    return out;
  });
}

/// On a failed read, the last value seen: a transient error must not look like a change
/// (a reload that then fails too would leave a worker with no buyers).
std::int64_t PgStore::buyers_version() {
  return run("buyers_version", last_buyers_version_.load(), [&](Connection& c) {
    const Result r = c.exec("SELECT version FROM buyers_version WHERE id = 1", Effect::kRead);
    if (r.rows() == 0) return last_buyers_version_.load();
    const std::int64_t v = r.int64(0, 0);
    last_buyers_version_ = v;
    return v;
  });
}

std::optional<std::vector<VerticalReoffer>> PgStore::list_vertical_reoffers() {
  return read_rows<VerticalReoffer>("list_vertical_reoffers",
                                    "SELECT " LF_VERTICAL_REOFFER_COLUMNS
                                    " FROM vertical_reoffers ORDER BY vertical",
                                    Params(), read_vertical_reoffer<Row>);
}

// As SQLite's: inserted only if still absent, else changed only at the version read.
StoreStatus PgStore::set_vertical_reoffer(VerticalReoffer& v) {
  const std::string doc = reoffer_policy_json(v.policy).dump();
  const StoreStatus s =
      v.version == 0
          ? changed_one(
                "set_vertical_reoffer",
                "INSERT INTO vertical_reoffers (vertical, reoffer, set_at_ms, version, active)"
                " VALUES ($1, $2, $3, 1, TRUE) ON CONFLICT (vertical) DO NOTHING RETURNING 1",
                Params().add(v.vertical).add(doc).add(v.set_at_ms))
          : changed_one("set_vertical_reoffer",
                        "UPDATE vertical_reoffers SET reoffer = $2, set_at_ms = $3,"
                        " version = version + 1, active = TRUE WHERE vertical = $1 AND version = $4"
                        " RETURNING 1",
                        Params().add(v.vertical).add(doc).add(v.set_at_ms).add(v.version));
  return vertical_reoffer_written(s, v);
}

StoreStatus PgStore::reset_vertical_reoffer(std::string_view vertical, std::int64_t version) {
  const StoreStatus s =
      changed_one("reset_vertical_reoffer",
                  "UPDATE vertical_reoffers SET active = FALSE, version = version + 1"
                  " WHERE vertical = $1 AND version = $2 AND active RETURNING 1",
                  Params().add(vertical).add(version));
  return s == StoreStatus::kNotFound ? StoreStatus::kConflict : s;
}

}  // namespace leadflow::pg
