#pragma once
// Finding the lead a store refuses for good in a batch insert (leadflow/store/intake.hpp), the
// same for both adapters: they tell a refusal (a constraint no retry gets past) from an outage;
// this splits the batch.
#include <span>
#include <string>
#include <vector>

#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/lead_search.hpp"
#include "leadflow/store/intake.hpp"

namespace leadflow::store_rows {

/// `insert(leads, keys, refusal)` writes a batch in one transaction and answers one result per
/// lead, or none when nothing was written, then with `refusal` set when the store refused the
/// batch for good. Such a batch is written again a lead at a time: the leads the store accepts
/// are written, each lead it refuses alone is answered `refused`. An outage anywhere answers
/// none for the whole batch (some leads may be written by then: a retry finds them as
/// redeliveries). Example: a batch of 3 whose second lead breaks a CHECK: the batch fails
/// refused, then lead 1 is written, lead 2 is refused, lead 3 is written.
template <class InsertBatch>
std::vector<LeadInsertResult> insert_or_refuse(std::span<const Lead> leads,
                                               std::span<const SearchKeys> keys,
                                               InsertBatch&& insert) {
  std::string refusal;
  std::vector<LeadInsertResult> results = insert(leads, keys, refusal);
  if (!results.empty() || leads.empty() || refusal.empty()) return results;
  if (leads.size() == 1) {
    LeadInsertResult r;
    r.refused = true;
    r.refusal = std::move(refusal);
    return {std::move(r)};
  }
  for (std::size_t i = 0; i < leads.size(); ++i) {
    std::vector<LeadInsertResult> one = insert_or_refuse(
        leads.subspan(i, 1), i < keys.size() ? keys.subspan(i, 1) : keys.first(0), insert);
    if (one.size() != 1) return {};
    results.push_back(std::move(one.front()));
  }
  return results;
}

}  // namespace leadflow::store_rows
