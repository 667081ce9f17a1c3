// The embedded queue's record decoder (common/queue record_format decode_record), walked over a
// segment the way the queue reads one when it opens (queue_open.cpp: record after record until the
// first that is not whole and intact), with each record's payload read as a lead as a worker
// reads it (decode_lead). Properties: a record the decoder accepts lies inside the bytes it was
// given and is exactly what encode_record writes for its fields (nothing is read that the CRC
// did not cover); in a segment of intact records, one damaged byte stops the walk at the record
// holding it, with every record before it read back unchanged.
// Input: one byte of mode, then
//   mode even: the segment's bytes as they are (a torn or garbled file);
//   mode odd:  a recipe the harness turns into intact records (topic, key, payload, partition and
//              offset from the bytes), then damages one byte of, chosen by the bytes too.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "embedded/crc32c.hpp"
#include "embedded/record_format.hpp"
#include "fuzz_check.hpp"
#include "leadflow/domain/lead.hpp"
#include "leadflow/domain/lead_codec.hpp"

namespace {

namespace embedded = leadflow::embedded;

constexpr std::size_t kMaxRecipeRecords = 16;

struct Record {
  std::string topic, key, payload;
  std::uint32_t partition = 0;
  std::int64_t offset = 0;
  std::optional<std::int64_t> produced_ms;  // nullopt: a record of the first format ("LFQ1")
};

// A whole record as the writer leaves it: encode_record, then the offset and the CRC. A record of
// the first format is the same without its time.
std::string written(const Record& r) {
  std::string bytes = embedded::encode_record(r.topic, static_cast<int>(r.partition), r.key,
                                              r.payload, r.produced_ms.value_or(0));
  if (!r.produced_ms) {
    bytes.erase(20, embedded::kHeaderBytes - embedded::kUntimedHeaderBytes);
    embedded::put_u32(bytes.data(), embedded::kMagicUntimed);
    embedded::put_u32(bytes.data() + 4, static_cast<std::uint32_t>(bytes.size()));
  }
  embedded::put_u64(bytes.data() + 12, static_cast<std::uint64_t>(r.offset));
  embedded::put_u32(bytes.data() + 8, embedded::crc32c(bytes.data() + embedded::kCrcStart,
                                                       bytes.size() - embedded::kCrcStart));
  return bytes;
}

void check_payload(std::string_view payload) {
  const std::optional<leadflow::Lead> lead = leadflow::decode_lead(payload);
  if (!lead) return;
  const std::string encoded = leadflow::encode_lead(*lead);
  const std::optional<leadflow::Lead> again = leadflow::decode_lead(encoded);
  FUZZ_CHECK(again.has_value() && leadflow::encode_lead(*again) == encoded);
}

// Walks `segment` as the queue does when it opens; returns the records read.
std::vector<Record> walk(std::string_view segment) {
  std::vector<Record> out;
  std::size_t pos = 0;
  while (pos < segment.size()) {
    const char* at = segment.data() + pos;
    const std::size_t avail = segment.size() - pos;
    embedded::DecodedRecord r;
    const std::size_t len = embedded::decode_record(at, avail, r);
    if (len == 0) break;
    const std::size_t header =
        r.produced_ms ? embedded::kHeaderBytes : embedded::kUntimedHeaderBytes;
    FUZZ_CHECK(len >= header && len <= avail && len <= embedded::kMaxRecordBytes);
    for (const std::string_view part : {r.topic, r.key, r.payload})
      FUZZ_CHECK(part.data() >= at + header && part.data() + part.size() <= at + len);
    FUZZ_CHECK(header + r.topic.size() + r.key.size() + r.payload.size() == len);
    FUZZ_CHECK(embedded::record_produced_ms(at, avail) == r.produced_ms);
    Record record{std::string(r.topic), std::string(r.key), std::string(r.payload),
                  r.partition,          r.offset,           r.produced_ms};
    FUZZ_CHECK(written(record) == std::string_view(at, len));
    check_payload(r.payload);
    out.push_back(std::move(record));
    pos += len;
  }
  return out;
}

bool same(const Record& a, const Record& b) {
  return a.topic == b.topic && a.key == b.key && a.payload == b.payload &&
         a.partition == b.partition && a.offset == b.offset && a.produced_ms == b.produced_ms;
}

void from_recipe(FuzzedDataProvider& in) {
  std::vector<Record> records;
  std::vector<std::size_t> starts;
  std::string segment;
  while (in.remaining_bytes() > 0 && records.size() < kMaxRecipeRecords) {
    Record r;
    r.topic = in.ConsumeRandomLengthString(64);
    r.key = in.ConsumeRandomLengthString(64);
    r.partition = in.ConsumeIntegralInRange<std::uint32_t>(0, 63);
    r.offset = in.ConsumeIntegral<std::int64_t>();
    if (in.ConsumeBool()) r.produced_ms = in.ConsumeIntegral<std::int64_t>();
    r.payload = in.ConsumeRandomLengthString(4096);
    starts.push_back(segment.size());
    segment += written(r);
    records.push_back(std::move(r));
  }
  // Intact: every record comes back.
  const std::vector<Record> read = walk(segment);
  FUZZ_CHECK(read.size() == records.size());
  for (std::size_t i = 0; i < read.size(); ++i) FUZZ_CHECK(same(read[i], records[i]));
  if (segment.empty()) return;

  // One byte damaged: the walk stops at the record that holds it.
  const std::size_t at = in.ConsumeIntegralInRange<std::size_t>(0, segment.size() - 1);
  const auto flip = static_cast<char>(in.ConsumeIntegralInRange<int>(1, 255));
  segment[at] = static_cast<char>(segment[at] ^ flip);
  std::size_t damaged = 0;
  while (damaged + 1 < starts.size() && starts[damaged + 1] <= at) ++damaged;
  const std::vector<Record> kept = walk(segment);
  FUZZ_CHECK(kept.size() == damaged);
  for (std::size_t i = 0; i < kept.size(); ++i) FUZZ_CHECK(same(kept[i], records[i]));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    walk(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  } else {
    FuzzedDataProvider in(data + 1, size - 1);
    from_recipe(in);
  }
  return 0;
}
