// PgStore: the postbacks port (sellers' endpoints, the outbox and its attempts), and the outbox
// rows the outcome, return and settlement transactions write (outbox_statement).
#include "pg/adapter.hpp"
#include "postback_rows.hpp"

namespace leadflow::pg {

namespace {
/// Where a change of a postback endpoint is announced (docs/postbacks.md#delivery).
constexpr std::string_view kEndpointsChannel = "leadflow_postback_endpoints";
}  // namespace

void PgStore::watch_endpoints() {
  std::call_once(endpoints_watch_once_, [this] {
    // Heard while listening, or missed while the watch's connection was down: either way the
    // endpoints are read again.
    endpoints_watch_ = watch(
        kEndpointsChannel, [this](std::string_view) { ++endpoints_version_; },
        [this] { ++endpoints_version_; });
  });
}

void PgStore::endpoints_changed() {
  ++endpoints_version_;
  const std::string payload = "changed";
  // Best effort: a process that misses it reads the endpoints again within kRefresh.
  announce(kEndpointsChannel, std::span(&payload, 1));
}

std::uint64_t PgStore::postback_endpoints_version() {
  watch_endpoints();
  return endpoints_version_.load();
}

/// One row per event whose seller has an endpoint: the lead's seller, campaign and status as this
/// transaction left it. Which endpoints it goes to is read when a claim fans it out (the view
/// postback_event_deliveries). The endpoints are read by this statement, not from a cache: an
/// endpoint committed before it runs is seen, whichever process made it (docs/postbacks.md).
Statement PgStore::outbox_statement(std::span<const OutboxEvent> events) {
  ArrayText event_id, kind, lead_id, sold, payout, reason, at;
  for (const OutboxEvent& e : events) {
    event_id.add(e.event_id);
    kind.add(e.kind);
    lead_id.add(e.lead_id);
    sold.add(e.sold);
    payout.add(e.payout);
    reason.add(e.reason);
    at.add(e.at_ms);
  }
  return {"INSERT INTO postback_events (" LF_POSTBACK_EVENT_COLUMNS
          ") SELECT ev.event_id, ev.kind, l.id, l.seller_id, l.campaign_id, l.status, ev.sold,"
          " ev.payout, ev.reason, ev.at"
          " FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::BOOLEAN[], $5::BIGINT[],"
          "  $6::TEXT[], $7::BIGINT[]) WITH ORDINALITY"
          "  AS ev (event_id, kind, lead_id, sold, payout, reason, at, n)"
          " JOIN leads l ON l.id = ev.lead_id"
          " WHERE EXISTS (SELECT 1 FROM postback_endpoints pe WHERE pe.seller_id = l.seller_id)"
          " ORDER BY ev.n",
          Params()
              .add(event_id.str())
              .add(kind.str())
              .add(lead_id.str())
              .add(sold.str())
              .add(payout.str())
              .add(reason.str())
              .add(at.str())};
}

void PgStore::outbox_if_subscribed(Connection& c, const OutboxEvent& e) {
  const Statement st = outbox_statement(std::span(&e, 1));
  c.exec(st.sql, st.params, Effect::kWrite);
}

StoreStatus PgStore::insert_postback_endpoint(const PostbackEndpoint& e) {
  const StoreStatus status =
      write("insert_postback_endpoint",
            "INSERT INTO postback_endpoints (" LF_POSTBACK_ENDPOINT_COLUMNS
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,"
            " $14)",
            Params()
                .add(e.id)
                .add(e.seller_id)
                .add(e.campaign_id)
                .add(e.url)
                .add(e.events)
                .add(e.secret)
                .add(e.active)
                .add(e.created_at_ms)
                .add(e.updated_at_ms)
                .add(e.previous_secret)
                .add(e.previous_secret_expires_at_ms)
                .add(e.secret_rotated_at_ms)
                .add(e.on_since_ms)
                .add(e.off_since_ms));
  endpoints_changed();
  return status;
}

Lookup<PostbackEndpoint> PgStore::get_postback_endpoint(std::string_view id) {
  return lookup<PostbackEndpoint>("get_postback_endpoint",
                                  "SELECT " LF_POSTBACK_ENDPOINT_READ_COLUMNS
                                  " FROM postback_endpoints WHERE id = $1",
                                  Params().add(id), read_postback_endpoint<Row>);
}

std::optional<std::vector<PostbackEndpoint>> PgStore::list_postback_endpoints(
    std::string_view seller_id) {
  return read_rows<PostbackEndpoint>(
      "list_postback_endpoints",
      "SELECT " LF_POSTBACK_ENDPOINT_READ_COLUMNS
      " FROM postback_endpoints WHERE $1 = '' OR seller_id = $1 ORDER BY id",
      Params().add(seller_id), read_postback_endpoint<Row>);
}

/// One statement; kNotFound when it touched no row.
StoreStatus PgStore::write_counted(const char* op, const char* sql, const Params& params) {
  return run(op, StoreStatus::kUnavailable, [&](Connection& c) {
    const Result r = c.exec(sql, params, Effect::kWrite);
    return r.rows() > 0 ? StoreStatus::kOk : StoreStatus::kNotFound;
  });
}

/// One transaction: the seller's waiting events fanned out by the endpoints as they stood (the
/// INSERT reads the view in the statement's snapshot, from before the DELETE beside it; an event
/// a claim is fanning out at once is the claim's: its row lock holds the DELETE, which then finds
/// it gone), then the change at the version it was made on (a stale change rolls the fan-out
/// back with it).
StoreStatus PgStore::update_postback_endpoint(PostbackEndpoint& e, bool fan_out_first) {
  const StoreStatus status =
      run("update_postback_endpoint", StoreStatus::kUnavailable, [&](Connection& c) {
        Transaction tx(c);
        if (fan_out_first)
          c.exec(
              "WITH taken AS (DELETE FROM postback_events WHERE seller_id ="
              "  (SELECT seller_id FROM postback_endpoints WHERE id = $1) RETURNING seq)"
              " INSERT INTO postback_outbox (" LF_POSTBACK_OUTBOX_COLUMNS
              ") SELECT " LF_POSTBACK_EVENT_AS_OUTBOX
              " FROM postback_event_deliveries WHERE seq IN (SELECT seq FROM taken) ORDER BY seq"
              " ON CONFLICT DO NOTHING",
              Params().add(e.id), Effect::kWrite);
        const Result r = c.exec(
            "WITH updated AS (UPDATE postback_endpoints SET url = $2, events = $3, active = $4,"
            "                 updated_at_ms = $5, on_since_ms = $6, off_since_ms = $7,"
            "                 version = version + 1"
            "                 WHERE id = $1 AND ($8::BIGINT = 0 OR version = $8::BIGINT)"
            "                 RETURNING version)"
            " SELECT (SELECT version FROM updated),"
            " EXISTS (SELECT 1 FROM postback_endpoints WHERE id = $1)",
            Params()
                .add(e.id)
                .add(e.url)
                .add(e.events)
                .add(e.active)
                .add(e.updated_at_ms)
                .add(e.on_since_ms)
                .add(e.off_since_ms)
                .add(e.version),
            Effect::kWrite);
        std::int64_t version = e.version;
        if (const StoreStatus s = versioned(r, version); s != StoreStatus::kOk) return s;
        tx.commit();
        e.version = version;
        return StoreStatus::kOk;
      });
  endpoints_changed();
  return status;
}

/// One statement: a rotation that waited for another's row lock reads the row that one left
/// (READ COMMITTED re-reads an updated row), so its previous secret is the other's new one.
Lookup<PostbackEndpoint> PgStore::rotate_postback_secret(const SecretRotation& r) {
  using Found = Lookup<PostbackEndpoint>;
  Found found = run("rotate_postback_secret", Found{}, [&](Connection& c) -> Found {
    const Result row = c.exec(
        "UPDATE postback_endpoints SET previous_secret = CASE WHEN $4::BIGINT > 0 THEN secret"
        " ELSE '' END, previous_secret_expires_at_ms = $4, secret = $2,"
        " secret_rotated_at_ms = $3, updated_at_ms = $3, version = version + 1 WHERE id = $1"
        " AND ($5 = '' OR secret = $5) RETURNING " LF_POSTBACK_ENDPOINT_READ_COLUMNS,
        Params()
            .add(r.endpoint_id)
            .add(r.secret)
            .add(r.at_ms)
            .add(r.previous_expires_at_ms)
            .add(r.expected_secret),
        Effect::kWrite);
    if (row.rows() == 0) {
      const Result there = c.exec("SELECT 1 FROM postback_endpoints WHERE id = $1",
                                  Params().add(r.endpoint_id), Effect::kRead);
      return {there.rows() > 0 ? StoreStatus::kConflict : StoreStatus::kNotFound, std::nullopt};
    }
    return {StoreStatus::kOk, read_postback_endpoint(Row{row, 0})};
  });
  if (found.status == StoreStatus::kOk) endpoints_changed();  // the senders sign anew
  return found;
}

/// One transaction: the endpoint at its version first (the statement's snapshot still holds it
/// when the DELETE took nothing: at another version, or none), then its rows.
StoreStatus PgStore::delete_postback_endpoint(std::string_view id, std::int64_t version) {
  const StoreStatus status =
      run("delete_postback_endpoint", StoreStatus::kUnavailable, [&](Connection& c) {
        Transaction tx(c);
        const Result r = c.exec(
            "WITH gone AS (DELETE FROM postback_endpoints WHERE id = $1"
            "              AND ($2::BIGINT = 0 OR version = $2::BIGINT) RETURNING version)"
            " SELECT (SELECT version FROM gone),"
            " EXISTS (SELECT 1 FROM postback_endpoints WHERE id = $1)",
            Params().add(id).add(version), Effect::kWrite);
        std::int64_t deleted = version;
        if (const StoreStatus s = versioned(r, deleted); s != StoreStatus::kOk) return s;
        c.exec("DELETE FROM postback_attempts WHERE endpoint_id = $1", Params().add(id),
               Effect::kWrite);
        c.exec("DELETE FROM postback_outbox WHERE endpoint_id = $1", Params().add(id),
               Effect::kWrite);
        tx.commit();
        return StoreStatus::kOk;
      });
  endpoints_changed();
  return status;
}

/// One transaction. The rows already fanned out are claimed first; only when they fall short, up
/// to as many of the oldest events not yet fanned out become their rows per endpoint and leave
/// postback_events (the INSERT reads the view in the statement's snapshot, from before the
/// DELETE beside it), and those are claimed, in rounds while they still fall short (the rows of
/// held endpoints are not due): the fan-out keeps to the senders' pace, never ahead of it while
/// the workers write. FOR UPDATE SKIP LOCKED in both:
/// processes claiming at once fan out and take distinct rows without waiting for each other;
/// the lease (next_at moved ahead) keeps a claimed row from being claimed again once this
/// commits, until the claimer records its attempt or the lease runs out.
std::optional<std::vector<PostbackDelivery>> PgStore::claim_postbacks(
    std::int64_t now_ms, std::int64_t lease_ms, int limit, std::span<const PostbackHold> holds) {
  using Rows = std::optional<std::vector<PostbackDelivery>>;
  return run("claim_postbacks", Rows{}, [&](Connection& c) -> Rows {
    Transaction tx(c);
    std::vector<PostbackDelivery> out;
    const auto claim = [&](int n) {
      const Result r = c.exec(
          "UPDATE postback_outbox SET next_at = $2 FROM (SELECT endpoint_id AS due_endpoint,"
          " event_id AS due_event FROM postback_outbox WHERE state = 'pending' AND next_at <= $1"
          " ORDER BY next_at LIMIT $3 FOR UPDATE SKIP LOCKED) AS due"
          " WHERE endpoint_id = due.due_endpoint AND event_id = due.due_event"
          " RETURNING " LF_POSTBACK_OUTBOX_COLUMNS,
          Params().add(now_ms).add(now_ms + lease_ms).add(n), Effect::kWrite);
      for (int i = 0; i < r.rows(); ++i) out.push_back(read_postback_delivery(Row{r, i}));
    };
    claim(limit);
    ArrayText held, until;
    for (const PostbackHold& h : holds) {
      held.add(h.endpoint_id);
      until.add(h.until_ms);
    }
    for (int round = 0; round < kClaimFanOutRounds; ++round) {
      const int short_by = limit - static_cast<int>(out.size());
      if (short_by <= 0) break;
      const Result fanned = c.exec(
          "WITH taken AS (DELETE FROM postback_events WHERE seq IN (SELECT seq FROM"
          "  postback_events ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING seq),"
          " fanned AS (INSERT INTO postback_outbox (" LF_POSTBACK_OUTBOX_COLUMNS
          ")  SELECT " LF_POSTBACK_EVENT_AS_HELD_OUTBOX
          "  FROM postback_event_deliveries LEFT JOIN unnest($2::TEXT[], $3::BIGINT[])"
          "   AS h (held_endpoint, held_until) ON held_endpoint = endpoint_id"
          "  WHERE seq IN (SELECT seq FROM taken) ORDER BY seq ON CONFLICT DO NOTHING)"
          " SELECT COUNT(*) FROM taken",
          Params().add(short_by).add(held.str()).add(until.str()), Effect::kWrite);
      claim(short_by);
      if (fanned.int64(0, 0) < short_by) break;  // none left to fan out
    }
    tx.commit();
    return out;
  });
}

StoreStatus PgStore::record_postback_attempts(std::span<const PostbackAttempt> attempts) {
  if (attempts.empty()) return StoreStatus::kOk;
  ArrayText event, endpoint, at, status, latency, error, then, next_at;
  for (const PostbackAttempt& a : attempts) {
    event.add(a.event_id);
    endpoint.add(a.endpoint_id);
    at.add(a.at_ms);
    status.add(a.status);
    latency.add(a.latency_us);
    error.add(a.error);
    then.add(to_string(a.then));
    next_at.add(a.next_at_ms);
  }
  const Params params = Params()
                            .add(event.str())
                            .add(endpoint.str())
                            .add(at.str())
                            .add(status.str())
                            .add(latency.str())
                            .add(error.str())
                            .add(then.str())
                            .add(next_at.str());
  // One statement: the rows' new state, and an attempt row for each row still there (an
  // endpoint deleted meanwhile took its rows with it). Rows are locked in key order.
  return run("record_postback_attempts", StoreStatus::kUnavailable, [&](Connection& c) {
    c.exec(
        "WITH a AS (SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::BIGINT[], $4::INTEGER[],"
        "  $5::BIGINT[], $6::TEXT[], $7::TEXT[], $8::BIGINT[]) WITH ORDINALITY"
        "  AS a (event_id, endpoint_id, at, status, latency_us, error, then_state, next_at, n)),"
        " counted AS (SELECT endpoint_id, event_id, COUNT(*) AS n, MAX(n) AS last"
        "  FROM a GROUP BY endpoint_id, event_id),"
        " updated AS (UPDATE postback_outbox o SET attempts = o.attempts + counted.n,"
        "  state = a.then_state, next_at = a.next_at, last_status = a.status,"
        "  last_error = a.error,"
        "  delivered_at = CASE WHEN a.then_state = 'delivered' THEN a.at ELSE 0 END"
        "  FROM counted JOIN a ON a.n = counted.last"
        "  WHERE o.endpoint_id = counted.endpoint_id AND o.event_id = counted.event_id"
        "  RETURNING o.endpoint_id, o.event_id)"
        " INSERT INTO postback_attempts (" LF_POSTBACK_ATTEMPT_COLUMNS
        ") SELECT a.event_id, a.endpoint_id, a.at, a.status, a.latency_us, a.error,"
        " a.then_state, a.next_at FROM a JOIN updated ON updated.endpoint_id = a.endpoint_id"
        " AND updated.event_id = a.event_id ORDER BY a.n",
        params, Effect::kWrite);
    return StoreStatus::kOk;
  });
}

StoreStatus PgStore::release_postbacks(std::span<const PostbackRelease> rows) {
  if (rows.empty()) return StoreStatus::kOk;
  ArrayText event, endpoint, next_at;
  for (const PostbackRelease& r : rows) {
    event.add(r.event_id);
    endpoint.add(r.endpoint_id);
    next_at.add(r.next_at_ms);
  }
  return write("release_postbacks",
               "UPDATE postback_outbox o SET next_at = r.next_at FROM unnest($1::TEXT[],"
               " $2::TEXT[], $3::BIGINT[]) AS r (event_id, endpoint_id, next_at)"
               " WHERE o.endpoint_id = r.endpoint_id AND o.event_id = r.event_id"
               " AND o.state = 'pending'",
               Params().add(event.str()).add(endpoint.str()).add(next_at.str()));
}

std::optional<int> PgStore::resume_postbacks(std::string_view endpoint_id, std::int64_t now_ms,
                                             std::int64_t beyond_ms) {
  return run("resume_postbacks", std::optional<int>{}, [&](Connection& c) -> std::optional<int> {
    const Result r = c.exec(
        "UPDATE postback_outbox SET next_at = $2"
        " WHERE endpoint_id = $1 AND state = 'pending' AND next_at > $3 RETURNING 1",
        Params().add(endpoint_id).add(now_ms).add(beyond_ms), Effect::kWrite);
    return r.rows();
  });
}

std::optional<std::vector<PostbackDelivery>> PgStore::list_postback_deliveries(
    std::string_view endpoint_id, std::string_view before_event_id, int limit) {
  return read_rows<PostbackDelivery>(
      "list_postback_deliveries",
      "SELECT " LF_POSTBACK_OUTBOX_COLUMNS
      " FROM postback_outbox WHERE endpoint_id = $1 AND ($2 = '' OR event_id < $2)"
      " UNION ALL SELECT " LF_POSTBACK_EVENT_AS_OUTBOX
      " FROM postback_event_deliveries WHERE endpoint_id = $1 AND ($2 = '' OR event_id < $2)"
      " ORDER BY event_id DESC LIMIT $3",
      Params().add(endpoint_id).add(before_event_id).add(limit), read_postback_delivery<Row>);
}

std::optional<std::vector<PostbackAttempt>> PgStore::list_postback_attempts(
    std::string_view endpoint_id, std::string_view event_id) {
  return read_rows<PostbackAttempt>(
      "list_postback_attempts",
      "SELECT " LF_POSTBACK_ATTEMPT_COLUMNS
      " FROM postback_attempts WHERE endpoint_id = $1 AND event_id = $2 ORDER BY at, ctid",
      Params().add(endpoint_id).add(event_id), read_postback_attempt<Row>);
}

std::optional<std::vector<PostbackAttempt>> PgStore::recent_postback_attempts(
    std::string_view endpoint_id, int limit) {
  return read_rows<PostbackAttempt>(
      "recent_postback_attempts",
      "SELECT " LF_POSTBACK_ATTEMPT_COLUMNS
      " FROM postback_attempts WHERE endpoint_id = $1 ORDER BY at DESC, ctid DESC LIMIT $2",
      Params().add(endpoint_id).add(limit), read_postback_attempt<Row>);
}

std::optional<std::vector<RecentStatuses>> PgStore::recent_postback_statuses(int per_endpoint) {
  return group_statuses(read_rows<std::pair<std::string, int>>(
      "recent_postback_statuses",
      "SELECT e.id, a.status FROM postback_endpoints e CROSS JOIN LATERAL"
      " (SELECT status, at, ctid AS place FROM postback_attempts WHERE endpoint_id = e.id"
      "  ORDER BY at DESC, ctid DESC LIMIT $1) a"
      " WHERE e.active ORDER BY e.id, a.at DESC, a.place DESC",
      Params().add(per_endpoint), read_endpoint_status<Row>));
}

StoreStatus PgStore::replay_postback(std::string_view endpoint_id, std::string_view event_id,
                                     std::int64_t now_ms) {
  const StoreStatus replayed =
      write_counted("replay_postback",
                    "UPDATE postback_outbox SET state = 'pending', next_at = $3,"
                    " window_from = $3 WHERE endpoint_id = $1 AND event_id = $2 RETURNING 1",
                    Params().add(endpoint_id).add(event_id).add(now_ms));
  if (replayed != StoreStatus::kNotFound) return replayed;
  // Not fanned out yet: it is pending and due already, nothing to change.
  return lookup<bool>(
             "replay_postback",
             "SELECT 1 FROM postback_event_deliveries WHERE endpoint_id = $1 AND event_id = $2",
             Params().add(endpoint_id).add(event_id), [](const Row&) { return true; })
      .status;
}

std::optional<PostbackBacklog> PgStore::postback_backlog() {
  return read_one<PostbackBacklog>("postback_backlog", LF_POSTBACK_BACKLOG, Params(),
                                   [](const Row& r) {
                                     return PostbackBacklog{r.int64(0), r.int64(1)};
                                   });
}

/// One statement: the rows locked (SKIP LOCKED: a row another process replays or prunes at that
/// moment is left to it) and deleted with their attempts, found on the (state, window_from)
/// index of rows no longer pending (its condition repeated so the planner may use it, and no
/// call deletes a pending row).
std::optional<int> PgStore::prune_postbacks(PostbackState state, std::int64_t before_ms,
                                            int limit) {
  return run("prune_postbacks", std::optional<int>{}, [&](Connection& c) -> std::optional<int> {
    const Result r = c.exec(
        "WITH old AS (SELECT endpoint_id, event_id FROM postback_outbox"
        "  WHERE state <> 'pending' AND state = $1 AND window_from < $2 LIMIT $3"
        "  FOR UPDATE SKIP LOCKED),"
        " gone AS (DELETE FROM postback_outbox o USING old"
        "  WHERE o.endpoint_id = old.endpoint_id AND o.event_id = old.event_id"
        "  RETURNING o.endpoint_id, o.event_id),"
        " attempts AS (DELETE FROM postback_attempts a USING gone"
        "  WHERE a.endpoint_id = gone.endpoint_id AND a.event_id = gone.event_id)"
        " SELECT COUNT(*) FROM gone",
        Params().add(to_string(state)).add(before_ms).add(limit), Effect::kWrite);
    return static_cast<int>(r.int64(0, 0));
  });
}

}  // namespace leadflow::pg
