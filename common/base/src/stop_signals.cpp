#include "leadflow/base/stop_signals.hpp"

#include <pthread.h>

namespace leadflow {

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

const char* StopSignals::wait() const {
  int sig = 0;
  sigwait(&set_, &sig);
  return sig == SIGTERM ? "SIGTERM" : "SIGINT";
}

}  // namespace leadflow
