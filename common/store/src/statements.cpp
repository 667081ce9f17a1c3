// Reading a statement through the statements port (leadflow/store/statements.hpp): the port
// reads, money::statement_of decides.
#include "leadflow/store/statements.hpp"

namespace leadflow {

std::optional<StatementRead> read_statement(StatementStore& store, money::Party party,
                                            std::string_view account_id,
                                            const money::Period& period,
                                            std::string_view zone_name) {
  const auto closes = store.list_closes();
  if (!closes) return std::nullopt;
  StatementRead out;
  const auto tz = money::account_zone(zone_name);
  const std::string label = period.label();
  if (auto close = closes->find(label); close != closes->end()) {
    out.close = close->second;
    const auto frozen = store.frozen_totals(label);
    if (!frozen) return std::nullopt;
    for (const auto& f : *frozen)
      if (f.party == party && f.account_id == account_id) out.frozen = f.totals;
    if (!out.frozen) {
      // Nothing of this account was frozen: its closed statement is empty, whatever its zone.
      out.statement = money::statement_of(party, account_id, period, *tz, {}, *closes);
      out.frozen = out.statement.totals;
      return out;
    }
  }
  StatementQuery q;
  q.party = party;
  q.account_id = std::string(account_id);
  q.window = money::entry_window(party, account_id, period, *tz, *closes);
  const auto entries = store.statement_entries(q);
  if (!entries) return std::nullopt;
  out.statement = money::statement_of(party, account_id, period, *tz, *entries, *closes);
  return out;
}

}  // namespace leadflow
