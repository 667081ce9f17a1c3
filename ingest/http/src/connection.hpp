#pragma once
// Private: one accepted connection of an event loop, and the loop's constants.
#include <unistd.h>

#include <openssl/ssl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "leadflow/http/message.hpp"
#include "leadflow/http/parser.hpp"
#include "leadflow/http/stream.hpp"
#include "server_impl.hpp"

namespace leadflow::http {

using SteadyClock = std::chrono::steady_clock;

constexpr std::uint64_t kListenerTag = 1;
constexpr std::uint64_t kWakeTag = 2;
constexpr std::uint64_t kFirstConnection = 1 << 8;  // ids below are tags; low 8 bits: the loop
constexpr int kMaxLoops = 255;
constexpr std::size_t kReadChunk = 16 * 1024;
constexpr int kAcceptBatch = 8;  // per wake-up, so another loop takes part of a burst
// The kernel's send buffer of a streamed answer: what a stalled reader can hold beyond its
// stream's own bound (the default grows to megabytes).
constexpr int kStreamSendBuffer = 64 * 1024;
// What a streamed upload's body (Routes::put_streamed) may hold that its handler has not taken:
// past it the connection reads no more until the handler catches up.
constexpr std::size_t kUploadPending = 1024 * 1024;

/// A request partly received: the reader that resumes where it stopped, and what it has read.
struct Reading {
  explicit Reading(const ParseLimits& limits) : reader(limits) {}
  RequestReader reader;
  http::Request request;
};

/// A socket (and its TLS session) with what was read and not yet parsed, and what is to be
/// written. Owned by the loop that accepted it; only that loop's thread touches it.
struct Conn {
  std::uint64_t id = 0;
  int fd = -1;
  SSL* ssl = nullptr;
  std::string in;   // received, not yet parsed
  std::string out;  // answers not yet sent
  std::size_t out_off = 0;
  std::uint32_t interest = 0;  // the epoll events registered
  bool busy = false;           // a request is being answered
  bool read_closed = false;    // the peer sent all it will (EOF, close_notify) or the read failed
  bool close_after_write = false;
  bool continue_sent = false;
  bool keep_alive = true;
  bool http10 = false;
  bool head_only = false;
  bool tls_wants_write = false;  // a read (handshake) needs the socket writable
  bool tls_wants_read = false;   // a write needs the socket readable
  bool lingering = false;        // answered and half-closed: dropping input until the peer closes
  std::size_t lingered = 0;      // bytes dropped so far
  SteadyClock::time_point last_active;
  SteadyClock::time_point accepted;  // the TLS handshake's deadline runs from here
  // The request being received (unparsed input while no request is being answered): from its
  // first byte it has until `deadline` (the header section's bound, then, once the headers are
  // in, the body's).
  bool head_read = false;
  SteadyClock::time_point deadline;
  std::unique_ptr<Reading> reading;  // while a request is partly here
  // What `in` may hold while this request is read, when its route takes a body larger than the
  // listener's (Routes::put_upload); 0: the loop's own cap. The body's bound is counted in
  // `uploads` (the server's bytes of such bodies being received) until the request is read.
  std::size_t in_cap = 0;
  std::size_t upload_bytes = 0;
  std::atomic<std::size_t>* uploads = nullptr;
  // A body handed to its handler as it arrives (Routes::put_streamed), counted in
  // `upload_streams` (the server's streamed uploads) until it is answered.
  std::shared_ptr<UploadStream> upload;
  std::atomic<std::size_t>* upload_streams = nullptr;
  void end_upload() {
    if (uploads && upload_bytes) uploads->fetch_sub(upload_bytes, std::memory_order_relaxed);
    upload_bytes = 0;
    in_cap = 0;
    if (upload_streams) upload_streams->fetch_sub(1, std::memory_order_relaxed);
    upload_streams = nullptr;
  }
  std::string remote_addr;
  HttpServer::Impl* admitted_by = nullptr;  // counted in its connections (Impl::admit)
  std::string address_key;                  // ... under this key
  int remote_port = 0;
  // A streamed answer (Response::stream) being written: the connection reads nothing more.
  std::shared_ptr<StreamBody> stream;
  bool chunked = false;  // its body is framed in chunks (HTTP/1.1)

  ~Conn() {
    if (upload) upload->detach();  // its handler learns that the body will never be whole
    end_upload();
    if (stream) stream->detach();
    if (ssl) SSL_free(ssl);
    if (fd >= 0) ::close(fd);
    if (admitted_by) admitted_by->release(address_key);
  }
};

}  // namespace leadflow::http
