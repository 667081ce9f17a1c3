#include "host_resolver.hpp"

#include <netdb.h>

#include <cstring>
#include <utility>

namespace leadflow {

HostResolver::HostResolver(std::function<void(Resolution)> on_resolved)
    : on_resolved_(std::move(on_resolved)), thread_([this] { run(); }) {}

HostResolver::~HostResolver() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void HostResolver::resolve(std::string key, std::string name, std::string port) {
  {
    std::lock_guard lock(mutex_);
    Resolution r;
    r.key = std::move(key);
    r.name = std::move(name);
    r.port = std::move(port);
    queue_.push_back(std::move(r));
  }
  wake_.notify_one();
}

void HostResolver::run() {
  for (;;) {
    Resolution r;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      r = std::move(queue_.front());
      queue_.pop_front();
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(r.name.c_str(), r.port.c_str(), &hints, &found);
    if (rc != 0) {
      r.error = rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc);
    } else {
      for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
        if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
        ResolvedAddress address;
        std::memcpy(&address.storage, a->ai_addr, a->ai_addrlen);
        address.length = a->ai_addrlen;
        r.addresses.push_back(address);
      }
      ::freeaddrinfo(found);
      if (r.addresses.empty()) r.error = "no address";
    }
    on_resolved_(std::move(r));
  }
}

}  // namespace leadflow
