// make_lowered: what it makes runs lowered, and so do the threads that starts; the caller keeps
// its priority.
#include "leadflow/base/priority.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <thread>

namespace leadflow {
namespace {

int nice_of_this_thread() { return getpriority(PRIO_PROCESS, 0); }

TEST(MakeLowered, WhatItMakesAndTheThreadsThatStartsRunLoweredTheCallerDoesNot) {
  // Run from a thread of the test's own, so that the steps are counted from a known value.
  std::thread([] {
    const int before = nice_of_this_thread();
    if (before > 12) GTEST_SKIP() << "the test runs at nice " << before;
    int made = -1, started = -1, nested = -1;
    make_lowered(3, "test", [&] {
      made = nice_of_this_thread();
      std::thread([&] { started = nice_of_this_thread(); }).join();
      make_lowered(4, "test", [&] { nested = nice_of_this_thread(); });
    });
    EXPECT_EQ(made, before + 3);
    EXPECT_EQ(started, before + 3);  // inherited by a thread it starts
    EXPECT_EQ(nested, before + 7);   // steps count from the caller's
    EXPECT_EQ(nice_of_this_thread(), before);
  }).join();
}

TEST(MakeLowered, NeverPastNineteenAndNoStepsKeepsTheCallers) {
  std::thread([] {
    const int before = nice_of_this_thread();
    int made = -1, same = -1;
    make_lowered(40, "test", [&] { made = nice_of_this_thread(); });
    make_lowered(0, "test", [&] { same = nice_of_this_thread(); });
    EXPECT_EQ(made, 19);
    EXPECT_EQ(same, before);
  }).join();
}

}  // namespace
}  // namespace leadflow
