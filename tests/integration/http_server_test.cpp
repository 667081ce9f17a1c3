// leadflow's own HTTP/1.1 server (ingest/http/include/leadflow/http/server.hpp) over real TLS and
// plain TCP on loopback: framing, keep-alive, pipelining, inline / async / blocking handlers,
// hostile input, timeouts and stop(). The raw client below speaks bytes (through OpenSSL for TLS)
// so that the tests can send what no well-behaved client would, and see exactly what the server
// writes.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>

#include "leadflow/http/forms.hpp"
#include "leadflow/http/server.hpp"
#include "leadflow/http/stream.hpp"
#include "leadflow/http/tls_cert.hpp"

namespace leadflow {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// No single read of a raw client waits longer: a server that hangs fails the test, not the run.
constexpr milliseconds kReadTimeout = 3000ms;

// ---------------------------------------------------------------------------------------------
// Certificates, servers, small helpers

// One self-signed certificate for the whole binary (key generation is the slow part), in a
// temporary directory removed at exit.
struct CertFiles {
  std::filesystem::path dir;
  std::string cert, key, error;

  CertFiles() {
    char tmpl[] = "/tmp/leadflow_http_server_test_XXXXXX";
    if (!::mkdtemp(tmpl)) {
      error = "mkdtemp failed";
      return;
    }
    dir = tmpl;
    cert = (dir / "cert.pem").string();
    key = (dir / "key.pem").string();
    error = ensure_self_signed(cert, key);
  }
  ~CertFiles() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

const CertFiles& test_cert() {
  static CertFiles files;
  return files;
}

HttpServerOptions server_options(bool tls) {
  HttpServerOptions o;
  o.loops = 2;  // more than one: answers must find their way back to the loop owning the socket
  o.blocking_threads = 8;
  o.name = "test";
  if (tls) {
    o.tls_cert = test_cert().cert;
    o.tls_key = test_cert().key;
  }
  return o;
}

std::unique_ptr<HttpServer> start_server(Routes routes, HttpServerOptions options) {
  if (!options.tls_cert.empty() && !test_cert().error.empty()) {
    ADD_FAILURE() << "certificate: " << test_cert().error;
    return nullptr;
  }
  auto server = std::make_unique<HttpServer>(std::move(routes), std::move(options));
  std::string error;
  if (!server->start(error)) {
    ADD_FAILURE() << "start: " << error;
    return nullptr;
  }
  return server;
}

// Runs stop() and says how long it took. A stop() that never returns aborts the binary: the
// alternative is a test run that hangs until ctest's own timeout.
milliseconds stop_within(HttpServer& server, std::chrono::seconds limit) {
  const auto started = Clock::now();
  std::promise<void> stopped;
  auto done = stopped.get_future();
  std::thread stopper([&] {
    server.stop();
    stopped.set_value();
  });
  if (done.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "FATAL: HttpServer::stop() did not return within %lld s\n",
                 static_cast<long long>(limit.count()));
    std::abort();
  }
  stopper.join();
  return std::chrono::duration_cast<milliseconds>(Clock::now() - started);
}

// Polls `pred` until it holds or `within` passes.
bool eventually(const std::function<bool()>& pred, milliseconds within = 2000ms) {
  const auto deadline = Clock::now() + within;
  while (!pred()) {
    if (Clock::now() > deadline) return pred();
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

milliseconds since(Clock::time_point t) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t);
}

// Threads that handlers start. Declared before the server, so joined after it has stopped (by
// which time every one of them has answered, since stop() waits for in-flight exchanges).
class ThreadBag {
 public:
  ~ThreadBag() { join(); }
  void add(std::thread t) {
    std::lock_guard lock(mu_);
    threads_.push_back(std::move(t));
  }
  void join() {
    std::vector<std::thread> all;
    {
      std::lock_guard lock(mu_);
      all.swap(threads_);
    }
    for (auto& t : all) t.join();
  }

 private:
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

// Answers inline exchanges from its own thread after a delay, the way the queue's writer answers
// an async lead post once the lead is durable. Declared before the server: it must keep
// answering while stop() waits for those answers.
class DelayedAnswerer {
 public:
  DelayedAnswerer() : thread_([this] { run(); }) {}
  ~DelayedAnswerer() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void answer_later(std::shared_ptr<Exchange> ex, milliseconds delay, std::string body) {
    {
      std::lock_guard lock(mu_);
      pending_.emplace(Clock::now() + delay, Item{std::move(ex), std::move(body)});
    }
    cv_.notify_all();
  }

 private:
  struct Item {
    std::shared_ptr<Exchange> ex;
    std::string body;
  };
  void run() {
    std::unique_lock lock(mu_);
    for (;;) {
      if (pending_.empty()) {
        if (stop_) return;  // only once everything queued is answered
        cv_.wait(lock);
        continue;
      }
      const auto due = pending_.begin()->first;
      if (Clock::now() < due) {
        cv_.wait_until(lock, due);
        continue;
      }
      Item item = std::move(pending_.begin()->second);
      pending_.erase(pending_.begin());
      lock.unlock();
      item.ex->res.set_content(item.body, "text/plain");
      item.ex->done();
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<Clock::time_point, Item> pending_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members it uses exist
};

// ---------------------------------------------------------------------------------------------
// The raw client

SSL_CTX* client_tls() {
  static const std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx = [] {
    std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> c(SSL_CTX_new(TLS_client_method()),
                                                        &SSL_CTX_free);
    SSL_CTX_set_verify(c.get(), SSL_VERIFY_NONE, nullptr);  // self-signed
    // exchange_nonblocking retries writes from a moved-on offset of the same buffer.
    SSL_CTX_set_mode(c.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    return c;
  }();
  return ctx.get();
}

void set_timeouts(int fd, milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A TCP connection to 127.0.0.1:port, with receive and send timeouts; from `from` (another
// loopback address, such as "127.0.0.2") when given. -1 with `error` = errno.
int connect_tcp(int port, int* error = nullptr, const char* from = nullptr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    if (error) *error = errno;
    return -1;
  }
  if (from) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, from, &local.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      if (error) *error = errno;
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (error) *error = errno;
    ::close(fd);
    return -1;
  }
  set_timeouts(fd, kReadTimeout);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

std::string printable(std::string_view s, std::size_t max = 300) {
  std::string out;
  for (const char ch : s.substr(0, max)) {
    if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(ch));
      out += hex;
    } else {
      out += ch;
    }
  }
  if (s.size() > max) out += "...";
  return out;
}

struct RawResponse {
  bool ok = false;    // a whole response was read
  std::string error;  // why not
  std::string status_line;
  int status = 0;
  std::multimap<std::string, std::string> headers;  // names lower-cased
  std::string body;

  bool has(const std::string& name) const { return headers.count(name) > 0; }
  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// Takes one whole response off the front of `buf`; nullopt while it is incomplete. `head`: it
// answers a HEAD, so it has no body whatever its Content-Length says.
std::optional<RawResponse> take_response(std::string& buf, bool head) {
  const std::size_t end = buf.find("\r\n\r\n");
  if (end == std::string::npos) return std::nullopt;
  RawResponse r;
  const std::string head_text = buf.substr(0, end);
  const std::size_t first_eol = head_text.find("\r\n");
  r.status_line = head_text.substr(0, first_eol);
  if (r.status_line.size() < 12 || r.status_line.compare(0, 9, "HTTP/1.1 ") != 0) {
    r.error = "malformed status line: " + printable(r.status_line);
    buf.clear();
    return r;
  }
  r.status = std::atoi(r.status_line.c_str() + 9);
  std::size_t at = first_eol == std::string::npos ? head_text.size() : first_eol + 2;
  while (at < head_text.size()) {
    std::size_t eol = head_text.find("\r\n", at);
    if (eol == std::string::npos) eol = head_text.size();
    const std::string line = head_text.substr(at, eol - at);
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) {
      r.error = "malformed header line: " + printable(line);
      buf.clear();
      return r;
    }
    std::string name = line.substr(0, colon);
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    r.headers.emplace(std::move(name), std::move(value));
    at = eol + 2;
  }
  std::size_t length = 0;
  const bool bodiless = head || r.status < 200 || r.status == 204 || r.status == 304;
  if (!bodiless) {
    const std::string cl = r.header("content-length");
    if (cl.empty() || cl.find_first_not_of("0123456789") != std::string::npos) {
      r.error = "no valid Content-Length in: " + printable(head_text);
      buf.clear();
      return r;
    }
    length = std::stoul(cl);
    if (buf.size() < end + 4 + length) return std::nullopt;
    r.body = buf.substr(end + 4, length);
  }
  buf.erase(0, end + 4 + length);
  r.ok = true;
  return r;
}

/// A blocking client over TCP or TLS that sends arbitrary bytes and reads answers as written.
class RawClient {
 public:
  enum class Eof { kClosed, kTimeout, kData };

  RawClient() = default;
  ~RawClient() { close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connect(int port, bool tls, const char* from = nullptr) {
    close();
    int err = 0;
    fd_ = connect_tcp(port, &err, from);
    if (fd_ < 0) {
      error_ = std::string("connect: ") + std::strerror(err);
      return false;
    }
    if (!tls) return true;
    ssl_ = SSL_new(client_tls());
    SSL_set_fd(ssl_, fd_);
    ERR_clear_error();
    if (SSL_connect(ssl_) != 1) {
      char buf[256] = "";
      ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
      error_ = std::string("TLS handshake: ") + buf;
      return false;
    }
    return true;
  }

  bool send(std::string_view bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
      const std::size_t left = bytes.size() - off;
      if (ssl_) {
        ERR_clear_error();
        const int n = SSL_write(ssl_, bytes.data() + off,
                                static_cast<int>(std::min<std::size_t>(left, 1 << 20)));
        if (n <= 0) {
          error_ = "SSL_write failed";
          return false;
        }
        off += static_cast<std::size_t>(n);
      } else {
        const ssize_t n = ::send(fd_, bytes.data() + off, left, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          error_ = std::string("send: ") + std::strerror(errno);
          return false;
        }
        off += static_cast<std::size_t>(n);
      }
    }
    return true;
  }

  /// Says "no more requests" the way each transport does: close_notify, or a TCP half-close.
  bool shut_write() {
    if (ssl_) {
      ERR_clear_error();
      return SSL_shutdown(ssl_) >= 0;
    }
    return ::shutdown(fd_, SHUT_WR) == 0;
  }

  RawResponse read_response(bool head = false) {
    for (;;) {
      if (auto r = take_response(buf_, head)) return *r;
      switch (read_more()) {
        case Read::kData:
          continue;
        case Read::kTimeout:
          return failed("timed out; received so far: \"" + printable(buf_) + "\"");
        case Read::kClosed:
          return failed("connection closed; received so far: \"" + printable(buf_) + "\"");
      }
    }
  }

  /// Whether the server has sent something (or closed) within `within`; nothing is consumed.
  bool readable(milliseconds within) {
    if (!buf_.empty() || (ssl_ && SSL_pending(ssl_) > 0)) return true;
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(within.count())) > 0;
  }

  /// Waits up to `within` for the server to close. kData: it sent bytes instead (unless
  /// `allow_data`, when they are dropped, as a TLS alert would be).
  Eof wait_closed(milliseconds within, bool allow_data = false) {
    if (!buf_.empty() && !allow_data) return Eof::kData;
    buf_.clear();
    const auto deadline = Clock::now() + within;
    for (;;) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      if (left <= 0ms) return Eof::kTimeout;
      set_timeouts(fd_, std::max(left, 1ms));
      const Read r = read_more();
      set_timeouts(fd_, kReadTimeout);
      if (r == Read::kClosed) return Eof::kClosed;
      if (r == Read::kTimeout) return Eof::kTimeout;
      if (!allow_data) return Eof::kData;
      buf_.clear();
    }
  }

  /// Sends `bytes` while reading, until `answers` responses came back or `within` passed: for
  /// floods bigger than the socket buffers, which a blocking write-then-read would deadlock on.
  std::vector<RawResponse> exchange_nonblocking(const std::string& bytes, std::size_t answers,
                                                milliseconds within) {
    std::vector<RawResponse> out;
    const int flags = ::fcntl(fd_, F_GETFL);
    ::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
    const auto deadline = Clock::now() + within;
    std::size_t off = 0;
    bool closed = false;
    while (out.size() < answers && !closed && Clock::now() < deadline) {
      pollfd p{fd_, static_cast<short>(POLLIN | (off < bytes.size() ? POLLOUT : 0)), 0};
      ::poll(&p, 1, 20);
      if (off < bytes.size()) {
        const std::size_t chunk = std::min<std::size_t>(bytes.size() - off, 16 * 1024);
        if (ssl_) {
          ERR_clear_error();
          const int n = SSL_write(ssl_, bytes.data() + off, static_cast<int>(chunk));
          if (n > 0)
            off += static_cast<std::size_t>(n);
          else if (const int e = SSL_get_error(ssl_, n);
                   e != SSL_ERROR_WANT_WRITE && e != SSL_ERROR_WANT_READ)
            closed = true;
        } else {
          const ssize_t n = ::send(fd_, bytes.data() + off, chunk, MSG_NOSIGNAL);
          if (n > 0)
            off += static_cast<std::size_t>(n);
          else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            closed = true;
        }
      }
      for (;;) {  // everything readable now, including what OpenSSL already holds
        const Read r = read_more();
        if (r == Read::kClosed) closed = true;
        if (r != Read::kData) break;
      }
      while (auto r = take_response(buf_, false)) out.push_back(std::move(*r));
    }
    ::fcntl(fd_, F_SETFL, flags);
    return out;
  }

  /// Drops the connection without a TLS close_notify.
  void close() {
    if (ssl_) SSL_free(ssl_);
    ssl_ = nullptr;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    buf_.clear();
  }

  const std::string& error() const { return error_; }

 private:
  enum class Read { kData, kClosed, kTimeout };

  RawResponse failed(std::string why) {
    RawResponse r;
    r.error = std::move(why);
    return r;
  }

  Read read_more() {
    char chunk[16 * 1024];
    for (;;) {
      if (ssl_) {
        ERR_clear_error();
        const int n = SSL_read(ssl_, chunk, sizeof chunk);
        const int saved_errno = errno;
        if (n > 0) {
          buf_.append(chunk, static_cast<std::size_t>(n));
          return Read::kData;
        }
        const int err = SSL_get_error(ssl_, n);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return Read::kTimeout;
        if (err == SSL_ERROR_SYSCALL && (saved_errno == EAGAIN || saved_errno == EWOULDBLOCK))
          return Read::kTimeout;
        if (err == SSL_ERROR_SYSCALL && saved_errno == EINTR) continue;
        return Read::kClosed;  // close_notify, EOF, reset
      }
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n > 0) {
        buf_.append(chunk, static_cast<std::size_t>(n));
        return Read::kData;
      }
      if (n == 0) return Read::kClosed;
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Read::kTimeout;
      return Read::kClosed;  // reset
    }
  }

  int fd_ = -1;
  SSL* ssl_ = nullptr;
  std::string buf_;  // received, not yet taken as a response
  std::string error_;
};

std::ostream& operator<<(std::ostream& os, RawClient::Eof e) {
  switch (e) {
    case RawClient::Eof::kClosed:
      return os << "closed";
    case RawClient::Eof::kTimeout:
      return os << "still open (timed out)";
    case RawClient::Eof::kData:
      return os << "sent more data";
  }
  return os;
}

std::string get_request(const std::string& target, const std::string& extra_headers = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: localhost\r\n" + extra_headers + "\r\n";
}

std::string post_request(const std::string& target, const std::string& body,
                         const std::string& extra_headers = "") {
  return "POST " + target +
         " HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         extra_headers + "\r\n" + body;
}

RawResponse roundtrip(RawClient& c, const std::string& request, bool head = false) {
  if (!c.send(request)) {
    RawResponse r;
    r.error = "send: " + c.error();
    return r;
  }
  return c.read_response(head);
}

// `n` connections to `port`, each served one request, so that each holds a slot of the
// server's; ADD_FAILUREs and returns fewer if one is not.
std::vector<std::unique_ptr<RawClient>> hold_served(int port, int n) {
  std::vector<std::unique_ptr<RawClient>> held;
  for (int i = 0; i < n; ++i) {
    auto c = std::make_unique<RawClient>();
    if (!c->connect(port, false)) {
      ADD_FAILURE() << "connection " << i << ": " << c->error();
      break;
    }
    const RawResponse r = roundtrip(*c, get_request("/hello"));
    if (!r.ok) {
      ADD_FAILURE() << "connection " << i << ": " << r.error;
      break;
    }
    held.push_back(std::move(c));
  }
  return held;
}

// Every test's routes start here: "GET /hello" for serves_normally, echoes on the blocking pool
// and inline, and hooks that put the server's reason into error bodies.
Routes base_routes() {
  Routes r;
  r.get("/hello", [](const http::Request&, http::Response& res) {
    res.set_content("hello world", "text/plain");
  });
  r.get("/echo", [](const http::Request& req, http::Response& res) {
    res.set_content("get:" + req.param("t"), "text/plain");
  });
  r.post("/echo", [](const http::Request& req, http::Response& res) {
    res.set_content("post:" + std::string(req.body()), "text/plain");
  });
  r.post_inline("/inline", [](const std::shared_ptr<Exchange>& ex) {
    ex->res.set_content("inline:" + std::string(ex->req.body()), "text/plain");
    ex->done();
  });
  r.on_error = [](const http::Request&, http::Response& res, std::string_view refusal) {
    res.set_content("problem: " + std::string(refusal), "text/plain");
  };
  r.on_exception = [](http::Response& res, const std::string& what) {
    res.status = 500;
    res.set_content("failed: " + what, "text/plain");
  };
  return r;
}

// A normal request on a new connection gets its normal answer.
::testing::AssertionResult serves_normally(int port, bool tls) {
  RawClient c;
  if (!c.connect(port, tls)) return ::testing::AssertionFailure() << c.error();
  const RawResponse r = roundtrip(c, get_request("/hello"));
  if (!r.ok) return ::testing::AssertionFailure() << r.error;
  if (r.status != 200 || r.body != "hello world")
    return ::testing::AssertionFailure() << r.status_line << " / " << printable(r.body);
  return ::testing::AssertionSuccess();
}

std::unique_ptr<httplib::SSLClient> https_client(int port) {
  auto cli = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
  cli->enable_server_certificate_verification(false);  // self-signed
  cli->set_connection_timeout(3);
  cli->set_read_timeout(3);
  cli->set_write_timeout(3);
  return cli;
}

// ---------------------------------------------------------------------------------------------
// 1. Basic answers

TEST(HttpServer, GetPostAndHeadOverTls) {
  auto server = start_server(base_routes(), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();

  RawResponse r = roundtrip(c, get_request("/hello"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status_line, "HTTP/1.1 200 OK");
  EXPECT_EQ(r.header("content-length"), "11");
  EXPECT_EQ(r.header("content-type"), "text/plain");
  EXPECT_TRUE(std::regex_match(
      r.header("date"),
      std::regex(R"([A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)")))
      << r.header("date");
  EXPECT_FALSE(r.has("connection"));  // keep-alive is HTTP/1.1's default: nothing to say
  EXPECT_EQ(r.body, "hello world");

  r = roundtrip(c, post_request("/echo", "payload-1"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-length"), "14");
  EXPECT_EQ(r.body, "post:payload-1");

  // HEAD: GET's headers, no body. The GET sent right behind it must read as the next answer,
  // which it would not if body bytes had leaked.
  ASSERT_TRUE(c.send("HEAD /hello HTTP/1.1\r\nHost: localhost\r\n\r\n" +
                     get_request("/echo?t=after-head")));
  const RawResponse head = c.read_response(/*head=*/true);
  ASSERT_TRUE(head.ok) << head.error;
  EXPECT_EQ(head.status_line, "HTTP/1.1 200 OK");
  EXPECT_EQ(head.header("content-length"), "11");
  EXPECT_TRUE(head.has("date"));
  const RawResponse after = c.read_response();
  ASSERT_TRUE(after.ok) << after.error;
  EXPECT_EQ(after.body, "get:after-head");

  r = roundtrip(c, get_request("/no-such-path"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status_line, "HTTP/1.1 404 Not Found");
  r = roundtrip(c, "DELETE /hello HTTP/1.1\r\nHost: localhost\r\n\r\n");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 404);  // no DELETE route
  EXPECT_TRUE(serves_normally(server->port(), true));

  // A real client agrees, percent-decoding included.
  auto cli = https_client(server->port());
  auto res = cli->Post("/echo", "from httplib", "text/plain");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "post:from httplib");
  res = cli->Get("/echo?t=a%20b");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->body, "get:a b");
}

TEST(HttpServer, PlainHttpServesTheSameRoutes) {
  auto server = start_server(base_routes(), server_options(false));
  ASSERT_TRUE(server);
  httplib::Client cli("127.0.0.1", server->port());
  cli.set_read_timeout(3);
  auto res = cli.Get("/hello");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "hello world");
  res = cli.Post("/inline", "abc", "text/plain");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->body, "inline:abc");
  res = cli.Head("/hello");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Length"), "11");
  EXPECT_TRUE(res->body.empty());
  EXPECT_TRUE(serves_normally(server->port(), false));
}

TEST(HttpServer, LargeBodiesBothWays) {
  Routes routes = base_routes();
  const std::string big(2 * 1024 * 1024, 'b');
  routes.get("/big", [&big](const http::Request&, http::Response& res) {
    res.set_content(big, "application/octet-stream");
  });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  // An answer far bigger than the socket buffer goes out over many partial writes.
  RawResponse r = roundtrip(c, get_request("/big"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body.size(), big.size());
  EXPECT_TRUE(r.body == big);
  // A request body just under the 64 KiB limit arrives over several TLS records.
  std::string body(60 * 1024, 'x');
  body.back() = 'z';
  r = roundtrip(c, post_request("/echo", body));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "post:" + body);
}

// An upload route (Routes::put_upload) takes a body past the listener's limit, up to its own:
// 413 beyond it, whether the length is declared or chunked; every other route keeps the limit.
TEST(HttpServer, AnUploadRouteTakesABodyLargerThanTheListenersUpToItsOwnLimit) {
  Routes routes = base_routes();
  routes.put_upload(
      "/lists/{id}/entries", 1024 * 1024, [](const http::Request& req, http::Response& res) {
        res.set_content(std::string(req.match(1)) + ":" + std::to_string(req.body().size()),
                        "text/plain");
      });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  const auto put = [](const std::string& target, const std::string& body) {
    return "PUT " + target +
           " HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
  };
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  const std::string big(900 * 1024, 'u');  // 14 times the listener's 64 KiB
  RawResponse r = roundtrip(c, put("/lists/l1/entries", big));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "l1:" + std::to_string(big.size()));
  // Chunked, on the same connection.
  std::string chunked =
      "PUT /lists/l2/entries HTTP/1.1\r\nHost: localhost\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 9; ++i) chunked += "19000\r\n" + std::string(0x19000, 'c') + "\r\n";
  chunked += "0\r\n\r\n";
  r = roundtrip(c, chunked);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "l2:" + std::to_string(9 * 0x19000));
  // Past its own limit: 413 as soon as the length is read, and the connection closes.
  RawClient over;
  ASSERT_TRUE(over.connect(server->port(), true)) << over.error();
  ASSERT_TRUE(
      over.send("PUT /lists/l3/entries HTTP/1.1\r\nHost: localhost\r\n"
                "Content-Length: 1048577\r\n\r\n"));
  r = over.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(over.wait_closed(2000ms), RawClient::Eof::kClosed);
  // Another route, and another method on the same path, keep the listener's 64 KiB.
  for (const std::string& request :
       {post_request("/echo", std::string(100 * 1024, 'e')),
        std::string("POST /lists/l1/entries HTTP/1.1\r\nHost: localhost\r\n"
                    "Content-Length: 102400\r\n\r\n")}) {
    RawClient other;
    ASSERT_TRUE(other.connect(server->port(), true)) << other.error();
    ASSERT_TRUE(other.send(request)) << other.error();
    r = other.read_response();
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.status, 413);
  }
  EXPECT_TRUE(serves_normally(server->port(), true));
}

// Upload bodies arrive before their handler can authenticate anyone: the server holds at most
// max_upload_bytes of them at once, and refuses one more with 503 until one is read.
TEST(HttpServer, UploadBodiesHeldAtOnceAreBounded) {
  Routes routes = base_routes();
  routes.put_upload("/lists/{id}/entries", 1024 * 1024,
                    [](const http::Request& req, http::Response& res) {
                      res.set_content(std::to_string(req.body().size()), "text/plain");
                    });
  HttpServerOptions o = server_options(true);
  o.max_upload_bytes = 1536 * 1024;
  auto server = start_server(std::move(routes), o);
  ASSERT_TRUE(server);
  const std::string head =
      "PUT /lists/l1/entries HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1048576\r\n\r\n";
  const std::string body(1024 * 1024, 'u');
  RawClient first;
  ASSERT_TRUE(first.connect(server->port(), true)) << first.error();
  // Its 100 Continue says the server has read its head, and counted its body.
  ASSERT_TRUE(first.send(head.substr(0, head.size() - 2) + "Expect: 100-continue\r\n\r\n"))
      << first.error();
  const RawResponse interim = first.read_response();
  ASSERT_TRUE(interim.ok) << interim.error;
  EXPECT_EQ(interim.status_line, "HTTP/1.1 100 Continue");
  // The first upload is under way: a second of the same size would pass the bound.
  RawClient second;
  ASSERT_TRUE(second.connect(server->port(), true)) << second.error();
  ASSERT_TRUE(second.send(head)) << second.error();
  RawResponse r = second.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 503);
  // Once the first is read, its bytes are free again.
  ASSERT_TRUE(first.send(body)) << first.error();
  r = first.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, std::to_string(body.size()));
  RawClient third;
  ASSERT_TRUE(third.connect(server->port(), true)) << third.error();
  r = roundtrip(third, head + body);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
}

// What a streamed upload's handler saw: the bytes in the order they came, how many pieces, how
// the body ended, and how much had come when the test asked.
struct StreamedSeen {
  std::mutex mu;
  std::condition_variable changed;
  std::string body;
  int pieces = 0;
  std::optional<http::UploadStream::Read> end;
  std::size_t bytes() {
    std::lock_guard lock(mu);
    return body.size();
  }
  bool wait_end(milliseconds within) {
    std::unique_lock lock(mu);
    return changed.wait_for(lock, within, [&] { return end.has_value(); });
  }
};

Routes streamed_routes(const std::shared_ptr<StreamedSeen>& seen) {
  Routes routes = base_routes();
  routes.put_streamed(
      "/up/{id}", 64 * 1024 * 1024, [seen](const http::Request& req, http::Response& res) {
        http::UploadStream* body = req.upload();
        if (!body) {
          res.set_content("whole:" + std::to_string(req.body().size()), "text/plain");
          return;
        }
        std::string piece;
        for (;;) {
          const auto got = body->read(piece);
          std::lock_guard lock(seen->mu);
          if (got == http::UploadStream::Read::kData) {
            seen->body += piece;
            ++seen->pieces;
            seen->changed.notify_all();
            continue;
          }
          seen->end = got;
          seen->changed.notify_all();
          if (got == http::UploadStream::Read::kFailed) return;
          res.set_content("streamed:" + std::to_string(seen->body.size()), "text/plain");
          return;
        }
      });
  return routes;
}

std::string streamed_put(std::size_t length, std::string_view more = "") {
  return "PUT /up/l1 HTTP/1.1\r\nHost: localhost\r\nContent-Length: " + std::to_string(length) +
         "\r\n" + std::string(more) + "\r\n";
}

std::string pattern_body(std::size_t n) {
  std::string body(n, '\0');
  for (std::size_t i = 0; i < n; ++i) body[i] = static_cast<char>('a' + (i * 7 + i / 13) % 26);
  return body;
}

// A streamed upload (Routes::put_streamed) reaches its handler while it is still arriving, in
// slow pieces, and whole in the end; a body under the listener's limit comes whole as before.
TEST(HttpServer, AStreamedUploadReachesItsHandlerAsItArrives) {
  auto seen = std::make_shared<StreamedSeen>();
  auto server = start_server(streamed_routes(seen), server_options(true));
  ASSERT_TRUE(server);
  const std::string body = pattern_body(3 * 1024 * 1024 + 17);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  // The head with a first piece: the handler has it before the rest is sent.
  ASSERT_TRUE(c.send(streamed_put(body.size()) + body.substr(0, 100'000))) << c.error();
  EXPECT_TRUE(eventually([&] { return seen->bytes() == 100'000; }));
  // The rest in slow pieces of odd sizes.
  for (std::size_t at = 100'000; at < body.size(); at += 300'007) {
    std::this_thread::sleep_for(20ms);
    ASSERT_TRUE(c.send(body.substr(at, 300'007))) << c.error();
  }
  RawResponse r = c.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "streamed:" + std::to_string(body.size()));
  EXPECT_TRUE(seen->body == body);
  EXPECT_GT(seen->pieces, 3);
  // Keep-alive holds: a small body on the same connection comes whole.
  r = roundtrip(c, streamed_put(5) + "hello");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "whole:5");
  // Chunked with 100-continue: the interim answer, then the decoded body.
  RawClient chunked;
  ASSERT_TRUE(chunked.connect(server->port(), true)) << chunked.error();
  ASSERT_TRUE(
      chunked.send("PUT /up/l2 HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
                   "Expect: 100-continue\r\n\r\n"));
  const RawResponse interim = chunked.read_response();
  ASSERT_TRUE(interim.ok) << interim.error;
  EXPECT_EQ(interim.status_line, "HTTP/1.1 100 Continue");
  {
    std::lock_guard lock(seen->mu);
    seen->body.clear();
    seen->end.reset();
  }
  std::string framed;
  for (std::size_t at = 0; at < body.size(); at += 0x10000)
    framed += [&] {
      const std::string part = body.substr(at, 0x10000);
      char size[16];
      std::snprintf(size, sizeof size, "%zx\r\n", part.size());
      return std::string(size) + part + "\r\n";
    }();
  framed += "0\r\n\r\n";
  r = roundtrip(chunked, framed);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "streamed:" + std::to_string(body.size()));
  EXPECT_TRUE(seen->body == body);
  EXPECT_TRUE(serves_normally(server->port(), true));
}

// A client that goes away mid-body: the handler learns that its body will never be whole (and
// so changes nothing); one that stalls gets 408 once the server's I/O timeout passes. Either
// way the server goes on serving.
TEST(HttpServer, AStreamedUploadWhoseClientGoesAwayOrStallsFailsInItsHandler) {
  auto seen = std::make_shared<StreamedSeen>();
  HttpServerOptions o = server_options(true);
  o.io_timeout = 600ms;
  auto server = start_server(streamed_routes(seen), o);
  ASSERT_TRUE(server);
  const std::string body = pattern_body(2 * 1024 * 1024);
  {
    RawClient gone;
    ASSERT_TRUE(gone.connect(server->port(), true)) << gone.error();
    ASSERT_TRUE(gone.send(streamed_put(body.size()) + body.substr(0, body.size() / 2)));
    EXPECT_TRUE(eventually([&] { return seen->bytes() == body.size() / 2; }));
  }  // closed here, halfway
  ASSERT_TRUE(seen->wait_end(3000ms));
  EXPECT_EQ(*seen->end, http::UploadStream::Read::kFailed);
  {
    std::lock_guard lock(seen->mu);
    seen->body.clear();
    seen->end.reset();
  }
  RawClient stalled;
  ASSERT_TRUE(stalled.connect(server->port(), true)) << stalled.error();
  ASSERT_TRUE(stalled.send(streamed_put(body.size()) + body.substr(0, 70'000)));
  const RawResponse r = stalled.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 408);
  ASSERT_TRUE(seen->wait_end(3000ms));
  EXPECT_EQ(*seen->end, http::UploadStream::Read::kFailed);
  EXPECT_EQ(stalled.wait_closed(3000ms), RawClient::Eof::kClosed);
  EXPECT_TRUE(serves_normally(server->port(), true));
}

// A handler that answers before reading its body (a refusal: no key) is written at once, and
// the rest of the body is not read: the connection closes after the answer.
TEST(HttpServer, AStreamedUploadRefusedBeforeItsBodyIsAnsweredAtOnce) {
  Routes routes = base_routes();
  routes.put_streamed("/up/{id}", 64 * 1024 * 1024,
                      [](const http::Request&, http::Response& res) { res.status = 401; });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  ASSERT_TRUE(c.send(streamed_put(10 * 1024 * 1024) + std::string(100'000, 'x')));
  const RawResponse r = c.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_TRUE(serves_normally(server->port(), true));
}

// Streamed uploads hold no body, but each holds a blocking thread while its body arrives: at
// most max_upload_streams at once, one more is 503 until one is answered.
TEST(HttpServer, StreamedUploadsAtOnceAreBounded) {
  auto seen = std::make_shared<StreamedSeen>();
  HttpServerOptions o = server_options(true);
  o.max_upload_streams = 1;
  auto server = start_server(streamed_routes(seen), o);
  ASSERT_TRUE(server);
  const std::string body = pattern_body(200'000);
  RawClient first;
  ASSERT_TRUE(first.connect(server->port(), true)) << first.error();
  ASSERT_TRUE(first.send(streamed_put(body.size()) + body.substr(0, 100'000))) << first.error();
  ASSERT_TRUE(eventually([&] { return seen->bytes() == 100'000; }));
  RawClient second;
  ASSERT_TRUE(second.connect(server->port(), true)) << second.error();
  ASSERT_TRUE(second.send(streamed_put(body.size()))) << second.error();
  RawResponse r = second.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 503);
  ASSERT_TRUE(first.send(body.substr(100'000))) << first.error();
  r = first.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "streamed:200000");
  RawClient third;
  ASSERT_TRUE(third.connect(server->port(), true)) << third.error();
  r = roundtrip(third, streamed_put(body.size()) + body);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
}

// ---------------------------------------------------------------------------------------------
// 2. Keep-alive and Connection: close

TEST(HttpServer, KeepAliveServesAHundredRequestsOnOneTlsConnection) {
  auto server = start_server(base_routes(), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  for (int i = 0; i < 100; ++i) {
    const bool post = i % 2 == 1;
    const std::string token = "k" + std::to_string(i);
    const RawResponse r =
        roundtrip(c, post ? post_request("/inline", token) : get_request("/echo?t=" + token));
    ASSERT_TRUE(r.ok) << "request " << i << ": " << r.error;
    ASSERT_EQ(r.body, (post ? "inline:" : "get:") + token) << "request " << i;
    ASSERT_FALSE(r.has("connection")) << "request " << i;
  }
}

TEST(HttpServer, Http10WithoutKeepAliveIsAnsweredThenClosed) {
  auto server = start_server(base_routes(), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  RawResponse r = roundtrip(c, "GET /hello HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_EQ(r.body, "hello world");
  EXPECT_EQ(c.wait_closed(2000ms), RawClient::Eof::kClosed);

  // HTTP/1.0 that asks for keep-alive gets it, and says so.
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  r = roundtrip(c, "GET /echo?t=one HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.header("connection"), "keep-alive");
  EXPECT_EQ(r.body, "get:one");
  r = roundtrip(c, "GET /echo?t=two HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "get:two");
}

TEST(HttpServer, ConnectionCloseOnHttp11ClosesAfterTheAnswer) {
  auto server = start_server(base_routes(), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  ASSERT_TRUE(roundtrip(c, get_request("/hello")).ok);
  // Pipelined behind the "close" request: must never be answered.
  ASSERT_TRUE(c.send(post_request("/echo", "last", "Connection: close\r\n") +
                     get_request("/echo?t=never")));
  const RawResponse r = c.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "post:last");
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_EQ(c.wait_closed(2000ms), RawClient::Eof::kClosed);
}

// ---------------------------------------------------------------------------------------------
// 3. Pipelining

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  DelayedAnswerer answerer;
  Routes routes = base_routes();
  routes.post_inline("/slow", [&answerer](const std::shared_ptr<Exchange>& ex) {
    answerer.answer_later(ex, 50ms, "slow:" + std::string(ex->req.body()));
  });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  // The first answer is the slowest: order must come from the connection, not from timing.
  ASSERT_TRUE(c.send(post_request("/slow", "one") + get_request("/echo?t=two") +
                     post_request("/inline", "three")));
  const char* expected[] = {"slow:one", "get:two", "inline:three"};
  for (const char* want : expected) {
    const RawResponse r = c.read_response();
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.body, want);
  }
}

class PipelineFlood : public ::testing::TestWithParam<bool> {};

// More pipelined bytes than the server buffers per connection (header + body limits + 64 KiB):
// it must stop reading, work through what it holds, and read the rest, including the bytes
// OpenSSL decrypted but the server left in the TLS session.
TEST_P(PipelineFlood, EveryRequestIsAnsweredInOrder) {
  const bool tls = GetParam();
  Routes routes = base_routes();
  routes.post_inline("/n/{n}", [](const std::shared_ptr<Exchange>& ex) {
    ex->res.set_content(std::string(ex->req.match(1)), "text/plain");
    ex->done();
  });
  auto server = start_server(std::move(routes), server_options(tls));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), tls)) << c.error();
  constexpr int kRequests = 4000;  // ~220 KB of requests
  std::string flood;
  for (int i = 0; i < kRequests; ++i) flood += post_request("/n/" + std::to_string(i), "");
  ASSERT_GT(flood.size(), 16u * 1024 + 64 * 1024 + 64 * 1024);
  const auto answers = c.exchange_nonblocking(flood, kRequests, 10000ms);
  ASSERT_EQ(answers.size(), static_cast<std::size_t>(kRequests));
  for (int i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(answers[i].ok) << i << ": " << answers[i].error;
    ASSERT_EQ(answers[i].body, std::to_string(i));
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, PipelineFlood, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Tls" : "Plain"; });

// ---------------------------------------------------------------------------------------------
// 4. Inline handlers, and many connections at once

TEST(HttpServer, InlineHandlerAnsweredLaterFromAnotherThread) {
  ThreadBag threads;
  std::atomic<std::thread::id> loop_thread{};
  std::atomic<std::thread::id> pool_thread{};
  Routes routes = base_routes();
  routes.post_inline("/later", [&threads](const std::shared_ptr<Exchange>& ex) {
    threads.add(std::thread([ex] {
      std::this_thread::sleep_for(50ms);
      ex->res.status = 202;
      ex->res.set_content("later:" + std::string(ex->req.body()), "text/plain");
      ex->done();
    }));
  });
  routes.post_inline("/to-pool", [&](const std::shared_ptr<Exchange>& ex) {
    loop_thread = std::this_thread::get_id();
    ex->run_blocking([&](Exchange& e) {
      pool_thread = std::this_thread::get_id();
      std::this_thread::sleep_for(20ms);  // waits, as a store call would
      e.res.set_content("pool:" + std::string(e.req.body()), "text/plain");
    });
  });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();

  const auto sent = Clock::now();
  RawResponse r = roundtrip(c, post_request("/later", "x"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GE(since(sent), 45ms);
  EXPECT_EQ(r.status_line, "HTTP/1.1 202 Accepted");
  EXPECT_EQ(r.body, "later:x");

  r = roundtrip(c, post_request("/to-pool", "y"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "pool:y");
  EXPECT_NE(loop_thread.load(), std::thread::id{});
  EXPECT_NE(pool_thread.load(), loop_thread.load());  // the work left the event loop

  // Several at once on separate connections: the later answers do not block each other.
  const auto burst = Clock::now();
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(std::make_unique<RawClient>());
    ASSERT_TRUE(clients.back()->connect(server->port(), true)) << clients.back()->error();
    ASSERT_TRUE(clients.back()->send(post_request("/later", "b" + std::to_string(i))));
  }
  for (int i = 0; i < 4; ++i) {
    const RawResponse b = clients[i]->read_response();
    ASSERT_TRUE(b.ok) << b.error;
    EXPECT_EQ(b.body, "later:b" + std::to_string(i));
  }
  EXPECT_LT(since(burst), 1000ms);
}

TEST(HttpServer, ManyConcurrentConnectionsEachGetTheirOwnAnswers) {
  DelayedAnswerer answerer;
  Routes routes = base_routes();
  routes.post_inline("/async", [&answerer](const std::shared_ptr<Exchange>& ex) {
    const milliseconds delay(ex->req.body().size() % 4);  // 0-3 ms, so answers finish out of order
    answerer.answer_later(ex, delay, "async:" + std::string(ex->req.body()));
  });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  const int port = server->port();

  constexpr int kThreads = 32;
  constexpr int kRequests = 20;
  const char* kRoutes[] = {"/async", "/inline", "/echo"};
  const char* kPrefixes[] = {"async:", "inline:", "post:"};
  std::atomic<int> correct{0};
  std::mutex failures_mu;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&, t] {
      auto fail = [&](const std::string& what) {
        std::lock_guard lock(failures_mu);
        failures.push_back("client " + std::to_string(t) + ": " + what);
      };
      RawClient c;
      if (!c.connect(port, true)) return fail(c.error());
      for (int i = 0; i < kRequests; ++i) {
        const int kind = (t + i) % 3;
        // Unique per request, and of varying length so the async delays vary.
        const std::string token =
            "c" + std::to_string(t) + "-r" + std::to_string(i) + std::string(i % 5, '+');
        const RawResponse r = roundtrip(c, post_request(kRoutes[kind], token));
        if (!r.ok) return fail(r.error);
        if (r.status != 200 || r.body != kPrefixes[kind] + token)
          return fail("request " + std::to_string(i) + " got " + r.status_line + " / " + r.body);
        ++correct;
      }
    });
  }
  for (auto& t : clients) t.join();
  for (std::size_t i = 0; i < failures.size() && i < 5; ++i) ADD_FAILURE() << failures[i];
  EXPECT_EQ(correct.load(), kThreads * kRequests);
  EXPECT_TRUE(serves_normally(port, true));
}

// ---------------------------------------------------------------------------------------------
// Deferred answers: Exchange::done_at, kept by the connection's loop until their time

// "/at/{ms}" answers "at:<body>", written `ms` after the request was read.
Routes deferring_routes() {
  Routes routes = base_routes();
  routes.post_inline("/at/{ms}", [](const std::shared_ptr<Exchange>& ex) {
    ex->res.set_content("at:" + std::string(ex->req.body()), "text/plain");
    ex->done_at(ex->started + milliseconds(std::stoi(std::string(ex->req.match(1)))));
  });
  return routes;
}

class Deferred : public ::testing::TestWithParam<bool> {};

TEST_P(Deferred, AnAnswerLeavesAtItsTimeAndPipelinedOnesKeepTheirOrder) {
  const bool tls = GetParam();
  auto server = start_server(deferring_routes(), server_options(tls));
  ASSERT_TRUE(server);
  RawClient slow, fast;
  ASSERT_TRUE(slow.connect(server->port(), tls)) << slow.error();
  ASSERT_TRUE(fast.connect(server->port(), tls)) << fast.error();

  // Two connections: the later request with the shorter delay is answered first.
  const auto sent = Clock::now();
  ASSERT_TRUE(slow.send(post_request("/at/300", "slow")));
  ASSERT_TRUE(fast.send(post_request("/at/100", "fast")));
  const RawResponse f = fast.read_response();
  const milliseconds fast_took = since(sent);
  ASSERT_TRUE(f.ok) << f.error;
  EXPECT_EQ(f.body, "at:fast");
  EXPECT_GE(fast_took, 100ms);
  EXPECT_LT(fast_took, 300ms + 2000ms);  // generous: a loaded machine
  const RawResponse s = slow.read_response();
  ASSERT_TRUE(s.ok) << s.error;
  EXPECT_EQ(s.body, "at:slow");
  EXPECT_GE(since(sent), 300ms);

  // Pipelined behind a deferred answer, an immediate one waits its turn; a time already past
  // is answered at once.
  const auto piped = Clock::now();
  ASSERT_TRUE(slow.send(post_request("/at/150", "one") + post_request("/inline", "two") +
                        post_request("/at/0", "three")));
  const char* expected[] = {"at:one", "inline:two", "at:three"};
  for (const char* want : expected) {
    const RawResponse r = slow.read_response();
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.body, want);
    EXPECT_GE(since(piped), 150ms);
  }
  EXPECT_TRUE(serves_normally(server->port(), tls));
}

INSTANTIATE_TEST_SUITE_P(Transports, Deferred, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Tls" : "Plain"; });

TEST(HttpServer, OneLoopHoldsHundredsOfDeferredAnswersWithoutAThreadEach) {
  HttpServerOptions o = server_options(false);
  o.loops = 1;
  o.blocking_threads = 1;
  auto server = start_server(deferring_routes(), o);
  ASSERT_TRUE(server);
  // Every request is sent before any is due; each is due 250-299 ms after it was read.
  constexpr int kConnections = 500;
  std::vector<std::unique_ptr<RawClient>> clients;
  std::vector<Clock::time_point> sent;
  for (int i = 0; i < kConnections; ++i) {
    clients.push_back(std::make_unique<RawClient>());
    ASSERT_TRUE(clients.back()->connect(server->port(), false)) << clients.back()->error();
    sent.push_back(Clock::now());
    ASSERT_TRUE(clients.back()->send(
        post_request("/at/" + std::to_string(250 + i % 50), std::to_string(i))));
  }
  for (int i = 0; i < kConnections; ++i) {
    const RawResponse r = clients[i]->read_response();
    ASSERT_TRUE(r.ok) << i << ": " << r.error;
    ASSERT_EQ(r.body, "at:" + std::to_string(i));
    ASSERT_GE(Clock::now() - sent[i], milliseconds(250 + i % 50)) << i;
  }
  // One after the other, 500 x 250 ms would take two minutes.
  EXPECT_LT(Clock::now() - sent.front(), 5000ms);
}

TEST(HttpServer, DoneAtFromAnotherThreadReachesTheConnectionsLoop) {
  ThreadBag threads;
  Routes routes = base_routes();
  routes.post_inline("/elsewhere/{ms}", [&threads](const std::shared_ptr<Exchange>& ex) {
    threads.add(std::thread([ex] {
      ex->res.set_content("elsewhere:" + std::string(ex->req.body()), "text/plain");
      ex->done_at(Clock::now() + milliseconds(std::stoi(std::string(ex->req.match(1)))));
    }));
  });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  const auto sent = Clock::now();
  RawResponse r = roundtrip(c, post_request("/elsewhere/150", "x"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "elsewhere:x");
  EXPECT_GE(since(sent), 150ms);
  r = roundtrip(c, post_request("/elsewhere/0", "y"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "elsewhere:y");
}

TEST(HttpServer, StopWritesDeferredAnswersAtOnce) {
  auto server = start_server(deferring_routes(), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  ASSERT_TRUE(roundtrip(c, get_request("/hello")).ok);  // the connection is set up
  ASSERT_TRUE(c.send(post_request("/at/60000", "a minute")));
  std::this_thread::sleep_for(100ms);  // read and deferred by now (nothing to poll for)
  const auto stopping = Clock::now();
  auto stopped = std::async(std::launch::async, [&] { return stop_within(*server, 10s); });
  const RawResponse r = c.read_response();  // now, not in a minute
  EXPECT_LT(since(stopping), 2000ms);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "at:a minute");
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_EQ(c.wait_closed(1000ms), RawClient::Eof::kClosed);
  c.close();  // stop() waits for the client to close after its last answer (at most 2 s)
  stopped.get();
}

TEST(HttpServer, AClientGoneBeforeItsDeferredAnswerIsHarmless) {
  auto server = start_server(deferring_routes(), server_options(true));
  ASSERT_TRUE(server);
  const int port = server->port();
  for (int i = 0; i < 20; ++i) {  // each leaves at once, its answer due in 200 ms
    RawClient c;
    ASSERT_TRUE(c.connect(port, true)) << c.error();
    ASSERT_TRUE(c.send(post_request("/at/200", "gone")));
  }
  EXPECT_TRUE(serves_normally(port, true));  // while those answers are pending
  std::this_thread::sleep_for(400ms);        // ...and once they were written to no one
  EXPECT_TRUE(serves_normally(port, true));
  EXPECT_LT(stop_within(*server, 5s), 2000ms);
}

// ---------------------------------------------------------------------------------------------
// 5. Hostile input

struct HostileCase {
  const char* name;
  std::string bytes;
  int status;
  const char* detail;  // part of the parser's reason, which on_error puts in the body
};

std::vector<HostileCase> hostile_cases() {
  const std::string host = "Host: localhost\r\n";
  std::string many_fields;
  for (int i = 0; i < 101; ++i) many_fields += "X-" + std::to_string(i) + ": 1\r\n";
  return {
      {"garbage request line", "\x01\x02\x03 garbage\r\n\r\n", 400, "method"},
      {"not http at all", "THIS IS NOT HTTP\r\n\r\n", 400, "target"},
      {"header section over the limit",
       "GET /hello HTTP/1.1\r\n" + host + "X-Big: " + std::string(3000, 'a') + "\r\n\r\n", 431,
       "too large"},
      {"too many header fields", "GET /hello HTTP/1.1\r\n" + host + many_fields + "\r\n", 431,
       "Too many"},
      // Only the headers go out: the server must not wait for a body it will refuse.
      {"declared body over the limit",
       "POST /echo HTTP/1.1\r\n" + host + "Content-Length: 100000\r\n\r\n", 413, "Content-Length"},
      {"chunk over the body limit",
       "POST /echo HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n10000\r\n", 413,
       "limit"},
      {"Content-Length with Transfer-Encoding",
       "POST /echo HTTP/1.1\r\n" + host +
           "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       400, "Transfer-Encoding"},
      {"HTTP/2.0 request line", "GET /hello HTTP/2.0\r\n" + host + "\r\n", 505, "version"},
      {"HTTP/1.2 request line", "GET /hello HTTP/1.2\r\n" + host + "\r\n", 505, "version"},
      {"target too long", "GET /" + std::string(1000, 'a') + " HTTP/1.1\r\n" + host + "\r\n", 414,
       "too long"},
      {"invalid chunk size",
       "POST /echo HTTP/1.1\r\n" + host +
           "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
       400, "chunk"},
      {"chunk data without CRLF",
       "POST /echo HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
       400, "chunk"},
      {"NUL in a header value",
       std::string("GET /hello HTTP/1.1\r\n") + host + std::string("X-Nul: a") + '\0' + "b\r\n\r\n",
       400, "Control character"},
      {"HTTP/1.1 without Host", "GET /hello HTTP/1.1\r\n\r\n", 400, "Host"},
      {"unsupported transfer coding",
       "POST /echo HTTP/1.1\r\n" + host + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501,
       "not supported"},
  };
}

class HostileInput : public ::testing::TestWithParam<bool> {};

TEST_P(HostileInput, GetsAClear4xxThenCloseAndTheServerKeepsServing) {
  const bool tls = GetParam();
  HttpServerOptions o = server_options(tls);
  // Small limits, so that an over-limit request is one TLS record and one TCP segment: a
  // server that closes with unread input resets the connection, and could lose its own answer.
  o.limits.max_header_bytes = 2048;
  o.limits.max_target_bytes = 512;
  o.limits.max_body_bytes = 4096;
  auto server = start_server(base_routes(), o);
  ASSERT_TRUE(server);
  for (const HostileCase& hc : hostile_cases()) {
    SCOPED_TRACE(hc.name);
    RawClient c;
    ASSERT_TRUE(c.connect(server->port(), tls)) << c.error();
    ASSERT_TRUE(c.send(hc.bytes)) << c.error();
    const RawResponse r = c.read_response();
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.status, hc.status) << r.status_line;
    EXPECT_EQ(r.header("connection"), "close");
    EXPECT_NE(r.body.find(hc.detail), std::string::npos) << r.body;
    EXPECT_EQ(c.wait_closed(2000ms), RawClient::Eof::kClosed);
    EXPECT_TRUE(serves_normally(server->port(), tls));
  }
}

// A bad request behind a good one on the same connection: the good one is answered, then the
// error, then the close.
TEST_P(HostileInput, ErrorAfterAPipelinedGoodRequest) {
  const bool tls = GetParam();
  auto server = start_server(base_routes(), server_options(tls));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), tls)) << c.error();
  ASSERT_TRUE(c.send(post_request("/echo", "fine") + "BROKEN\r\n\r\n"));
  RawResponse r = c.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "post:fine");
  r = c.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_EQ(c.wait_closed(2000ms), RawClient::Eof::kClosed);
  EXPECT_TRUE(serves_normally(server->port(), tls));
}

// A client that sends a body over the limit without waiting for an answer is still writing when
// the 413 is sent: the server must read and drop the rest rather than close on unread input (the
// kernel would answer that with a reset, which can destroy the 413 before the client reads it).
TEST_P(HostileInput, AnOversizedBodySentAnywayStillGetsIts413) {
  const bool tls = GetParam();
  auto server = start_server(base_routes(), server_options(tls));
  ASSERT_TRUE(server);
  const std::string body(300 * 1024, 'x');
  for (int i = 0; i < 10; ++i) {
    RawClient c;
    ASSERT_TRUE(c.connect(server->port(), tls)) << c.error();
    ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body))
        << c.error();
    const RawResponse r = c.read_response();
    ASSERT_TRUE(r.ok) << "try " << i << ": " << r.error;
    EXPECT_EQ(r.status, 413);
    EXPECT_EQ(c.wait_closed(3000ms), RawClient::Eof::kClosed);
  }
  EXPECT_TRUE(serves_normally(server->port(), tls));
}

INSTANTIATE_TEST_SUITE_P(Transports, HostileInput, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Tls" : "Plain"; });

// A TLS handshake offering only `ciphers` (TLS 1.2 suites) at protocol `version` (0: any):
// the suite chosen, or "" when the server refused them all.
std::string handshake_cipher(int port, int version, const char* ciphers) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        &SSL_CTX_free);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  if (version != 0) {
    SSL_CTX_set_min_proto_version(ctx.get(), version);
    SSL_CTX_set_max_proto_version(ctx.get(), version);
  }
  // @SECLEVEL=0: the client offers what it is told to, so only the server can refuse.
  if (ciphers != nullptr &&
      SSL_CTX_set_cipher_list(ctx.get(), (std::string(ciphers) + ":@SECLEVEL=0").c_str()) != 1)
    return "client refused the list";
  const int fd = connect_tcp(port);
  if (fd < 0) return "no connection";
  set_timeouts(fd, 3000ms);
  SSL* ssl = SSL_new(ctx.get());
  SSL_set_fd(ssl, fd);
  std::string chosen;
  if (SSL_connect(ssl) == 1) chosen = SSL_get_cipher_name(ssl);
  ERR_clear_error();
  SSL_free(ssl);
  ::close(fd);
  return chosen;
}

TEST(HttpServer, Tls12OffersOnlyForwardSecretAeadSuites) {
  auto server = start_server(base_routes(), server_options(true));
  ASSERT_TRUE(server);
  const int port = server->port();
  // CBC with SHA-1 (and with SHA-2), and static RSA key exchange: refused.
  EXPECT_EQ(handshake_cipher(port, TLS1_2_VERSION,
                             "ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES128-SHA:"
                             "ECDHE-RSA-AES256-SHA:AES128-SHA:AES256-SHA"),
            "");
  EXPECT_EQ(
      handshake_cipher(port, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA384"),
      "");
  EXPECT_EQ(handshake_cipher(port, TLS1_2_VERSION, "AES128-GCM-SHA256:AES256-GCM-SHA384"), "");
  // ECDHE with AES-GCM or ChaCha20-Poly1305: taken.
  EXPECT_EQ(handshake_cipher(port, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"),
            "ECDHE-ECDSA-AES128-GCM-SHA256");
  EXPECT_EQ(handshake_cipher(port, TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305"),
            "ECDHE-ECDSA-CHACHA20-POLY1305");
  const std::string tls12 = handshake_cipher(port, TLS1_2_VERSION, nullptr);
  EXPECT_TRUE(tls12.find("GCM") != std::string::npos || tls12.find("CHACHA20") != std::string::npos)
      << tls12;
  // TLS 1.3 as it is.
  EXPECT_EQ(handshake_cipher(port, TLS1_3_VERSION, nullptr).rfind("TLS_", 0), 0u);
}

TEST(HttpServer, AnswersOverTlsCarryHstsAndPlainOnesDoNot) {
  auto tls_server = start_server(base_routes(), server_options(true));
  auto plain_server = start_server(base_routes(), server_options(false));
  ASSERT_TRUE(tls_server && plain_server);
  for (const char* path : {"/hello", "/no-such-path"}) {
    RawClient tls;
    ASSERT_TRUE(tls.connect(tls_server->port(), true)) << tls.error();
    const RawResponse secure = roundtrip(tls, get_request(path));
    ASSERT_TRUE(secure.ok) << secure.error;
    EXPECT_EQ(secure.header("strict-transport-security"), "max-age=31536000; includeSubDomains")
        << path;
    RawClient plain;
    ASSERT_TRUE(plain.connect(plain_server->port(), false)) << plain.error();
    const RawResponse clear = roundtrip(plain, get_request(path));
    ASSERT_TRUE(clear.ok) << clear.error;
    EXPECT_FALSE(clear.has("strict-transport-security")) << path;
  }
}

TEST(HttpServer, BrokenTlsClientsDoNotDisturbTheServer) {
  auto server = start_server(base_routes(), server_options(true));
  ASSERT_TRUE(server);
  const int port = server->port();

  {  // Plaintext HTTP to the TLS port: the handshake fails and the server drops the connection.
    RawClient c;
    ASSERT_TRUE(c.connect(port, false)) << c.error();
    ASSERT_TRUE(c.send(get_request("/hello")));
    EXPECT_EQ(c.wait_closed(2000ms, /*allow_data=*/true), RawClient::Eof::kClosed);
  }
  EXPECT_TRUE(serves_normally(port, true));

  {  // Connects, sends nothing, closes.
    const int fd = connect_tcp(port);
    ASSERT_GE(fd, 0);
    ::close(fd);
  }
  EXPECT_TRUE(serves_normally(port, true));

  {  // Closes right after its ClientHello.
    const int fd = connect_tcp(port);
    ASSERT_GE(fd, 0);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    SSL* ssl = SSL_new(client_tls());
    SSL_set_fd(ssl, fd);
    // The ClientHello is out. On a fast loopback the server's flight may already be back, and
    // TLS 1.3 then finishes on the client's side; the server has yet to read the client's
    // Finished either way.
    const int rc = SSL_connect(ssl);
    EXPECT_TRUE(rc == 1 || SSL_get_error(ssl, rc) == SSL_ERROR_WANT_READ) << SSL_get_error(ssl, rc);
    SSL_free(ssl);
    ::close(fd);
  }
  EXPECT_TRUE(serves_normally(port, true));

  {  // Closes once the server's first flight arrived, unread (so the close is a reset).
    const int fd = connect_tcp(port);
    ASSERT_GE(fd, 0);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    SSL* ssl = SSL_new(client_tls());
    SSL_set_fd(ssl, fd);
    SSL_connect(ssl);
    pollfd p{fd, POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 2000), 1);
    SSL_free(ssl);
    ::close(fd);
  }
  EXPECT_TRUE(serves_normally(port, true));

  {  // Half a TLS record, then gone.
    RawClient c;
    ASSERT_TRUE(c.connect(port, false)) << c.error();
    ASSERT_TRUE(c.send(std::string("\x16\x03\x01\x02\x00\x01\x00", 7)));
    c.close();
  }
  EXPECT_TRUE(serves_normally(port, true));
}

// ---------------------------------------------------------------------------------------------
// 6, 7. Expect: 100-continue, chunked bodies

TEST(HttpServer, ExpectContinueGetsA100BeforeTheBodyIsSent) {
  auto server = start_server(base_routes(), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  for (const char* target : {"/echo", "/inline"}) {  // twice: each request gets its own 100
    SCOPED_TRACE(target);
    ASSERT_TRUE(c.send(
        std::string("POST ") + target +
        " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n"));
    const RawResponse interim = c.read_response();  // the body has not been sent yet
    ASSERT_TRUE(interim.ok) << interim.error;
    EXPECT_EQ(interim.status_line, "HTTP/1.1 100 Continue");
    EXPECT_TRUE(interim.headers.empty());
    ASSERT_TRUE(c.send("hello world"));
    const RawResponse r = c.read_response();
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body,
              std::string(target == std::string("/echo") ? "post:" : "inline:") + "hello world");
  }
  // A request without Expect on the same connection still works.
  const RawResponse r = roundtrip(c, post_request("/echo", "plain"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "post:plain");
}

TEST(HttpServer, ChunkedRequestBodyIsDechunkedForTheHandler) {
  std::atomic<bool> saw_content_length{true};
  Routes routes = base_routes();
  routes.post("/chunked", [&](const http::Request& req, http::Response& res) {
    saw_content_length = req.has_header("Content-Length");
    res.set_content("got " + std::to_string(req.body().size()) + ":" + std::string(req.body()),
                    "text/plain");
  });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  const std::string head =
      "POST /chunked HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n";
  RawResponse r =
      roundtrip(c, head + "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "got 11:hello world");
  EXPECT_FALSE(saw_content_length.load());

  // The same body in pieces cut mid-size, mid-data and mid-terminator.
  ASSERT_TRUE(c.send(head + "A"));
  std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(c.send("\r\n0123"));
  std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(c.send("456789\r\n0\r"));
  std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(c.send("\n\r\n"));
  r = c.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "got 10:0123456789");
}

// ---------------------------------------------------------------------------------------------
// 8. Timeouts

TEST(HttpServer, IdleAndSlowConnectionsAreClosedAfterTheirTimeouts) {
  HttpServerOptions o = server_options(true);
  o.idle_timeout = 300ms;
  o.io_timeout = 300ms;
  Routes routes = base_routes();
  routes.get("/slower-than-the-timeouts", [](const http::Request&, http::Response& res) {
    std::this_thread::sleep_for(600ms);
    res.set_content("worth the wait", "text/plain");
  });
  auto server = start_server(std::move(routes), o);
  ASSERT_TRUE(server);
  const int port = server->port();

  RawClient patient;  // its handler outlasts both timeouts: a busy connection is not timed out
  ASSERT_TRUE(patient.connect(port, true)) << patient.error();
  ASSERT_TRUE(patient.send(get_request("/slower-than-the-timeouts")));
  RawClient idle;  // answered once, then quiet
  ASSERT_TRUE(idle.connect(port, true)) << idle.error();
  ASSERT_TRUE(roundtrip(idle, get_request("/hello")).ok);
  const auto idle_since = Clock::now();
  RawClient slow;  // slowloris: part of a header section, then silence
  ASSERT_TRUE(slow.connect(port, true)) << slow.error();
  ASSERT_TRUE(slow.send("GET /hello HTTP/1.1\r\nHost: localhost\r\nX-Slow: "));
  const auto slow_since = Clock::now();
  RawClient mute;  // TCP only: the TLS handshake never starts
  ASSERT_TRUE(mute.connect(port, false)) << mute.error();

  // Not closed at once: the timeout is what closes them.
  EXPECT_EQ(idle.wait_closed(100ms), RawClient::Eof::kTimeout);

  // A connection that keeps talking outlives the timeout several times over.
  RawClient active;
  ASSERT_TRUE(active.connect(port, true)) << active.error();
  for (int i = 0; i < 6; ++i) {
    const RawResponse r = roundtrip(active, get_request("/echo?t=" + std::to_string(i)));
    ASSERT_TRUE(r.ok) << "request " << i << ": " << r.error;
    EXPECT_EQ(r.body, "get:" + std::to_string(i));
    std::this_thread::sleep_for(150ms);
  }

  EXPECT_EQ(idle.wait_closed(2000ms), RawClient::Eof::kClosed);
  EXPECT_GE(since(idle_since), 300ms);
  EXPECT_EQ(slow.wait_closed(2000ms), RawClient::Eof::kClosed);
  EXPECT_GE(since(slow_since), 300ms);
  EXPECT_EQ(mute.wait_closed(2000ms), RawClient::Eof::kClosed);
  const RawResponse r = patient.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "worth the wait");
  EXPECT_TRUE(serves_normally(port, true));
}

TEST(HttpServer, SlowlorisOverPlainHttpIsClosed) {
  HttpServerOptions o = server_options(false);
  o.idle_timeout = 300ms;
  o.io_timeout = 300ms;
  auto server = start_server(base_routes(), o);
  ASSERT_TRUE(server);
  RawClient slow;
  ASSERT_TRUE(slow.connect(server->port(), false)) << slow.error();
  // Part of a request line, then silence past io_timeout.
  ASSERT_TRUE(slow.send("GET /hel"));
  const auto t0 = Clock::now();
  EXPECT_EQ(slow.wait_closed(2000ms), RawClient::Eof::kClosed);
  EXPECT_GE(since(t0), 250ms);
  EXPECT_TRUE(serves_normally(server->port(), false));
}

// ---------------------------------------------------------------------------------------------
// 9, 10. Clients that leave, and stop()

TEST(HttpServer, ClientGoneBeforeItsAsyncAnswerIsHarmless) {
  std::atomic<int> started{0};
  std::atomic<int> answered{0};
  ThreadBag threads;  // after the counters its threads touch, so joined before they go
  Routes routes = base_routes();
  routes.post_inline("/later", [&](const std::shared_ptr<Exchange>& ex) {
    ++started;
    threads.add(std::thread([ex, &answered] {
      std::this_thread::sleep_for(200ms);
      ex->res.set_content("too late", "text/plain");
      ++answered;  // before done(): once stop() returns, the count is final
      ex->done();
    }));
  });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  const int port = server->port();

  {  // Leaves abruptly while the answer is pending.
    RawClient c;
    ASSERT_TRUE(c.connect(port, true)) << c.error();
    ASSERT_TRUE(c.send(post_request("/later", "a")));
    ASSERT_TRUE(eventually([&] { return started.load() == 1; }));
  }
  EXPECT_TRUE(serves_normally(port, true));  // while that answer is still pending
  ASSERT_TRUE(eventually([&] { return answered.load() == 1; }));
  EXPECT_TRUE(serves_normally(port, true));

  {  // Leaves, and stop() is called while its answer is still pending: stop() waits for it.
    RawClient c;
    ASSERT_TRUE(c.connect(port, true)) << c.error();
    ASSERT_TRUE(c.send(post_request("/later", "b")));
    ASSERT_TRUE(eventually([&] { return started.load() == 2; }));
  }
  const milliseconds took = stop_within(*server, 5s);
  EXPECT_EQ(answered.load(), 2);
  EXPECT_LT(took, 2000ms);
}

TEST(HttpServer, StopFinishesTheAnswerInProgressThenRefusesConnections) {
  std::atomic<bool> handler_started{false};
  std::atomic<Clock::rep> handler_finished{0};
  Routes routes = base_routes();
  routes.get("/slow", [&](const http::Request&, http::Response& res) {
    handler_started = true;
    std::this_thread::sleep_for(300ms);
    res.set_content("slow done", "text/plain");
    handler_finished = Clock::now().time_since_epoch().count();
  });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  const int port = server->port();

  RawClient idle;  // a keep-alive connection with nothing in flight: closed by stop()
  ASSERT_TRUE(idle.connect(port, true)) << idle.error();
  ASSERT_TRUE(roundtrip(idle, get_request("/hello")).ok);
  RawClient busy;
  ASSERT_TRUE(busy.connect(port, true)) << busy.error();
  ASSERT_TRUE(busy.send(get_request("/slow")));
  ASSERT_TRUE(eventually([&] { return handler_started.load(); }));

  stop_within(*server, 5s);
  const Clock::rep stop_returned = Clock::now().time_since_epoch().count();
  EXPECT_NE(handler_finished.load(), 0);
  EXPECT_GE(stop_returned, handler_finished.load());

  const RawResponse r = busy.read_response();  // already written before stop() returned
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "slow done");
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_EQ(busy.wait_closed(1000ms), RawClient::Eof::kClosed);
  EXPECT_EQ(idle.wait_closed(1000ms), RawClient::Eof::kClosed);

  int err = 0;
  const int fd = connect_tcp(port, &err);
  if (fd >= 0) ::close(fd);
  EXPECT_LT(fd, 0);
  EXPECT_EQ(err, ECONNREFUSED);
}

// ---------------------------------------------------------------------------------------------
// Hooks

TEST(HttpServer, HooksSeeEveryRequestIncludingRejectedOnes) {
  std::atomic<int> before_calls{0};
  std::mutex mu;
  std::vector<int> after_statuses;
  Routes routes = base_routes();
  routes.before = [&](const http::Request&, http::Response& res) {
    res.set_header("X-Request-Id", "rq-" + std::to_string(++before_calls));
  };
  routes.after = [&](const http::Request&, const http::Response& res, double seconds) {
    EXPECT_GE(seconds, 0.0);
    std::lock_guard lock(mu);
    after_statuses.push_back(res.status);
  };
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();
  RawResponse r = roundtrip(c, get_request("/hello"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.header("x-request-id"), "rq-1");
  r = roundtrip(c, get_request("/missing"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.header("x-request-id"), "rq-2");
  EXPECT_EQ(r.body, "problem: ");                   // on_error ran; routing has no reason to give
  r = roundtrip(c, "GET /hello HTTP/1.1\r\n\r\n");  // no Host: rejected by the parser
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.header("x-request-id"), "rq-3");
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(mu);
    return after_statuses.size() == 3;
  }));
  std::lock_guard lock(mu);
  EXPECT_EQ(after_statuses, (std::vector<int>{200, 404, 400}));
}

// RFC 9110 10.1.1: a server ignores "Expect: 100-continue" in an HTTP/1.0 request; a 1.0
// client knows no 1xx answers and would take the 100 for the final one.
TEST(HttpServer, Http10ExpectContinueIsIgnored) {
  auto server = start_server(base_routes(), server_options(false));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), false)) << c.error();
  ASSERT_TRUE(c.send("POST /echo HTTP/1.0\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(c.wait_closed(200ms), RawClient::Eof::kTimeout) << "something was sent before the body";
  ASSERT_TRUE(c.send("abc"));
  const RawResponse r = c.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "post:abc");
}

// Connections beyond the limit are closed at once; one slot freed, the next client is served.
TEST(HttpServer, ConnectionsBeyondTheLimitAreClosedAtOnce) {
  HttpServerOptions o = server_options(false);
  o.loops = 1;
  o.max_connections = 4;
  auto server = start_server(base_routes(), o);
  ASSERT_TRUE(server);
  auto held = hold_served(server->port(), 4);  // accepted and served: each holds a slot
  ASSERT_EQ(held.size(), 4u);
  RawClient extra;
  ASSERT_TRUE(extra.connect(server->port(), false)) << extra.error();  // the kernel accepts it
  EXPECT_EQ(extra.wait_closed(2000ms), RawClient::Eof::kClosed);
  held.front().reset();
  EXPECT_TRUE(eventually([&] { return static_cast<bool>(serves_normally(server->port(), false)); },
                         3000ms));
}

// Deadlines, not idle timers: a request trickled in, each byte well inside io_timeout, still has
// to be whole by its deadline, or it is answered 408 and the connection closed.
class Deadlines : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(HttpServer, Deadlines, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Tls" : "Plain"; });

// Sends `bytes` in pieces of `piece`, `gap` apart, until all are sent or the server has said
// something (an answer, or a close). Returns the bytes sent.
std::size_t trickle(RawClient& client, std::string_view bytes, std::size_t piece,
                    milliseconds gap) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const std::string_view next = bytes.substr(sent, piece);
    if (!client.send(next)) break;
    sent += next.size();
    if (client.readable(gap)) break;
  }
  return sent;
}

TEST_P(Deadlines, AHeaderSectionTrickledInGets408AtItsDeadline) {
  HttpServerOptions o = server_options(GetParam());
  o.io_timeout = 5s;  // each byte is progress: only the deadline can end this
  o.header_timeout = 700ms;
  Routes routes = base_routes();
  std::atomic<int> answered{0};
  routes.get("/counted", [&](const http::Request&, http::Response& res) {
    ++answered;
    res.set_content("counted", "text/plain");
  });
  auto server = start_server(std::move(routes), o);
  ASSERT_TRUE(server);
  RawClient slow;
  ASSERT_TRUE(slow.connect(server->port(), GetParam())) << slow.error();
  const std::string request =
      get_request("/counted", "X-Padding: " + std::string(200, 'p') + "\r\n");
  const auto t0 = Clock::now();
  // Without a deadline the whole header section would arrive (in about 4 s) and be answered.
  const std::size_t sent = trickle(slow, request, 1, 15ms);
  EXPECT_LT(sent, request.size());
  const RawResponse r = slow.read_response();
  const auto took = since(t0);
  EXPECT_EQ(r.status, 408) << r.error;
  EXPECT_GE(took, 600ms);
  EXPECT_LT(took, 2500ms);
  EXPECT_EQ(answered.load(), 0);
  EXPECT_TRUE(serves_normally(server->port(), GetParam()));
}

TEST_P(Deadlines, ABodyHasADeadlineScaledByItsSize) {
  HttpServerOptions o = server_options(GetParam());
  o.io_timeout = 5s;
  o.body_timeout = 400ms;
  o.body_min_rate = 1000;  // 600 bytes: 0.4 s + 0.6 s
  auto server = start_server(base_routes(), o);
  ASSERT_TRUE(server);
  const std::string head =
      "POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n"
      "Content-Length: 600\r\n\r\n";

  // 60 bytes every 50 ms (1,200 bytes/s): within the bound, answered.
  RawClient steady;
  ASSERT_TRUE(steady.connect(server->port(), GetParam())) << steady.error();
  ASSERT_TRUE(steady.send(head));
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(steady.send(std::string(60, 'b')));
    std::this_thread::sleep_for(50ms);
  }
  const RawResponse ok = steady.read_response();
  ASSERT_TRUE(ok.ok) << ok.error;
  EXPECT_EQ(ok.status, 200);

  // 10 bytes every 50 ms (200 bytes/s): 408 at about 1 s, long before the body would be in.
  RawClient slow;
  ASSERT_TRUE(slow.connect(server->port(), GetParam())) << slow.error();
  ASSERT_TRUE(slow.send(head));
  const auto t0 = Clock::now();
  EXPECT_LT(trickle(slow, std::string(600, 'b'), 10, 50ms), 600u);
  const RawResponse late = slow.read_response();
  EXPECT_EQ(late.status, 408) << late.error;
  EXPECT_GE(since(t0), 900ms);
  EXPECT_LT(since(t0), 2500ms);
  EXPECT_TRUE(serves_normally(server->port(), GetParam()));
}

TEST(HttpServer, ATlsHandshakeTrickledInIsClosedAtItsDeadline) {
  HttpServerOptions o = server_options(true);
  o.io_timeout = 5s;
  o.tls_handshake_timeout = 600ms;
  auto server = start_server(base_routes(), o);
  ASSERT_TRUE(server);
  int err = 0;
  const int fd = connect_tcp(server->port(), &err);
  ASSERT_GE(fd, 0) << std::strerror(err);
  // A TLS record header announcing a 512-byte handshake message, then its bytes one by one:
  // OpenSSL waits for the whole record, and every byte is progress.
  const std::string record = std::string("\x16\x03\x01\x02\x00", 5) + std::string(512, '\0');
  const auto t0 = Clock::now();
  bool closed = false;
  for (std::size_t i = 0; i < record.size() && !closed; ++i) {
    if (::send(fd, record.data() + i, 1, MSG_NOSIGNAL) != 1) {
      closed = true;
      break;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      char b[64];
      closed = ::recv(fd, b, sizeof b, 0) <= 0;
    }
  }
  ::close(fd);
  EXPECT_TRUE(closed);
  EXPECT_GE(since(t0), 500ms);
  EXPECT_LT(since(t0), 2500ms);
  EXPECT_TRUE(serves_normally(server->port(), true));
}

// Fairness: one address cannot take every connection.
TEST(HttpServer, OneAddressCannotHoldMoreThanItsShareOfConnections) {
  HttpServerOptions o = server_options(false);
  o.max_connections_per_address = 3;
  auto server = start_server(base_routes(), o);
  ASSERT_TRUE(server);
  auto held = hold_served(server->port(), 3);
  ASSERT_EQ(held.size(), 3u);
  RawClient fourth;
  ASSERT_TRUE(fourth.connect(server->port(), false)) << fourth.error();
  EXPECT_EQ(fourth.wait_closed(2000ms), RawClient::Eof::kClosed);
  // Another address is still served.
  RawClient other;
  ASSERT_TRUE(other.connect(server->port(), false, "127.0.0.2")) << other.error();
  EXPECT_TRUE(roundtrip(other, get_request("/hello")).ok);
  // A connection closed gives its slot back.
  held.front().reset();
  EXPECT_TRUE(eventually(
      [&] {
        RawClient again;
        return again.connect(server->port(), false) && roundtrip(again, get_request("/hello")).ok;
      },
      3000ms));
}

TEST(HttpServer, AnUncappedAddressSuchAsATrustedProxyIsNotCapped) {
  HttpServerOptions o = server_options(false);
  o.max_connections_per_address = 2;
  o.uncapped = [](std::string_view address) { return address == "127.0.0.1"; };
  auto server = start_server(base_routes(), o);
  ASSERT_TRUE(server);
  EXPECT_EQ(hold_served(server->port(), 5).size(), 5u);
}

// The global cap is the listener's, not a share per loop: with four loops and a cap of four,
// four connections are served whichever loops take them.
TEST(HttpServer, TheConnectionCapHoldsAcrossLoops) {
  HttpServerOptions o = server_options(false);
  o.loops = 4;
  o.max_connections = 4;
  auto server = start_server(base_routes(), o);
  ASSERT_TRUE(server);
  auto held = hold_served(server->port(), 4);
  ASSERT_EQ(held.size(), 4u);
  RawClient fifth;
  ASSERT_TRUE(fifth.connect(server->port(), false)) << fifth.error();
  EXPECT_EQ(fifth.wait_closed(2000ms), RawClient::Eof::kClosed);
}

// A client may send its request and then close its sending side: the request is still answered
// (then the connection ends), over either transport.
class HalfClose : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Transports, HalfClose, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Tls" : "Plain"; });

TEST_P(HalfClose, TheRequestSentBeforeIsStillAnswered) {
  auto server = start_server(base_routes(), server_options(GetParam()));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), GetParam())) << c.error();
  ASSERT_TRUE(c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"));
  ASSERT_TRUE(c.shut_write());
  const RawResponse r = c.read_response();
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "post:abc");
  EXPECT_EQ(c.wait_closed(2000ms), RawClient::Eof::kClosed);
  EXPECT_TRUE(serves_normally(server->port(), GetParam()));
}

// ---------------------------------------------------------------------------------------------
// 11. Multipart

std::size_t count_parts(const std::vector<http::FormPart>& parts, std::string_view name) {
  return static_cast<std::size_t>(std::count_if(
      parts.begin(), parts.end(), [&](const http::FormPart& p) { return p.name == name; }));
}

const http::FormPart& part_named(const std::vector<http::FormPart>& parts, std::string_view name) {
  return *std::find_if(parts.begin(), parts.end(),
                       [&](const http::FormPart& p) { return p.name == name; });
}

TEST(HttpServer, ParseMultipartReadsFieldsAndFiles) {
  const std::string body =
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"title\"\r\n"
      "\r\n"
      "hello\r\n"
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"file\"; filename=\"leads.csv\"\r\n"
      "Content-Type: text/csv\r\n"
      "\r\n"
      "a,b\r\n1,2\r\n"
      "--XyZ--\r\n";
  for (const char* ct :
       {"multipart/form-data; boundary=XyZ", "multipart/form-data; boundary=\"XyZ\"",
        "Multipart/Form-Data; BOUNDARY=XyZ; charset=utf-8"}) {
    SCOPED_TRACE(ct);
    std::vector<http::FormPart> out;
    ASSERT_TRUE(http::parse_multipart(ct, body, out));
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(count_parts(out, "title"), 1u);
    ASSERT_EQ(count_parts(out, "file"), 1u);
    const auto& title = part_named(out, "title");
    EXPECT_EQ(title.content, "hello");
    EXPECT_EQ(title.filename, "");
    const auto& file = part_named(out, "file");
    EXPECT_EQ(file.filename, "leads.csv");
    EXPECT_EQ(file.content_type, "text/csv");
    EXPECT_EQ(file.content, "a,b\r\n1,2");  // CRLF inside the content is content
  }
}

TEST(HttpServer, ParseMultipartRejectsMalformedBodies) {
  const std::string ct = "multipart/form-data; boundary=XyZ";
  const std::string part = "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nvalue";
  struct Case {
    const char* name;
    std::string content_type, body;
  };
  const Case cases[] = {
      {"no closing delimiter", ct, part},
      {"delimiter without the closing dashes", ct, part + "\r\n--XyZ"},
      {"missing name", ct,
       "--XyZ\r\nContent-Disposition: form-data; filename=\"a.txt\"\r\n\r\nv\r\n--XyZ--"},
      {"no part headers end", ct,
       "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\nvalue\r\n--XyZ--"},
      {"unterminated quoted name", ct,
       "--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n--XyZ--"},
      {"body without the boundary", ct, "just some text"},
      {"no boundary parameter", "multipart/form-data", part + "\r\n--XyZ--"},
      {"garbage after a delimiter", ct, "--XyZ garbage\r\n"},
  };
  for (const Case& c : cases) {
    std::vector<http::FormPart> out;
    EXPECT_FALSE(http::parse_multipart(c.content_type, c.body, out)) << c.name;
  }
}

TEST(HttpServer, MultipartPostReachesTheHandlerParsed) {
  Routes routes = base_routes();
  routes.post("/upload", [](const http::Request& req, http::Response& res) {
    const http::FormPart& title = part_named(req.form_parts(), "title");
    const http::FormPart& file = part_named(req.form_parts(), "file");
    res.set_content(
        title.content + "|" + file.filename + "|" + file.content_type + "|" + file.content,
        "text/plain");
  });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  auto cli = https_client(server->port());
  const httplib::MultipartFormDataItems items = {
      {"title", "hello", "", ""},
      {"file", "a,b\n1,2\n", "leads.csv", "text/csv"},
  };
  auto res = cli->Post("/upload", items);
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "hello|leads.csv|text/csv|a,b\n1,2\n");

  // A body that does not follow its boundary never reaches the handler.
  res = cli->Post("/upload", "not multipart at all", "multipart/form-data; boundary=XyZ");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 400);
}

// ---------------------------------------------------------------------------------------------
// 12. Exceptions

TEST(HttpServer, ThrowingHandlersGive500AndTheConnectionStaysUsable) {
  Routes routes = base_routes();
  routes.get("/throw", [](const http::Request&, http::Response& res) {
    res.set_content("half-built answer", "text/plain");  // must not leak into the 500
    throw std::runtime_error("boom");
  });
  routes.post_inline("/throw-inline", [](const std::shared_ptr<Exchange>&) {
    throw std::runtime_error("inline boom");
  });
  routes.post_inline("/throw-in-pool", [](const std::shared_ptr<Exchange>& ex) {
    ex->run_blocking([](Exchange&) { throw std::runtime_error("pool boom"); });
  });
  auto server = start_server(std::move(routes), server_options(true));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), true)) << c.error();

  RawResponse r = roundtrip(c, get_request("/throw"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status_line, "HTTP/1.1 500 Internal Server Error");
  EXPECT_EQ(r.body, "failed: boom");
  EXPECT_FALSE(r.has("connection"));
  r = roundtrip(c, get_request("/hello"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "hello world");

  r = roundtrip(c, post_request("/throw-inline", "x"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "failed: inline boom");

  r = roundtrip(c, post_request("/throw-in-pool", "x"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "failed: pool boom");

  r = roundtrip(c, get_request("/hello"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "hello world");
}

TEST(HttpServer, ThrowingHandlerWithoutOnExceptionGivesABare500) {
  Routes routes;
  routes.get("/hello", [](const http::Request&, http::Response& res) {
    res.set_content("hello world", "text/plain");
  });
  routes.get("/throw",
             [](const http::Request&, http::Response&) { throw std::logic_error("bad"); });
  auto server = start_server(std::move(routes), server_options(false));
  ASSERT_TRUE(server);
  RawClient c;
  ASSERT_TRUE(c.connect(server->port(), false)) << c.error();
  RawResponse r = roundtrip(c, get_request("/throw"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.header("content-length"), "0");
  r = roundtrip(c, get_request("/hello"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.body, "hello world");
}

}  // namespace
}  // namespace leadflow
