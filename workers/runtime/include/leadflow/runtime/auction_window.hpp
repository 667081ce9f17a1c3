#pragma once
// How many auctions a worker lets run at once, learned as it goes (docs/operations.md, "The
// auction window"): few at first, doubling while they finish in time, halved when the worker's
// own work falls behind (a ping held up in this process), like TCP's congestion window. A
// worker that took in 10,000 auctions at once sent 30,000 pings in one burst, and nearly all of
// them missed their buyers' time in this process's own client; the lead then went round again.
#include <algorithm>
#include <chrono>
#include <optional>

#include "leadflow/base/clock.hpp"

namespace leadflow {

struct AuctionWindowOptions {
  int initial = 64;     // auctions at once when the worker starts
  int minimum = 16;     // never fewer, however often it falls behind (nor above maximum)
  int maximum = 10000;  // WorkerOptions::concurrency: never more
  /// One halving per burst of trouble: the auctions in flight when it began all see it.
  std::chrono::milliseconds calm{1000};
  /// So long without trouble and the window doubles again as at the start.
  std::chrono::milliseconds recover{30'000};
};

/// Not thread-safe: the worker calls it under its own lock.
class AuctionWindow {
 public:
  explicit AuctionWindow(AuctionWindowOptions o)
      : o_(o),
        top_(std::max(1, o.maximum)),
        floor_(std::min(o.minimum, top_)),
        size_(std::clamp(o.initial, floor_, top_)),
        threshold_(top_) {}

  /// Auctions that may run at once now.
  int size() const { return size_; }

  /// An auction ended at `now` with its work on time: one more while under the threshold (the
  /// window doubles each time its auctions finish), else one more per window's worth of them;
  /// after `recover` without trouble, the threshold is lifted.
  void finished(SteadyTime now) {
    if (halved_ && now - *halved_ >= o_.recover) {
      halved_.reset();
      threshold_ = top_;
    }
    if (size_ < threshold_) {
      size_ = std::min(top_, size_ + 1);
    } else if (++finished_at_size_ >= size_) {
      finished_at_size_ = 0;
      size_ = std::min(top_, size_ + 1);
    }
  }

  /// The worker's own work fell behind at `now`: half as many from now on, and the threshold
  /// there, unless it was halved within `calm` (the same burst).
  void fell_behind(SteadyTime now) {
    if (halved_ && now - *halved_ < o_.calm) return;
    halved_ = now;
    size_ = std::max(floor_, size_ / 2);
    threshold_ = size_;
    finished_at_size_ = 0;
  }

 private:
  AuctionWindowOptions o_;
  int top_;
  int floor_;
  int size_;
  int threshold_;
  int finished_at_size_ = 0;  // auctions finished since the window last grew past the threshold
  std::optional<SteadyTime> halved_;
};

}  // namespace leadflow
