// The SQLite adapter of the erasure port (leadflow/store/erasure.hpp): a lead's tombstone written
// with its change-log entry, and the leads a retention period has run out on.
#include "change_rows.hpp"
#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

EraseStatus SqliteStore::erase_lead(const Lead& t, std::int64_t at_ms, const ChangeEntry& e) {
  return guarded("erase_lead", EraseStatus::kUnavailable, [&] {
    const std::string custom = dump(custom_fields_to_json(t.custom_fields));
    const std::string changes = dump(changes_to_json(e.changes));
    const std::string search = change_search_text(e);
    std::lock_guard lock(write_mu_);
    Connection& c = *writer_;
    auto failed = [&](int rc) { return (report(c, rc, "erase_lead"), EraseStatus::kUnavailable); };
    Transaction tx(c);
    if (int rc = tx.begin()) return failed(rc);
    {
      Query q(c, "SELECT status, erased_at FROM leads WHERE id = ?1");
      const int rc = q.bind(t.id).step();
      if (rc == SQLITE_DONE) return EraseStatus::kNoSuchLead;
      if (rc != SQLITE_ROW) return failed(rc);
      if (q.int64(1) != 0) return EraseStatus::kAlreadyErased;
      if (q.text(0) == "pending") return EraseStatus::kPending;
    }
    {
      Query q(c,
              "UPDATE leads SET first_name = ?2, last_name = ?3, email = ?4, phone = ?5,"
              " zip_code = ?6, zip4 = ?7, state = ?8, landing_page = ?9, ip_address = ?10,"
              " user_agent = ?11, trustedform_cert_url = ?12, jornaya_leadid = ?13,"
              " tcpa_consent = ?14, tcpa_consent_text = ?15, custom_fields = ?16, erased_at = ?17"
              " WHERE id = ?1");
      q.bind(t.id)
          .bind(t.first_name)
          .bind(t.last_name)
          .bind(t.email)
          .bind(t.phone)
          .bind(t.zip_code)
          .bind(t.zip4)
          .bind(t.state)
          .bind(t.landing_page)
          .bind(t.ip_address)
          .bind(t.user_agent)
          .bind(t.trustedform_cert_url)
          .bind(t.jornaya_leadid);
      if (t.tcpa_consent)
        q.bind(*t.tcpa_consent);
      else
        q.bind_null();
      q.bind(t.tcpa_consent_text).bind(custom).bind(at_ms);
      if (int rc = q.run()) return failed(rc);
    }
    if (int rc = Query(c, "UPDATE sales SET email = ?2, phone = ?3 WHERE lead_id = ?1")
                     .bind(t.id)
                     .bind(t.email)
                     .bind(t.phone)
                     .run())
      return failed(rc);
    {
      Query q(c, "INSERT INTO change_log (" LF_CHANGE_COLUMNS
                 ", search) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
      q.bind(e.id)
          .bind(e.at_ms)
          .bind(e.actor.id)
          .bind(e.actor.name)
          .bind(e.actor.surface)
          .bind(e.action)
          .bind(e.object_kind)
          .bind(e.object_id)
          .bind(e.object_name)
          .bind(changes)
          .bind(search);
      if (int rc = q.run()) return failed(rc);
    }
    if (int rc = tx.commit()) return failed(rc);
    return EraseStatus::kErased;
  });
}

std::optional<std::vector<ErasableLead>> SqliteStore::erasable_leads(std::int64_t from_ms,
                                                                     std::int64_t before_ms,
                                                                     int limit) {
  return read_rows<ErasableLead>(
      "erasable_leads",
      "SELECT id, received_at FROM leads INDEXED BY leads_by_received"
      " WHERE received_at >= ?1 AND received_at < ?2 AND erased_at = 0 AND status <> 'pending'"
      " ORDER BY received_at, id LIMIT ?3",
      [&](Query& s) { s.bind(from_ms).bind(before_ms).bind(clamp_limit(limit)); },
      [](const Query& q) {
        return ErasableLead{q.text(0), q.int64(1)};
      });
}

}  // namespace leadflow::sqlite
