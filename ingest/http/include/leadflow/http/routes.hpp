#pragma once
// Private: the routing table of the HTTP front, and the exchange (one request and its answer)
// that handlers complete. Handlers keep cpp-httplib's Request/Response types; the server that
// runs them is leadflow's own event-driven one (http_server.hpp).
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include <httplib.h>

namespace leadflow {

class Exchange;

/// Where an exchange goes when it is answered, and where blocking work runs. Implemented by the
/// server; outlives every exchange it hands out.
class ExchangeHost {
 public:
  virtual ~ExchangeHost() = default;
  virtual void complete(std::shared_ptr<Exchange> exchange) = 0;
  virtual void run_blocking(std::function<void()> task) = 0;
  /// A handler threw: turn the answer into a 500.
  virtual void handler_failed(Exchange& exchange, const std::string& what) = 0;
};

/// One request and its answer. The server owns it until a handler takes a reference; whoever
/// holds the last reference may call done() from any thread.
class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(ExchangeHost& host, std::uint64_t connection) : host_(host), connection_(connection) {}

  httplib::Request req;
  httplib::Response res;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  /// `res` is the whole answer: the server writes it. Exactly once, from any thread.
  void done() {
    if (!answered_.exchange(true)) host_.complete(shared_from_this());
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

/// The routes of a listener. Built once before the server starts, then read-only.
class Routes {
 public:
  /// Runs on the blocking pool: may wait on the store, the queue or an outcome.
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  /// Runs on the event loop: must not wait on I/O. Answers through the exchange (done(), at once
  /// or later from another thread) or moves to the pool with Exchange::run_blocking.
  using InlineHandler = std::function<void(const std::shared_ptr<Exchange>&)>;

  void get(const std::string& pattern, Handler h) { add("GET", pattern, std::move(h), nullptr); }
  void post(const std::string& pattern, Handler h) { add("POST", pattern, std::move(h), nullptr); }
  void put(const std::string& pattern, Handler h) { add("PUT", pattern, std::move(h), nullptr); }
  void patch(const std::string& pattern, Handler h) { add("PATCH", pattern, std::move(h), nullptr); }
  void remove(const std::string& pattern, Handler h) { add("DELETE", pattern, std::move(h), nullptr); }
  void post_inline(const std::string& pattern, InlineHandler h) { add("POST", pattern, nullptr, std::move(h)); }

  struct Route {
    std::string method;
    bool literal = false;  // the pattern has no regex syntax: compared as a string
    std::string pattern;
    std::regex re;
    Handler handler;
    InlineHandler inline_handler;
  };
  /// The first route registered for the method whose pattern matches the whole path (HEAD uses
  /// GET's); fills req.matches. nullptr: none.
  const Route* find(httplib::Request& req) const;

  // Hooks, all optional.
  /// Every request, before routing (request ids).
  std::function<void(const httplib::Request&, httplib::Response&)> before;
  /// Every answer with status >= 400 and no body yet (problem bodies).
  std::function<void(const httplib::Request&, httplib::Response&)> on_error;
  /// A handler threw: fill a 500.
  std::function<void(httplib::Response&, const std::string& what)> on_exception;
  /// Every answer once handed to the connection, with the time since the request was read.
  std::function<void(const httplib::Request&, const httplib::Response&, double seconds)> after;

 private:
  void add(const char* method, const std::string& pattern, Handler h, InlineHandler ih);
  std::vector<Route> routes_;
};

}  // namespace leadflow
