#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/lead_search.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

struct LeadQuery {
  std::string seller_id;  // "" = any (operator)
  std::optional<DeliveryStatus> status;
  std::optional<bool> test;  // only test leads (true) or only real ones (false); nullopt = both
  std::string vertical, source, buyer_id;
  std::int64_t created_from_ms = 0;  // inclusive; 0 = open
  std::int64_t created_to_ms = 0;    // exclusive; 0 = open
  std::string before_id;             // cursor: only ids < this (newest first)
  int limit = 25;
  // A search (GET /v1/leads?q=): at most one of these, each "" = any. The lead of that id, or
  // the leads stored with this SearchKeys::email / phone (leadflow/domain/lead_search.hpp).
  std::string lead_id, email_key, phone_key;
};

/// What happened to one lead insert.
struct LeadInsertResult {
  bool inserted = false;  // false: a lead with this id already existed (or `refused`)
  DeliveryStatus existing_status = DeliveryStatus::kPending;
  /// The store refused this lead for good: a constraint or a value no retry will get past
  /// (SQLite's CONSTRAINT, TOOBIG, MISMATCH; PostgreSQL's classes 22, 23 and 54). Nothing of it
  /// was written; `refusal` says why (the driver's words, no field of the lead). Our own outages
  /// are never this: they leave the whole batch unanswered.
  bool refused = false;
  std::string refusal;
};

/// The decided outcome of one lead, written in one transaction with its attempts.
struct OutcomeRecord {
  std::string lead_id;
  Distribution distribution;
  /// An unsold lead its vertical lets be offered again: when its first re-offer is due
  /// (docs/reoffers.md), written to the schedule in the same transaction; 0: none.
  std::int64_t reoffer_at_ms = 0;
};

/// A claimed Idempotency-Key of one API key (SPEC §2): the first request's body hash and, once it
/// was answered, that answer, replayed for repeats within 24 hours.
struct IdempotencyRecord {
  std::string scope;         // the API key id
  std::string key;           // the Idempotency-Key header
  std::string request_hash;  // hex SHA-256 of the body
  std::string lead_id;       // the lead the first request made
  int status = 0;            // 0 while the first request is in flight
  std::string response;      // the first answer's body
  std::int64_t created_at_ms = 0;
};

/// The intake port: leads as received (pending), what was decided for them, and the
/// Idempotency-Keys of the requests that posted them; for the API's surfaces, the workers'
/// runtime and the outcome relay.
class IntakeStore : public virtual StorePort {
 public:
  // --- leads ----------------------------------------------------------------------------------
  /// Inserts leads as pending, in one transaction, `keys[i]` being the search keys of
  /// `leads[i]` (leadflow/domain/lead_search.hpp: as many as the leads, or none, and then the
  /// leads are found by id only); the store keeps them as given. A lead whose id exists is left
  /// untouched (a redelivery) and reported with its current status. A lead the store refuses
  /// for good is reported `refused` and the others are written all the same (the batch is
  /// then written again a lead at a time, to find it). An empty vector: the store failed (an
  /// outage), nothing was written, and the same batch may be asked again.
  virtual std::vector<LeadInsertResult> insert_leads(std::span<const Lead> leads,
                                                     std::span<const SearchKeys> keys) = 0;
  /// The same without search keys.
  std::vector<LeadInsertResult> insert_leads(std::span<const Lead> leads) {
    return insert_leads(leads, {});
  }
  /// The lead with its attempts and sales (kOk), none (kNotFound), or kUnavailable when the
  /// store could not read it whole.
  virtual Lookup<LeadRecord> get_lead(std::string_view id) = 0;
  /// Newest first; the records carry no attempts. nullopt when the store cannot say (never an
  /// empty page for an outage).
  virtual std::optional<std::vector<LeadRecord>> list_leads(const LeadQuery& q) = 0;

  /// Writes outcomes in one transaction. A lead already decided keeps its first outcome (the
  /// result for it is kConflict). A delivered outcome writes one sales row per sale (slots 0,
  /// 1, ...), all in the transaction that decides the lead, so a lead's sales are never added
  /// to by a second decider; a buyer buys a lead once and a slot holds one sale, by constraint.
  virtual std::vector<StoreStatus> record_outcomes(std::span<const OutcomeRecord> outcomes) = 0;

  // --- idempotency --------------------------------------------------------------------------
  /// Claims (scope, key) for `record` (status 0). kOk: claimed. kConflict: already held by a
  /// record younger than `expire_before_ms`, copied into `existing` (an older one is replaced).
  virtual StoreStatus claim_idempotency_key(const IdempotencyRecord& record,
                                            std::int64_t expire_before_ms,
                                            IdempotencyRecord& existing) = 0;
  /// Stores the answer of a claimed key.
  virtual StoreStatus complete_idempotency_key(std::string_view scope, std::string_view key,
                                               int status, std::string_view response) = 0;
  /// Gives a claim up (the request was not accepted, so a retry must be free to go).
  virtual StoreStatus release_idempotency_key(std::string_view scope, std::string_view key) = 0;
};

}  // namespace leadflow
