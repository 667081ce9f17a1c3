// The live feed's read (LeadChangesStore): leads received lately, and the watched ones decided.
#include <algorithm>
#include <unordered_map>

#include "pg/adapter.hpp"

namespace leadflow::pg {

/// Two statements on one leased connection: the leads (received lately, on leads_by_received,
/// and the watched ones decided, by primary key) and the sales of those delivered. A sale is
/// written in the transaction that decides its lead, so a lead read delivered has all its sales.
std::optional<std::vector<LeadRecord>> PgStore::list_lead_changes(
    std::int64_t received_since_ms, std::span<const std::string> watched, int limit) {
  using Page = std::optional<std::vector<LeadRecord>>;
  return run("list_lead_changes", Page{}, [&](Connection& c) -> Page {
    ArrayText ids;
    for (const std::string& id : watched) ids.add(id);
    const Result r = c.exec("(SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
                            " FROM leads WHERE received_at >= $1 ORDER BY received_at, id LIMIT $2)"
                            " UNION ALL (SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
                            " FROM leads WHERE id = ANY ($3::TEXT[]) AND status <> 'pending')",
                            Params().add(received_since_ms).add(std::max(1, limit)).add(ids.str()),
                            Effect::kRead);
    std::vector<LeadRecord> out;
    out.reserve(static_cast<std::size_t>(r.rows()));
    ArrayText sold;
    bool any_sold = false;
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(read_lead(Row{r, i}, false));
      const DeliveryStatus s = out.back().distribution.status;
      if (s == DeliveryStatus::kDelivered || s == DeliveryStatus::kReturned) {
        sold.add(out.back().lead.id);
        any_sold = true;
      }
    }
    if (!any_sold) return out;
    // The lead's id last, so that read_sale reads the sale's own columns from the first.
    const Result sales = c.exec("SELECT " LF_SALE_COLUMNS
                                ", lead_id FROM sales WHERE lead_id ="
                                " ANY ($1::TEXT[]) ORDER BY lead_id, slot",
                                Params().add(sold.str()), Effect::kRead);
    std::unordered_map<std::string, std::vector<Sale>> by_lead;
    for (int i = 0; i < sales.rows(); ++i) {
      const Row row{sales, i};
      by_lead[row.text(4)].push_back(read_sale(row));
    }
    for (LeadRecord& rec : out) {
      auto it = by_lead.find(rec.lead.id);
      if (it != by_lead.end()) attach_sales(rec, it->second);
    }
    return out;
  });
}

}  // namespace leadflow::pg
