#include "tls_stream.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>

namespace leadflow {
namespace {

// ALPN, in the wire format: h2 first, so a buyer that speaks both chooses it.
constexpr unsigned char kAlpn[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

bool is_address_literal(const std::string& host) {
  in6_addr v6{};
  in_addr v4{};
  return ::inet_pton(AF_INET, host.c_str(), &v4) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "unknown TLS error";
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}

// Buyers whose sessions are kept at most: past it a new buyer's session replaces an arbitrary
// one's (that buyer's next connection is a full handshake).
constexpr std::size_t kMaxSessions = 10'000;

// A session the buyer's server gave on a connection (a TLS 1.3 ticket arrives after the
// handshake, while the connection reads): kept for the next connection to the same buyer.
int on_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* stream = static_cast<const TlsStream*>(SSL_get_app_data(ssl));
  auto* context = static_cast<TlsClientContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  if (stream == nullptr || context == nullptr || stream->session_key().empty()) return 0;
  context->keep_session(stream->session_key(), session);
  return 1;  // the reference is the context's now
}

}  // namespace

TlsClientContext::TlsClientContext(bool verify_peer, const std::string& ca_file)
    : verify_peer_(verify_peer) {
  ctx_ = SSL_CTX_new(TLS_client_method());
  if (ctx_ == nullptr) throw std::runtime_error("SSL_CTX_new failed: " + openssl_error());
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  // Partial writes let a large write go out in pieces as the socket takes them; a moving buffer
  // lets the caller retry from wherever its bytes are now.
  SSL_CTX_set_mode(ctx_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx_, verify_peer ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  if (verify_peer && SSL_CTX_set_default_verify_paths(ctx_) != 1) {
    ERR_clear_error();  // no system store: only ca_file can verify, and says so by failing
  }
  if (!ca_file.empty() && SSL_CTX_load_verify_locations(ctx_, ca_file.c_str(), nullptr) != 1) {
    const std::string why = openssl_error();
    SSL_CTX_free(ctx_);
    throw std::runtime_error("cannot load the buyer CA file " + ca_file + ": " + why);
  }
  // Unlike the rest of OpenSSL, 0 is success here.
  if (SSL_CTX_set_alpn_protos(ctx_, kAlpn, sizeof kAlpn) != 0) {
    SSL_CTX_free(ctx_);
    throw std::runtime_error("SSL_CTX_set_alpn_protos failed");
  }
  // Sessions are kept here, by buyer, not in OpenSSL's cache (which a client never looks up).
  SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_set_app_data(ctx_, this);
  SSL_CTX_sess_set_new_cb(ctx_, on_new_session);
}

TlsClientContext::~TlsClientContext() {
  for (auto& [key, session] : sessions_) SSL_SESSION_free(session);
  SSL_CTX_free(ctx_);
}

SSL_SESSION* TlsClientContext::session_for(const std::string& key) const {
  std::lock_guard lock(sessions_mu_);
  const auto it = sessions_.find(key);
  if (it == sessions_.end()) return nullptr;
  SSL_SESSION_up_ref(it->second);
  return it->second;
}

void TlsClientContext::keep_session(const std::string& key, SSL_SESSION* session) {
  SSL_SESSION* replaced = nullptr;
  {
    std::lock_guard lock(sessions_mu_);
    auto it = sessions_.find(key);
    if (it != sessions_.end()) {
      replaced = it->second;
      it->second = session;
    } else {
      if (sessions_.size() >= kMaxSessions) {
        replaced = sessions_.begin()->second;
        sessions_.erase(sessions_.begin());
      }
      sessions_.emplace(key, session);
    }
  }
  if (replaced != nullptr) SSL_SESSION_free(replaced);
}

TlsStream::TlsStream(const TlsClientContext& context, const std::string& host)
    : context_(context), verify_peer_(context.verify_peer()), host_(host) {
  ssl_ = SSL_new(context.get());
  if (ssl_ == nullptr) throw std::runtime_error("SSL_new failed: " + openssl_error());
  SSL_set_app_data(ssl_, this);
  const bool literal = is_address_literal(host);
  // SNI carries names only (RFC 6066): an address literal is not sent.
  if (!literal) SSL_set_tlsext_host_name(ssl_, host.c_str());
  if (verify_peer_) {
    // The certificate must name the host the buyer's URL names, not only chain to a CA.
    if (literal) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), host.c_str());
    } else {
      SSL_set1_host(ssl_, host.c_str());
    }
  }
  SSL_set_connect_state(ssl_);
}

TlsStream::~TlsStream() {
  // A close_notify, without waiting for the buyer's. Besides telling the buyer the connection
  // ends on purpose, it keeps the session resumable: OpenSSL marks the session of a connection
  // freed without one as never to be resumed, and the context holds that same session.
  if (ssl_ != nullptr && SSL_is_init_finished(ssl_)) {
    ERR_clear_error();
    SSL_shutdown(ssl_);
    ERR_clear_error();
  }
  SSL_free(ssl_);
  if (fd_ >= 0) ::close(fd_);
}

bool TlsStream::connect(const sockaddr* address, socklen_t length) {
  fd_ = ::socket(address->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    errno_ = errno;
    error_ = std::string("no socket for the request: ") + std::strerror(errno_);
    return false;
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::connect(fd_, address, length) == 0) {
    tcp_connected_ = true;
  } else if (errno != EINPROGRESS) {
    errno_ = errno;
    error_ = std::strerror(errno_);
    return false;
  }
  SSL_set_fd(ssl_, fd_);
  // The buyer's last session, if it gave one: offered in the ClientHello. A server that no
  // longer knows it answers with a full handshake, so nothing is lost by offering.
  int port = 0;
  if (address->sa_family == AF_INET)
    port = ntohs(reinterpret_cast<const sockaddr_in*>(address)->sin_port);
  else if (address->sa_family == AF_INET6)
    port = ntohs(reinterpret_cast<const sockaddr_in6*>(address)->sin6_port);
  session_key_ = host_ + ":" + std::to_string(port);
  if (SSL_SESSION* session = context_.session_for(session_key_)) {
    SSL_set_session(ssl_, session);
    SSL_SESSION_free(session);
  }
  return true;
}

TlsStream::Io TlsStream::handshake() {
  if (!tcp_connected_) {
    // The socket turns writable when the connect ends, either way; SO_ERROR says which.
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, 0) == 0) return Io::kWantWrite;
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) {
      errno_ = err;
      error_ = std::strerror(err);
      return Io::kError;
    }
    tcp_connected_ = true;
  }
  ERR_clear_error();
  const int rc = SSL_connect(ssl_);
  if (rc == 1) return Io::kDone;
  const Io io = result(rc, "TLS handshake");
  if (io == Io::kClosed) {
    error_ = "connection closed during the TLS handshake";
    return Io::kError;
  }
  return io;
}

bool TlsStream::resumed() const { return SSL_session_reused(ssl_) == 1; }

std::string TlsStream::alpn() const {
  const unsigned char* data = nullptr;
  unsigned int length = 0;
  SSL_get0_alpn_selected(ssl_, &data, &length);
  return data == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(data), length);
}

TlsStream::Io TlsStream::read(char* data, std::size_t capacity, std::size_t* n) {
  ERR_clear_error();
  const int rc = SSL_read(ssl_, data, static_cast<int>(std::min<std::size_t>(capacity, INT_MAX)));
  if (rc > 0) {
    *n = static_cast<std::size_t>(rc);
    return Io::kDone;
  }
  return result(rc, "TLS read");
}

TlsStream::Io TlsStream::write(const char* data, std::size_t length, std::size_t* n) {
  ERR_clear_error();
  const int rc = SSL_write(ssl_, data, static_cast<int>(std::min<std::size_t>(length, INT_MAX)));
  if (rc > 0) {
    *n = static_cast<std::size_t>(rc);
    return Io::kDone;
  }
  return result(rc, "TLS write");
}

TlsStream::Io TlsStream::result(int rc, const char* what) {
  const int saved_errno = errno;
  switch (SSL_get_error(ssl_, rc)) {
    case SSL_ERROR_WANT_READ:
      return Io::kWantRead;
    case SSL_ERROR_WANT_WRITE:
      return Io::kWantWrite;
    case SSL_ERROR_ZERO_RETURN:
      error_ = "connection closed by the buyer";
      return Io::kClosed;
    case SSL_ERROR_SYSCALL:
      if (ERR_peek_error() == 0) {
        if (rc == 0 || saved_errno == 0) {
          error_ = "connection closed by the buyer";
          return Io::kClosed;
        }
        errno_ = saved_errno;
        error_ = std::string(what) + ": " + std::strerror(saved_errno);
        return Io::kError;
      }
      break;
    default:
      break;
  }
  const long verified = SSL_get_verify_result(ssl_);
  if (verify_peer_ && verified != X509_V_OK) {
    error_ = std::string("TLS certificate of ") + host_ +
             " not verified: " + X509_verify_cert_error_string(verified);
  } else {
    error_ = std::string(what) + " failed: " + openssl_error();
  }
  return Io::kError;
}

}  // namespace leadflow
