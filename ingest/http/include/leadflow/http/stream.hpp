#pragma once
// An answer whose body is written as it comes (Server-Sent Events): the handler sets
// Response::stream, the server writes the head (chunked), then whatever a producer pushes, for as
// long as the connection lives. And a request whose body is read as it comes (an upload:
// Routes::put_streamed): the handler takes it piece by piece from an UploadStream.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace leadflow::http {

/// The body of a streamed answer, between one producer (any thread) and the connection's event
/// loop. Holds at most `max_pending` bytes the loop has not taken yet: a producer whose push would
/// go past that finds the stream overflowed, the loop then closes the connection, and nothing
/// ever waits on a slow reader. The loop takes bytes only once the socket took the previous
/// ones, so what a stalled reader holds is this bound plus the socket's own send buffer.
/// Thread-safe.
class StreamBody {
 public:
  explicit StreamBody(std::size_t max_pending) : max_pending_(max_pending) {}
  StreamBody(const StreamBody&) = delete;
  StreamBody& operator=(const StreamBody&) = delete;

  /// Appends `bytes`. false: the stream is over (the reader went away, the server closed it, or
  /// this push would overflow it, which ends it): the producer forgets it.
  bool push(std::string_view bytes);
  /// The producer ends the stream: the loop writes what is pending, then closes.
  void finish();
  /// The stream ended because a push would have overflowed it.
  bool overflowed() const { return overflowed_.load(std::memory_order_relaxed); }
  /// The stream ended because its reader fell behind: it overflowed, or its socket took nothing
  /// for the server's I/O timeout (mark_stalled).
  bool fell_behind() const { return overflowed() || stalled_.load(std::memory_order_relaxed); }
  /// The stream is over, for whatever reason.
  bool closed() const { return closed_.load(std::memory_order_relaxed); }

  // --- the loop's side -------------------------------------------------------------------------
  /// Called (under the stream's lock, so never after detach()) when bytes or the end wait.
  void attach(std::function<void()> wake);
  /// The connection is gone: no more wake-ups; pushes fail from now on.
  void detach();
  /// The loop closes the connection because its socket took nothing for too long.
  void mark_stalled() { stalled_.store(true, std::memory_order_relaxed); }
  /// Moves the pending bytes to the end of `out`. true: the producer finished or the stream
  /// overflowed, so the connection ends after what was taken.
  bool take(std::string& out);

 private:
  const std::size_t max_pending_;
  std::mutex mu_;
  std::string pending_;
  std::function<void()> wake_;
  bool signalled_ = false;  // a wake-up is on its way and not yet answered by take()
  bool finished_ = false;
  std::atomic<bool> overflowed_{false};
  std::atomic<bool> stalled_{false};
  std::atomic<bool> closed_{false};
};

/// The body of a request handed to its handler as it arrives (Routes::put_streamed), between the
/// connection's event loop (which pushes what it decodes) and the handler on the blocking pool
/// (which takes it). Once `max_pending` bytes wait, the loop reads no more from the socket until
/// the handler took them, so a body of any size costs about twice that bound (what waits, and
/// the piece being read) plus the connection's input buffer. Thread-safe.
class UploadStream {
 public:
  explicit UploadStream(std::size_t max_pending) : max_pending_(max_pending) {}
  UploadStream(const UploadStream&) = delete;
  UploadStream& operator=(const UploadStream&) = delete;

  enum class Read {
    kData,    // `piece` holds the next bytes
    kEnd,     // the body is whole: nothing more comes
    kFailed,  // the body will never be whole: the client went away, stalled or sent a bad
              // framing; the server answers for it (failed_status) whatever the handler does
  };
  /// The handler: waits for the next bytes (which replace `piece`), the end or a failure.
  Read read(std::string& piece);
  /// Why the body failed: the status the server answers (400, 408, 413), 0 when the client
  /// went away (no answer), with one sentence for the problem body.
  int failed_status() const;
  std::string failed_detail() const;

  // --- the loop's side -------------------------------------------------------------------------
  /// Called (under the stream's lock, never after detach()) when the handler took bytes from a
  /// full stream, so that the loop reads again.
  void attach(std::function<void()> wake);
  /// Appends what the loop decoded; it reads no more while full() says so.
  void push(std::string_view bytes);
  bool full() const;
  /// The body is whole.
  void finish();
  /// The body failed (see Read::kFailed); a failure after finish() changes nothing.
  void fail(int status, std::string detail);
  /// The connection is gone: fails the body if it was not whole, and no more wake-ups.
  void detach();

 private:
  const std::size_t max_pending_;
  mutable std::mutex mu_;
  std::condition_variable ready_;
  std::string pending_;
  std::function<void()> wake_;
  bool finished_ = false;
  bool failed_ = false;
  int failed_status_ = 0;
  std::string failed_detail_;
};

}  // namespace leadflow::http
