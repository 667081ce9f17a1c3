#include "leadflow/base/priority.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>

#include "leadflow/base/log.hpp"

namespace leadflow {

void make_lowered(int steps, std::string_view what, const std::function<void()>& make) {
  std::thread([&] {
    if (steps > 0) {
      // On Linux a thread's nice value is its own (PRIO_PROCESS with 0 names the calling thread).
      errno = 0;
      const int now = getpriority(PRIO_PROCESS, 0);
      const int nice = std::min(19, (errno == 0 ? now : 0) + steps);
      if (setpriority(PRIO_PROCESS, 0, nice) != 0)
        log(LogLevel::kWarn, std::string(what) + "_nice_failed",
            {{"nice", nice}, {"error", std::strerror(errno)}});
    }
    make();
  }).join();
}

}  // namespace leadflow
