// The PostgreSQL adapter of the erasure port (leadflow/store/erasure.hpp): a lead's tombstone
// written with its change-log entry, and the leads a retention period has run out on.
#include "change_rows.hpp"
#include "pg/adapter.hpp"

namespace leadflow::pg {

/// One transaction, the lead row locked first (FOR UPDATE), so an outcome or another erasure of
/// the same lead waits for it.
EraseStatus PgStore::erase_lead(const Lead& t, std::int64_t at_ms, const ChangeEntry& e) {
  return run("erase_lead", EraseStatus::kUnavailable, [&](Connection& c) -> EraseStatus {
    Transaction tx(c);
    const Result self = c.exec("SELECT status, erased_at FROM leads WHERE id = $1 FOR UPDATE",
                               Params().add(t.id), Effect::kRead);
    if (self.rows() == 0) return EraseStatus::kNoSuchLead;
    if (self.int64(0, 1) != 0) return EraseStatus::kAlreadyErased;
    if (self.text(0, 0) == "pending") return EraseStatus::kPending;
    Params lead;
    lead.add(t.id)
        .add(t.first_name)
        .add(t.last_name)
        .add(t.email)
        .add(t.phone)
        .add(t.zip_code)
        .add(t.zip4)
        .add(t.state)
        .add(t.landing_page)
        .add(t.ip_address)
        .add(t.user_agent)
        .add(t.trustedform_cert_url)
        .add(t.jornaya_leadid);
    if (t.tcpa_consent)
      lead.add(*t.tcpa_consent);
    else
      lead.add_null();
    lead.add(t.tcpa_consent_text).add(dump(custom_fields_to_json(t.custom_fields))).add(at_ms);
    c.exec(
        "UPDATE leads SET first_name = $2, last_name = $3, email = $4, phone = $5,"
        " zip_code = $6, zip4 = $7, state = $8, landing_page = $9, ip_address = $10,"
        " user_agent = $11, trustedform_cert_url = $12, jornaya_leadid = $13,"
        " tcpa_consent = $14::BOOLEAN, tcpa_consent_text = $15, custom_fields = $16,"
        " erased_at = $17::BIGINT WHERE id = $1",
        lead, Effect::kWrite);
    c.exec("UPDATE sales SET email = $2, phone = $3 WHERE lead_id = $1",
           Params().add(t.id).add(t.email).add(t.phone), Effect::kWrite);
    c.exec("INSERT INTO change_log (" LF_CHANGE_COLUMNS
           ", search) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
           Params()
               .add(e.id)
               .add(e.at_ms)
               .add(e.actor.id)
               .add(e.actor.name)
               .add(e.actor.surface)
               .add(e.action)
               .add(e.object_kind)
               .add(e.object_id)
               .add(e.object_name)
               .add(dump(changes_to_json(e.changes)))
               .add(change_search_text(e)),
           Effect::kWrite);
    tx.commit();
    return EraseStatus::kErased;
  });
}

std::optional<std::vector<ErasableLead>> PgStore::erasable_leads(std::int64_t from_ms,
                                                                 std::int64_t before_ms,
                                                                 int limit) {
  return read_rows<ErasableLead>(
      "erasable_leads",
      "SELECT id, received_at FROM leads WHERE received_at >= $1::BIGINT"
      " AND received_at < $2::BIGINT AND erased_at = 0 AND status <> 'pending'"
      " ORDER BY received_at, id LIMIT $3::BIGINT",
      Params().add(from_ms).add(before_ms).add(std::clamp(limit, 1, 1000)), [](const Row& q) {
        return ErasableLead{q.text(0), q.int64(1)};
      });
}

}  // namespace leadflow::pg
