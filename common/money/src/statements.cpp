#include "leadflow/money/statements.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace leadflow::money {
namespace {

// Days since 1970-01-01 of a civil date (proleptic Gregorian; H. Hinnant's days_from_civil).
std::int64_t days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy =
      (153 * static_cast<unsigned>(m + (m > 2 ? -3 : 9)) + 2) / 5 + static_cast<unsigned>(d) - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// The Monday of ISO week 1 of `year`: the week holding 4 January.
std::int64_t iso_week_one(int year) {
  const std::int64_t jan4 = days_from_civil(year, 1, 4);
  const std::int64_t weekday = (jan4 + 3) % 7;  // 0 = Monday (1970-01-01 was a Thursday)
  return jan4 - weekday;
}

int iso_weeks_in(int year) {
  return static_cast<int>((iso_week_one(year + 1) - iso_week_one(year)) / 7);
}

// The local midnight of the civil date `days` in `tz`, Unix ms; where a jump skips midnight,
// the jump (as the reports' day bounds).
std::int64_t local_midnight_ms(const TimeZone& tz, std::int64_t days) {
  const std::int64_t noon_utc = days * 86'400 + 43'200;
  return tz.start_of_day(noon_utc - tz.offset_at(noon_utc)) * 1000;
}

std::int64_t first_day(const Period& p) {
  return p.calendar == Calendar::kMonth ? days_from_civil(p.year, p.number, 1)
                                        : iso_week_one(p.year) + 7 * (p.number - 1);
}

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

bool is_account_of(Party party, std::string_view account_id, const LedgerEntry& e) {
  return !account_id.empty() && (party == Party::kBuyer ? e.buyer_id : e.seller_id) == account_id;
}

// Where `p` begins for the account: its first local midnight in the zone frozen by whichever of
// the period before it and itself was closed first with the account frozen (the smaller ledger
// id; on a tie the earlier close, then the period before), else in `tz`.
std::int64_t start_for(Party party, std::string_view account_id, const Period& p,
                       const TimeZone& tz, const Closes& closes) {
  const std::pair<Party, std::string> key{party, std::string(account_id)};
  const Close* first = nullptr;
  const std::string* zone = nullptr;
  for (const Period& q : {p.previous(), p}) {
    const auto c = closes.find(q.label());
    if (c == closes.end()) continue;
    const auto z = c->second.zones.find(key);
    if (z == c->second.zones.end()) continue;
    const Close& close = c->second;
    if (first && (first->through_entry_id < close.through_entry_id ||
                  (first->through_entry_id == close.through_entry_id &&
                   first->closed_at_ms <= close.closed_at_ms)))
      continue;
    first = &close;
    zone = &z->second;
  }
  if (!zone) return local_midnight_ms(tz, first_day(p));
  return local_midnight_ms(*account_zone(*zone), first_day(p));
}

}  // namespace

std::string Period::label() const {
  char buf[16];
  if (calendar == Calendar::kMonth)
    std::snprintf(buf, sizeof buf, "%04d-%02d", year, number);
  else
    std::snprintf(buf, sizeof buf, "%04d-W%02d", year, number);
  return buf;
}

Period Period::next() const {
  if (calendar == Calendar::kMonth)
    return number == 12 ? Period{calendar, year + 1, 1} : Period{calendar, year, number + 1};
  return number == iso_weeks_in(year) ? Period{calendar, year + 1, 1}
                                      : Period{calendar, year, number + 1};
}

Period Period::previous() const {
  if (calendar == Calendar::kMonth)
    return number == 1 ? Period{calendar, year - 1, 12} : Period{calendar, year, number - 1};
  return number == 1 ? Period{calendar, year - 1, iso_weeks_in(year - 1)}
                     : Period{calendar, year, number - 1};
}

std::optional<Period> parse_period(std::string_view text) {
  if (text.size() < 7 || text[4] != '-') return std::nullopt;
  int year = 0, number = 0;
  if (!parse_int(text.substr(0, 4), year) || year < 2000 || year > 2999) return std::nullopt;
  if (text.size() == 7) {
    if (!parse_int(text.substr(5), number) || number < 1 || number > 12) return std::nullopt;
    return Period{Calendar::kMonth, year, number};
  }
  if (text.size() != 8 || text[5] != 'W' || !parse_int(text.substr(6), number) || number < 1 ||
      number > iso_weeks_in(year))
    return std::nullopt;
  return Period{Calendar::kWeek, year, number};
}

Bounds bounds_of(const Period& p, const TimeZone& tz) {
  return {local_midnight_ms(tz, first_day(p)), local_midnight_ms(tz, first_day(p.next()))};
}

Period period_of(Calendar calendar, std::int64_t at_ms, const TimeZone& tz) {
  // Floor division: an instant before 1970 still has its own second.
  const std::int64_t s = at_ms >= 0 ? at_ms / 1000 : (at_ms - 999) / 1000;
  const auto local = tz.local(s);
  if (calendar == Calendar::kMonth) return {Calendar::kMonth, local.year, local.month};
  const std::int64_t day = days_from_civil(local.year, local.month, local.day);
  for (int year : {local.year + 1, local.year, local.year - 1}) {
    const std::int64_t one = iso_week_one(year);
    if (day >= one) return {Calendar::kWeek, year, static_cast<int>((day - one) / 7) + 1};
  }
  return {Calendar::kWeek, local.year - 1, 1};  // unreachable: 4 January is in week one
}

std::shared_ptr<const TimeZone> account_zone(std::string_view zone_name) {
  auto tz = zone_name.empty() ? nullptr : TimeZone::cached(zone_name);
  return tz ? tz : TimeZone::cached("UTC");
}

std::string zone_of_buyer(const Buyer& b) {
  if (b.schedule.is_object() && b.schedule.contains("timezone") &&
      b.schedule["timezone"].is_string())
    return b.schedule["timezone"].get<std::string>();
  return "";
}

std::string zone_of_seller(const Seller& s) { return s.time_zone; }

bool period_ended_everywhere(const Period& p, std::int64_t now_ms) {
  // UTC-12 is the last zone a period ends in: twelve hours after it ends in UTC.
  return now_ms >= bounds_of(p, *TimeZone::cached("UTC")).to_ms + 12 * 3'600'000;
}

std::string_view to_string(Party p) { return p == Party::kBuyer ? "buyer" : "seller"; }

std::optional<Party> parse_party(std::string_view text) {
  if (text == "buyer") return Party::kBuyer;
  if (text == "seller") return Party::kSeller;
  return std::nullopt;
}

Bounds account_bounds(Party party, std::string_view account_id, const Period& p, const TimeZone& tz,
                      const Closes& closes) {
  return {start_for(party, account_id, p, tz, closes),
          start_for(party, account_id, p.next(), tz, closes)};
}

Period account_period_of(Party party, std::string_view account_id, Calendar calendar,
                         std::int64_t at_ms, const TimeZone& tz, const Closes& closes) {
  // A boundary moves by a day at most (UTC-12 to UTC+14): a step either way finds the period.
  Period p = period_of(calendar, at_ms, tz);
  while (at_ms < start_for(party, account_id, p, tz, closes)) p = p.previous();
  while (at_ms >= start_for(party, account_id, p.next(), tz, closes)) p = p.next();
  return p;
}

Period assigned_period(const Period& home, std::int64_t entry_id, const Closes& closes) {
  Period at = home;
  for (auto c = closes.find(at.label()); c != closes.end() && entry_id > c->second.through_entry_id;
       c = closes.find(at.label()))
    at = at.next();
  return at;
}

EntryWindow entry_window(Party party, std::string_view account_id, const Period& p,
                         const TimeZone& tz, const Closes& closes) {
  const Bounds b = account_bounds(party, account_id, p, tz, closes);
  EntryWindow w{b.from_ms, b.to_ms, -1};
  if (auto c = closes.find(p.previous().label()); c != closes.end())
    w.moved_after_id = c->second.through_entry_id;
  return w;
}

EntryWindow close_window(const Period& p, const Closes& closes) {
  // Offsets in use run from UTC-12 to UTC+14: widen the UTC bounds past both, by an hour more.
  // No account: account_bounds are UTC's, and every account's are within a day of them.
  EntryWindow w = entry_window(Party::kBuyer, "", p, *TimeZone::cached("UTC"), closes);
  w.from_ms -= 15 * 3'600'000;
  w.to_ms += 13 * 3'600'000;
  return w;
}

Statement statement_of(Party party, std::string_view account_id, const Period& period,
                       const TimeZone& tz, std::span<const StatementEntry> entries,
                       const Closes& closes) {
  Statement st;
  st.party = party;
  st.account_id = std::string(account_id);
  st.period = period;
  st.zone = tz.name();
  if (auto c = closes.find(period.label()); c != closes.end())
    if (auto z = c->second.zones.find({party, st.account_id}); z != c->second.zones.end())
      st.zone = account_zone(z->second)->name();
  st.bounds = account_bounds(party, account_id, period, tz, closes);
  std::vector<const StatementEntry*> mine;
  for (const auto& e : entries)
    if (is_account_of(party, account_id, e.entry) && e.entry.at_ms < st.bounds.to_ms)
      mine.push_back(&e);
  std::sort(mine.begin(), mine.end(),
            [](const auto* a, const auto* b) { return a->entry.id < b->entry.id; });
  for (const auto* e : mine) {
    const Period home =
        account_period_of(party, account_id, period.calendar, e->entry.at_ms, tz, closes);
    if (home > period || assigned_period(home, e->entry.id, closes) != period) continue;
    const Period ref =
        account_period_of(party, account_id, period.calendar, e->ref_at_ms, tz, closes);
    Line line{*e, home.label(), ref.label(), false};
    line.adjustment = line.home_period != period.label() || line.ref_period != period.label();
    Totals& t = st.totals;
    const LedgerEntry& le = e->entry;
    if (le.kind == kReturnEntry) {
      ++t.returns;
      t.returns_revenue += le.revenue;
      t.returns_payout += le.payout;
    } else {
      ++t.sales;
      t.sales_revenue += le.revenue;
      t.sales_payout += le.payout;
    }
    if (line.adjustment) {
      ++t.adjustments;
      t.adjustments_revenue += le.revenue;
      t.adjustments_payout += le.payout;
    }
    t.revenue += le.revenue;
    t.payout += le.payout;
    st.lines.push_back(std::move(line));
  }
  return st;
}

std::vector<FrozenTotals> freeze(const Period& period, std::span<const Account> accounts,
                                 std::span<const StatementEntry> entries, const Closes& closes) {
  // Every account with an entry, in its zone, even with no line: the zone it is frozen in sets
  // where its next periods begin (an account the store did not list reads UTC).
  std::map<std::pair<Party, std::string>, std::string> zones;
  for (const auto& e : entries) {
    if (!e.entry.buyer_id.empty()) zones.try_emplace({Party::kBuyer, e.entry.buyer_id}, "UTC");
    if (!e.entry.seller_id.empty()) zones.try_emplace({Party::kSeller, e.entry.seller_id}, "UTC");
  }
  for (const auto& a : accounts)
    if (auto z = zones.find({a.party, a.id}); z != zones.end()) z->second = a.zone;
  std::vector<FrozenTotals> out;
  for (const auto& [key, zone] : zones) {
    const auto tz = account_zone(zone);
    const Statement st = statement_of(key.first, key.second, period, *tz, entries, closes);
    out.push_back({key.first, key.second, tz->name(), st.totals});
  }
  return out;
}

}  // namespace leadflow::money
