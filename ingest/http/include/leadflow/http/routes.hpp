#pragma once
// The routing table of a leadflow HTTP listener, and the exchange (one request and its answer)
// that handlers complete. The server that runs them is leadflow's own event-driven one
// (server.hpp).
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "leadflow/http/message.hpp"

namespace leadflow {

class Exchange;

/// Where an exchange goes when it is answered, and where blocking work runs. Implemented by the
/// server; outlives every exchange it hands out.
class ExchangeHost {
 public:
  virtual ~ExchangeHost() = default;
  virtual void complete(std::shared_ptr<Exchange> exchange) = 0;
  /// complete() once `when` has come: the loop that owns the connection keeps the exchange
  /// until then and writes it at that time.
  virtual void complete_at(std::shared_ptr<Exchange> exchange,
                           std::chrono::steady_clock::time_point when) = 0;
  virtual void run_blocking(std::function<void()> task) = 0;
  /// A handler threw: turn the answer into a 500.
  virtual void handler_failed(Exchange& exchange, const std::string& what) = 0;
};

/// One request and its answer. The server owns it until a handler takes a reference; whoever
/// holds the last reference may call done() from any thread.
class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(ExchangeHost& host, std::uint64_t connection) : host_(host), connection_(connection) {}
  Exchange(ExchangeHost& host, std::uint64_t connection, http::Request request)
      : req(std::move(request)), host_(host), connection_(connection) {}

  http::Request req;
  http::Response res;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  /// Why the server refused a request it could not read (the parser's words), for Routes::on_error.
  std::string refusal;

  /// `res` is the whole answer: the server writes it. Exactly once (done() or done_at()), from
  /// any thread.
  void done() {
    if (!answered_.exchange(true)) host_.complete(shared_from_this());
  }
  /// `res` is the whole answer, to be written once `when` has come (at once if it has passed).
  /// The connection's own event loop keeps it until then: no thread waits and no timer is made
  /// per answer, so thousands of answers may be deferred at once. For an answer that must not
  /// leave before a given time (a simulated buyer's latency: `started + latency`). A server
  /// that stops writes every deferred answer at once rather than wait for its time. Like done(),
  /// exactly once, from any thread.
  void done_at(std::chrono::steady_clock::time_point when) {
    if (!answered_.exchange(true)) host_.complete_at(shared_from_this(), when);
  }
  /// Runs `work` on the blocking pool, then done(). For a handler on the event loop that finds
  /// it must wait on a store, a disk or a buyer.
  void run_blocking(std::function<void(Exchange&)> work) {
    host_.run_blocking([self = shared_from_this(), work = std::move(work)] {
      self->run_guarded(work);
      self->done();
    });
  }
  /// Runs `task` on the blocking pool, apart from this exchange (bookkeeping after an answer).
  void run_detached(std::function<void()> task) { host_.run_blocking(std::move(task)); }

  std::uint64_t connection() const { return connection_; }
  /// Runs `work`; an exception becomes a logged 500.
  void run_guarded(const std::function<void(Exchange&)>& work);

 private:
  ExchangeHost& host_;
  const std::uint64_t connection_;
  std::atomic<bool> answered_{false};
};

/// The routes of a listener. Built once before the server starts, then read-only (so any number
/// of threads may route at once).
///
/// A pattern is a path whose segments may be parameters: "/v1/leads/{id}" takes "/v1/leads/ld_1"
/// (a parameter is one non-empty segment, http::Request::match(1) here). A last segment "*"
/// takes the rest of the path, any number of segments or none: "/*" takes every path, so it is
/// registered last (the dashboard's client routes). The pattern is also the
/// route's name in metrics (http::Request::route()), so a label can never drift from its route.
class Routes {
 public:
  /// Runs on the blocking pool: may wait on the store, the queue or an outcome.
  using Handler = std::function<void(const http::Request&, http::Response&)>;
  /// Runs on the event loop: must not wait on I/O. Answers through the exchange (done(), at once
  /// or later from another thread) or moves to the pool with Exchange::run_blocking.
  using InlineHandler = std::function<void(const std::shared_ptr<Exchange>&)>;

  void get(std::string pattern, Handler h) {
    add("GET", std::move(pattern), std::move(h), nullptr);
  }
  void post(std::string pattern, Handler h) {
    add("POST", std::move(pattern), std::move(h), nullptr);
  }
  void put(std::string pattern, Handler h) {
    add("PUT", std::move(pattern), std::move(h), nullptr);
  }
  void patch(std::string pattern, Handler h) {
    add("PATCH", std::move(pattern), std::move(h), nullptr);
  }
  void remove(std::string pattern, Handler h) {
    add("DELETE", std::move(pattern), std::move(h), nullptr);
  }
  void post_inline(std::string pattern, InlineHandler h) {
    add("POST", std::move(pattern), nullptr, std::move(h));
  }
  /// A PUT whose body may reach `max_body_bytes`, above the listener's limit
  /// (http::ParseLimits::max_body_bytes): an upload. The server asks body_limit() once a
  /// request's header section is in, so only this route's requests may be that large, and
  /// answers 413 past it.
  void put_upload(std::string pattern, std::size_t max_body_bytes, Handler h) {
    add("PUT", std::move(pattern), std::move(h), nullptr);
    routes_.back().max_body_bytes = max_body_bytes;
  }

  /// put_upload, but a body larger than the listener's limit comes to the handler as it
  /// arrives (http::Request::upload): the handler runs once the header section is in and reads
  /// the body piece by piece, so the server never holds it whole. A smaller body comes whole, in
  /// body(), as on every route.
  void put_streamed(std::string pattern, std::size_t max_body_bytes, Handler h) {
    put_upload(std::move(pattern), max_body_bytes, std::move(h));
    routes_.back().streamed = true;
  }

  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;  // the pattern split at '/'; "{...}" takes any segment
    Handler handler;
    InlineHandler inline_handler;
    std::size_t max_body_bytes = 0;  // 0: the listener's limit
    bool streamed = false;           // put_streamed
  };
  /// The first route registered for the method whose pattern matches the whole path (HEAD uses
  /// GET's); records the route and its parameters in `req`. nullptr: none.
  const Route* find(http::Request& req) const;
  /// The body limit of the route `method` and `path` go to, when it has one of its own
  /// (put_upload); 0 otherwise.
  std::size_t body_limit(std::string_view method, std::string_view path) const;
  /// Whether a route has a body limit of its own.
  bool has_body_limits() const;
  /// Whether the route `method` and `path` go to takes its body as it arrives (put_streamed).
  bool streams_body(std::string_view method, std::string_view path) const;

  // Hooks, all optional.
  /// Every request, before routing (request ids).
  std::function<void(const http::Request&, http::Response&)> before;
  /// Every answer with status >= 400 and no body yet (problem bodies). `refusal` says why the
  /// server refused a request it could not read ("" otherwise).
  std::function<void(const http::Request&, http::Response&, std::string_view refusal)> on_error;
  /// A handler threw: fill a 500.
  std::function<void(http::Response&, const std::string& what)> on_exception;
  /// Every answer once handed to the connection, with the time since the request was read.
  std::function<void(const http::Request&, const http::Response&, double seconds)> after;

 private:
  using Match = std::pair<std::uint32_t, std::uint32_t>;  // a parameter's offset and size
  static bool matches(const Route& r, std::string_view path, Match* matches, std::size_t& count);
  void add(const char* method, std::string pattern, Handler h, InlineHandler ih);
  std::vector<Route> routes_;
};

}  // namespace leadflow
