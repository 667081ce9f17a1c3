// The front's request parser (ingest/http parse_request) driven as the event loop drives it: a
// connection's bytes arrive in pieces, and after each piece the parser is handed everything
// received so far, reusing one Request. Besides memory errors it checks the parser's contract:
//   - a prefix of the input never completes earlier than the whole input, and never fails where
//     the whole input does not: before the first request's end the answer is "incomplete", from
//     its end on it is the same request (so the split of a connection's bytes into reads never
//     changes what is parsed). Where both fail, the status may differ: a chunk size cut short
//     may already be over the body limit (413) where the whole line has too many digits (400);
//     either way the connection is answered and closed;
//   - a complete request consumes at least one byte, and pipelined requests behind it parse
//     too (the event loop's loop would never end otherwise);
//   - what a complete request holds respects the limits and the framing rules;
//   - RequestReader, which the event loop uses, fed the same reads and resuming where it
//     stopped, ends where the whole parse does: the same request, or the same error, or (for an
//     error it only sees once a header section is over) still incomplete; its work stays
//     linear in the bytes.
// Input: one byte of options, then the bytes of the connection. The options' low two bits pick
// the limits (0: the server's defaults, 1: tiny header limits, 2: a tiny body limit, 3: both;
// the seeds use '0'..'3'), the other six seed where the bytes are split into reads.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/http/forms.hpp"
#include "leadflow/http/message.hpp"
#include "leadflow/http/parser.hpp"

namespace {

using leadflow::http::ParseLimits;
using leadflow::http::ParseResult;
using leadflow::http::ParseStatus;
using leadflow::http::Request;

constexpr std::size_t kMaxPipelined = 16;
constexpr std::size_t kEveryPrefixBelow = 96;  // short inputs: every split point is tried

ParseLimits limits_for(std::uint8_t options) {
  ParseLimits limits;
  if (options & 1) {
    limits.max_header_bytes = 256;
    limits.max_target_bytes = 32;
    limits.max_header_count = 4;
  }
  if (options & 2) limits.max_body_bytes = 64;
  return limits;
}

// Where the connection's bytes are cut into reads: increasing, each inside (0, size).
std::vector<std::size_t> split_points(std::size_t size, std::uint8_t seed) {
  std::vector<std::size_t> points;
  if (size < 2) return points;
  if (size < kEveryPrefixBelow) {
    for (std::size_t i = 1; i < size; ++i) points.push_back(i);
    return points;
  }
  std::uint64_t state = 0x9E3779B97F4A7C15ull ^ (std::uint64_t{seed} << 32) ^ size;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::size_t reads = 2 + seed % 12;
  std::size_t at = 0;
  for (std::size_t i = 0; i < reads && at + 1 < size; ++i) {
    const std::size_t left = size - at - 1;
    // Mostly short reads (a slow client), sometimes a long one.
    const std::size_t step =
        1 + (next() % 4 == 0 ? next() % left : next() % std::min<std::size_t>(left, 32));
    at += step;
    if (at < size) points.push_back(at);
  }
  // And the bytes around the end, where the last read decides completeness.
  for (std::size_t i = size - std::min<std::size_t>(size - 1, 4); i < size; ++i)
    if (points.empty() || points.back() < i) points.push_back(i);
  return points;
}

bool is_error_status(int status) {
  return status == 400 || status == 413 || status == 414 || status == 431 || status == 501 ||
         status == 505;
}

void check_result(const ParseResult& r, std::size_t input_size) {
  switch (r.status) {
    case ParseStatus::kComplete:
      FUZZ_CHECK(r.consumed > 0 && r.consumed <= input_size);
      FUZZ_CHECK(r.headers_complete);
      break;
    case ParseStatus::kError:
      FUZZ_CHECK(is_error_status(r.error_status));
      FUZZ_CHECK(!r.error_detail.empty());
      FUZZ_CHECK(!leadflow::http::reason_phrase(r.error_status).empty());
      break;
    case ParseStatus::kIncomplete:
      break;
  }
}

void check_request(const Request& req, const ParseLimits& limits) {
  FUZZ_CHECK(!req.method().empty());
  FUZZ_CHECK(!req.target().empty() && req.target().size() <= limits.max_target_bytes);
  FUZZ_CHECK(!req.path().empty());
  FUZZ_CHECK(req.version_minor() == 0 || req.version_minor() == 1);
  FUZZ_CHECK(req.body().size() <= limits.max_body_bytes);
  FUZZ_CHECK(req.header_fields() <= limits.max_header_count);
  if (req.version_minor() == 1) FUZZ_CHECK(req.header_count("host") == 1);
  FUZZ_CHECK(!(req.has_header("content-length") && req.has_header("transfer-encoding")));
  if (req.version_minor() == 0) FUZZ_CHECK(!req.has_header("transfer-encoding"));
  for (std::size_t i = 0; i < req.header_fields(); ++i) {
    const leadflow::http::HeaderField field = req.header_at(i);
    FUZZ_CHECK(!field.name.empty());
    FUZZ_CHECK(field.value.find_first_of("\r\n") == std::string_view::npos);
    FUZZ_CHECK(req.header_count(field.name) >= 1);
  }
  for (const auto& [name, value] : req.params()) {
    FUZZ_CHECK(req.has_param(name));
    (void)value;
  }
  // The event loop reads a multipart body into parts before a route sees it.
  const std::string_view content_type = req.header("Content-Type");
  if (content_type.size() >= 19 &&
      leadflow::iequals(content_type.substr(0, 19), "multipart/form-data")) {
    std::vector<leadflow::http::FormPart> parts;
    if (leadflow::http::parse_multipart(content_type, req.body(), parts))
      for (const auto& part : parts) FUZZ_CHECK(!part.name.empty());
  }
}

bool same_request(const Request& a, const Request& b) {
  if (a.method() != b.method() || a.target() != b.target() || a.path() != b.path() ||
      a.query() != b.query() || a.body() != b.body() || a.version_minor() != b.version_minor() ||
      a.keep_alive() != b.keep_alive() || a.expect_continue() != b.expect_continue() ||
      a.header_fields() != b.header_fields() || a.params() != b.params()) {
    return false;
  }
  for (std::size_t i = 0; i < a.header_fields(); ++i) {
    if (a.header_at(i).name != b.header_at(i).name || a.header_at(i).value != b.header_at(i).value)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t options = data[0];
  const ParseLimits limits = limits_for(options);
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);

  Request whole;
  const ParseResult full = leadflow::http::parse_request(input, limits, whole);
  check_result(full, input.size());
  if (full.status == ParseStatus::kComplete) check_request(whole, limits);

  // The same bytes in reads: one Request reused, as the event loop does.
  Request reused;
  for (const std::size_t cut :
       split_points(input.size(), static_cast<std::uint8_t>(options >> 2))) {
    const ParseResult part = leadflow::http::parse_request(input.substr(0, cut), limits, reused);
    check_result(part, cut);
    if (part.headers_complete) FUZZ_CHECK(full.headers_complete);
    switch (full.status) {
      case ParseStatus::kComplete:
        if (cut < full.consumed) {
          FUZZ_CHECK(part.status == ParseStatus::kIncomplete);
        } else {
          FUZZ_CHECK(part.status == ParseStatus::kComplete && part.consumed == full.consumed);
          FUZZ_CHECK(same_request(reused, whole));
        }
        break;
      case ParseStatus::kIncomplete:
        FUZZ_CHECK(part.status == ParseStatus::kIncomplete);
        break;
      case ParseStatus::kError:
        FUZZ_CHECK(part.status != ParseStatus::kComplete);
        break;
    }
  }

  // The reader the event loop uses, over the same reads.
  {
    leadflow::http::RequestReader reader(limits);
    Request read;
    ParseResult last;
    std::size_t calls = 0;
    std::vector<std::size_t> cuts =
        split_points(input.size(), static_cast<std::uint8_t>(options >> 2));
    cuts.push_back(input.size());
    for (const std::size_t cut : cuts) {
      last = reader.read(input.substr(0, cut), read);
      ++calls;
      check_result(last, cut);
      if (last.status != ParseStatus::kIncomplete) break;
    }
    switch (full.status) {
      case ParseStatus::kComplete:
        FUZZ_CHECK(last.status == ParseStatus::kComplete && last.consumed == full.consumed);
        FUZZ_CHECK(same_request(read, whole));
        break;
      case ParseStatus::kIncomplete:
        FUZZ_CHECK(last.status == ParseStatus::kIncomplete);
        break;
      case ParseStatus::kError:
        FUZZ_CHECK(last.status != ParseStatus::kComplete);
        break;
    }
    // Each read looks at what is new (and a bounded few bytes again), plus at most two passes
    // over the request (the header section once it can be whole, the copy of the request).
    FUZZ_CHECK(reader.examined() <= 3 * input.size() + 4 * calls + 512);
  }

  // Pipelined requests behind the first, as the event loop reads them off one connection.
  std::string_view rest = input;
  ParseResult r = full;
  for (std::size_t n = 0; n < kMaxPipelined && r.status == ParseStatus::kComplete; ++n) {
    rest.remove_prefix(r.consumed);
    if (rest.empty()) break;
    r = leadflow::http::parse_request(rest, limits, reused);
    check_result(r, rest.size());
    if (r.status == ParseStatus::kComplete) check_request(reused, limits);
  }

  (void)leadflow::http::percent_decode(input.substr(0, 256));
  return 0;
}
