#pragma once
// Private: the server side of TLS (OpenSSL) for a listener.
#include <openssl/ssl.h>

#include <string>

namespace leadflow::http {

/// A TLS 1.2+ server context with the PEM certificate chain and key, or nullptr with `error`
/// ("cannot load <cert> / <key>: ..."). The caller frees it with SSL_CTX_free.
SSL_CTX* new_server_tls(const std::string& cert, const std::string& key, std::string& error);

}  // namespace leadflow::http
