#include "leadflow/api/job_ids.hpp"

#include "leadflow/base/crypto.hpp"
#include "leadflow/base/ids.hpp"

namespace leadflow {
namespace {

constexpr std::size_t kTagChars = 16;  // 80 bits of the MAC
constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

std::string tag_of(std::string_view lead_id, std::string_view campaign_key) {
  const std::string mac = hmac_sha256(campaign_key, lead_id);
  std::string out(kTagChars, '0');
  // 10 bytes = 80 bits = 16 characters of 5 bits, most significant first.
  unsigned __int128 v = 0;
  for (std::size_t i = 0; i < 10; ++i) v = (v << 8) | static_cast<unsigned char>(mac[i]);
  for (std::size_t i = kTagChars; i-- > 0;) {
    out[i] = kAlphabet[static_cast<int>(v & 31)];
    v >>= 5;
  }
  return out;
}

}  // namespace

std::string job_id_for(std::string_view lead_id, std::string_view campaign_key) {
  std::string out(lead_id);
  out.push_back('.');
  out += tag_of(lead_id, campaign_key);
  return out;
}

JobRef parse_job_id(std::string_view job_id, std::string_view campaign_key) {
  JobRef ref;
  const std::size_t dot = job_id.find('.');
  const std::string_view lead = job_id.substr(0, dot);
  if (!is_valid_id(lead, kLeadPrefix)) return ref;
  ref.lead_id = std::string(lead);
  if (dot == std::string_view::npos) return ref;
  const std::string_view tag = job_id.substr(dot + 1);
  ref.issued_to_key =
      tag.size() == kTagChars && constant_time_equal(tag, tag_of(lead, campaign_key));
  return ref;
}

}  // namespace leadflow
