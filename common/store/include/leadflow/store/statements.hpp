#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leadflow/money/statements.hpp"
#include "leadflow/store/port.hpp"

namespace leadflow {

/// A close asked of the store: `period`, by whom (the operator's key or user), at when.
struct CloseRequest {
  money::Period period;
  std::string closed_by;
  std::int64_t at_ms = 0;
};

/// A recorded close: the close and the statement totals it froze, one per account with a line.
struct PeriodClose {
  money::Close close;
  std::vector<money::FrozenTotals> totals;
};

/// What a close came to. kAlreadyClosed: `closed` is the close recorded before.
enum class CloseStatus { kClosed, kAlreadyClosed, kUnavailable };
struct CloseResult {
  CloseStatus status = CloseStatus::kUnavailable;
  PeriodClose closed;
};

/// Which ledger entries a statement reads: one account's (or every account's: account_id ""),
/// in the window money::entry_window (or close_window) gives.
struct StatementQuery {
  money::Party party = money::Party::kBuyer;
  std::string account_id;
  money::EntryWindow window;
};

/// The statements port: the closes of periods and the ledger entries statements are cut from
/// (docs/statements.md). Which entry belongs to which period, and the totals, are decided by
/// leadflow/money/statements.hpp; an adapter reads and writes what it asks.
class StatementStore : public virtual StorePort {
 public:
  /// Every close, of both calendars, with the zone it froze each account in (its frozen totals'
  /// zones); nullopt when the store cannot say.
  virtual std::optional<money::Closes> list_closes() = 0;
  /// The totals a close of `period` froze (none when not closed); nullopt when the store cannot
  /// say.
  virtual std::optional<std::vector<money::FrozenTotals>> frozen_totals(
      std::string_view period) = 0;
  /// The entries of the query's window, each with whether its sale was settled and when the sale
  /// it refers to was made; oldest first; nullopt when the store cannot say.
  virtual std::optional<std::vector<money::StatementEntry>> statement_entries(
      const StatementQuery& q) = 0;
  /// Closes a period, all or nothing, in one transaction that no ledger write interleaves with:
  /// the ledger's last entry id, the statements money::freeze makes of the entries it reads (in
  /// every account's zone: buyers' schedules', sellers' own), and the close with its totals. A
  /// period is closed once.
  virtual CloseResult close_period(const CloseRequest& r) = 0;
};

/// A statement as read: the statement, and for a closed period its close and the totals the
/// close froze (which the statement's own equal: a closed statement never changes).
struct StatementRead {
  money::Statement statement;
  std::optional<money::Close> close;
  std::optional<money::Totals> frozen;
};

/// One account's statement for `period` in its zone `zone_name` (a buyer's schedule's, a
/// seller's own; "" for UTC): the closes, the entries money::entry_window names,
/// money::statement_of. A closed period keeps the bounds and zone its close froze, the open one
/// after it starts where it ended (money::account_bounds), and a closed period holds nothing for
/// an account the close froze nothing of. nullopt when the store cannot say.
std::optional<StatementRead> read_statement(StatementStore& store, money::Party party,
                                            std::string_view account_id,
                                            const money::Period& period,
                                            std::string_view zone_name);

}  // namespace leadflow
