// A streamed answer's body between its producer and the connection's loop, without a server:
// what the loop takes, one wake-up per batch, the bound that ends a stream no one takes from, and
// the ends (the producer's, the connection's, a stall).
#include <gtest/gtest.h>

#include <string>

#include "leadflow/http/stream.hpp"

namespace leadflow::http {
namespace {

TEST(StreamBody, TheLoopTakesWhatWasPushedAndIsWokenOncePerBatch) {
  StreamBody body(64);
  EXPECT_TRUE(body.push("a"));  // before the loop attached: kept
  int wakes = 0;
  body.attach([&] { ++wakes; });
  EXPECT_EQ(wakes, 1);  // something was waiting
  EXPECT_TRUE(body.push("b"));
  EXPECT_TRUE(body.push("c"));
  EXPECT_EQ(wakes, 1);  // the loop has not taken yet: no second wake-up
  std::string out;
  EXPECT_FALSE(body.take(out));
  EXPECT_EQ(out, "abc");
  EXPECT_TRUE(body.push("d"));
  EXPECT_EQ(wakes, 2);
}

TEST(StreamBody, APushPastTheBoundEndsTheStreamAsFallenBehind) {
  StreamBody body(8);
  body.attach([] {});
  EXPECT_TRUE(body.push("12345"));
  EXPECT_FALSE(body.push("67890"));  // 10 > 8: the reader is not taking its bytes
  EXPECT_TRUE(body.overflowed());
  EXPECT_TRUE(body.fell_behind());
  EXPECT_TRUE(body.closed());
  std::string out;
  EXPECT_TRUE(body.take(out));  // ended, and nothing more is written to it
  EXPECT_EQ(out, "");
  EXPECT_FALSE(body.push("x"));
}

TEST(StreamBody, TheProducersEndIsWrittenAfterWhatIsPending) {
  StreamBody body(64);
  body.attach([] {});
  body.push("last");
  body.finish();
  EXPECT_FALSE(body.push("more"));
  EXPECT_FALSE(body.fell_behind());
  std::string out;
  EXPECT_TRUE(body.take(out));
  EXPECT_EQ(out, "last");
}

TEST(StreamBody, AConnectionGoneOrStalledEndsItForTheProducer) {
  StreamBody gone(64);
  int wakes = 0;
  gone.attach([&] { ++wakes; });
  gone.detach();
  EXPECT_FALSE(gone.push("x"));
  EXPECT_EQ(wakes, 0);  // no wake-up for a connection that is gone
  EXPECT_TRUE(gone.closed());
  EXPECT_FALSE(gone.fell_behind());

  StreamBody stalled(64);
  stalled.attach([] {});
  stalled.mark_stalled();
  stalled.detach();
  EXPECT_TRUE(stalled.fell_behind());
}

}  // namespace
}  // namespace leadflow::http
