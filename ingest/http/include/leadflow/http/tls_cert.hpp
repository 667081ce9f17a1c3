#pragma once
#include <string>

namespace leadflow {

/// Makes sure `cert_path`/`key_path` hold a certificate and key; when both are missing, writes a
/// self-signed P-256 certificate for localhost, 127.0.0.1 and ::1 (valid a year; key file 0600).
/// Returns "" or an error message.
std::string ensure_self_signed(const std::string& cert_path, const std::string& key_path);

}  // namespace leadflow
