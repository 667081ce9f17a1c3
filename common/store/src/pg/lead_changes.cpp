// The live feed's read (LeadChangesStore). A lead's changed_xid is the transaction that last
// recorded or decided it (pg_current_xact_id(), the column's default and set by the decision);
// a position is a snapshot (pg_snapshot's text, "xmin:xmax:xip,..."), the exact set of
// transactions committed at it. "Changed after a position" is then "changed_xid not visible in
// that snapshot": a transaction that commits late, after others that started after it, is still
// not visible in the snapshots taken before it committed, so it is read by the next read, and
// never twice. Every transaction not visible in a snapshot has an xid at or above its xmin, so
// the read is a range of leads_by_change from there.
#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "pg/adapter.hpp"

namespace leadflow::pg {
namespace {

/// A pg_snapshot as numbers: committed at it is every xid below xmax that is not in xip.
struct Snapshot {
  std::uint64_t xmin = 0, xmax = 0;
  std::vector<std::uint64_t> xip;  // ascending
};

bool parse_xid(std::string_view s, std::uint64_t& out) {
  const char* last = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), last, out);
  return !s.empty() && ec == std::errc() && ptr == last;
}

/// A position as PostgreSQL writes one; nullopt for anything else (a Last-Event-ID that is not
/// ours), so that no malformed snapshot reaches the server.
std::optional<Snapshot> parse_snapshot(std::string_view text) {
  if (text.size() > 16'384) return std::nullopt;
  const auto a = text.find(':');
  const auto b = a == std::string_view::npos ? a : text.find(':', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  Snapshot s;
  if (!parse_xid(text.substr(0, a), s.xmin) || !parse_xid(text.substr(a + 1, b - a - 1), s.xmax) ||
      s.xmin > s.xmax || s.xmin == 0)
    return std::nullopt;
  std::string_view rest = text.substr(b + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    std::uint64_t x = 0;
    if (!parse_xid(rest.substr(0, comma), x) || x < s.xmin || x >= s.xmax ||
        (!s.xip.empty() && x <= s.xip.back()))
      return std::nullopt;
    s.xip.push_back(x);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (comma != std::string_view::npos && rest.empty()) return std::nullopt;
  }
  return s;
}

std::string to_text(const Snapshot& s) {
  std::string out = std::to_string(s.xmin) + ":" + std::to_string(s.xmax) + ":";
  for (std::size_t i = 0; i < s.xip.size(); ++i)
    out.append(i ? "," : "").append(std::to_string(s.xip[i]));
  return out;
}

/// What `from` holds, and what `upto` holds below `cut`: the position after a read that stopped
/// at the transaction `cut` (`upto` taken after `from`, `cut` at most upto.xmax). Below `cut` an
/// xid is committed unless `upto` has it in progress; at or above, unless `from` has.
Snapshot merged(const Snapshot& from, const Snapshot& upto, std::uint64_t cut) {
  Snapshot s;
  s.xmax = std::max(from.xmax, cut);
  for (std::uint64_t x : upto.xip)
    if (x < cut) s.xip.push_back(x);
  for (std::uint64_t x : from.xip)
    if (x >= cut) s.xip.push_back(x);
  std::sort(s.xip.begin(), s.xip.end());
  s.xip.erase(std::unique(s.xip.begin(), s.xip.end()), s.xip.end());
  s.xmin = s.xip.empty() ? s.xmax : s.xip.front();
  return s;
}

// The leads changed after $1 and at or before $2, by their last change.
#define LF_CHANGED_SINCE                                               \
  " FROM leads WHERE changed_xid >= pg_snapshot_xmin($1::pg_snapshot)" \
  " AND changed_xid < pg_snapshot_xmax($2::pg_snapshot)"               \
  " AND NOT pg_visible_in_snapshot(changed_xid, $1::pg_snapshot)"      \
  " AND pg_visible_in_snapshot(changed_xid, $2::pg_snapshot)"

}  // namespace

std::optional<std::string> PgStore::lead_changes_position() {
  using Out = std::optional<std::string>;
  return run("lead_changes_position", Out{}, [&](Connection& c) -> Out {
    return c.exec("SELECT pg_current_snapshot()::TEXT", Effect::kRead).text(0, 0);
  });
}

/// One REPEATABLE READ transaction: the snapshot it reads in is "now", the leads, and the sales
/// of those delivered (a sale is written in the transaction that decides its lead).
Lookup<LeadChanges> PgStore::list_lead_changes(std::string_view from, std::string_view to,
                                               int limit) {
  using Out = Lookup<LeadChanges>;
  const auto after = parse_snapshot(from);
  const auto upto_given = to.empty() ? std::optional<Snapshot>(Snapshot{}) : parse_snapshot(to);
  if (!after || !upto_given) return {StoreStatus::kNotFound, std::nullopt};
  limit = std::max(1, limit);
  return run("list_lead_changes", Out{}, [&](Connection& c) -> Out {
    Transaction tx(c);
    c.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", Effect::kRead);
    const std::string now =
        to.empty() ? c.exec("SELECT pg_current_snapshot()::TEXT", Effect::kRead).text(0, 0)
                   : std::string(to);
    const auto upto = to.empty() ? parse_snapshot(now) : upto_given;
    if (!upto) return Out{};
    const Result first =
        c.exec("SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
               ", changed_xid::TEXT" LF_CHANGED_SINCE " ORDER BY changed_xid LIMIT $3",
               Params().add(from).add(now).add(limit + 1), Effect::kRead);
    constexpr int kXid = 33;  // after the 25 lead and the 8 distribution columns
    LeadChanges out;
    auto xid_of = [&](const Result& res, int i) {
      std::uint64_t x = 0;
      parse_xid(res.text(i, kXid), x);
      return x;
    };
    std::optional<Result> whole;  // one transaction's leads, past the limit on its own
    const Result* rows = &first;
    int take = first.rows();
    if (first.rows() > limit) {
      // Stop at a transaction's edge: the one of the first lead left out.
      std::uint64_t cut = xid_of(first, limit);
      if (xid_of(first, 0) == cut) {
        whole.emplace(c.exec("SELECT " LF_LEAD_COLUMNS ", " LF_DISTRIBUTION_COLUMNS
                             ", changed_xid::TEXT" LF_CHANGED_SINCE " AND changed_xid = $3::xid8",
                             Params().add(from).add(now).add(std::to_string(cut)), Effect::kRead));
        rows = &*whole;
        take = whole->rows();
        ++cut;
      } else {
        take = limit;
        while (xid_of(first, take - 1) == cut) --take;
      }
      out.more = true;
      out.position = to_text(merged(*after, *upto, cut));
    } else {
      out.position = now;
    }
    ArrayText sold;
    bool any_sold = false;
    out.leads.reserve(static_cast<std::size_t>(take));
    for (int i = 0; i < take; ++i) {
      out.leads.push_back(read_lead(Row{*rows, i}, false));
      const DeliveryStatus s = out.leads.back().distribution.status;
      if (s == DeliveryStatus::kDelivered || s == DeliveryStatus::kReturned) {
        sold.add(out.leads.back().lead.id);
        any_sold = true;
      }
    }
    if (any_sold) {
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
      for (LeadRecord& rec : out.leads) {
        auto it = by_lead.find(rec.lead.id);
        if (it != by_lead.end()) attach_sales(rec, it->second);
      }
    }
    tx.commit();
    return Out{StoreStatus::kOk, std::move(out)};
  });
}

}  // namespace leadflow::pg
