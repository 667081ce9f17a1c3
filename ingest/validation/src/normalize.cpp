// Normalisation of the fields with a canonical form: e-mail (lower-cased), phone (NANP, ten
// digits), ZIP (+4) and IP address checks. Public: the handlers and tests use them directly.
#include <arpa/inet.h>

#include <array>
#include <string>

#include "field_checks.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/validation/validation.hpp"

#include <algorithm>
#include <cctype>

namespace leadflow {

using validation::kMaxPhoneInput;

std::string normalize_email(std::string_view in) {
  const std::string_view s = trim(in);
  if (s.empty() || s.size() > 254) return {};
  const std::size_t at = s.find('@');
  if (at == std::string_view::npos || at == 0 || at > 64) return {};
  const std::string_view local = s.substr(0, at);
  const std::string_view domain = s.substr(at + 1);
  if (domain.empty() || domain.size() > 253) return {};

  // Local part: dot-atom (RFC 5322 atext separated by single dots).
  static constexpr std::string_view kAtextSpecials = "!#$%&'*+-/=?^_`{|}~";
  bool after_dot = true;
  for (char c : local) {
    if (c == '.') {
      if (after_dot) return {};
      after_dot = true;
    } else if (is_alnum(c) || kAtextSpecials.find(c) != std::string_view::npos) {
      after_dot = false;
    } else {
      return {};
    }
  }
  if (after_dot) return {};

  // Domain: LDH labels of 1..63, at least two, the last one not all digits.
  std::size_t labels = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = domain.find('.', start);
    const std::string_view label =
        domain.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-')
      return {};
    bool all_digits = true;
    for (char c : label) {
      if (!(is_alnum(c) || c == '-')) return {};
      if (!is_digit(c)) all_digits = false;
    }
    ++labels;
    if (dot == std::string_view::npos) {
      if (all_digits || label.size() < 2) return {};
      break;
    }
    start = dot + 1;
  }
  if (labels < 2) return {};

  std::string out(s);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

std::string normalize_phone(std::string_view in) {
  const std::string_view s = trim(in);
  if (s.empty() || s.size() > kMaxPhoneInput) return {};
  std::array<char, 11> digits{};
  std::size_t count = 0;
  bool plus = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (is_digit(c)) {
      if (count == digits.size()) return {};
      digits[count++] = c;
    } else if (c == '+') {
      if (i != 0) return {};
      plus = true;
    } else if (c != ' ' && c != '(' && c != ')' && c != '-' && c != '.') {
      return {};
    }
  }
  const char* d = digits.data();
  if (count == 11) {
    if (digits[0] != '1') return {};
    ++d;
  } else if (count != 10 || plus) {  // "+" announces a country code, and only +1 is NANP
    return {};
  }
  // NPA (area code): [2-9] and not N11; NXX (exchange): [2-9].
  if (d[0] < '2' || (d[1] == '1' && d[2] == '1')) return {};
  if (d[3] < '2') return {};
  std::string out;
  out.reserve(12);
  out += "+1";
  out.append(d, 10);
  return out;
}

LeadSearchTerm parse_lead_search(std::string_view q) {
  using Kind = LeadSearchTerm::Kind;
  const std::string_view s = trim(q);
  if (is_valid_id(s, kLeadPrefix)) return {Kind::kId, std::string(s)};
  if (std::string email = normalize_email(s); !email.empty()) return {Kind::kEmail, email};
  if (std::string phone = normalize_phone(s); !phone.empty()) return {Kind::kPhone, phone};
  return {};
}

SuppressionEntry parse_suppression_entry(std::string_view cell) {
  using Kind = SuppressionEntry::Kind;
  std::string_view s = trim(cell);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = trim(s.substr(1, s.size() - 2));
  if (s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      })) {
    std::string hex(s);
    for (char& c : hex) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return {Kind::kSha256, std::move(hex)};
  }
  if (std::string email = normalize_email(s); !email.empty()) return {Kind::kEmail, email};
  if (std::string phone = normalize_phone(s); !phone.empty()) return {Kind::kPhone, phone};
  return {};
}

bool normalize_zip(std::string_view in, std::string& zip, std::string& zip4) {
  const std::string_view s = trim(in);
  if (s.size() == 5 && all_digits(s)) {
    zip.assign(s);
    zip4.clear();
    return true;
  }
  if (s.size() == 10 && s[5] == '-' && all_digits(s.substr(0, 5)) && all_digits(s.substr(6))) {
    zip.assign(s.substr(0, 5));
    zip4.assign(s.substr(6));
    return true;
  }
  if (s.size() == 9 && all_digits(s)) {
    zip.assign(s.substr(0, 5));
    zip4.assign(s.substr(5));
    return true;
  }
  zip.clear();
  zip4.clear();
  return false;
}

bool is_valid_ip(std::string_view in) {
  if (in.empty() || in.size() > 45) return false;  // INET6_ADDRSTRLEN - 1
  if (in.find('\0') != std::string_view::npos) return false;
  std::array<char, 46> text{};
  std::memcpy(text.data(), in.data(), in.size());
  std::array<unsigned char, 16> addr{};
  return inet_pton(AF_INET, text.data(), addr.data()) == 1 ||
         inet_pton(AF_INET6, text.data(), addr.data()) == 1;
}

}  // namespace leadflow
