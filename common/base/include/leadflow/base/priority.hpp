#pragma once
#include <functional>
#include <string_view>

namespace leadflow {

/// Runs `make` on a thread of its own whose CPU nice value is `steps` above the caller's (at most
/// 19), and waits for it. A thread's nice value is inherited by the threads it starts, so what
/// `make` starts (a service's loops and pools) runs lowered while the caller keeps its priority.
/// Lowering needs no privilege; a refusal is logged as `<what>_nice_failed` and `make` runs at
/// the caller's priority. `steps` <= 0 runs it at the caller's.
void make_lowered(int steps, std::string_view what, const std::function<void()>& make);

}  // namespace leadflow
