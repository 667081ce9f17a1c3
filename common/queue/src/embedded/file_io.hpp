#pragma once
// The POSIX file calls of the embedded queue, with EINTR and short writes handled. Each returns
// false on failure and leaves errno set for the caller's message.
#include <sys/types.h>

#include <cstddef>
#include <string>

namespace leadflow::embedded {

/// strerror(err) as a string.
std::string errno_text(int err);

/// Writes all `n` bytes at `p` to `fd` at position `at` (pwrite, retried until done).
bool write_all(int fd, const char* p, std::size_t n, off_t at);

/// fsync of a directory, so that a create, rename or unlink in it is durable.
bool fsync_dir(const std::string& dir);

/// Writes `content` to `path` as a whole or not at all: temp file, fsync, rename. The caller
/// fsyncs the directory.
bool write_file_atomically(const std::string& path, const std::string& content);

/// The whole content of `path` in `out`.
bool read_file(const std::string& path, std::string& out);

}  // namespace leadflow::embedded
