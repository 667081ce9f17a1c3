#pragma once
// Runs a leadflow binary as a child process, for tests that must kill it for real.
#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace leadflow::testing {

/// Path of a built binary ("leadflow-ingest", "leadflow-kafka-mock") in the build tree.
std::string binary_path(const std::string& name);

/// A child process with its stdout on a pipe and its stdin on a socket the test can write
/// commands to. The destructor SIGKILLs it if still running. Not thread-safe.
class ChildProcess {
 public:
  ChildProcess(const std::string& path, const std::map<std::string, std::string>& env);
  /// With command-line arguments (argv[1]...).
  ChildProcess(const std::string& path, const std::vector<std::string>& args,
               const std::map<std::string, std::string>& env);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// The next line the child prints, or "" on timeout/exit.
  std::string read_line(std::chrono::milliseconds timeout);
  /// Writes `line` and a newline to the child's stdin; false if the child no longer reads it.
  bool write_line(const std::string& line);
  /// The child reads EOF on stdin from now on.
  void close_stdin();
  void kill_hard();  // SIGKILL, then reap
  int terminate(
      std::chrono::milliseconds timeout);  // SIGTERM; exit code, or -1 if it had to be killed
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  int stdin_fd_ = -1;
  std::string buffer_;
};

}  // namespace leadflow::testing
