// What each party reads of a vertical's settings (GET /v1/verticals): the members of each
// party's list and nothing else, a buyer only the verticals it buys; on plain values.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "leadflow/domain/verticals.hpp"
#include "leadflow/visibility/verticals.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

std::set<std::string> keys(const json& j) {
  std::set<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.insert(it.key());
  return out;
}

std::set<std::string> members(Party p) {
  std::set<std::string> out;
  for (std::string_view m : vertical_members(p)) out.emplace(m);
  return out;
}

// A vertical with every setting set: required and optional fields, shared sales, a consent
// window and a re-offer policy; as GET /v1/verticals builds it, with where its policy comes from
// (`set`: the operator's, if any).
json solar_view(const VerticalReoffer* set = nullptr) {
  VerticalRegistry r = VerticalRegistry::defaults();
  EXPECT_EQ(r.load_json(json::parse(R"({"verticals": [{"name": "solar", "max_sales": 3,
      "duplicate_lookback_days": 45, "consent_days": 10,
      "fields": [{"name": "home_owner", "required": true}],
      "reoffer": {"delays_seconds": [900, 7200, 86400], "window_hours": 168}}]})")),
            "");
  return r.to_json(*r.find("solar"), set);
}

TEST(VerticalVisibility, TheOperatorsListIsEveryMemberTheRegistryWrites) {
  // A member the registry's view gains is a decision for each party: this fails until the
  // operator's list names it, and the seller's and buyer's lists say whether they read it.
  EXPECT_EQ(members(Party::kOperator), keys(solar_view()));
  const json v = solar_view();
  EXPECT_EQ(project_vertical(Viewer{}, v, {}), v);
}

TEST(VerticalVisibility, ASellerReadsWhatItPostsAndWhetherItsLeadsAreOfferedAgainNotHowBuyersBuy) {
  const json v = solar_view();
  const json seen = project_vertical(Viewer::seller("se_1"), v, {});
  EXPECT_EQ(keys(seen), (std::set<std::string>{"vertical", "fields", "duplicate_lookback_days",
                                               "consent_days", "reoffer"}));
  EXPECT_FALSE(seen.contains("max_sales"));  // how many buyers share a lead: the buyers' side
  EXPECT_EQ(seen["fields"], v["fields"]);
  EXPECT_EQ(seen["duplicate_lookback_days"], 45);
  EXPECT_EQ(seen["reoffer"]["delays_seconds"], json({900, 7200, 86400}));
  EXPECT_EQ(seen["reoffer"]["window_hours"], 168);
  // Every vertical, whatever buyers list: a seller may post to any.
  EXPECT_TRUE(may_read_vertical(Viewer::seller("se_1"), "solar", {}));
}

TEST(VerticalVisibility, ABuyerReadsOnlyTheVerticalsItBuysAndWhatShapesItsPurchases) {
  const json v = solar_view();
  const json seen = project_vertical(Viewer::buyer("by_1"), v, {"auto_insurance", "solar"});
  EXPECT_EQ(keys(seen),
            (std::set<std::string>{"vertical", "fields", "max_sales", "consent_days", "reoffer"}));
  EXPECT_FALSE(seen.contains("duplicate_lookback_days"));  // the intake's, judging sellers' posts
  EXPECT_EQ(seen["max_sales"], 3);
  EXPECT_EQ(seen["consent_days"], 10);
  EXPECT_EQ(seen["reoffer"], v["reoffer"]);
  // A vertical it does not buy is none of its own; seller names shown or not.
  EXPECT_TRUE(project_vertical(Viewer::buyer("by_1"), v, {"auto_insurance"}).is_null());
  EXPECT_TRUE(project_vertical(Viewer::buyer("by_1", true), v, {}).is_null());
  EXPECT_FALSE(may_read_vertical(Viewer::buyer("by_1"), "solar", {"solar_x"}));
}

// A policy the operator set live: every reader of `reoffer` reads the one in force; where it
// comes from (the file's, set when) is the operator's.
TEST(VerticalVisibility, APolicySetByTheOperatorIsReadInForceWhereItComesFromByTheOperatorAlone) {
  const VerticalReoffer set{"solar", {{60}, 0}, 1'700'000'000'000};
  const json v = solar_view(&set);
  EXPECT_EQ(v["reoffer"], json::parse(R"({"delays_seconds": [60]})"));
  EXPECT_EQ(v["reoffer_source"], "operator");
  EXPECT_EQ(v["configured_reoffer"]["delays_seconds"], json({900, 7200, 86400}));
  EXPECT_EQ(v["reoffer_set_at"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(solar_view()["reoffer_source"], "configured");
  EXPECT_TRUE(solar_view()["reoffer_set_at"].is_null());
  for (const Viewer& reader : {Viewer::seller("se_1"), Viewer::buyer("by_1")}) {
    const json seen = project_vertical(reader, v, {"solar"});
    EXPECT_EQ(seen["reoffer"], v["reoffer"]);
    for (const char* m : {"reoffer_source", "configured_reoffer", "reoffer_set_at"})
      EXPECT_FALSE(seen.contains(m)) << m;
  }
}

TEST(VerticalVisibility, AMemberAddedToTheViewLaterReachesNeitherSellerNorBuyer) {
  json v = solar_view();
  v["buyer_floor"] = 12.5;      // a buyer-side setting a later registry might add
  v["seller_ranking"] = "top";  // and a seller-side one
  for (const Viewer& reader : {Viewer::seller("se_1"), Viewer::buyer("by_1", true)}) {
    const json seen = project_vertical(reader, v, {"solar"});
    EXPECT_FALSE(seen.contains("buyer_floor"));
    EXPECT_FALSE(seen.contains("seller_ranking"));
  }
  EXPECT_TRUE(project_vertical(Viewer{}, v, {}).contains("buyer_floor"));
}

TEST(VerticalVisibility, NoPolicyReadsNullForEveryReaderThatReadsIt) {
  VerticalRegistry r = VerticalRegistry::defaults();
  const json v = r.to_json(*r.find("legal"));
  EXPECT_TRUE(project_vertical(Viewer::seller("se_1"), v, {})["reoffer"].is_null());
  EXPECT_TRUE(project_vertical(Viewer::buyer("by_1"), v, {"legal"})["reoffer"].is_null());
  EXPECT_EQ(project_vertical(Viewer::buyer("by_1"), v, {"legal"})["max_sales"], 1);
}

TEST(VerticalVisibility, TheWorldReadsWhatAnySellerReadsAndNoMore) {
  json v = solar_view();
  v["buyer_floor"] = 12.5;  // a later member is nobody's but the operator's
  const json seen = public_vertical(v);
  EXPECT_EQ(seen, project_vertical(Viewer::seller("se_1"), v, {}));
  EXPECT_FALSE(seen.contains("max_sales"));
  EXPECT_FALSE(seen.contains("buyer_floor"));
  EXPECT_EQ(seen["fields"], v["fields"]);
  EXPECT_TRUE(public_vertical(json()).is_null());
}

}  // namespace
}  // namespace leadflow
