// A buyer's cap and budget windows on plain values: they start where TimeZone says the buyer's
// local hour, day, week and month start, so an hourly cap follows the same hours as the reports.
#include <gtest/gtest.h>

#include <string>

#include "buyer_caps.hpp"
#include "leadflow/base/time_format.hpp"

namespace leadflow::testing {
namespace {

std::int64_t ms(const char* utc) { return *parse_rfc3339_ms(utc); }

std::int64_t since(const std::vector<NamedCap>& caps, const std::string& name, CapUnit unit) {
  for (const auto& c : caps)
    if (c.name == name && c.window.unit == unit) return c.window.since_ms;
  ADD_FAILURE() << "no " << name << " window";
  return -1;
}

Buyer capped_in(const char* zone) {
  Buyer b;
  b.caps = {{"hourly", 1}, {"daily", 5}, {"daily_budget_cents", 2000}};
  b.schedule = {{"timezone", zone}};
  return b;
}

TEST(BuyerCaps, AnHourlyWindowIsALocalHourAtOneOffset) {
  const Buyer lord_howe = capped_in("Australia/Lord_Howe");
  // 2026-04-05 02:00 +11:00 falls back to 01:30 +10:30 (15:00 UTC).
  const auto before = cap_windows(lord_howe, ms("2026-04-04T14:40:00Z") / 1000);  // 01:40 +11
  EXPECT_EQ(since(before, "hourly", CapUnit::kLeads), ms("2026-04-04T14:00:00Z"));
  const auto repeated = cap_windows(lord_howe, ms("2026-04-04T15:10:00Z") / 1000);  // 01:40 +10:30
  EXPECT_EQ(since(repeated, "hourly", CapUnit::kLeads), ms("2026-04-04T15:00:00Z"));
  // The day is one day, begun at the local midnight (+11:00).
  EXPECT_EQ(since(repeated, "daily", CapUnit::kLeads), ms("2026-04-04T13:00:00Z"));
  EXPECT_EQ(since(repeated, "daily", CapUnit::kCents), ms("2026-04-04T13:00:00Z"));
  const auto after = cap_windows(lord_howe, ms("2026-04-04T15:40:00Z") / 1000);  // 02:10 +10:30
  EXPECT_EQ(since(after, "hourly", CapUnit::kLeads), ms("2026-04-04T15:30:00Z"));

  // Kolkata (+05:30, no DST): hours start at hh:00 local, hh:30 UTC.
  const Buyer kolkata = capped_in("Asia/Kolkata");
  EXPECT_EQ(
      since(cap_windows(kolkata, ms("2026-04-04T15:10:00Z") / 1000), "hourly", CapUnit::kLeads),
      ms("2026-04-04T14:30:00Z"));
  // No zone: UTC.
  Buyer utc = capped_in("UTC");
  utc.schedule = nullptr;
  EXPECT_EQ(since(cap_windows(utc, ms("2026-04-04T15:10:00Z") / 1000), "hourly", CapUnit::kLeads),
            ms("2026-04-04T15:00:00Z"));
}

}  // namespace
}  // namespace leadflow::testing
