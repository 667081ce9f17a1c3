#pragma once
#include <signal.h>

namespace leadflow {

/// How a leadflow process waits for SIGTERM/SIGINT: constructed before any thread is
/// started (every thread inherits the mask, so only the main thread's wait sees them; SIGPIPE is
/// ignored so a client hanging up mid-answer cannot kill the process), then wait().
class StopSignals {
 public:
  /// Call first in main, before any thread exists.
  StopSignals();
  /// Blocks until SIGTERM or SIGINT arrives; returns its name ("SIGTERM" or "SIGINT").
  const char* wait() const;

 private:
  sigset_t set_;
};

}  // namespace leadflow
