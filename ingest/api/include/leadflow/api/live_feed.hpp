#pragma once
// The live feed behind GET /v1/live. One poller per process reads the leads that
// changed from the store (LeadChangesStore) every interval and fans each change out, in memory,
// to the streams of its subscribers, each projected for its own reader by the one visibility
// model. docs/operations.md ("The live feed") says what bounds it.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "leadflow/domain/lead.hpp"
#include "leadflow/http/stream.hpp"
#include "leadflow/store/lead_changes.hpp"
#include "leadflow/visibility/projections.hpp"
#include "leadflow/visibility/visibility.hpp"

namespace leadflow {

struct LiveOptions {
  std::size_t max_connections = 1000;            // LEADFLOW_LIVE_MAX_CONNECTIONS, per process
  std::chrono::milliseconds poll_interval{500};  // LEADFLOW_LIVE_POLL_MS
  std::chrono::milliseconds heartbeat{15'000};   // a comment to every stream this often
  // A lead's received time is the front's; the worker records it a moment later. Each read goes
  // back this far, so a lead recorded up to this long after it was received is still seen.
  std::chrono::milliseconds overlap{10'000};
  std::size_t buffer_bytes = 256 * 1024;  // a subscriber's bytes not yet taken by its socket
  std::size_t replay = 1024;              // events kept for a reconnect's Last-Event-ID
  std::size_t watched = 10'000;           // pending leads whose decision is looked for
  int page = 2000;                        // leads received, at most, per read
  int retry_ms = 3000;                    // the streams' `retry:`
  // A stream ends after this long and the browser opens a new one (resuming with Last-Event-ID):
  // its reader is authenticated again, so a session that ended or a key revoked stops within it.
  std::chrono::milliseconds max_age{300'000};
  // With no stream open for this long, the poller reads nothing (a worker draining a backlog
  // would pay for reads nobody looks at); a stream opened later starts from then. Longer than
  // `retry_ms`, so a browser reconnecting after max_age misses nothing.
  std::chrono::milliseconds idle_after{30'000};
};

/// The fan-out and its poller. subscribe() from any thread; poll() and heartbeat() run on the
/// poller's thread (start()), or on a test's. Thread-safe.
class LiveFeed {
 public:
  LiveFeed(LeadChangesStore& store, std::int64_t now_ms, LiveOptions options);
  ~LiveFeed();
  LiveFeed(const LiveFeed&) = delete;
  LiveFeed& operator=(const LiveFeed&) = delete;

  /// The poller's thread: poll() every interval, heartbeat() when due.
  void start();
  void stop();

  /// A new stream for `viewer` (its first bytes, `retry:`, already in it), with the kept events
  /// after `last_event_id` it may see; nullptr when the process holds max_connections already.
  std::shared_ptr<http::StreamBody> subscribe(const Viewer& viewer, const SellerLabels& labels,
                                              std::string_view last_event_id);
  /// One read of the store and the fan-out of what changed. false: the store could not say.
  bool poll();
  /// A comment to every stream; the streams older than max_age end; the streams that ended are
  /// let go.
  void heartbeat(std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now());
  std::size_t connections() const;

 private:
  struct Event {
    std::uint64_t seq;
    bool decided;  // else received
    LeadRecord record;
  };
  struct Subscriber {
    Viewer viewer;
    SellerLabels labels;
    std::shared_ptr<http::StreamBody> body;
    std::chrono::steady_clock::time_point opened;
  };
  std::string frame(const Event& e, const Subscriber& s) const;
  void send(Subscriber& s, std::string_view bytes);
  void fan_out(const std::vector<Event>& events);
  void sweep_closed();
  void sweep_closed_locked();  // with mu_ held

  LeadChangesStore& store_;
  const LiveOptions options_;
  const std::string boot_;  // this process's part of every event id

  // The poller's own state (one thread).
  std::int64_t cursor_ms_;  // the latest received time read
  bool page_full_ = false;  // the last read was a full page: the next starts at the cursor
  std::unordered_map<std::string, std::int64_t> seen_;     // id → received, within the overlap
  std::unordered_map<std::string, std::int64_t> pending_;  // watched: id → received
  // Last seen with a stream open; never, at first: nothing is read before the first stream.
  std::chrono::steady_clock::time_point last_listened_{};
  bool idle_ = false;  // no stream for idle_after: nothing read, nothing followed
  std::uint64_t next_seq_ = 1;

  mutable std::mutex mu_;  // subscribers_ and recent_
  std::vector<std::unique_ptr<Subscriber>> subscribers_;
  std::deque<Event> recent_;

  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace leadflow
