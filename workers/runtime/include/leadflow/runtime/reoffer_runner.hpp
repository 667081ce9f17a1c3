#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "leadflow/auction/distributor.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/store/intake.hpp"
#include "leadflow/store/reoffers.hpp"

namespace leadflow {

struct ReofferRunnerOptions {
  /// Re-offers in flight at once in this process (LEADFLOW_REOFFER_CONCURRENCY); 0: this process
  /// runs none (another does, or second chances are off).
  int concurrency = 16;
  std::chrono::milliseconds poll{250};     // how often the schedule is read for due re-offers
  std::chrono::milliseconds lease{60000};  // a claim's hold; past it another worker may run it
};

/// Runs the re-offers that come due (docs/reoffers.md) beside a process's live auctions, on
/// the same Distributor, in the capacity live leads leave: at most `concurrency` re-offers in
/// flight, and none claimed while `live_busy()` says live leads are waiting for an auction slot,
/// so a backlog of re-offers never holds a live lead back. A claim is leased in the store; the
/// re-offer's outcome is recorded in one transaction that also ends the claim, so a re-offer a
/// crash interrupted runs again once its lease ends (its post intents make the same buyers be
/// asked again first) and one that was recorded never runs twice. start()/stop() from one
/// thread; the rest is internal.
class ReofferRunner {
 public:
  ReofferRunner(ReofferStore& schedule, IntakeStore& leads, Distributor& distributor,
                const Clock& clock, std::function<bool()> live_busy, ReofferRunnerOptions options);
  ~ReofferRunner();
  ReofferRunner(const ReofferRunner&) = delete;
  ReofferRunner& operator=(const ReofferRunner&) = delete;

  void start();
  /// Stops claiming, waits for the re-offers in flight and records them.
  void stop();
  /// Re-offers in flight now. Any thread.
  int running() const { return running_.load(); }

 private:
  void loop();
  void start_due();
  void record_finished();

  ReofferStore& schedule_;
  IntakeStore& leads_;
  Distributor& distributor_;
  const Clock& clock_;
  std::function<bool()> live_busy_;
  ReofferRunnerOptions options_;
  std::atomic<int> running_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Decision> finished_;  // guarded by mu_
  bool stopping_ = false;           // guarded by mu_
  std::thread thread_;
};

}  // namespace leadflow
