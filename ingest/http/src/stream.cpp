#include "leadflow/http/stream.hpp"

#include <utility>

namespace leadflow::http {

bool StreamBody::push(std::string_view bytes) {
  std::lock_guard lock(mu_);
  if (closed_.load(std::memory_order_relaxed) || finished_) return false;
  if (pending_.size() + bytes.size() > max_pending_) {
    // The reader is not taking what it is sent: it goes, rather than make anyone wait for it.
    overflowed_.store(true, std::memory_order_relaxed);
    closed_.store(true, std::memory_order_relaxed);
    pending_.clear();
  } else {
    pending_.append(bytes);
  }
  if (wake_ && !signalled_) {
    signalled_ = true;
    wake_();
  }
  return !closed_.load(std::memory_order_relaxed);
}

void StreamBody::finish() {
  std::lock_guard lock(mu_);
  if (finished_ || closed_.load(std::memory_order_relaxed)) return;
  finished_ = true;
  if (wake_ && !signalled_) {
    signalled_ = true;
    wake_();
  }
}

void StreamBody::attach(std::function<void()> wake) {
  std::lock_guard lock(mu_);
  wake_ = std::move(wake);
  signalled_ = false;
  if (!pending_.empty() || finished_ || closed_.load(std::memory_order_relaxed)) {
    signalled_ = true;
    wake_();
  }
}

void StreamBody::detach() {
  std::lock_guard lock(mu_);
  wake_ = nullptr;
  closed_.store(true, std::memory_order_relaxed);
  pending_.clear();
}

bool StreamBody::take(std::string& out) {
  std::lock_guard lock(mu_);
  signalled_ = false;
  out.append(pending_);
  pending_.clear();
  return finished_ || closed_.load(std::memory_order_relaxed);
}

}  // namespace leadflow::http
