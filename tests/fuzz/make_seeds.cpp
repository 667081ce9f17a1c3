// Writes the seed corpora that only the product's own encoders can make: queue payloads
// (encode_lead) for lead_codec, and embedded-queue segments (encode_record, CRC32C) for
// queue_record. Run after a change to either format:
//   cmake --build build-fuzz --target leadflow_fuzz_seeds
//   build-fuzz/fuzz/leadflow_fuzz_seeds tests/fuzz/corpus
// The queue_record seeds named *_first_format are kept from the first record format ("LFQ1", no
// time), which the queue still reads; this writes the current one.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "embedded/crc32c.hpp"
#include "embedded/record_format.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/lead_codec.hpp"

namespace {

namespace fs = std::filesystem;
namespace embedded = leadflow::embedded;

void write(const fs::path& dir, const std::string& name, std::string_view bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string record(std::string_view topic, int partition, std::int64_t offset, std::string_view key,
                   std::string_view payload) {
  std::string bytes =
      embedded::encode_record(topic, partition, key, payload, 1'790'000'000'000 + offset);
  embedded::put_u64(bytes.data() + 12, static_cast<std::uint64_t>(offset));
  embedded::put_u32(bytes.data() + 8, embedded::crc32c(bytes.data() + embedded::kCrcStart,
                                                       bytes.size() - embedded::kCrcStart));
  return bytes;
}

std::vector<leadflow::Lead> sample_leads() {
  leadflow::Lead a;
  a.id = "ld_01J9ZK3V6Q8W2E4R6T8Y0U2I4O";
  a.seller_id = "sl_01J9ZK0000000000000000000";
  a.api_key_id = "key_01J9ZK000000000000000000";
  a.surface = leadflow::Surface::kApi;
  a.first_name = "John";
  a.last_name = "Doe";
  a.email = "john.doe@example.com";
  a.phone = "+12125550123";
  a.zip_code = "90210";
  a.zip4 = "1234";
  a.state = "CA";
  a.vertical = "auto_insurance";
  a.source = "google";
  a.landing_page = "https://example.com/quote";
  a.ip_address = "203.0.113.7";
  a.user_agent = "Mozilla/5.0 (X11; Linux x86_64)\t\"quoted\"";
  a.trustedform_cert_url = "https://cert.trustedform.com/0123abcd";
  a.jornaya_leadid = "AB12-CD34";
  a.tcpa_consent = true;
  a.tcpa_consent_text = "I agree to be contacted.";
  a.custom_fields = {
      {"credit_rating", std::string("good")}, {"driver_age", 34.0}, {"vehicle_year", 2019.0}};
  a.received_at_ms = 1'718'000'000'123;
  a.sync_wait_ms = 3000;

  leadflow::Lead b;
  b.id = "ld_01J9ZK4A1B2C3D4E5F6G7H8J9K";
  b.seller_id = "sl_01J9ZK0000000000000000001";
  b.campaign_id = "cp_01J9ZK0000000000000000001";
  b.surface = leadflow::Surface::kCampaign;
  b.first_name = "Jörg";
  b.last_name = "Ó Briain";
  b.email = "jorg@mail.example.org";
  b.phone = "+13125550199";
  b.zip_code = "60601";
  b.state = "IL";
  b.vertical = "life_insurance";
  b.custom_fields = {
      {"age", 52.0}, {"coverage_amount", 250000.5}, {"term_length", std::string("20")}};
  b.received_at_ms = 1'718'000'111'000;
  return {a, b};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  const fs::path corpus = argv[1];
  const std::vector<leadflow::Lead> leads = sample_leads();
  std::vector<std::string> payloads;
  for (const auto& lead : leads) payloads.push_back(leadflow::encode_lead(lead));

  write(corpus / "lead_codec", "api_lead.json", payloads[0]);
  write(corpus / "lead_codec", "campaign_lead.json", payloads[1]);

  // queue_record, mode byte '0' (even): a segment as the writer leaves it.
  const std::string one = record("leadflow.leads", 3, 0, leads[0].id, payloads[0]);
  const std::string two = record("leadflow.leads", 5, 17, leads[1].id, payloads[1]);
  const std::string retry = record("leadflow.leads.retry", 0, 2, leads[1].id, payloads[1]);
  const std::string results = record("leadflow.results", 7, 9, leads[0].id,
                                     R"({"lead_id":"ld_01J9ZK3V6Q8W2E4R6T8Y0U2I4O"})");
  write(corpus / "queue_record", "one_record", "0" + one);
  write(corpus / "queue_record", "segment", "0" + one + two + retry + results);
  // A torn tail (a crash mid-write), and the zeros the writer preallocates after the records.
  write(corpus / "queue_record", "torn_tail", "0" + one + two.substr(0, two.size() / 2));
  write(corpus / "queue_record", "preallocated", "0" + one + std::string(256, '\0'));
  // Mode byte '1' (odd): a recipe (FuzzedDataProvider: strings end at a backslash that does not
  // double one, integers come from the end) for one record, then the byte to damage.
  write(corpus / "queue_record", "recipe",
        "1leadflow.leads\\;" + leads[1].id + "\\;" + payloads[1] + "\\;" +
            std::string("\x05\x00\x00\x00\x00\x00\x00\x11\x03", 9));
  return 0;
}
