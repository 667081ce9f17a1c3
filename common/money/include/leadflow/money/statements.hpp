#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leadflow/base/money.hpp"
#include "leadflow/base/tz.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/money/ledger.hpp"

namespace leadflow::money {

/// The two calendars a statement is cut in: months ("2026-11") and ISO weeks ("2026-W47",
/// Monday to Monday). Each calendar has its own closes: closing a week closes no month.
enum class Calendar { kMonth, kWeek };

/// One period of a calendar: a month (number 1..12) or an ISO week (number 1..53) of a year.
struct Period {
  Calendar calendar = Calendar::kMonth;
  int year = 1970;
  int number = 1;

  std::string label() const;  // "2026-11", "2026-W47"
  Period next() const;
  Period previous() const;
  friend bool operator==(const Period&, const Period&) = default;
  friend auto operator<=>(const Period&, const Period&) = default;
};

/// "2026-11" or "2026-W47" (years 2000 to 2999); nullopt for anything else.
std::optional<Period> parse_period(std::string_view text);

/// A period's bounds in a zone, Unix ms: from its first local midnight (included) to the next
/// period's (excluded). November 2026 in New York is 2026-11-01T04:00Z to 2026-12-01T05:00Z.
struct Bounds {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
};
Bounds bounds_of(const Period& p, const TimeZone& tz);

/// The period of `calendar` holding the instant `at_ms` in `tz`.
Period period_of(Calendar calendar, std::int64_t at_ms, const TimeZone& tz);

/// The zone an account's periods are cut in: a buyer's schedule's `timezone` (as its caps
/// count), else UTC; a seller's `time_zone`; a zone the server cannot load reads as UTC.
std::shared_ptr<const TimeZone> account_zone(std::string_view zone_name);
/// The zone name a buyer's statements are cut in: its schedule's `timezone`, else "".
std::string zone_of_buyer(const Buyer& b);
/// The zone name a seller's statements are cut in: its `time_zone` (UTC unless set).
std::string zone_of_seller(const Seller& s);

/// Whether `p` may be closed at `now_ms`: once it has ended for every account, wherever it is
/// (in the zone furthest behind UTC, UTC-12).
bool period_ended_everywhere(const Period& p, std::int64_t now_ms);

/// The parties a statement is for.
enum class Party { kBuyer, kSeller };
std::string_view to_string(Party p);
std::optional<Party> parse_party(std::string_view text);

/// One party's statement totals, in cents. Sales: the sales (and settled sales) of the
/// period; returns: the returns (negative); adjustments: the part of both that refers to a sale
/// of another period, or that was dated in a period closed before it was written (already in
/// sales and returns). revenue/payout: the period's net, exactly the sum of its lines.
struct Totals {
  std::int64_t sales = 0;
  Cents sales_revenue = 0;
  Cents sales_payout = 0;
  std::int64_t returns = 0;
  Cents returns_revenue = 0;
  Cents returns_payout = 0;
  std::int64_t adjustments = 0;
  Cents adjustments_revenue = 0;
  Cents adjustments_payout = 0;
  Cents revenue = 0;
  Cents payout = 0;
  Cents margin() const { return revenue - payout; }
  friend bool operator==(const Totals&, const Totals&) = default;
};

/// A ledger entry as a statement reads it: the entry, whether its sale was a settlement, and
/// when the sale it refers to was made (a return's sale; a settled sale's lead received; a
/// sale's own time otherwise).
struct StatementEntry {
  LedgerEntry entry;
  bool settled = false;
  std::int64_t ref_at_ms = 0;
};

/// The zone a close froze each account's statement in, by party and account id.
using FrozenZones = std::map<std::pair<Party, std::string>, std::string>;

/// A close of one period: the ledger as it stood (every entry up to `through_entry_id`), by
/// whom and when, and the zone it froze each account in (the stores read them from the frozen
/// totals). Written once, never changed.
struct Close {
  Period period;
  std::int64_t through_entry_id = 0;
  std::string closed_by;
  std::int64_t closed_at_ms = 0;
  FrozenZones zones;
};
using Closes = std::map<std::string, Close>;  // by period label

/// The period an entry belongs to: the one holding its time (its home), unless that period was
/// closed before the entry was written (its id is past the close's), then the next one that was
/// not, so a closed period never gains an entry. Stable: closing a period later keeps every
/// entry where it was.
Period assigned_period(const Period& home, std::int64_t entry_id, const Closes& closes);

/// Where one account's periods begin and end, whatever its zone did: the boundary between a
/// period and the next is the first local midnight of the next one in the zone frozen by the
/// one of the two closed first that froze the account (a closed period keeps its frozen bounds,
/// the open one after it starts where it ended), else in the account's zone `tz` now. So each
/// instant is in exactly one period of each calendar: nothing twice, nothing lost.
Bounds account_bounds(Party party, std::string_view account_id, const Period& p, const TimeZone& tz,
                      const Closes& closes);
/// The period of `calendar` holding `at_ms` for that account (account_bounds').
Period account_period_of(Party party, std::string_view account_id, Calendar calendar,
                         std::int64_t at_ms, const TimeZone& tz, const Closes& closes);

/// One line of a statement. `adjustment`: its sale (`ref_period`) is of another period, or it
/// was moved here from its home (`home_period`) closed before it.
struct Line {
  StatementEntry entry;
  std::string home_period;
  std::string ref_period;
  bool adjustment = false;
};

/// One party's statement for a period.
struct Statement {
  Party party = Party::kBuyer;
  std::string account_id;
  Period period;
  std::string zone;
  Bounds bounds;
  std::vector<Line> lines;  // in ledger order
  Totals totals;
};

/// The entries a store reads for a statement: the account's entries dated before the period's
/// end and either inside it or, when the period before is closed, written after that close
/// (only those can have been moved here). A superset; statement_of keeps those assigned here.
struct EntryWindow {
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  std::int64_t moved_after_id = -1;  // -1: none can have been moved here
};
EntryWindow entry_window(Party party, std::string_view account_id, const Period& p,
                         const TimeZone& tz, const Closes& closes);

/// The statement of `account_id` (as `party`) for `period`, the account now in `tz`, from its
/// entries (any superset of entry_window's; entries of other accounts are ignored): its bounds
/// are account_bounds', its zone the one its close froze (`tz` while open or frozen nothing).
Statement statement_of(Party party, std::string_view account_id, const Period& period,
                       const TimeZone& tz, std::span<const StatementEntry> entries,
                       const Closes& closes);

/// The frozen totals of one account's statement at a close.
struct FrozenTotals {
  Party party = Party::kBuyer;
  std::string account_id;
  std::string zone;
  Totals totals;
};

/// An account a close freezes a statement of, with its zone.
struct Account {
  Party party = Party::kBuyer;
  std::string id;
  std::string zone;
};

/// What a close freezes: the statement of `period` of every account with an entry read (an
/// empty one too, so that its zone is frozen), its totals and zone, from the ledger's entries (a
/// superset: every entry that may fall in the period in any zone, see close_window) and `closes`
/// (those before this one).
std::vector<FrozenTotals> freeze(const Period& period, std::span<const Account> accounts,
                                 std::span<const StatementEntry> entries, const Closes& closes);

/// The entries a close reads: every entry_window's, whatever the zones (UTC-12 to UTC+14).
EntryWindow close_window(const Period& p, const Closes& closes);

}  // namespace leadflow::money
