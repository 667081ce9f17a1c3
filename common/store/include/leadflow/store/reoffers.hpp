#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/domain/lead.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// One re-offer a worker holds (docs/reoffers.md): the lead and which of its re-offers it is
/// (1: the first after the live auction), due at `due_ms`.
struct ReofferClaim {
  std::string lead_id;
  int round = 1;
  std::int64_t due_ms = 0;
};

/// What one re-offer came to, written in one transaction: its pings and posts appended to the
/// lead's history, its aged sales (each with its part of the seller's payout, decided by the
/// money rules), and the lead's next re-offer, if any.
struct ReofferOutcome {
  std::string lead_id;
  int round = 1;
  std::int64_t at_ms = 0;
  std::vector<Attempt> attempts;
  std::vector<Sale> sales;
  std::string reason;           // the lead's reason once sold ("sold aged, re-offer 1")
  std::int64_t next_at_ms = 0;  // 0: not offered again
};

/// The re-offer port: the durable schedule of second chances. A row is written with the unsold
/// outcome that makes it (IntakeStore::record_outcomes, OutcomeRecord::reoffer_at_ms), leased by
/// one worker at a time, and settled by the transaction recording the re-offer's outcome, so a
/// re-offer survives a crash and runs once. For the workers' ReofferRunner.
class ReofferStore : public virtual StorePort {
 public:
  /// Leases up to `limit` re-offers due at `now_ms` whose lease is free (never leased, or its
  /// lease ended before `now_ms`), oldest due first, until `lease_until_ms`. Workers claiming at
  /// once get different rows. nullopt when the store cannot say.
  virtual std::optional<std::vector<ReofferClaim>> claim_reoffers(std::int64_t now_ms, int limit,
                                                                  std::int64_t lease_until_ms) = 0;
  /// Records a re-offer's outcome, only if its row is still at that round (kConflict: another
  /// worker recorded it after this one's lease ended; nothing is written). The lead's open post
  /// intents are cleared (their posts were answered); a sale makes the lead delivered, its
  /// sales rows take the slots after the lead's sales so far and enter the ledger as any sale.
  virtual StoreStatus record_reoffer(const ReofferOutcome& outcome) = 0;
  /// The re-offers scheduled (`due` false) or due at `now_ms` (`due` true): the backlog gauge.
  virtual std::optional<std::int64_t> count_reoffers(std::int64_t now_ms, bool due) = 0;
  /// The lead's next re-offer, if one is scheduled (kNotFound: none).
  virtual Lookup<ReofferClaim> scheduled_reoffer(std::string_view lead_id) = 0;
};

}  // namespace leadflow
