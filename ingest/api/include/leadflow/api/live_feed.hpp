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
#include <unordered_set>
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
  std::size_t buffer_bytes = 256 * 1024;         // a subscriber's bytes not yet taken by its socket
  std::size_t replay = 1024;                     // events kept for a reconnect's Last-Event-ID
  // Leads sent as received and not yet decided, remembered so that a lead first read decided
  // (received and decided between two reads) is sent as received first; past this many, the
  // oldest are forgotten (and such a lead, decided later, is sent as received a second time).
  std::size_t watched = 10'000;
  int page = 2000;  // leads changed, at most, per read (a poll reads up to 8 pages)
  // A reconnect whose Last-Event-ID the process no longer keeps resumes from the store if at
  // most this many leads changed since its id's position; else from now, told by a reset event.
  int resume = 10'000;
  int retry_ms = 3000;  // the streams' `retry:`
  // A stream ends after this long and the browser opens a new one (resuming with Last-Event-ID):
  // its reader is authenticated again, so a session that ended or a key revoked stops within it.
  std::chrono::milliseconds max_age{300'000};
  // With no stream open for this long, the poller reads nothing (a worker draining a backlog
  // would pay for reads nobody looks at); a stream opened later starts from the store's position
  // then. Longer than `retry_ms`, so a browser reconnecting after max_age misses nothing.
  std::chrono::milliseconds idle_after{30'000};
};

/// A stream opened, or why not: `body` is nullptr when refused.
struct LiveSubscription {
  enum class Refused { kNone, kFull, kUnavailable };
  std::shared_ptr<http::StreamBody> body;
  Refused refused = Refused::kNone;  // kUnavailable: the store could not answer a resume
};

/// The fan-out and its poller. subscribe() from any thread (it may read the store: not on an
/// event loop); poll() and heartbeat() run on the poller's thread (start()), or on a test's.
/// Thread-safe.
class LiveFeed {
 public:
  LiveFeed(LeadChangesStore& store, LiveOptions options);
  ~LiveFeed();
  LiveFeed(const LiveFeed&) = delete;
  LiveFeed& operator=(const LiveFeed&) = delete;

  /// The poller's thread: poll() every interval, heartbeat() when due.
  void start();
  void stop();

  /// A new stream for `viewer` (its first bytes, `retry:`, already in it), with what it missed
  /// after `last_event_id`: from the events this process keeps, else from the store (at most
  /// `resume` leads changed), else a reset event and from now. Refused kFull when the process
  /// holds max_connections already, kUnavailable when the store could not answer the resume.
  LiveSubscription subscribe(const Viewer& viewer, const SellerLabels& labels,
                             std::string_view last_event_id);
  /// One read of the store (a few pages at most) and the fan-out of what changed. false: the
  /// store could not say.
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
    std::string position;  // the store's: every change before this event's is at or before it
  };
  struct Subscriber {
    Viewer viewer;
    SellerLabels labels;
    std::shared_ptr<http::StreamBody> body;
    std::chrono::steady_clock::time_point opened;
    bool catching_up = false;  // resuming from the store: the fan-out's frames wait in `held`
    std::vector<std::string> held;
  };
  std::string frame(const Event& e, const Subscriber& s) const;
  void send(Subscriber& s, std::string_view bytes);
  bool read_page(const std::string& from, bool& more);
  void fan_out(const std::vector<Event>& events, const std::string& from, const std::string& to);
  void remember_received(const std::string& id);
  // The store's events after `position` up to `upto`, for one subscriber: kOk with them sent,
  // kNotFound/kLimitReached for a reset, kUnavailable.
  StoreStatus catch_up(Subscriber& s, const std::string& position, const std::string& upto,
                       std::uint64_t seq, std::vector<std::string>& frames);
  void sweep_closed();
  void sweep_closed_locked();  // with mu_ held

  LeadChangesStore& store_;
  const LiveOptions options_;
  const std::string boot_;  // this process's part of every event id

  // The poller's own state (one thread).
  std::unordered_set<std::string> received_;  // sent as received, not yet read decided
  std::deque<std::string> received_order_;    // the same, oldest first (may hold ids decided)
  // Last seen with a stream open; never, at first: nothing is read before the first stream.
  std::chrono::steady_clock::time_point last_listened_{};

  mutable std::mutex mu_;  // position_, next_seq_, subscribers_ and recent_
  // The store's position the fan-out has reached: every change at or before it was sent to the
  // streams (or happened before they opened). Empty: not following the store (idle).
  std::string position_;
  std::uint64_t next_seq_ = 1;
  std::vector<std::unique_ptr<Subscriber>> subscribers_;
  std::deque<Event> recent_;

  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace leadflow
