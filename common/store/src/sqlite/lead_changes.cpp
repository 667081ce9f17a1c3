// The live feed's read (LeadChangesStore): leads received lately, and the watched ones decided.
#include <algorithm>

#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {

std::optional<std::vector<LeadRecord>> SqliteStore::list_lead_changes(
    std::int64_t received_since_ms, std::span<const std::string> watched, int limit) {
  using Page = std::optional<std::vector<LeadRecord>>;
  return read_snapshot("list_lead_changes", Page{}, [&](Connection& c) -> Page {
    std::vector<LeadRecord> out;
    int rc;
    {
      Query q(c, "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
                 " FROM leads INDEXED BY leads_by_received WHERE received_at >= ?1"
                 " ORDER BY received_at, id LIMIT ?2");
      q.bind(received_since_ms).bind(std::max(1, limit));
      while ((rc = q.step()) == SQLITE_ROW) out.push_back(read_lead(q, false));
      if (rc != SQLITE_DONE) return (report(c, rc, "list_lead_changes"), Page{});
    }
    // The watched ones by id (the primary key), one probe each: a few hundred in flight.
    for (const std::string& id : watched) {
      Query q(c, "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
                 " FROM leads WHERE id = ?1 AND status <> 'pending'");
      q.bind(id);
      rc = q.step();
      if (rc == SQLITE_ROW)
        out.push_back(read_lead(q, false));
      else if (rc != SQLITE_DONE)
        return (report(c, rc, "list_lead_changes"), Page{});
    }
    for (LeadRecord& r : out) {
      if (r.distribution.status != DeliveryStatus::kDelivered &&
          r.distribution.status != DeliveryStatus::kReturned)
        continue;
      auto sales = rows_on<Sale>(
          c, "list_lead_changes",
          "SELECT " LF_SALE_COLUMNS " FROM sales WHERE lead_id = ?1 ORDER BY slot",
          [&](Query& sq) { sq.bind(r.lead.id); }, read_sale<Query>);
      if (!sales) return Page{};
      attach_sales(r, std::move(*sales));
    }
    return out;
  });
}

}  // namespace leadflow::sqlite
