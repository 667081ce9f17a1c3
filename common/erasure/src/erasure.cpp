// Erasure's rule (which fields are the person's, what the tombstone holds) and the erasure of one
// lead with its change-log entry.
#include "leadflow/erasure/erasure.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include "leadflow/base/ids.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"
#include "leadflow/domain/lead_codec.hpp"

namespace leadflow {
namespace {

prometheus::Counter& erased_counter(ErasureCause cause) {
  static prometheus::Family<prometheus::Counter>& family =
      prometheus::BuildCounter()
          .Name("leadflow_leads_erased_total")
          .Help("Leads whose personal data was erased, by cause (request, retention)")
          .Register(*metrics_registry());
  static prometheus::Counter& request = family.Add({{"cause", "request"}});
  static prometheus::Counter& retention = family.Add({{"cause", "retention"}});
  return cause == ErasureCause::kRequest ? request : retention;
}

}  // namespace

Lead tombstone_of(const Lead& lead) {
  Lead t = lead;
  for (std::string* field : {&t.first_name, &t.last_name, &t.email, &t.phone, &t.zip_code, &t.zip4,
                             &t.state, &t.landing_page, &t.ip_address, &t.user_agent,
                             &t.trustedform_cert_url, &t.jornaya_leadid, &t.tcpa_consent_text})
    field->clear();
  t.tcpa_consent.reset();
  t.custom_fields.clear();
  return t;
}

bool is_tombstone(const Lead& lead) {
  const Lead t = tombstone_of(lead);
  return lead.first_name == t.first_name && lead.last_name == t.last_name &&
         lead.email == t.email && lead.phone == t.phone && lead.zip_code == t.zip_code &&
         lead.zip4 == t.zip4 && lead.state == t.state && lead.landing_page == t.landing_page &&
         lead.ip_address == t.ip_address && lead.user_agent == t.user_agent &&
         lead.trustedform_cert_url == t.trustedform_cert_url &&
         lead.jornaya_leadid == t.jornaya_leadid && lead.tcpa_consent == t.tcpa_consent &&
         lead.tcpa_consent_text == t.tcpa_consent_text && lead.custom_fields.empty();
}

std::string_view to_string(ErasureCause cause) {
  return cause == ErasureCause::kRequest ? "request" : "retention";
}

ChangeEntry erasure_entry(std::string_view lead_id, std::int64_t at_ms, const ChangeActor& by,
                          ErasureCause cause) {
  ChangeEntry e;
  e.id = new_id(kChangePrefix, at_ms);
  e.at_ms = at_ms;
  e.actor = by;
  e.action = "erased";
  e.object_kind = "lead";
  e.object_id = lead_id;
  e.changes.push_back(
      {"personal_data", "present", "erased (" + std::string(to_string(cause)) + ")"});
  return e;
}

ChangeActor retention_actor() { return {"", "retention", "retention"}; }

EraseStatus erase_lead(IntakeStore& leads, ErasureStore& store, const Clock& clock,
                       std::string_view lead_id, const ChangeActor& by, ErasureCause cause) {
  const Lookup<LeadRecord> found = leads.get_lead(lead_id);
  if (found.status == StoreStatus::kNotFound) return EraseStatus::kNoSuchLead;
  if (found.status != StoreStatus::kOk || !found.value) return EraseStatus::kUnavailable;
  if (found.value->erased_at_ms != 0) return EraseStatus::kAlreadyErased;
  const std::int64_t now_ms = clock.now_ms();
  const EraseStatus s = store.erase_lead(tombstone_of(found.value->lead), now_ms,
                                         erasure_entry(lead_id, now_ms, by, cause));
  if (s == EraseStatus::kErased) {
    erased_counter(cause).Increment();
    // A person's request is rare and worth a line; retention's are counted, and logged per pass.
    log(cause == ErasureCause::kRequest ? LogLevel::kInfo : LogLevel::kDebug, "lead_erased",
        {{"lead_id", std::string(lead_id)}, {"cause", std::string(to_string(cause))}});
  }
  return s;
}

std::optional<std::string> tombstone_payload(std::string_view payload) {
  const std::optional<Lead> lead = decode_lead(payload);
  if (!lead) return std::nullopt;
  std::string out = encode_lead(tombstone_of(*lead));
  if (out.size() > payload.size()) return std::nullopt;  // cannot be: every field only shrinks
  out.append(payload.size() - out.size(), ' ');
  return out;
}

std::optional<std::int64_t> erase_queued(QueueProducer& queue, const Topics& topics,
                                         const std::vector<std::string>& lead_ids) {
  const auto rewritten = queue.rewrite_payloads({topics.leads, topics.retry, topics.dead}, lead_ids,
                                                tombstone_payload);
  if (rewritten && *rewritten > 0)
    log(LogLevel::kDebug, "queue_records_erased",
        {{"records", *rewritten}, {"leads", lead_ids.size()}});
  return rewritten;
}

}  // namespace leadflow
