// The reports' rules of the visibility model on plain values: which keys each reader may cut and
// filter by, how a buyer reads a seller, and which figures each one's rows carry.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "leadflow/visibility/reports.hpp"

namespace leadflow {
namespace {

Viewer seller() {
  Viewer v;
  v.party = Party::kSeller;
  v.seller_id = "sl_a";
  return v;
}

Viewer buyer(bool names = false) {
  Viewer v;
  v.party = Party::kBuyer;
  v.buyer_id = "by_a";
  v.seller_names = names;
  return v;
}

constexpr ReportKind kKinds[] = {ReportKind::kRevenue, ReportKind::kPerformance,
                                 ReportKind::kUnsold};

std::set<std::string> figures(const Viewer& v, ReportKind kind) {
  std::set<std::string> out;
  for (const auto& f : report_figures(kind))
    if (may_see_figure(v, kind, f)) out.insert(f);
  return out;
}

TEST(ReportRules, TheOperatorMayCutAndFilterByEveryKeyAndSeesEveryFigure) {
  const Viewer op;
  for (auto kind : kKinds) {
    EXPECT_TRUE(may_read_report(op, kind));
    for (const char* g : {"buyer", "vertical", "source", "seller", "campaign"}) {
      EXPECT_EQ(refuse_group(op, kind, g), "") << g;
      EXPECT_EQ(refuse_filter(op, kind, g), "") << g;
    }
    EXPECT_EQ(figures(op, kind).size(), report_figures(kind).size());
  }
  EXPECT_EQ(refuse_group(op, ReportKind::kUnsold, "reason"), "");
  EXPECT_NE(refuse_group(op, ReportKind::kRevenue, "reason"), "");
  EXPECT_NE(refuse_group(op, ReportKind::kRevenue, "colour"), "");
  EXPECT_EQ(report_column(op, "seller"), "seller_id");
  EXPECT_EQ(report_value(op, "k", "seller", "sl_a"), "sl_a");
}

TEST(ReportRules, ASellerIsNeverCutOrFilteredByBuyerAndReadsOnlyItsOwnMoney) {
  const Viewer s = seller();
  for (auto kind : kKinds) {
    EXPECT_TRUE(may_read_report(s, kind));
    const std::string refused = refuse_group(s, kind, "buyer");
    EXPECT_NE(refused.find("buyer"), std::string::npos) << refused;  // names it
    EXPECT_NE(refuse_filter(s, kind, "buyer"), "");
    for (const char* g : {"vertical", "source", "seller", "campaign"}) {
      EXPECT_EQ(refuse_group(s, kind, g), "") << g;
      EXPECT_EQ(refuse_filter(s, kind, g), "") << g;
    }
  }
  EXPECT_EQ(refuse_group(s, ReportKind::kUnsold, "reason"), "");
  EXPECT_EQ(report_groups(s, ReportKind::kUnsold),
            (std::vector<std::string>{"day", "hour", "vertical", "source", "seller", "campaign",
                                      "reason"}));
  EXPECT_EQ(figures(s, ReportKind::kRevenue),
            (std::set<std::string>{"leads_sold", "payout", "returns", "returned_payout",
                                   "aged_sales", "aged_payout", "aged_returns",
                                   "aged_returned_payout", "aged_net_payout"}));
  EXPECT_EQ(figures(s, ReportKind::kPerformance),
            (std::set<std::string>{"leads", "duplicates", "invalid", "sold", "unsold", "failed",
                                   "acceptance_rate"}));
  EXPECT_EQ(figures(s, ReportKind::kUnsold),
            (std::set<std::string>{"leads", "reoffered", "sold_aged"}));
  EXPECT_EQ(report_column(s, "seller"), "seller_id");
}

TEST(ReportRules, ABuyerReadsSellersAsSourceCodesAndNeverTheirMoney) {
  const Viewer b = buyer();
  EXPECT_TRUE(may_read_report(b, ReportKind::kRevenue));
  EXPECT_TRUE(may_read_report(b, ReportKind::kPerformance));
  EXPECT_FALSE(may_read_report(b, ReportKind::kUnsold));
  for (auto kind : {ReportKind::kRevenue, ReportKind::kPerformance}) {
    for (const char* g : {"buyer", "vertical", "source", "seller"})
      EXPECT_EQ(refuse_group(b, kind, g), "") << g;
    EXPECT_NE(refuse_group(b, kind, "campaign").find("campaign"), std::string::npos);
    EXPECT_NE(refuse_filter(b, kind, "campaign"), "");
    EXPECT_NE(refuse_filter(b, kind, "seller").find("seller"), std::string::npos);
    EXPECT_EQ(refuse_filter(b, kind, "buyer"), "");  // its own
  }
  EXPECT_EQ(report_column(b, "seller"), "source_code");
  EXPECT_EQ(report_value(b, "k", "seller", "sl_a"), source_code("k", "by_a", "sl_a"));
  EXPECT_EQ(report_value(b, "k", "vertical", "solar"), "solar");
  EXPECT_EQ(figures(b, ReportKind::kRevenue),
            (std::set<std::string>{"leads_sold", "revenue", "avg_price", "gross_revenue", "returns",
                                   "returned_revenue", "aged_sales", "aged_revenue", "aged_returns",
                                   "aged_returned_revenue", "aged_net_revenue"}));
  EXPECT_EQ(
      figures(b, ReportKind::kPerformance),
      (std::set<std::string>{"pinged", "bids", "won", "delivered", "rejected", "timeouts", "errors",
                             "acceptance_rate", "avg_response_ms", "p95_response_ms"}));
}

TEST(ReportRules, ABuyerShownSellersNamesReadsAndFiltersTheirIdsButNeverTheirCampaigns) {
  const Viewer b = buyer(true);
  EXPECT_EQ(report_column(b, "seller"), "seller_id");
  EXPECT_EQ(report_value(b, "k", "seller", "sl_a"), "sl_a");
  EXPECT_EQ(refuse_filter(b, ReportKind::kRevenue, "seller"), "");
  EXPECT_NE(refuse_group(b, ReportKind::kRevenue, "campaign"), "");
  EXPECT_FALSE(may_see_figure(b, ReportKind::kRevenue, "payout"));
  EXPECT_FALSE(may_see_figure(b, ReportKind::kRevenue, "margin"));
}

// The aged band net of its returns (docs/reoffers.md): each party its own side, as the aged
// figures it is made of; the net margin the operator's alone, as the margin as made is.
TEST(ReportRules, TheAgedNetFiguresAreReadAsTheAgedFiguresTheyAreMadeOf) {
  const Viewer op;
  const std::vector<std::pair<const char*, const char*>> made_of{
      {"aged_net_revenue", "aged_returned_revenue"},
      {"aged_net_payout", "aged_returned_payout"},
      {"aged_net_margin", "aged_margin"}};
  for (const Viewer& v : {op, seller(), buyer(), buyer(true)})
    for (const auto& [net, of] : made_of)
      EXPECT_EQ(may_see_figure(v, ReportKind::kRevenue, net),
                may_see_figure(v, ReportKind::kRevenue, of))
          << net;
  EXPECT_TRUE(may_see_figure(seller(), ReportKind::kRevenue, "aged_net_payout"));
  EXPECT_FALSE(may_see_figure(seller(), ReportKind::kRevenue, "aged_net_revenue"));
  EXPECT_FALSE(may_see_figure(seller(), ReportKind::kRevenue, "aged_net_margin"));
  EXPECT_TRUE(may_see_figure(buyer(), ReportKind::kRevenue, "aged_net_revenue"));
  EXPECT_FALSE(may_see_figure(buyer(), ReportKind::kRevenue, "aged_net_payout"));
  EXPECT_FALSE(may_see_figure(buyer(true), ReportKind::kRevenue, "aged_net_margin"));
  EXPECT_TRUE(may_see_figure(op, ReportKind::kRevenue, "aged_net_margin"));
  // After the aged returns, in the CSV's order.
  const auto& names = report_figures(ReportKind::kRevenue);
  EXPECT_EQ(std::vector<std::string>(names.end() - 4, names.end()),
            (std::vector<std::string>{"aged_returned_payout", "aged_net_revenue", "aged_net_payout",
                                      "aged_net_margin"}));
  // Nowhere else: the performance and unsold reports have no aged net.
  EXPECT_FALSE(may_see_figure(op, ReportKind::kPerformance, "aged_net_payout"));
  EXPECT_FALSE(may_see_figure(op, ReportKind::kUnsold, "aged_net_payout"));
}

}  // namespace
}  // namespace leadflow
