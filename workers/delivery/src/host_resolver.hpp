#pragma once
// Name resolution off the event loop: getaddrinfo blocks for as long as DNS takes, and the loop
// serving every buyer must never wait on one name.
#include <sys/socket.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace leadflow {

/// One address a name resolved to, ready for connect().
struct ResolvedAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

/// What one lookup found: its addresses, or why there are none.
struct Resolution {
  std::string key;  // the caller's, to find what asked
  std::string name;
  std::string port;
  std::vector<ResolvedAddress> addresses;
  std::string error;  // "" when addresses were found
};

/// Resolves names (TCP, any family) one at a time on a thread of its own and hands each answer to
/// `on_resolved`, on that thread. Owned by one client; resolve() is thread-safe. The destructor
/// drops lookups not started and waits for the one under way.
class HostResolver {
 public:
  explicit HostResolver(std::function<void(Resolution)> on_resolved);
  ~HostResolver();
  HostResolver(const HostResolver&) = delete;
  HostResolver& operator=(const HostResolver&) = delete;

  void resolve(std::string key, std::string name, std::string port);

 private:
  void run();

  std::function<void(Resolution)> on_resolved_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Resolution> queue_;  // guarded by mutex_: names still to look up
  bool stopping_ = false;         // guarded by mutex_
  std::thread thread_;            // last: starts after everything above exists
};

}  // namespace leadflow
