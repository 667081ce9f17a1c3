#pragma once
// The HTTP/2 client's connection pool: per buyer host, its connections and its queue, the stream
// limits, reuse and reconnection, and every request's timers (its deadline, its wait in the queue,
// idle and stuck connections), read from an injected Clock. It owns no socket and no thread: the
// loop (h2_loop.cpp) does the I/O the pool asks for through H2Io, and calls it back with what
// happened. Everything here runs on the loop's thread.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "h2_codec.hpp"
#include "host_resolver.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/delivery/http_client.hpp"
#include "tls_stream.hpp"

namespace leadflow {

struct H2Host;
struct H2Connection;

/// One request from send() to its answer. Owned by the loop's queue, its host's waiting list,
/// then the connection carrying it (until its stream ends, even if it was answered by a timeout
/// before, since the codec may still read its answer).
struct H2Exchange {
  HttpRequest request;
  std::function<void(HttpResponse)> done;
  std::string authority;  // host[:port] as the URL says it
  std::string path;       // path and query, "/" at least
  H2Host* host = nullptr;
  H2Connection* connection = nullptr;
  std::int32_t stream_id = -1;  // once submitted
  SteadyTime submitted;
  SteadyTime sent{};  // given to a connection; the timeout runs from here
  std::multimap<SteadyTime, H2Exchange*>::iterator deadline;
  bool has_deadline = false;
  bool answered = false;  // done() ran (a timeout): the stream only waits for its end
  int replays = 0;        // times the buyer refused it unprocessed and it was sent again
};

/// One TLS connection to a buyer host and its HTTP/2 session. Owned by its host.
struct H2Connection {
  enum class State { kResolving, kConnecting, kReady };
  H2Host* host = nullptr;
  std::uint64_t id = 0;  // unique in its pool, never 0: the loop's epoll data
  State state = State::kResolving;
  SteadyTime opened;
  SteadyTime idle_since;
  SteadyTime pinged_at{};  // the last PING sent while it was idle (never: the epoch)
  std::deque<std::unique_ptr<H2Exchange>> pending;  // given to it before it was ready
  std::unordered_map<std::int32_t, std::unique_ptr<H2Exchange>> streams;
  std::unique_ptr<H2Codec> codec;  // once ready
  bool full = false;  // the codec took no more streams (ids used up, or after a GOAWAY)
  bool dead = false;  // to be closed by reap(); error says why ("" when nothing failed)
  std::string error;

  // The loop's: the socket, what it is connecting to, and what waits to be written.
  std::unique_ptr<TlsStream> tls;
  std::size_t next_address = 0;
  const char* refused = nullptr;  // an address the policy refused
  std::string connect_error;      // why the last address tried failed
  bool out_of_sockets = false;    // no descriptor for it: nothing left this process
  std::string out;                // bytes from the codec not yet taken by TLS
  std::size_t out_offset = 0;
  std::uint32_t watching = 0;  // epoll events asked for
};

/// A buyer endpoint (https://host:port): its connections, its queue, what it speaks.
struct H2Host {
  enum class Protocol { kUnknown, kHttp2, kHttp1 };
  std::string key;
  std::string name;  // for DNS, SNI and the certificate check
  std::string port;
  Protocol protocol = Protocol::kUnknown;
  std::deque<std::unique_ptr<H2Exchange>> waiting;
  std::vector<std::unique_ptr<H2Connection>> connections;
  std::vector<ResolvedAddress> addresses;
  SteadyTime resolved_at{};
  bool resolving = false;
};

/// What the pool asks of the loop that owns the sockets. Each call returns at once; what comes of
/// it reaches the pool later (on_resolved, connection_ready, mark_dead).
class H2Io {
 public:
  virtual ~H2Io() = default;
  /// Looks the host's name up, off the loop; the answer comes back through H2Pool::on_resolved.
  virtual void resolve(const H2Host& host) = 0;
  /// Connects to the next of the host's addresses the policy allows and shakes hands; then
  /// H2Pool::connection_ready, or mark_dead saying why not.
  virtual void connect(H2Connection& c) = 0;
  /// Hands the codec what the socket holds (mark_dead if the connection broke).
  virtual void read(H2Connection& c) = 0;
  /// Writes what the codec has to send, as far as the socket takes it.
  virtual void flush(H2Connection& c) = 0;
  /// The connection is about to close: its socket leaves the loop.
  virtual void release(H2Connection& c) = 0;
};

/// The pool. Owned by the HTTP/2 client's loop and used only on its thread; `clock`, `http1` and
/// `io` outlive it.
class H2Pool {
 public:
  H2Pool(const CurlClientOptions& options, const Clock& clock, HttpClient& http1, H2Io& io);
  ~H2Pool();
  H2Pool(const H2Pool&) = delete;
  H2Pool& operator=(const H2Pool&) = delete;

  /// A request from send(): queued for its host, then given to a connection with room.
  void admit(std::unique_ptr<H2Exchange> ex);
  /// Gives the host's waiting requests to connections with room, opening connections as allowed.
  void dispatch(H2Host& h);
  /// What the resolver found for a host.
  void on_resolved(Resolution r);
  /// TLS is up on `c` and chose `alpn`: HTTP/2 starts, or the host is handed to HTTP/1.1.
  void connection_ready(H2Connection& c, const std::string& alpn);
  /// Marks `c` to be closed by reap(); `error` is "" when nothing on it failed.
  void mark_dead(H2Connection& c, std::string error);
  /// Closes the connections marked dead, and sends again what their buyers refused unprocessed.
  void reap();

  /// When the oldest request still waiting for a connection was submitted, if any waits.
  std::optional<SteadyTime> oldest_waiting() const;
  /// The earliest deadline of a request sent and not answered, or SteadyTime::max().
  SteadyTime next_deadline() const;
  /// Answers every request whose deadline has passed as timed out (its stream is cancelled, its
  /// connection serves the others). `last_stall` is when the loop last ran late: a timeout that
  /// spans it is marked stalled_here.
  void expire_overdue(SteadyTime last_stall);
  /// Requests that waited too long for a connection, connections not made in time, and idle
  /// connections past their time: the pool's slow timers, run every few hundred milliseconds.
  void housekeeping();
  /// Fails everything queued or in flight as shut down, and closes every connection.
  void shut_down();

  /// Answers `ex` with `r`, its `elapsed` from when it was sent.
  void finish(H2Exchange& ex, HttpResponse r) const;
  /// Answers `ex` with a transport error and no status.
  void fail(H2Exchange& ex, std::string error) const;
  const Clock& clock() const { return clock_; }

  /// The host with this key, or nullptr (for tests, and for the loop's errors).
  H2Host* host(const std::string& key);

 private:
  std::size_t room(const H2Connection& c) const;
  /// Answers `ex` as not sent if it waited in the queue past its limit.
  bool expired(H2Exchange& ex, SteadyTime now) const;
  bool may_open(const H2Host& h) const;
  void assign(H2Connection& c, std::unique_ptr<H2Exchange> ex);
  void submit(H2Connection& c, std::unique_ptr<H2Exchange> ex);
  void stream_ended(H2Connection& c, H2StreamEnd end);
  bool replay(std::unique_ptr<H2Exchange>& ex);
  void forward(std::unique_ptr<H2Exchange> ex);
  void clear_deadline(H2Exchange& ex);
  H2Connection& open_connection(H2Host& h);
  void close_connection(H2Connection& c);

  const CurlClientOptions options_;
  const Clock& clock_;
  HttpClient& http1_;
  H2Io& io_;
  std::unordered_map<std::string, H2Host> hosts_;  // every buyer host seen (never dropped)
  std::uint64_t next_id_ = 1;
  std::deque<H2Connection*> dead_;  // marked, not closed yet
  std::vector<H2Host*> replayed_;   // hosts with refused streams queued again, to dispatch
  std::multimap<SteadyTime, H2Exchange*> deadlines_;  // every sent request not answered
};

/// Why a connection is not ready yet ("resolving buyer.example", "TLS handshake with ...").
std::string describe_unready(const H2Connection& c);

}  // namespace leadflow
