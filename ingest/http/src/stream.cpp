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

UploadStream::Read UploadStream::read(std::string& piece) {
  piece.clear();
  std::unique_lock lock(mu_);
  ready_.wait(lock, [this] { return !pending_.empty() || finished_ || failed_; });
  if (failed_) return Read::kFailed;
  if (pending_.empty()) return Read::kEnd;
  const bool was_full = pending_.size() >= max_pending_;
  piece.swap(pending_);
  // The loop stopped reading once the stream was full: it may read again.
  if (was_full && wake_) wake_();
  return Read::kData;
}

int UploadStream::failed_status() const {
  std::lock_guard lock(mu_);
  return failed_ ? failed_status_ : 0;
}

std::string UploadStream::failed_detail() const {
  std::lock_guard lock(mu_);
  return failed_detail_;
}

void UploadStream::attach(std::function<void()> wake) {
  std::lock_guard lock(mu_);
  wake_ = std::move(wake);
}

void UploadStream::push(std::string_view bytes) {
  if (bytes.empty()) return;
  {
    std::lock_guard lock(mu_);
    if (finished_ || failed_) return;
    pending_.append(bytes);
  }
  ready_.notify_one();
}

bool UploadStream::full() const {
  std::lock_guard lock(mu_);
  return pending_.size() >= max_pending_;
}

void UploadStream::finish() {
  {
    std::lock_guard lock(mu_);
    if (failed_) return;
    finished_ = true;
  }
  ready_.notify_one();
}

void UploadStream::fail(int status, std::string detail) {
  {
    std::lock_guard lock(mu_);
    if (finished_ || failed_) return;
    failed_ = true;
    failed_status_ = status;
    failed_detail_ = std::move(detail);
    pending_.clear();
    pending_.shrink_to_fit();
  }
  ready_.notify_one();
}

void UploadStream::detach() {
  fail(0, "");
  std::lock_guard lock(mu_);
  wake_ = nullptr;
}

}  // namespace leadflow::http
