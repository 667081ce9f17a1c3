// The PostgreSQL adapter of the distribution port (leadflow/store/distribution.hpp): duplicates,
// caps and budgets, post intents.
#include "pg/adapter.hpp"

// A lead may take a post intent while it is pending, or while one of its re-offers is leased to a
// worker (docs/reoffers.md): an aged lead's posts are guarded by intents as a live lead's are.
#define LF_PG_OPEN_FOR_POSTS(leads)                                                       \
  "(" leads                                                                               \
  ".status = 'pending' OR EXISTS (SELECT 1 FROM reoffers WHERE reoffers.lead_id = " leads \
  ".id AND reoffers.lease_until > 0))"

namespace leadflow::pg {

/// "Earlier" orders leads by (received_at, id): when the lead itself is stored, only leads
/// before it count, so of two copies of one person decided side by side exactly one is the
/// duplicate. When it is not stored yet (an intake check), every other lead counts. An erased
/// lead keeps no e-mail or phone, only their search keys: it is found by the stored lead's own
/// keys, on the index of erased leads alone (empty until something is erased).
std::string PgStore::find_duplicate(std::string_view vertical, std::string_view email,
                                    std::string_view phone, std::int64_t since_ms,
                                    std::string_view lead_id) {
  return run("find_duplicate", std::string{}, [&](Connection& c) -> std::string {
    // One statement: the lead's own time and keys, then the e-mail probe, then the phone
    // probe, then the erased leads' probes, each an index range scan. Prepared: its planning
    // cost about twenty times its run.
    const Result r = c.exec_prepared(
        "WITH self AS (SELECT COALESCE((SELECT received_at FROM leads WHERE id = $5),"
        "                              9223372036854775807) AS until_ms,"
        "  (SELECT email_key FROM leads WHERE id = $5) AS email_key,"
        "  (SELECT phone_key FROM leads WHERE id = $5) AS phone_key)"
        " SELECT COALESCE("
        "  (SELECT id FROM leads, self WHERE $2 <> '' AND vertical = $1 AND email = $2"
        "   AND received_at >= $4 AND received_at <= until_ms AND id <> $5"
        "   AND (received_at < until_ms OR id < $5) AND NOT test"
        "   ORDER BY received_at DESC LIMIT 1),"
        "  (SELECT id FROM leads, self WHERE $3 <> '' AND vertical = $1 AND phone = $3"
        "   AND received_at >= $4 AND received_at <= until_ms AND id <> $5"
        "   AND (received_at < until_ms OR id < $5) AND NOT test"
        "   ORDER BY received_at DESC LIMIT 1),"
        "  (SELECT id FROM leads, self WHERE leads.email_key = self.email_key"
        "   AND erased_at > 0 AND vertical = $1"
        "   AND received_at >= $4 AND received_at <= until_ms AND id <> $5"
        "   AND (received_at < until_ms OR id < $5) AND NOT test"
        "   ORDER BY received_at DESC LIMIT 1),"
        "  (SELECT id FROM leads, self WHERE leads.phone_key = self.phone_key"
        "   AND erased_at > 0 AND vertical = $1"
        "   AND received_at >= $4 AND received_at <= until_ms AND id <> $5"
        "   AND (received_at < until_ms OR id < $5) AND NOT test"
        "   ORDER BY received_at DESC LIMIT 1),"
        "  '')",
        Params().add(vertical).add(email).add(phone).add(since_ms).add(lead_id), Effect::kRead);
    return r.text(0, 0);
  });
}

/// Without caps: one statement; the lead row is share-locked so a concurrent outcome either
/// waits for the intent or makes it kConflict. With caps: a batch of one (see
/// record_post_intents), one round trip.
StoreStatus PgStore::record_post_intent(const PostIntent& p, std::span<const CapWindow> caps) {
  if (!caps.empty()) {
    const PostIntentWrite write{p, std::vector<CapWindow>(caps.begin(), caps.end())};
    return record_post_intents(std::span(&write, 1)).front();
  }
  // The posts this one follows were answered: an exclusive post replaces every other intent
  // of the lead, a share the exclusive one (the shares stay, posted side by side).
  static constexpr const char* kUpsert =
      "WITH written AS ("
      " INSERT INTO post_intents (lead_id, buyer_id, price_cents, ping_id, at, shared)"
      " SELECT id, $2, $3, $4, $5, $6 FROM leads WHERE id = $1 AND " LF_PG_OPEN_FOR_POSTS(
      "leads") " FOR SHARE OF leads"
      " ON CONFLICT (lead_id, buyer_id) DO UPDATE SET price_cents = excluded.price_cents,"
      " ping_id = excluded.ping_id, at = excluded.at, shared = excluded.shared"
      " RETURNING 1),"
      " replaced AS (DELETE FROM post_intents WHERE lead_id = $1 AND buyer_id <> $2"
      " AND (NOT $6 OR NOT shared) AND EXISTS (SELECT 1 FROM written))"
      " SELECT (SELECT COUNT(*) FROM written),"
      " EXISTS (SELECT 1 FROM leads WHERE id = $1)";
  return run("record_post_intent", StoreStatus::kUnavailable, [&](Connection& c) {
    const Result r = c.exec(kUpsert,
                            Params()
                                .add(p.lead_id)
                                .add(p.buyer_id)
                                .add(p.price)
                                .add(p.ping_id)
                                .add(p.at_ms)
                                .add(p.shared),
                            Effect::kWrite);
    if (r.int64(0, 0) > 0) return StoreStatus::kOk;
    return r.boolean(0, 1) ? StoreStatus::kConflict : StoreStatus::kNotFound;
  });
}

/// The whole batch is one transaction sent as one pipeline (one round trip): BEGIN; the
/// advisory lock of every buyer reserving a cap slot, in one order for every process (so
/// batches wait for each other instead of deadlocking); a share lock on every lead of the
/// batch, in id order (as record_outcomes locks them, so the two wait for each other instead
/// of deadlocking, and no lead is decided under an intent being written); then one statement
/// per intent, in the batch's order; COMMIT. Each intent's statement checks its lead and
/// counts its buyer's sales and open intents after the locks were taken, in a snapshot that
/// holds every reservation committed before them and the batch's own earlier intents, and
/// writes only if every window has room: a refusal is an answer, not an error, and the rest
/// of the batch goes on. If any statement fails, the server skips the rest, nothing is kept,
/// and every answer is kUnavailable.
std::vector<StoreStatus> PgStore::record_post_intents(std::span<const PostIntentWrite> writes) {
  // $1 lead, $2 buyer, $3 price, $4 ping id, $5 at, $6, $7 and $8 the windows' starts,
  // limits and units (true: a budget in cents; empty arrays: no cap). A window is over when
  // what it holds plus this intent (one lead, or its price) passes its limit. Intents of
  // decided leads are not counted: a sale counts through its sales row, and an unsold lead's
  // intent reserved nothing that was used.
  static constexpr const char* kIntent =
      "WITH lead AS (SELECT " LF_PG_OPEN_FOR_POSTS("leads") " AS pending FROM leads WHERE id = $1),"
      " capped AS (SELECT EXISTS (SELECT 1 FROM unnest($6::BIGINT[], $7::BIGINT[],"
      "   $8::BOOLEAN[]) AS w (since_ms, cap, cents)"
      "  CROSS JOIN LATERAL (SELECT COUNT(*) AS n, COALESCE(SUM(price_cents), 0)"
      "   - (SELECT COALESCE(SUM(r.price_cents), 0) FROM returns AS r"
      "      WHERE r.buyer_id = $2 AND r.sold_at >= w.since_ms) AS spent"
      "   FROM sales WHERE buyer_id = $2 AND sold_at >= w.since_ms) AS s"
      "  CROSS JOIN LATERAL (SELECT COUNT(*) AS n,"
      "   COALESCE(SUM(post_intents.price_cents), 0) AS spent"
      "   FROM post_intents JOIN leads AS l ON l.id = post_intents.lead_id"
      "   WHERE post_intents.buyer_id = $2 AND post_intents.at >= w.since_ms"
      "   AND post_intents.lead_id <> $1 AND " LF_PG_OPEN_FOR_POSTS("l") ") AS o"
      "  WHERE CASE WHEN w.cents THEN s.spent + o.spent + $3::BIGINT"
      "   ELSE s.n + o.n + 1 END > w.cap) AS over_cap),"
      " written AS (INSERT INTO post_intents (lead_id, buyer_id, price_cents, ping_id, at,"
      "  shared) SELECT $1, $2, $3::BIGINT, $4::TEXT, $5::BIGINT, $9::BOOLEAN FROM lead, capped"
      "  WHERE lead.pending AND NOT capped.over_cap"
      "  ON CONFLICT (lead_id, buyer_id) DO UPDATE SET price_cents = excluded.price_cents,"
      "  ping_id = excluded.ping_id, at = excluded.at, shared = excluded.shared"
      "  RETURNING 1),"
      // As record_post_intent: the posts this one follows were answered.
      " replaced AS (DELETE FROM post_intents WHERE lead_id = $1 AND buyer_id <> $2"
      "  AND (NOT $9::BOOLEAN OR NOT shared) AND EXISTS (SELECT 1 FROM written))"
      " SELECT (SELECT COUNT(*) FROM written), (SELECT pending FROM lead),"
      " (SELECT over_cap FROM capped)";
  const std::vector<StoreStatus> all_failed(writes.size(), StoreStatus::kUnavailable);
  if (writes.empty()) return {};
  std::vector<Statement> statements;
  statements.reserve(writes.size() + 4);
  statements.push_back({"BEGIN", Params()});
  ArrayText reserving, leads;
  bool any_caps = false;
  for (const auto& w : writes) {
    leads.add(w.intent.lead_id);
    if (w.caps.empty()) continue;
    reserving.add(w.intent.buyer_id);
    any_caps = true;
  }
  // OFFSET 0 keeps the sorted subquery from being merged into the outer query, so the locks
  // are taken in the sorted order.
  if (any_caps)
    statements.push_back(
        {"SELECT pg_advisory_xact_lock(k) FROM (SELECT DISTINCT hashtextextended(b, 0) AS k"
         " FROM unnest($1::TEXT[]) AS b ORDER BY 1 OFFSET 0) AS sorted",
         Params().add(reserving.str())});
  statements.push_back({"SELECT 1 FROM leads WHERE id = ANY ($1::TEXT[]) ORDER BY id FOR SHARE",
                        Params().add(leads.str())});
  const std::size_t first_intent = statements.size();
  for (const auto& w : writes) {
    ArrayText since, limit, cents;
    for (const CapWindow& cap : w.caps) {
      since.add(cap.since_ms);
      limit.add(cap.limit);
      cents.add(cap.unit == CapUnit::kCents);
    }
    statements.push_back({kIntent,
                          Params()
                              .add(w.intent.lead_id)
                              .add(w.intent.buyer_id)
                              .add(w.intent.price)
                              .add(w.intent.ping_id)
                              .add(w.intent.at_ms)
                              .add(since.str())
                              .add(limit.str())
                              .add(cents.str())
                              .add(w.intent.shared),
                          /*prepared=*/true});
  }
  statements.push_back({"COMMIT", Params()});
  return run("record_post_intents", all_failed, [&](Connection& c) {
    // The COMMIT travels with the rest: once sent, the outcome is unknown if the connection
    // breaks, so the call is never retried.
    c.mark_not_retryable();
    const std::vector<Result> results = c.exec_pipeline(statements, Effect::kWrite);
    std::vector<StoreStatus> out;
    out.reserve(writes.size());
    for (std::size_t i = 0; i < writes.size(); ++i) {
      const Result& r = results[first_intent + i];
      if (r.int64(0, 0) > 0)
        out.push_back(StoreStatus::kOk);
      else if (r.is_null(0, 1))
        out.push_back(StoreStatus::kNotFound);
      else if (!r.boolean(0, 1))
        out.push_back(StoreStatus::kConflict);
      else if (r.boolean(0, 2))
        out.push_back(StoreStatus::kLimitReached);
      else
        out.push_back(StoreStatus::kConflict);
    }
    return out;
  });
}

std::optional<std::vector<PostIntent>> PgStore::get_post_intents(std::string_view lead_id) {
  return read_rows<PostIntent>("get_post_intents",
                               "SELECT " LF_POST_INTENT_COLUMNS
                               " FROM post_intents WHERE lead_id = $1 ORDER BY at, buyer_id",
                               Params().add(lead_id), read_post_intent<Row>);
}

std::optional<std::int64_t> PgStore::count_sales(std::string_view buyer_id, std::int64_t since_ms) {
  return run("count_sales", std::optional<std::int64_t>{},
             [&](Connection& c) -> std::optional<std::int64_t> {
               return c
                   .exec("SELECT COUNT(*) FROM sales WHERE buyer_id = $1 AND sold_at >= $2",
                         Params().add(buyer_id).add(since_ms), Effect::kRead)
                   .int64(0, 0);
             });
}

std::optional<Cents> PgStore::sales_cents(std::string_view buyer_id, std::int64_t since_ms) {
  return run("sales_cents", std::optional<Cents>{}, [&](Connection& c) -> std::optional<Cents> {
    return c
        .exec(
            "SELECT ((SELECT COALESCE(SUM(price_cents), 0) FROM sales"
            "  WHERE buyer_id = $1 AND sold_at >= $2)"
            " - (SELECT COALESCE(SUM(price_cents), 0) FROM returns"
            "    WHERE buyer_id = $1 AND sold_at >= $2))::BIGINT",
            Params().add(buyer_id).add(since_ms), Effect::kRead)
        .int64(0, 0);
  });
}

/// The lead's own search keys against its buyer's sales' copies, one statement: the lead by its
/// key, then a probe of (buyer_id, email_key, sold_at) and one of (buyer_id, phone_key, sold_at).
/// A key the lead lacks (NULL) matches nothing; no such lead, false.
std::optional<bool> PgStore::buyer_bought_person(std::string_view buyer_id,
                                                 std::string_view lead_id, std::int64_t since_ms) {
  return run("buyer_bought_person", std::optional<bool>{},
             [&](Connection& c) -> std::optional<bool> {
               return c
                   .exec(
                       "SELECT COALESCE((SELECT EXISTS (SELECT 1 FROM sales"
                       "  WHERE buyer_id = $1 AND email_key = l.email_key AND sold_at >= $3)"
                       " OR EXISTS (SELECT 1 FROM sales"
                       "  WHERE buyer_id = $1 AND phone_key = l.phone_key AND sold_at >= $3)"
                       " FROM leads l WHERE l.id = $2), false)",
                       Params().add(buyer_id).add(lead_id).add(since_ms), Effect::kRead)
                   .boolean(0, 0);
             });
}

}  // namespace leadflow::pg
