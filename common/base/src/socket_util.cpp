#include "leadflow/base/socket_util.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <cstdlib>

namespace leadflow {

bool raise_listen_backlog(int listening_fd) { return ::listen(listening_fd, SOMAXCONN) == 0; }

void shut_down_accepted(int port, int how) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return;
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == ::dirfd(dir)) continue;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      continue;
    int local_port = -1;
    if (addr.ss_family == AF_INET)
      local_port = ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
    else if (addr.ss_family == AF_INET6)
      local_port = ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
    if (local_port != port) continue;
    int type = 0, listening = 0;
    socklen_t opt_len = sizeof type;
    if (::getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_TYPE, &type, &opt_len) != 0 ||
        type != SOCK_STREAM)
      continue;
    opt_len = sizeof listening;
    if (::getsockopt(static_cast<int>(fd), SOL_SOCKET, SO_ACCEPTCONN, &listening, &opt_len) != 0 ||
        listening)
      continue;
    ::shutdown(static_cast<int>(fd), how);
  }
  ::closedir(dir);
}

unsigned long raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return static_cast<unsigned long>(limit.rlim_cur);
}

}  // namespace leadflow
