#include "tls.hpp"

#include <openssl/err.h>

namespace leadflow::http {
namespace {

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  if (e == 0) return "unknown TLS error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

}  // namespace

SSL_CTX* new_server_tls(const std::string& cert, const std::string& key, std::string& error) {
  SSL_CTX* tls = SSL_CTX_new(TLS_server_method());
  if (!tls) {
    error = "TLS: " + openssl_error();
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(tls, TLS1_2_VERSION);
  // TLS 1.2 offers only forward-secret AEAD suites (ECDHE with AES-GCM or ChaCha20-Poly1305):
  // no CBC (Lucky Thirteen, padding oracles), no SHA-1 MACs, no static RSA key exchange.
  // TLS 1.3's suites are all AEAD and stay OpenSSL's defaults.
  if (SSL_CTX_set_cipher_list(tls, kTls12Ciphers) != 1) {
    error = "TLS: " + openssl_error();
    SSL_CTX_free(tls);
    return nullptr;
  }
  SSL_CTX_set_options(tls, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(tls, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(tls, cert.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(tls, key.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(tls) != 1) {
    error = "cannot load " + cert + " / " + key + ": " + openssl_error();
    SSL_CTX_free(tls);
    return nullptr;
  }
  return tls;
}

}  // namespace leadflow::http
