#include "leadflow/visibility/statements.hpp"

#include "leadflow/base/money.hpp"
#include "leadflow/base/time_format.hpp"

namespace leadflow {
namespace {

using json = nlohmann::json;

// The fields of one value by class, as projections.cpp's Fields: a field the viewer may not see
// of the value's seller and buyer is left out, not emptied.
class Put {
 public:
  Put(const Viewer& viewer, std::string_view seller_id, std::string_view buyer_id)
      : viewer_(viewer), seller_id_(seller_id), buyer_id_(buyer_id) {}
  Put& add(FieldClass c, const char* name, json value) {
    if (may_see(viewer_, c, seller_id_, buyer_id_)) out_[name] = std::move(value);
    return *this;
  }
  json take() { return std::move(out_); }

 private:
  const Viewer& viewer_;
  std::string_view seller_id_;
  std::string_view buyer_id_;
  json out_ = json::object();
};

// The statement's own account as the owner of its money.
std::string_view seller_of(const money::Statement& s) {
  return s.party == money::Party::kSeller ? std::string_view(s.account_id) : std::string_view();
}
std::string_view buyer_of(const money::Statement& s) {
  return s.party == money::Party::kBuyer ? std::string_view(s.account_id) : std::string_view();
}

json totals_json(const Viewer& viewer, std::string_view seller_id, std::string_view buyer_id,
                 const money::Totals& t) {
  Put put(viewer, seller_id, buyer_id);
  put.add(FieldClass::kLeadState, "sales", t.sales)
      .add(FieldClass::kLeadState, "returns", t.returns)
      .add(FieldClass::kLeadState, "adjustments", t.adjustments)
      .add(FieldClass::kBuyerMoney, "sales_amount", cents_to_decimal(t.sales_revenue))
      .add(FieldClass::kBuyerMoney, "returns_amount", cents_to_decimal(t.returns_revenue))
      .add(FieldClass::kBuyerMoney, "adjustments_amount", cents_to_decimal(t.adjustments_revenue))
      .add(FieldClass::kBuyerMoney, "total", cents_to_decimal(t.revenue))
      .add(FieldClass::kSellerMoney, "payouts", cents_to_decimal(t.sales_payout))
      .add(FieldClass::kSellerMoney, "reversals", cents_to_decimal(t.returns_payout))
      .add(FieldClass::kSellerMoney, "adjustments_payout", cents_to_decimal(t.adjustments_payout))
      .add(FieldClass::kSellerMoney, "total_payout", cents_to_decimal(t.payout))
      .add(FieldClass::kMargin, "margin", cents_to_decimal(t.margin()));
  return put.take();
}

json line_json(const Viewer& viewer, const money::Line& line) {
  const money::LedgerEntry& e = line.entry.entry;
  // Each line's money is its entry's seller's and buyer's: a statement's reader is one of them.
  Put put(viewer, e.seller_id, e.buyer_id);
  put.add(FieldClass::kLeadState, "entry_id", e.id)
      .add(FieldClass::kLeadState, "kind", e.kind)
      .add(FieldClass::kLeadState, "settled", line.entry.settled)
      .add(FieldClass::kLeadState, "lead_id", e.lead_id)
      .add(FieldClass::kLeadState, "at", format_rfc3339_ms(e.at_ms))
      .add(FieldClass::kLeadState, "adjustment", line.adjustment)
      .add(FieldClass::kLeadState, "home_period", line.home_period)
      .add(FieldClass::kLeadState, "ref_period", line.ref_period)
      .add(FieldClass::kLeadState, "ref_at", format_rfc3339_ms(line.entry.ref_at_ms))
      .add(FieldClass::kBuyerIdentity, "buyer_id", e.buyer_id)
      .add(FieldClass::kSellerIdentity, "seller_id", e.seller_id)
      .add(FieldClass::kBuyerMoney, "amount", cents_to_decimal(e.revenue))
      .add(FieldClass::kSellerMoney, "payout", cents_to_decimal(e.payout))
      .add(FieldClass::kMargin, "margin", cents_to_decimal(e.revenue - e.payout));
  return put.take();
}

}  // namespace

bool may_read_statement(const Viewer& viewer, money::Party party, std::string_view account_id) {
  if (viewer.is_operator()) return true;
  if (party == money::Party::kBuyer) return viewer.is_buyer() && viewer.buyer_id == account_id;
  return viewer.is_seller() && viewer.seller_id == account_id;
}

json project_statement(const Viewer& viewer, const StatementRead& read) {
  const money::Statement& s = read.statement;
  if (!may_read_statement(viewer, s.party, s.account_id)) return nullptr;
  json lines = json::array();
  for (const auto& line : s.lines) lines.push_back(line_json(viewer, line));
  json out = {
      {"party", money::to_string(s.party)},
      {"account_id", s.account_id},
      {"period", s.period.label()},
      {"calendar", s.period.calendar == money::Calendar::kMonth ? "month" : "week"},
      {"time_zone", s.zone},
      {"from", format_rfc3339_ms(s.bounds.from_ms)},
      {"to", format_rfc3339_ms(s.bounds.to_ms)},
      {"currency", "USD"},
      {"status", read.close ? "closed" : "open"},
      {"closed_at", read.close ? json(format_rfc3339_ms(read.close->closed_at_ms)) : json()},
      {"totals",
       totals_json(viewer, seller_of(s), buyer_of(s), read.frozen ? *read.frozen : s.totals)},
      {"lines", std::move(lines)}};
  return out;
}

std::vector<std::string> statement_csv_columns(const Viewer& viewer, money::Party party) {
  std::vector<std::string> columns{"entry_id",   "at",          "kind",       "settled", "lead_id",
                                   "adjustment", "home_period", "ref_period", "ref_at"};
  const bool op = viewer.is_operator();
  if (op) columns.insert(columns.end(), {"buyer_id", "seller_id"});
  if (op || party == money::Party::kBuyer) columns.push_back("amount");
  if (op || party == money::Party::kSeller) columns.push_back("payout");
  if (op) columns.push_back("margin");
  return columns;
}

json project_close(const Viewer& viewer, const money::Close& close,
                   const std::vector<money::FrozenTotals>* totals) {
  json out = {{"period", close.period.label()},
              {"calendar", close.period.calendar == money::Calendar::kMonth ? "month" : "week"},
              {"status", "closed"},
              {"closed_at", format_rfc3339_ms(close.closed_at_ms)}};
  if (access(viewer, FieldClass::kOperatorRecord) == Access::kAll) {
    out["closed_by"] = close.closed_by;
    out["through_entry_id"] = close.through_entry_id;
    if (totals) {
      json all = json::array();
      for (const auto& f : *totals) {
        json t = totals_json(viewer, f.party == money::Party::kSeller ? f.account_id : "",
                             f.party == money::Party::kBuyer ? f.account_id : "", f.totals);
        t["party"] = money::to_string(f.party);
        t["account_id"] = f.account_id;
        t["time_zone"] = f.zone;
        all.push_back(std::move(t));
      }
      out["totals"] = std::move(all);
    }
  }
  return out;
}

}  // namespace leadflow
