#pragma once
// A TLS client connection over a non-blocking TCP socket, for the HTTP/2 transport: it connects,
// shakes hands (SNI, ALPN, peer verification) and moves bytes without ever blocking, saying what
// it waits for instead.
#include <sys/socket.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

struct ssl_ctx_st;
struct ssl_st;
struct ssl_session_st;

namespace leadflow {

/// The TLS settings every buyer connection of one client shares (an SSL_CTX): peer verification
/// against the system's CAs plus an optional bundle, TLS 1.2 and up, ALPN offering h2 then
/// http/1.1. Owned by the client; its settings are read-only once made, so its connections may
/// share it.
///
/// It also keeps, per buyer (host and port), the newest session that buyer's server gave (a
/// TLS 1.3 ticket, a TLS 1.2 session), so that the next connection to it resumes rather than
/// doing a full handshake: a busy buyer's new connections cost it and us a round trip and the
/// signature less. A session is only offered to the host and port that gave it, whose certificate
/// was verified then. Any loop thread may read and write the sessions.
class TlsClientContext {
 public:
  /// Throws std::runtime_error naming what failed (an unreadable ca_file, say).
  TlsClientContext(bool verify_peer, const std::string& ca_file);
  ~TlsClientContext();
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  ssl_ctx_st* get() const { return ctx_; }
  bool verify_peer() const { return verify_peer_; }

  /// The session to resume with the buyer `key` names, with a reference the caller frees
  /// (SSL_SESSION_free); nullptr when none is kept.
  ssl_session_st* session_for(const std::string& key) const;
  /// Keeps `session` (its reference is taken over) as the one to resume with `key`'s buyer.
  void keep_session(const std::string& key, ssl_session_st* session);

 private:
  ssl_ctx_st* ctx_ = nullptr;
  bool verify_peer_ = true;
  mutable std::mutex sessions_mu_;
  std::unordered_map<std::string, ssl_session_st*> sessions_;
};

/// One TCP connection and its TLS session, non-blocking. Owned by one connection of the HTTP/2
/// transport and used only on its loop thread. Closing the socket is the destructor's.
class TlsStream {
 public:
  /// What an operation came to: done, or waiting for the socket to become readable or
  /// writable, or the peer closed, or failed (error() says why).
  enum class Io { kDone, kWantRead, kWantWrite, kClosed, kError };

  /// `host` is the buyer's name (or address literal): sent as SNI unless it is an address, and
  /// what the certificate must name when the context verifies peers.
  TlsStream(const TlsClientContext& context, const std::string& host);
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  /// Starts a TCP connect to `address`; false (error() says why) if it failed at once, e.g.
  /// refused on loopback or no descriptor left (then errno_value() says which).
  bool connect(const sockaddr* address, socklen_t length);
  int fd() const { return fd_; }

  /// Drives the TCP connect to its end, then the TLS handshake. kDone once both are.
  Io handshake();
  /// The handshake ended in the TCP connect (nothing was sent to the buyer, another address may
  /// be tried), rather than in TLS.
  bool failed_in_connect() const { return !tcp_connected_; }
  /// The protocol ALPN chose ("h2", "http/1.1"), or "" when the buyer chose none.
  std::string alpn() const;
  /// The handshake resumed a session the buyer gave before (no certificate was sent).
  bool resumed() const;
  /// The key of the buyer's sessions (TlsClientContext): its host and the port connected to.
  const std::string& session_key() const { return session_key_; }

  /// Reads up to `capacity` bytes into `data`, `*n` of them when kDone.
  Io read(char* data, std::size_t capacity, std::size_t* n);
  /// Writes up to `length` bytes of `data`, `*n` of them when kDone. After kWantWrite the same
  /// bytes must be offered again.
  Io write(const char* data, std::size_t length, std::size_t* n);

  const std::string& error() const { return error_; }
  int errno_value() const { return errno_; }

 private:
  Io result(int rc, const char* what);

  const TlsClientContext& context_;
  ssl_st* ssl_ = nullptr;
  int fd_ = -1;
  int errno_ = 0;
  bool tcp_connected_ = false;
  bool verify_peer_ = true;
  std::string host_;
  std::string session_key_;
  std::string error_;
};

}  // namespace leadflow
