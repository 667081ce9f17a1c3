#pragma once

namespace leadflow {

/// Listens again on an already listening socket with the system's largest backlog. cpp-httplib
/// 0.11 listens with a backlog of 5: a burst of new connections (64 keep-alive clients starting
/// at once) overflows it, the kernel drops SYNs, and those clients retry only a second later.
/// Linux updates the backlog in place. Returns false if listen() fails.
bool raise_listen_backlog(int listening_fd);

/// Shuts down, with `how` (SHUT_RD or SHUT_RDWR), every accepted TCP socket of this process whose
/// local port is `port` (never the listener). cpp-httplib 0.11's stop() otherwise waits out the
/// keep-alive timeout of each idle connection. SHUT_RD lets a request in progress still write its
/// answer, then the connection ends. Linux only (/proc/self/fd); elsewhere it does nothing.
void shut_down_accepted(int port, int how);

/// Raises this process's soft limit on open descriptors to its hard limit, as servers do: the
/// front holds up to 10,000 client connections and a worker thousands of buyer connections, far
/// past the usual soft limit of 1,024. Returns the soft limit now in force (0 if unknown).
unsigned long raise_open_file_limit();

}  // namespace leadflow
