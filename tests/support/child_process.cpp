#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace leadflow::testing {

std::string binary_path(const std::string& name) {
  const std::string base = LEADFLOW_BINARY_DIR;
  if (name == "leadflow-worker" || name == "leadflow-buyer-sim") return base + "/workers/" + name;
  if (name == "leadflow-kafka-mock") return base + "/tests/" + name;
  return base + "/ingest/" + name;
}

ChildProcess::ChildProcess(const std::string& path, const std::map<std::string, std::string>& env)
    : ChildProcess(path, {}, env) {}

ChildProcess::ChildProcess(const std::string& path, const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  // stdin is a socket rather than a pipe so that write_line can use MSG_NOSIGNAL: a child that
  // died must fail the write, not kill the test with SIGPIPE.
  int in[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error("socketpair failed");
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "LEADFLOW_", 9) != 0) env_strings.emplace_back(*e);
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string p = path;
  std::vector<std::string> arg_strings = args;
  std::vector<char*> argv{p.data()};
  for (auto& a : arg_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(in[1], STDIN_FILENO);
    execve(p.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  close(fds[1]);
  close(in[1]);
  stdout_fd_ = fds[0];
  stdin_fd_ = in[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) kill_hard();
  if (stdout_fd_ >= 0) close(stdout_fd_);
  close_stdin();
}

bool ChildProcess::write_line(const std::string& line) {
  if (stdin_fd_ < 0) return false;
  const std::string data = line + "\n";
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(stdin_fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

void ChildProcess::close_stdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

std::string ChildProcess::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return "";
    pollfd pfd{stdout_fd_, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return "";
    char buf[4096];
    const ssize_t n = read(stdout_fd_, buf, sizeof buf);
    if (n <= 0) return "";
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

void ChildProcess::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

int ChildProcess::terminate(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    usleep(20'000);
  }
  kill_hard();
  return -1;
}

}  // namespace leadflow::testing
