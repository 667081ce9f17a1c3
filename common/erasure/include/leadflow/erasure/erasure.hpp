#pragma once
// Erasure (docs/erasure.md): a person's data taken out of a lead, the money and the reports left
// exact. The rule of which fields are the person's, and what a tombstone holds in their place, is
// written here once; the store adapters write the tombstone they are given.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/base/clock.hpp"
#include "leadflow/domain/change_log.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/queue/queue.hpp"
#include "leadflow/store/erasure.hpp"
#include "leadflow/store/intake.hpp"

namespace leadflow {

/// The fields of a lead that say who the person is (visibility's "person" class), as the API
/// names them: every one is emptied by an erasure.
inline constexpr std::array<std::string_view, 15> kPersonalFields = {"first_name",
                                                                     "last_name",
                                                                     "email",
                                                                     "phone",
                                                                     "zip_code",
                                                                     "state",
                                                                     "landing_page",
                                                                     "ip_address",
                                                                     "user_agent",
                                                                     "trustedform_cert_url",
                                                                     "jornaya_leadid",
                                                                     "tcpa_consent",
                                                                     "tcpa_consent_text",
                                                                     "custom_fields",
                                                                     "zip4"};

/// The tombstone of `lead`: the same lead with every personal field empty (text "", no consent
/// either way, no custom field). What is not the person's stays: ids, seller, campaign, key,
/// surface, vertical, source, times, the test mark. Pure.
Lead tombstone_of(const Lead& lead);

/// Whether `lead`'s personal fields are those of a tombstone (nothing of the person is left).
bool is_tombstone(const Lead& lead);

/// Why a lead is erased: a person's request through the operator (POST /v1/leads/{id}/erase),
/// or the retention period running out (LEADFLOW_RETENTION_DAYS).
enum class ErasureCause { kRequest, kRetention };
/// "request", "retention".
std::string_view to_string(ErasureCause cause);

/// The change-log entry of an erasure: action "erased", object kind "lead", the lead's id, and
/// one field, "personal_data", from "present" to "erased" with the cause ("erased (request)").
/// Nothing of the person. `by` is the operator, or for retention the actor "retention" on
/// surface "retention".
ChangeEntry erasure_entry(std::string_view lead_id, std::int64_t at_ms, const ChangeActor& by,
                          ErasureCause cause);

/// The actor of the retention pass's entries.
ChangeActor retention_actor();

/// Erases the lead `lead_id`: reads it, writes its tombstone (tombstone_of) and its change-log
/// entry in one store transaction. A lead still pending is not erased (kPending: its auction may
/// still be sending it to buyers), nor one erased already. Counted in
/// leadflow_leads_erased_total{cause} when erased. Thread-safe.
EraseStatus erase_lead(IntakeStore& leads, ErasureStore& store, const Clock& clock,
                       std::string_view lead_id, const ChangeActor& by, ErasureCause cause);

/// A lead's queue payload (leadflow/domain/lead_codec.hpp) with its personal fields replaced by
/// the tombstone's, padded with spaces (JSON whitespace) to the payload's length, so that the
/// queue can write it over the record; nullopt for a payload that is not a lead.
std::optional<std::string> tombstone_payload(std::string_view payload);

/// The records the queue still holds of these leads (its leads, retry and dead-letter topics),
/// rewritten with their tombstones (QueueProducer::rewrite_payloads: the embedded queue's
/// segments). The records rewritten; nullopt where the queue cannot (Kafka: its topics'
/// retention bounds what remains, docs/erasure.md) or failed.
std::optional<std::int64_t> erase_queued(QueueProducer& queue, const Topics& topics,
                                         const std::vector<std::string>& lead_ids);

}  // namespace leadflow
