#include "leadflow/visibility/reports.hpp"

#include <algorithm>
#include <array>

namespace leadflow {
namespace {

// The keys a report is cut and filtered by, and the class of field each one is.
struct KeyRule {
  std::string_view group;
  std::string_view column;  // the operator's column, and the filter's parameter
  FieldClass field;
  bool unsold_only;  // the unsold report's alone
};
constexpr std::array<KeyRule, 6> kKeyRules{{
    {"buyer", "buyer_id", FieldClass::kBuyerIdentity, false},
    {"vertical", "vertical", FieldClass::kLeadState, false},
    {"source", "source", FieldClass::kLeadState, false},
    {"seller", "seller_id", FieldClass::kSellerIdentity, false},
    {"campaign", "campaign_id", FieldClass::kSellerIdentity, false},
    {"reason", "reason", FieldClass::kUnsoldReason, true},
}};

const KeyRule* key_rule(std::string_view group) {
  for (const auto& k : kKeyRules)
    if (k.group == group) return &k;
  return nullptr;
}

// Whose a figure is: a seller's, a buyer's, or both (a count that is the seller's leads and the
// buyer's purchases at once).
enum class Side { kSeller, kBuyer, kEither, kOperator };

struct FigureRule {
  std::string_view name;
  FieldClass field;
  Side side;
};

constexpr std::array<FigureRule, 19> kRevenue{{
    {"leads_sold", FieldClass::kLeadState, Side::kEither},
    {"revenue", FieldClass::kBuyerMoney, Side::kBuyer},  // a buyer's spend, net of returns
    {"payout", FieldClass::kSellerMoney, Side::kSeller},
    {"margin", FieldClass::kMargin, Side::kOperator},
    {"avg_price", FieldClass::kBuyerMoney, Side::kBuyer},
    {"gross_revenue", FieldClass::kBuyerMoney, Side::kBuyer},
    {"returns", FieldClass::kLeadState, Side::kEither},
    {"returned_revenue", FieldClass::kBuyerMoney, Side::kBuyer},
    {"returned_payout", FieldClass::kSellerMoney, Side::kSeller},
    // The aged sales among the sales (docs/reoffers.md), as made: each side its own money.
    {"aged_sales", FieldClass::kLeadState, Side::kEither},
    {"aged_revenue", FieldClass::kBuyerMoney, Side::kBuyer},
    {"aged_payout", FieldClass::kSellerMoney, Side::kSeller},
    {"aged_margin", FieldClass::kMargin, Side::kOperator},
    // The returns of aged sales among the returns, as the returns are read.
    {"aged_returns", FieldClass::kLeadState, Side::kEither},
    {"aged_returned_revenue", FieldClass::kBuyerMoney, Side::kBuyer},
    {"aged_returned_payout", FieldClass::kSellerMoney, Side::kSeller},
    // The aged band net of its returns: each side its own money, the margin the operator's.
    {"aged_net_revenue", FieldClass::kBuyerMoney, Side::kBuyer},
    {"aged_net_payout", FieldClass::kSellerMoney, Side::kSeller},
    {"aged_net_margin", FieldClass::kMargin, Side::kOperator},
}};

// Performance: the leads' own counts are the seller's intake (they count leads no buyer bought,
// so they are no buyer's); the answers to pings and posts are what the buyers did (how many were
// asked, bid, won, took, and how fast they answered), which maps each vertical's demand, so they
// are the buyers' own and never a seller's. The acceptance rate is the leads' share sold to a
// seller and the share of its posts accepted to a buyer: each reads its own.
constexpr std::array<FigureRule, 16> kPerformance{{
    {"leads", FieldClass::kLeadState, Side::kSeller},
    {"duplicates", FieldClass::kLeadState, Side::kSeller},
    {"invalid", FieldClass::kLeadState, Side::kSeller},
    {"sold", FieldClass::kLeadState, Side::kSeller},
    {"unsold", FieldClass::kLeadState, Side::kSeller},
    {"failed", FieldClass::kLeadState, Side::kSeller},
    {"pinged", FieldClass::kBuyerIdentity, Side::kBuyer},
    {"bids", FieldClass::kBuyerIdentity, Side::kBuyer},
    {"won", FieldClass::kBuyerIdentity, Side::kBuyer},
    {"delivered", FieldClass::kBuyerIdentity, Side::kBuyer},
    {"rejected", FieldClass::kBuyerIdentity, Side::kBuyer},
    {"timeouts", FieldClass::kBuyerIdentity, Side::kBuyer},
    {"errors", FieldClass::kBuyerIdentity, Side::kBuyer},
    {"acceptance_rate", FieldClass::kLeadState, Side::kEither},
    {"avg_response_ms", FieldClass::kBuyerIdentity, Side::kBuyer},
    {"p95_response_ms", FieldClass::kBuyerIdentity, Side::kBuyer},
}};

// The unsold leads, and what second chances made of them: how many were offered again and how
// many of those sold aged (counts of the seller's own leads, naming no buyer or price).
constexpr std::array<FigureRule, 3> kUnsold{{
    {"leads", FieldClass::kUnsoldReason, Side::kSeller},
    {"reoffered", FieldClass::kUnsoldReason, Side::kSeller},
    {"sold_aged", FieldClass::kUnsoldReason, Side::kSeller},
}};

template <std::size_t N>
const FigureRule* find(const std::array<FigureRule, N>& rules, std::string_view name) {
  for (const auto& r : rules)
    if (r.name == name) return &r;
  return nullptr;
}

const FigureRule* figure_rule(ReportKind kind, std::string_view name) {
  switch (kind) {
    case ReportKind::kRevenue:
      return find(kRevenue, name);
    case ReportKind::kPerformance:
      return find(kPerformance, name);
    case ReportKind::kUnsold:
      return find(kUnsold, name);
  }
  return nullptr;
}

const char* party_word(const Viewer& v) { return v.is_buyer() ? "a buyer's" : "a seller's"; }

}  // namespace

bool may_read_report(const Viewer& viewer, ReportKind kind) {
  return kind != ReportKind::kUnsold || access(viewer, FieldClass::kUnsoldReason) != Access::kNone;
}

std::string refuse_group(const Viewer& viewer, ReportKind kind, std::string_view group) {
  const KeyRule* k = key_rule(group);
  if (!k || (k->unsold_only && kind != ReportKind::kUnsold))
    return std::string(group) + ": not a key of this report";
  if (viewer.is_operator()) return "";
  // A campaign is how a seller arranges its traffic: no buyer reads it, names shown or not.
  if (viewer.is_buyer() && group == "campaign")
    return "campaign: " + std::string(party_word(viewer)) + " reports are not cut by campaign";
  // A buyer reads sellers as source codes: cutting by them shows no seller.
  if (viewer.is_buyer() && group == "seller") return "";
  if (access(viewer, k->field) == Access::kNone)
    return std::string(group) + ": " + party_word(viewer) + " reports are not cut by " +
           std::string(group);
  return "";
}

std::string refuse_filter(const Viewer& viewer, ReportKind kind, std::string_view group) {
  const KeyRule* k = key_rule(group);
  if (!k || (k->unsold_only && kind != ReportKind::kUnsold))
    return std::string(group) + ": not a key of this report";
  if (viewer.is_operator()) return "";
  if (viewer.is_buyer() && group == "campaign")
    return "a buyer's reports are not filtered by campaign";
  if (access(viewer, k->field) == Access::kNone) {
    if (viewer.is_buyer() && group == "seller")
      return "a buyer's reports are not filtered by seller; group by seller to compare its "
             "sources by source code";
    return std::string(party_word(viewer)) + " reports are not filtered by " + std::string(group);
  }
  return "";
}

std::vector<std::string> report_groups(const Viewer& viewer, ReportKind kind) {
  std::vector<std::string> out{"day", "hour"};
  for (const auto& k : kKeyRules)
    if (refuse_group(viewer, kind, k.group).empty()) out.emplace_back(k.group);
  return out;
}

std::string report_column(const Viewer& viewer, std::string_view group) {
  if (viewer.is_buyer() && group == "seller" && !viewer.seller_names) return "source_code";
  const KeyRule* k = key_rule(group);
  return k ? std::string(k->column) : std::string(group);
}

std::string report_value(const Viewer& viewer, std::string_view secret, std::string_view group,
                         std::string_view value) {
  if (viewer.is_buyer() && group == "seller" && !viewer.seller_names && !value.empty())
    return source_code(secret, viewer.buyer_id, value);
  return std::string(value);
}

bool may_see_figure(const Viewer& viewer, ReportKind kind, std::string_view name) {
  const FigureRule* f = figure_rule(kind, name);
  if (!f) return false;
  if (viewer.is_operator()) return true;
  if (access(viewer, f->field) == Access::kNone) return false;
  switch (f->side) {
    case Side::kEither:
      return true;
    case Side::kSeller:
      return viewer.is_seller();
    case Side::kBuyer:
      return viewer.is_buyer();
    case Side::kOperator:
      return false;
  }
  return false;
}

const std::vector<std::string>& report_figures(ReportKind kind) {
  static const auto names = [](const auto& rules) {
    std::vector<std::string> out;
    for (const auto& r : rules) out.emplace_back(r.name);
    return out;
  };
  static const std::vector<std::string> revenue = names(kRevenue),
                                        performance = names(kPerformance), unsold = names(kUnsold);
  switch (kind) {
    case ReportKind::kRevenue:
      return revenue;
    case ReportKind::kPerformance:
      return performance;
    case ReportKind::kUnsold:
      return unsold;
  }
  return unsold;
}

}  // namespace leadflow
