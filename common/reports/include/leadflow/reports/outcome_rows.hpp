#pragma once
// What a decided lead adds to the performance and unsold rollups, as plain values. Both stores
// write these deltas inside the transaction of the outcome (or settlement) they count; the rules
// are written here once. The performance rollup counts a lead by its status (under buyer "")
// and each buyer asked by its pings and posts with their response times; the unsold rollup
// counts why a lead no buyer took went unsold (one reason per lead, under buyer "") and why each
// buyer that could have had it did not (one reason per lead and buyer). Deltas are summed per
// key before they are written, so one statement never touches a row twice, and kept in the key's
// order, so concurrent transactions lock rows in one order.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "leadflow/domain/lead.hpp"
#include "leadflow/reports/rollup.hpp"

namespace leadflow::reports {

/// A performance row's key: the quarter hour the lead was received in, then the seller,
/// campaign, buyer ("" for the lead's own figures), vertical and source.
using PerformanceKey =
    std::tuple<std::int64_t, std::string, std::string, std::string, std::string, std::string>;
using PerformanceFigures = std::array<std::int64_t, kPerformanceFigures>;
using PerformanceDeltas = std::map<PerformanceKey, PerformanceFigures>;

/// An unsold row's key: the performance rollup's, then the reason.
using UnsoldKey = std::tuple<std::int64_t, std::string, std::string, std::string, std::string,
                             std::string, std::string>;
using UnsoldDeltas = std::map<UnsoldKey, std::int64_t>;

/// What one batch of outcomes adds to the rollups written with outcomes.
struct OutcomeDeltas {
  PerformanceDeltas performance;
  UnsoldDeltas unsold;
};

/// The lead's keys, as stored.
struct LeadKeys {
  std::int64_t received_at_ms = 0;
  std::string seller_id, campaign_id, vertical, source;
};

/// The row key of the lead `l` under `buyer_id` ("" for the lead's own figures).
PerformanceKey performance_key(const LeadKeys& l, const std::string& buyer_id);

/// The figures of row `k` in `d`, zeros if it is new.
PerformanceFigures& figures_of(PerformanceDeltas& d, const PerformanceKey& k);

/// What a decided lead adds: the lead by its status, and each buyer asked by its attempts. A
/// test lead (leadflow/domain/test_mode.hpp) adds nothing at all.
void add_outcome(PerformanceDeltas& d, const LeadKeys& l, const Distribution& dist);

/// What each buyer asked adds, by its attempts (skipped ones, never sent, add nothing; a
/// response time is an answer's, so timeouts and errors add none).
void add_buyers(PerformanceDeltas& d, const LeadKeys& l, const Distribution& dist);

/// A settlement moves a failed lead to sold or unsold.
void add_settled(PerformanceDeltas& d, const LeadKeys& l, bool sold);

/// A re-offer of an unsold lead (docs/reoffers.md): each buyer it asked adds by its attempts,
/// and a lead whose first sale it made moves from unsold to sold. The unsold rollup keeps what
/// the live auction found.
void add_reoffer(PerformanceDeltas& d, const LeadKeys& l, const std::vector<Attempt>& attempts,
                 bool first_sale);

/// Which of the unsold rollup's bands (rollup.hpp) a re-offer's outcome counts its lead in:
/// only a lead no buyer took live and no re-offer sold yet (`sales_before` 0) counts, in
/// kReofferedBand at its first re-offer (`round` 1) and in kSoldAgedBand at the re-offer that
/// makes its first sale; so each such lead counts at most once in each.
std::vector<int> second_chance_bands(int round, std::int64_t sales_before, bool sold);

/// The bands of the revenue rollup (rollup.hpp) a return is also summed in, besides its real
/// bucket: kAgedSalesBand when the sale it takes back was made by a re-offer (`sale_aged`: the
/// sale's row says so, for sales made from schema step 33 on), none otherwise. A sale made
/// before that step says nothing, so its return counts as a live one's, aged or not; a return
/// refused writes nothing, in no band.
std::vector<int> return_bands(bool sale_aged);

/// A second chance of a lead the live auction left unsold, in the unsold rollup's band `band`:
/// the lead counts there under the reasons its live auction found, its own and each buyer's
/// (`lead`: the lead as stored before the re-offer; attempts of earlier re-offers are left out).
void add_second_chance(UnsoldDeltas& d, const LeadKeys& l, const Distribution& lead, int band);

/// A recorded ineligibility, as the rollup keeps it: the auction's reasons are short and drawn
/// from the buyers' configuration ("filter:states", "cap:daily"); anything longer is cut.
std::string ineligibility_reason(std::string_view why);

/// Why one buyer asked did not take the lead, from its last attempt (its post, if posted).
std::string attempt_reason(const Attempt& a);

/// What a lead decided unsold adds: its own reason (the furthest its auction got) and each
/// buyer's. Other outcomes add nothing: a sold lead was sold, a duplicate never had an auction,
/// and a failed one is not decided until it is settled.
void add_unsold(UnsoldDeltas& d, const LeadKeys& l, const Distribution& dist);

/// A settlement decided a failed lead unsold: it counts under its own reason.
void add_settled_unsold(UnsoldDeltas& d, const LeadKeys& l);

/// What a lead decided before a rollup existed adds to it when the rollup is filled from the
/// stored leads at its migration: `buyers` the performance rollup's buyer figures (the leads'
/// own were carried over in SQL), `unsold` the unsold rollup's reasons. What the outcome would
/// have added then, from what the lead's row holds now: `settled_unsold` says a settlement
/// decided it unsold (the store knows it by the reason it wrote).
void add_backfill(OutcomeDeltas& d, const LeadKeys& l, const Distribution& dist,
                  bool settled_unsold, bool buyers, bool unsold);

}  // namespace leadflow::reports
