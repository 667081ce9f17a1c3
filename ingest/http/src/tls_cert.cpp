#include "leadflow/http/tls_cert.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace leadflow {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;

bool add_ext(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

}  // namespace

std::string ensure_self_signed(const std::string& cert_path, const std::string& key_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool have_cert = fs::exists(cert_path, ec), have_key = fs::exists(key_path, ec);
  if (have_cert && have_key) return "";
  if (have_cert != have_key) return "only one of " + cert_path + " and " + key_path + " exists";
  fs::create_directories(fs::path(cert_path).parent_path(), ec);
  fs::create_directories(fs::path(key_path).parent_path(), ec);

  PkeyPtr key(EVP_EC_gen("P-256"));
  X509Ptr cert(X509_new());
  if (!key || !cert) return "cannot create a key pair";
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("leadflow"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (!add_ext(cert.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1") ||
      !add_ext(cert.get(), NID_basic_constraints, "critical,CA:FALSE") ||
      !add_ext(cert.get(), NID_ext_key_usage, "serverAuth"))
    return "cannot set certificate extensions";
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return "cannot sign the certificate";

  const std::string key_tmp = key_path + ".tmp", cert_tmp = cert_path + ".tmp";
  const mode_t old_mask = umask(077);
  FILE* kf = std::fopen(key_tmp.c_str(), "wb");
  umask(old_mask);
  if (!kf) return "cannot write " + key_tmp;
  const bool key_ok =
      PEM_write_PrivateKey(kf, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(kf);
  FILE* cf = std::fopen(cert_tmp.c_str(), "wb");
  if (!cf) return "cannot write " + cert_tmp;
  const bool cert_ok = PEM_write_X509(cf, cert.get()) == 1;
  std::fclose(cf);
  if (!key_ok || !cert_ok) return "cannot write the certificate files";
  fs::rename(key_tmp, key_path, ec);
  if (ec) return "cannot rename " + key_tmp;
  fs::rename(cert_tmp, cert_path, ec);
  if (ec) return "cannot rename " + cert_tmp;
  return "";
}

}  // namespace leadflow
