// The auction window (leadflow/runtime/auction_window.hpp): how many auctions a worker lets run
// at once, grown while they finish in time and halved when its own work falls behind.
#include "leadflow/runtime/auction_window.hpp"

#include <gtest/gtest.h>

namespace leadflow {
namespace {

using std::chrono::milliseconds;

constexpr SteadyTime kT0{std::chrono::hours(1)};

AuctionWindowOptions options(int initial, int minimum, int maximum) {
  AuctionWindowOptions o;
  o.initial = initial;
  o.minimum = minimum;
  o.maximum = maximum;
  return o;
}

void finish(AuctionWindow& w, int n, SteadyTime at = kT0) {
  for (int i = 0; i < n; ++i) w.finished(at);
}

TEST(AuctionWindow, StartsSmallAndDoublesEachTimeItsAuctionsFinish) {
  AuctionWindow w(options(64, 16, 10000));
  EXPECT_EQ(w.size(), 64);
  finish(w, 64);
  EXPECT_EQ(w.size(), 128);
  finish(w, 128);
  EXPECT_EQ(w.size(), 256);
}

TEST(AuctionWindow, NeverGrowsPastTheConcurrency) {
  AuctionWindow w(options(64, 16, 100));
  finish(w, 1000);
  EXPECT_EQ(w.size(), 100);
  AuctionWindow small(options(64, 16, 20));
  EXPECT_EQ(small.size(), 20);  // the concurrency below the first window bounds it too
}

TEST(AuctionWindow, FallingBehindHalvesItOncePerBurstAndNeverBelowTheMinimum) {
  AuctionWindow w(options(64, 16, 10000));
  finish(w, 192);  // 256
  w.fell_behind(kT0);
  EXPECT_EQ(w.size(), 128);
  // The rest of the same burst: the auctions already in flight when it began.
  w.fell_behind(kT0 + milliseconds(999));
  EXPECT_EQ(w.size(), 128);
  w.fell_behind(kT0 + milliseconds(1000));
  EXPECT_EQ(w.size(), 64);
  for (int s = 2; s < 10; ++s) w.fell_behind(kT0 + std::chrono::seconds(s));
  EXPECT_EQ(w.size(), 16);
}

// A window grown to 128 and halved at kT0.
AuctionWindow halved_to_64() {
  AuctionWindow w(options(64, 16, 10000));
  finish(w, 64);
  w.fell_behind(kT0);
  return w;
}

TEST(AuctionWindow, AfterFallingBehindItGrowsByOnePerWindowOfAuctions) {
  AuctionWindow w = halved_to_64();
  ASSERT_EQ(w.size(), 64);
  finish(w, 64, kT0 + milliseconds(10));
  EXPECT_EQ(w.size(), 65);
  finish(w, 65, kT0 + milliseconds(20));
  EXPECT_EQ(w.size(), 66);
}

TEST(AuctionWindow, ACalmSpellLetsItDoubleAgain) {
  AuctionWindow w = halved_to_64();
  ASSERT_EQ(w.size(), 64);
  finish(w, 1, kT0 + std::chrono::seconds(30));
  finish(w, 64, kT0 + std::chrono::seconds(31));
  EXPECT_EQ(w.size(), 129);
}

}  // namespace
}  // namespace leadflow
