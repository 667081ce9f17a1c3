// SqliteStore: the postbacks port (sellers' endpoints, the outbox and its attempts), and the
// outbox rows the outcome, return and settlement transactions write (write_outbox).
#include "postback_rows.hpp"
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

namespace {

/// The event, once: the lead's seller, campaign and status as this transaction left it. Which
/// endpoints it goes to is read when a claim fans it out (the view postback_event_deliveries).
constexpr const char* kEventInsert =
    "INSERT INTO postback_events (" LF_POSTBACK_EVENT_COLUMNS
    ") SELECT ?1, ?2, l.id, l.seller_id, l.campaign_id, l.status, ?3, ?4, ?5, ?6"
    " FROM leads l WHERE l.id = ?7";

}  // namespace

int SqliteStore::refresh_subscribers(Connection& c) {
  if (!subscribers_.stale()) return SQLITE_OK;
  const std::uint64_t version = subscribers_.version();
  std::vector<std::string> sellers;
  Query q(c, "SELECT DISTINCT seller_id FROM postback_endpoints");
  int rc;
  while ((rc = q.step()) == SQLITE_ROW) sellers.push_back(q.text(0));
  if (rc != SQLITE_DONE) return rc;
  subscribers_.set(std::move(sellers), version);
  return SQLITE_OK;
}

int SqliteStore::write_outbox(Connection& c, const OutboxEvent& e) {
  Query q(c, kEventInsert);
  return q.bind(e.event_id)
      .bind(e.kind)
      .bind(e.sold)
      .bind(e.payout)
      .bind(e.reason)
      .bind(e.at_ms)
      .bind(e.lead_id)
      .run();
}

StoreStatus SqliteStore::insert_postback_endpoint(const PostbackEndpoint& e) {
  // The cache is dropped after the write: a refresh between could miss it.
  const StoreStatus status =
      write_one("insert_postback_endpoint",
                "INSERT INTO postback_endpoints (" LF_POSTBACK_ENDPOINT_COLUMNS
                ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                [&](Query& q) {
                  q.bind(e.id)
                      .bind(e.seller_id)
                      .bind(e.campaign_id)
                      .bind(e.url)
                      .bind(e.events)
                      .bind(e.secret)
                      .bind(e.active)
                      .bind(e.created_at_ms)
                      .bind(e.updated_at_ms)
                      .bind(e.previous_secret)
                      .bind(e.previous_secret_expires_at_ms)
                      .bind(e.secret_rotated_at_ms)
                      .bind(e.on_since_ms)
                      .bind(e.off_since_ms);
                });
  subscribers_.invalidate();
  return status;
}

Lookup<PostbackEndpoint> SqliteStore::get_postback_endpoint(std::string_view id) {
  return lookup<PostbackEndpoint>(
      "get_postback_endpoint",
      "SELECT " LF_POSTBACK_ENDPOINT_READ_COLUMNS " FROM postback_endpoints WHERE id = ?1",
      [&](Query& q) { q.bind(id); }, read_postback_endpoint<Query>);
}

std::optional<std::vector<PostbackEndpoint>> SqliteStore::list_postback_endpoints(
    std::string_view seller_id) {
  return read_rows<PostbackEndpoint>(
      "list_postback_endpoints",
      "SELECT " LF_POSTBACK_ENDPOINT_READ_COLUMNS
      " FROM postback_endpoints WHERE ?1 = '' OR seller_id = ?1 ORDER BY id",
      [&](Query& q) { q.bind(seller_id); }, read_postback_endpoint<Query>);
}

/// One statement on the writer; kNotFound when it touched no row.
StoreStatus SqliteStore::write_counted(const char* op, std::string_view sql,
                                       const std::function<void(Query&)>& bind) {
  return guarded(op, StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Query q(c, sql);
    bind(q);
    if (int rc = q.run()) return report(c, rc, op);
    return c.changes() > 0 ? StoreStatus::kOk : StoreStatus::kNotFound;
  });
}

/// One transaction on the writer: the seller's waiting events fanned out by the endpoints as they
/// stood, then the change at the version it was made on, so no event is fanned out between by
/// the endpoint as it will be (a stale change rolls the fan-out back with it).
StoreStatus SqliteStore::update_postback_endpoint(PostbackEndpoint& e, bool fan_out_first) {
  constexpr const char* kOp = "update_postback_endpoint";
  // The cache is dropped after the write: a refresh between could miss it.
  const StoreStatus status = guarded(kOp, StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, kOp);
    if (fan_out_first)
      if (int rc = fan_out_seller_events(c, e.id)) return report(c, rc, kOp);
    std::int64_t version = e.version;
    const StoreStatus written = write_versioned(
        c, kOp,
        "UPDATE postback_endpoints SET url = ?2, events = ?3, active = ?4, updated_at_ms = ?5,"
        " on_since_ms = ?6, off_since_ms = ?7, version = version + 1"
        " WHERE id = ?1 AND (?8 = 0 OR version = ?8) RETURNING version",
        "SELECT 1 FROM postback_endpoints WHERE id = ?1", e.id,
        [&](Query& q) {
          q.bind(e.id)
              .bind(e.url)
              .bind(e.events)
              .bind(e.active)
              .bind(e.updated_at_ms)
              .bind(e.on_since_ms)
              .bind(e.off_since_ms)
              .bind(e.version);
        },
        version);
    if (written != StoreStatus::kOk) return written;
    if (int rc = tx.commit()) return report(c, rc, kOp);
    e.version = version;
    return StoreStatus::kOk;
  });
  subscribers_.invalidate();
  return status;
}

/// One statement on the writer: the secret the row holds becomes its previous one, whatever a
/// rotation just before this one made it.
Lookup<PostbackEndpoint> SqliteStore::rotate_postback_secret(const SecretRotation& r) {
  using Found = Lookup<PostbackEndpoint>;
  Found found = guarded("rotate_postback_secret", Found{}, [&]() -> Found {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Query q(c,
            "UPDATE postback_endpoints SET previous_secret = CASE WHEN ?4 > 0 THEN secret ELSE ''"
            " END, previous_secret_expires_at_ms = ?4, secret = ?2, secret_rotated_at_ms = ?3,"
            " updated_at_ms = ?3, version = version + 1 WHERE id = ?1 AND (?5 = '' OR secret = ?5)"
            " RETURNING " LF_POSTBACK_ENDPOINT_READ_COLUMNS);
    q.bind(r.endpoint_id)
        .bind(r.secret)
        .bind(r.at_ms)
        .bind(r.previous_expires_at_ms)
        .bind(r.expected_secret);
    const int rc = q.step();
    if (rc == SQLITE_DONE) {
      Query there(c, "SELECT 1 FROM postback_endpoints WHERE id = ?1");
      const int found = there.bind(r.endpoint_id).step();
      if (found == SQLITE_ROW) return {StoreStatus::kConflict, std::nullopt};
      if (found != SQLITE_DONE) return (report(c, found, "rotate_postback_secret"), Found{});
      return {StoreStatus::kNotFound, std::nullopt};
    }
    if (rc != SQLITE_ROW) return (report(c, rc, "rotate_postback_secret"), Found{});
    PostbackEndpoint e = read_postback_endpoint(q);
    if (const int done = q.step(); done != SQLITE_DONE)
      return (report(c, done, "rotate_postback_secret"), Found{});
    return {StoreStatus::kOk, std::move(e)};
  });
  if (found.status == StoreStatus::kOk) subscribers_.invalidate();  // the senders sign anew
  return found;
}

/// One transaction on the writer: the endpoint at its version first, then its rows.
StoreStatus SqliteStore::delete_postback_endpoint(std::string_view id, std::int64_t version) {
  constexpr const char* kOp = "delete_postback_endpoint";
  // The cache is dropped after the write: a refresh between could miss it.
  const StoreStatus status = guarded(kOp, StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, kOp);
    std::int64_t deleted = version;
    const StoreStatus gone = write_versioned(
        c, kOp,
        "DELETE FROM postback_endpoints WHERE id = ?1 AND (?2 = 0 OR version = ?2)"
        " RETURNING version",
        "SELECT 1 FROM postback_endpoints WHERE id = ?1", id,
        [&](Query& q) { q.bind(id).bind(version); }, deleted);
    if (gone != StoreStatus::kOk) return gone;
    for (const char* sql : {"DELETE FROM postback_attempts WHERE endpoint_id = ?1",
                            "DELETE FROM postback_outbox WHERE endpoint_id = ?1"}) {
      Query q(c, sql);
      if (int rc = q.bind(id).run()) return report(c, rc, kOp);
    }
    if (int rc = tx.commit()) return report(c, rc, kOp);
    return StoreStatus::kOk;
  });
  subscribers_.invalidate();
  return status;
}

/// Up to `limit` of the oldest events not yet fanned out become their rows per endpoint
/// (postback_event_deliveries), and leave postback_events; `events` says how many. Inside the
/// caller's transaction.
int SqliteStore::fan_out_postback_events(Connection& c, int limit, std::string_view holds,
                                         int& events) {
  std::int64_t last = 0;
  events = 0;
  {
    Query q(c,
            "SELECT COUNT(*), MAX(seq) FROM (SELECT seq FROM postback_events ORDER BY seq"
            " LIMIT ?1)");
    q.bind(static_cast<std::int64_t>(limit));
    const int rc = q.step();
    if (rc != SQLITE_ROW) return rc;
    if (q.is_null(1)) return SQLITE_OK;  // none waiting
    events = static_cast<int>(q.int64(0));
    last = q.int64(1);
  }
  {
    Query q(c, "INSERT OR IGNORE INTO postback_outbox (" LF_POSTBACK_OUTBOX_COLUMNS
               ") SELECT " LF_POSTBACK_EVENT_AS_HELD_OUTBOX
               " FROM postback_event_deliveries LEFT JOIN (SELECT value ->> 0 AS held_endpoint,"
               "  value ->> 1 AS held_until FROM json_each(?2)) ON held_endpoint = endpoint_id"
               " WHERE seq <= ?1 ORDER BY seq");
    if (int rc = q.bind(last).bind(holds).run()) return rc;
  }
  Query q(c, "DELETE FROM postback_events WHERE seq <= ?1");
  return q.bind(last).run();
}

int SqliteStore::fan_out_seller_events(Connection& c, std::string_view endpoint_id) {
  for (const char* sql :
       {"INSERT OR IGNORE INTO postback_outbox (" LF_POSTBACK_OUTBOX_COLUMNS
        ") SELECT " LF_POSTBACK_EVENT_AS_OUTBOX " FROM postback_event_deliveries WHERE seller_id ="
        " (SELECT seller_id FROM postback_endpoints WHERE id = ?1) ORDER BY seq",
        "DELETE FROM postback_events WHERE seller_id ="
        " (SELECT seller_id FROM postback_endpoints WHERE id = ?1)"}) {
    Query q(c, sql);
    if (int rc = q.bind(endpoint_id).run()) return rc;
  }
  return SQLITE_OK;
}

/// One process owns an embedded store, but its sender may run several claims at once: the
/// writer's mutex and one transaction make each claim whole. The rows already fanned out first;
/// only when they fall short, events fanned out for the rest, and those claimed, in rounds while
/// they still fall short (the rows of held endpoints are not due): the fan-out keeps to the
/// sender's pace, never ahead of it while the workers write.
std::optional<std::vector<PostbackDelivery>> SqliteStore::claim_postbacks(
    std::int64_t now_ms, std::int64_t lease_ms, int limit, std::span<const PostbackHold> holds) {
  using Rows = std::optional<std::vector<PostbackDelivery>>;
  return guarded("claim_postbacks", Rows{}, [&]() -> Rows {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return (report(c, rc, "claim_postbacks"), Rows{});
    std::vector<PostbackDelivery> out;
    const auto claim = [&](int n) {
      Query q(c,
              "UPDATE postback_outbox SET next_at = ?2 WHERE rowid IN (SELECT rowid FROM"
              " postback_outbox WHERE state = 'pending' AND next_at <= ?1 ORDER BY next_at"
              " LIMIT ?3) RETURNING " LF_POSTBACK_OUTBOX_COLUMNS);
      q.bind(now_ms).bind(now_ms + lease_ms).bind(static_cast<std::int64_t>(n));
      int rc;
      while ((rc = q.step()) == SQLITE_ROW) out.push_back(read_postback_delivery(q));
      return rc == SQLITE_DONE ? SQLITE_OK : rc;
    };
    if (int rc = claim(limit)) return (report(c, rc, "claim_postbacks"), Rows{});
    nlohmann::json held = nlohmann::json::array();
    for (const PostbackHold& h : holds) held.push_back({h.endpoint_id, h.until_ms});
    const std::string held_text = held.dump();  // bound as a view: kept until the claim ends
    for (int round = 0; round < kClaimFanOutRounds; ++round) {
      const int short_by = limit - static_cast<int>(out.size());
      if (short_by <= 0) break;
      int events = 0;
      if (int rc = fan_out_postback_events(c, short_by, held_text, events))
        return (report(c, rc, "claim_postbacks"), Rows{});
      if (int rc = claim(short_by)) return (report(c, rc, "claim_postbacks"), Rows{});
      if (events < short_by) break;  // none left to fan out
    }
    if (int rc = tx.commit()) return (report(c, rc, "claim_postbacks"), Rows{});
    return out;
  });
}

StoreStatus SqliteStore::record_postback_attempts(std::span<const PostbackAttempt> attempts) {
  if (attempts.empty()) return StoreStatus::kOk;
  return guarded("record_postback_attempts", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "record_postback_attempts");
    for (const PostbackAttempt& a : attempts) {
      const bool done = a.then == PostbackState::kDelivered;
      {
        Query q(c,
                "UPDATE postback_outbox SET attempts = attempts + 1, state = ?3, next_at = ?4,"
                " last_status = ?5, last_error = ?6, delivered_at = ?7"
                " WHERE endpoint_id = ?1 AND event_id = ?2");
        if (int rc = q.bind(a.endpoint_id)
                         .bind(a.event_id)
                         .bind(to_string(a.then))
                         .bind(a.next_at_ms)
                         .bind(a.status)
                         .bind(a.error)
                         .bind(done ? a.at_ms : 0)
                         .run())
          return report(c, rc, "record_postback_attempts");
      }
      if (c.changes() == 0) continue;  // the endpoint was deleted meanwhile
      Query q(c, "INSERT INTO postback_attempts (" LF_POSTBACK_ATTEMPT_COLUMNS
                 ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
      if (int rc = q.bind(a.event_id)
                       .bind(a.endpoint_id)
                       .bind(a.at_ms)
                       .bind(a.status)
                       .bind(a.latency_us)
                       .bind(a.error)
                       .bind(to_string(a.then))
                       .bind(a.next_at_ms)
                       .run())
        return report(c, rc, "record_postback_attempts");
    }
    if (int rc = tx.commit()) return report(c, rc, "record_postback_attempts");
    return StoreStatus::kOk;
  });
}

StoreStatus SqliteStore::release_postbacks(std::span<const PostbackRelease> rows) {
  if (rows.empty()) return StoreStatus::kOk;
  return guarded("release_postbacks", StoreStatus::kUnavailable, [&] {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return report(c, rc, "release_postbacks");
    for (const PostbackRelease& r : rows) {
      Query q(c,
              "UPDATE postback_outbox SET next_at = ?3"
              " WHERE endpoint_id = ?1 AND event_id = ?2 AND state = 'pending'");
      if (int rc = q.bind(r.endpoint_id).bind(r.event_id).bind(r.next_at_ms).run())
        return report(c, rc, "release_postbacks");
    }
    if (int rc = tx.commit()) return report(c, rc, "release_postbacks");
    return StoreStatus::kOk;
  });
}

std::optional<int> SqliteStore::resume_postbacks(std::string_view endpoint_id, std::int64_t now_ms,
                                                 std::int64_t beyond_ms) {
  return guarded("resume_postbacks", std::optional<int>{}, [&]() -> std::optional<int> {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Query q(c,
            "UPDATE postback_outbox SET next_at = ?2"
            " WHERE endpoint_id = ?1 AND state = 'pending' AND next_at > ?3");
    if (int rc = q.bind(endpoint_id).bind(now_ms).bind(beyond_ms).run())
      return (report(c, rc, "resume_postbacks"), std::optional<int>{});
    return static_cast<int>(c.changes());
  });
}

std::optional<std::vector<PostbackDelivery>> SqliteStore::list_postback_deliveries(
    std::string_view endpoint_id, std::string_view before_event_id, int limit) {
  return read_rows<PostbackDelivery>(
      "list_postback_deliveries",
      "SELECT " LF_POSTBACK_OUTBOX_COLUMNS
      " FROM postback_outbox WHERE endpoint_id = ?1 AND (?2 = '' OR event_id < ?2)"
      " UNION ALL SELECT " LF_POSTBACK_EVENT_AS_OUTBOX
      " FROM postback_event_deliveries WHERE endpoint_id = ?1 AND (?2 = '' OR event_id < ?2)"
      " ORDER BY event_id DESC LIMIT ?3",
      [&](Query& q) {
        q.bind(endpoint_id).bind(before_event_id).bind(static_cast<std::int64_t>(limit));
      },
      read_postback_delivery<Query>);
}

std::optional<std::vector<PostbackAttempt>> SqliteStore::list_postback_attempts(
    std::string_view endpoint_id, std::string_view event_id) {
  return read_rows<PostbackAttempt>(
      "list_postback_attempts",
      "SELECT " LF_POSTBACK_ATTEMPT_COLUMNS
      " FROM postback_attempts WHERE endpoint_id = ?1 AND event_id = ?2 ORDER BY at, rowid",
      [&](Query& q) { q.bind(endpoint_id).bind(event_id); }, read_postback_attempt<Query>);
}

std::optional<std::vector<PostbackAttempt>> SqliteStore::recent_postback_attempts(
    std::string_view endpoint_id, int limit) {
  return read_rows<PostbackAttempt>(
      "recent_postback_attempts",
      "SELECT " LF_POSTBACK_ATTEMPT_COLUMNS
      " FROM postback_attempts WHERE endpoint_id = ?1 ORDER BY at DESC, rowid DESC LIMIT ?2",
      [&](Query& q) { q.bind(endpoint_id).bind(static_cast<std::int64_t>(limit)); },
      read_postback_attempt<Query>);
}

std::optional<std::vector<RecentStatuses>> SqliteStore::recent_postback_statuses(int per_endpoint) {
  return group_statuses(read_rows<std::pair<std::string, int>>(
      "recent_postback_statuses",
      "SELECT e.id, a.status FROM postback_endpoints e JOIN postback_attempts a"
      " ON a.rowid IN (SELECT rowid FROM postback_attempts WHERE endpoint_id = e.id"
      "  ORDER BY at DESC, rowid DESC LIMIT ?1)"
      " WHERE e.active = 1 ORDER BY e.id, a.at DESC, a.rowid DESC",
      [&](Query& q) { q.bind(static_cast<std::int64_t>(per_endpoint)); },
      read_endpoint_status<Query>));
}

StoreStatus SqliteStore::replay_postback(std::string_view endpoint_id, std::string_view event_id,
                                         std::int64_t now_ms) {
  const StoreStatus replayed =
      write_counted("replay_postback",
                    "UPDATE postback_outbox SET state = 'pending', next_at = ?3,"
                    " window_from = ?3 WHERE endpoint_id = ?1 AND event_id = ?2",
                    [&](Query& q) { q.bind(endpoint_id).bind(event_id).bind(now_ms); });
  if (replayed != StoreStatus::kNotFound) return replayed;
  // Not fanned out yet: it is pending and due already, nothing to change.
  return lookup<bool>(
             "replay_postback",
             "SELECT 1 FROM postback_event_deliveries WHERE endpoint_id = ?1 AND event_id = ?2",
             [&](Query& q) { q.bind(endpoint_id).bind(event_id); }, [](Query&) { return true; })
      .status;
}

std::optional<PostbackBacklog> SqliteStore::postback_backlog() {
  return read_optional<PostbackBacklog>(
      "postback_backlog", LF_POSTBACK_BACKLOG, [](Query&) {},
      [](Query& q) {
        return PostbackBacklog{q.int64(0), q.int64(1)};
      });
}

/// One short transaction on the writer: the rows' keys read on the (state, window_from) index of
/// rows no longer pending (its condition is repeated for SQLite to use it, so no call deletes a
/// pending row), then each row and its attempts deleted by key: intake waits for at most one
/// small batch.
std::optional<int> SqliteStore::prune_postbacks(PostbackState state, std::int64_t before_ms,
                                                int limit) {
  using Count = std::optional<int>;
  return guarded("prune_postbacks", Count{}, [&]() -> Count {
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    Transaction tx(c);
    if (int rc = tx.begin()) return (report(c, rc, "prune_postbacks"), Count{});
    std::vector<std::pair<std::string, std::string>> rows;  // endpoint, event
    {
      Query q(c,
              "SELECT endpoint_id, event_id FROM postback_outbox"
              " WHERE state <> 'pending' AND state = ?1 AND window_from < ?2 LIMIT ?3");
      q.bind(to_string(state)).bind(before_ms).bind(static_cast<std::int64_t>(limit));
      int rc;
      while ((rc = q.step()) == SQLITE_ROW) rows.emplace_back(q.text(0), q.text(1));
      if (rc != SQLITE_DONE) return (report(c, rc, "prune_postbacks"), Count{});
    }
    for (const auto& [endpoint_id, event_id] : rows)
      for (const char* sql :
           {"DELETE FROM postback_attempts WHERE endpoint_id = ?1 AND event_id = ?2",
            "DELETE FROM postback_outbox WHERE endpoint_id = ?1 AND event_id = ?2"}) {
        Query q(c, sql);
        if (int rc = q.bind(endpoint_id).bind(event_id).run())
          return (report(c, rc, "prune_postbacks"), Count{});
      }
    if (int rc = tx.commit()) return (report(c, rc, "prune_postbacks"), Count{});
    return static_cast<int>(rows.size());
  });
}

}  // namespace leadflow::sqlite
