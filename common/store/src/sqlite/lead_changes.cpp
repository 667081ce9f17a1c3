// The live feed's read (LeadChangesStore). A position is the largest changed_seq committed at it,
// in decimal: a lead's changed_seq is given under the one write lock when it is recorded and
// when it is decided (LF_NEXT_CHANGE_SEQ), so the numbers committed are always 1..n with no gap
// left to fill later, and "after the position" is exactly what a reader has not seen.
#include <algorithm>
#include <charconv>

#include "sqlite/adapter.hpp"

namespace leadflow::sqlite {
namespace {

std::optional<std::int64_t> parse_position(std::string_view text) {
  std::int64_t v = 0;
  const char* last = text.data() + text.size();
  if (text.empty() || text.size() > 18) return std::nullopt;
  const auto [ptr, ec] = std::from_chars(text.data(), last, v);
  if (ec != std::errc() || ptr != last || v < 0) return std::nullopt;
  return v;
}

// changed_seq, after the 25 LF_LEAD_COLUMNS and the 8 LF_DISTRIBUTION_COLUMNS.
constexpr int kSeqColumn = 33;

constexpr const char* kLatest =
    "SELECT coalesce(max(changed_seq), 0) FROM leads INDEXED BY leads_by_change";

}  // namespace

std::optional<std::string> SqliteStore::lead_changes_position() {
  using Out = std::optional<std::string>;
  return read_snapshot("lead_changes_position", Out{}, [&](Connection& c) -> Out {
    Query q(c, kLatest);
    const int rc = q.step();
    if (rc != SQLITE_ROW) return (report(c, rc, "lead_changes_position"), Out{});
    return std::to_string(q.int64(0));
  });
}

Lookup<LeadChanges> SqliteStore::list_lead_changes(std::string_view from, std::string_view to,
                                                   int limit) {
  using Out = Lookup<LeadChanges>;
  const auto after = parse_position(from);
  const auto upto = to.empty() ? std::optional<std::int64_t>(0) : parse_position(to);
  if (!after || !upto) return {StoreStatus::kNotFound, std::nullopt};
  limit = std::max(1, limit);
  return read_snapshot("list_lead_changes", Out{}, [&](Connection& c) -> Out {
    std::int64_t until = *upto;
    int rc;
    if (to.empty()) {
      Query q(c, kLatest);
      if ((rc = q.step()) != SQLITE_ROW) return (report(c, rc, "list_lead_changes"), Out{});
      until = q.int64(0);
    }
    LeadChanges out;
    std::int64_t last = *after;
    {
      Query q(c, "SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
                 ", changed_seq FROM leads INDEXED BY leads_by_change"
                 " WHERE changed_seq > ?1 AND changed_seq <= ?2 ORDER BY changed_seq LIMIT ?3");
      q.bind(*after).bind(until).bind(limit + 1);
      while ((rc = q.step()) == SQLITE_ROW) {
        if (out.leads.size() == static_cast<std::size_t>(limit)) {
          out.more = true;
          continue;
        }
        out.leads.push_back(read_lead(q, false));
        last = q.int64(kSeqColumn);
      }
      if (rc != SQLITE_DONE) return (report(c, rc, "list_lead_changes"), Out{});
    }
    out.position = std::to_string(out.more ? last : std::max(until, *after));
    for (LeadRecord& r : out.leads) {
      if (r.distribution.status != DeliveryStatus::kDelivered &&
          r.distribution.status != DeliveryStatus::kReturned)
        continue;
      auto sales = rows_on<Sale>(
          c, "list_lead_changes",
          "SELECT " LF_SALE_COLUMNS " FROM sales WHERE lead_id = ?1 ORDER BY slot",
          [&](Query& sq) { sq.bind(r.lead.id); }, read_sale<Query>);
      if (!sales) return Out{};
      attach_sales(r, std::move(*sales));
    }
    return Out{StoreStatus::kOk, std::move(out)};
  });
}

}  // namespace leadflow::sqlite
