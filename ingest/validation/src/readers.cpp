// The readers of each surface's body: JSON (Surface A, POST /v1/leads, and Surface B, POST
// /api/v1/lead) through simdjson, and the legacy form (POST /{seller_campaign_key}). Each turns
// the body's top-level fields into Inputs for a LeadBuilder (field_checks.cpp).
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "field_checks.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/validation/validation.hpp"

namespace leadflow {
namespace {

using validation::Input;
using validation::LeadBuilder;
using validation::to_input;

constexpr std::size_t kLargeBody = 1024 * 1024;  // bodies above this do not grow the thread cache

// ---------------------------------------------------------------------------------------------
// simdjson plumbing: one parser and one padded buffer per thread, reused across requests.

struct JsonScratch {
  simdjson::dom::parser dom;
  simdjson::ondemand::parser ondemand;
  std::string buffer;
};

JsonScratch& scratch() {
  thread_local JsonScratch s;
  return s;
}

// Copies `body` into `buffer` followed by SIMDJSON_PADDING readable bytes.
void fill_padded(std::string& buffer, std::string_view body) {
  const std::size_t need = body.size() + simdjson::SIMDJSON_PADDING;
  if (buffer.size() < need) buffer.resize(need);
  if (!body.empty()) std::memcpy(buffer.data(), body.data(), body.size());
  std::memset(buffer.data() + body.size(), 0, simdjson::SIMDJSON_PADDING);
}

void set_malformed(ParsedLead& out, std::string_view code, std::string message) {
  out.malformed = true;
  out.errors.clear();
  out.errors.push_back({"body", std::string(code), std::move(message)});
}

void report_parse_error(ParsedLead& out, simdjson::error_code err, std::size_t max_depth) {
  switch (err) {
    case simdjson::DEPTH_ERROR:
      set_malformed(out, "too_deep",
                    "JSON nesting deeper than " + std::to_string(max_depth) + " levels");
      return;
    case simdjson::EMPTY:
      set_malformed(out, "invalid_json", "the body is empty");
      return;
    case simdjson::UTF8_ERROR:
      set_malformed(out, "invalid_json", "the body is not valid UTF-8");
      return;
    case simdjson::NUMBER_ERROR:
      set_malformed(out, "invalid_json",
                    "the body holds a number that is malformed or out of range");
      return;
    case simdjson::STRING_ERROR:
    case simdjson::UNESCAPED_CHARS:
    case simdjson::UNCLOSED_STRING:
      set_malformed(out, "invalid_json", "the body holds a malformed string");
      return;
    case simdjson::CAPACITY:
    case simdjson::MEMALLOC:
      set_malformed(out, "invalid_json", "the body is too large");
      return;
    default:
      set_malformed(out, "invalid_json", "the body is not valid JSON");
      return;
  }
}

ParsedLead internal_failure() {
  ParsedLead out;
  out.malformed = true;
  out.errors.push_back({"body", "invalid_json", "the body could not be processed"});
  return out;
}

void walk(simdjson::dom::object root, LeadBuilder& builder) {
  for (simdjson::dom::key_value_pair kv : root) builder.field(kv.key, to_input(kv.value));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public entry points

namespace {

// The one parse of a JSON body. For kCampaign, the vertical comes from `vertical_of` once the
// body's SELLER_CAMPAIGN_KEY is known.
ParsedLead read_json(std::string_view body, LeadShape shape, const VerticalRegistry& verticals,
                     const VerticalOf* vertical_of, std::string_view campaign_vertical,
                     const ValidationLimits& limits) {
  try {
    ParsedLead out;
    out.lead.surface = shape == LeadShape::kApi ? Surface::kApi : Surface::kCampaign;
    const std::size_t max_depth = std::max<std::size_t>(limits.max_depth, 1);
    // simdjson refuses a document once non-empty containers nest max_depth deep (root = 1), so
    // its bound is ours plus one.
    const std::size_t parser_depth = max_depth + 1;

    JsonScratch& tls = scratch();
    std::optional<simdjson::dom::parser> large_parser;
    std::string large_buffer;
    simdjson::dom::parser* parser = &tls.dom;
    std::string* buffer = &tls.buffer;
    if (body.size() > kLargeBody) {  // keep the thread cache small; a one-off parser instead
      large_parser.emplace();
      parser = &*large_parser;
      buffer = &large_buffer;
    }
    if (parser->max_depth() != parser_depth || parser->capacity() < body.size()) {
      const std::size_t capacity =
          std::max<std::size_t>({body.size(), parser->capacity(), 64 * 1024});
      if (auto err = parser->allocate(capacity, parser_depth); err) {
        report_parse_error(out, err, max_depth);
        return out;
      }
    }
    fill_padded(*buffer, body);

    simdjson::dom::element root;
    if (auto err = parser->parse(buffer->data(), body.size(), false).get(root); err) {
      report_parse_error(out, err, max_depth);
      return out;
    }
    simdjson::dom::object obj;
    if (root.get_object().get(obj)) {
      set_malformed(out, "invalid_json", "the body must be a JSON object");
      return out;
    }

    LeadBuilder builder(out, shape, /*form=*/false, verticals, limits);
    if (shape == LeadShape::kApi) {
      for (simdjson::dom::key_value_pair kv : obj) {
        if (kv.key == "vertical") {
          std::string_view v;
          if (!kv.value.get_string().get(v)) builder.hint_vertical(v);
          break;
        }
      }
    } else if (vertical_of) {
      std::string_view key;
      simdjson::dom::element sent;
      if (obj["SELLER_CAMPAIGN_KEY"].get(sent) || sent.get_string().get(key)) key = {};
      const std::string trimmed(trim(key));
      std::optional<std::string> vertical = (*vertical_of)(trimmed);
      if (!vertical) {  // the campaign must be found first: validate then
        out.campaign_key = trimmed;
        return out;
      }
      builder.campaign_vertical(*vertical);
      out.validated_for = std::move(vertical);
    } else {
      builder.campaign_vertical(campaign_vertical);
      out.validated_for = std::string(campaign_vertical);
    }
    walk(obj, builder);
    builder.finish();
    return out;
  } catch (...) {
    try {
      return internal_failure();
    } catch (...) {
      return ParsedLead{};
    }
  }
}

}  // namespace

ParsedLead parse_lead_json(std::string_view body, LeadShape shape,
                           const VerticalRegistry& verticals, std::string_view campaign_vertical,
                           const ValidationLimits& limits) {
  return read_json(body, shape, verticals, nullptr, campaign_vertical, limits);
}

ParsedLead parse_campaign_lead_json(std::string_view body, const VerticalRegistry& verticals,
                                    const VerticalOf& vertical_of, const ValidationLimits& limits) {
  return read_json(body, LeadShape::kCampaign, verticals, &vertical_of, "", limits);
}

ParsedLead parse_lead_form(const std::vector<std::pair<std::string, std::string>>& fields,
                           const VerticalRegistry& verticals, std::string_view campaign_vertical,
                           const ValidationLimits& limits) {
  try {
    ParsedLead out;
    LeadBuilder builder(out, LeadShape::kCampaign, /*form=*/true, verticals, limits);
    builder.campaign_vertical(campaign_vertical);
    for (const auto& [name, value] : fields) {
      Input in;
      in.kind = Input::Kind::kString;
      in.text = value;
      builder.field(name, in);
    }
    builder.finish();
    return out;
  } catch (...) {
    try {
      return internal_failure();
    } catch (...) {
      return ParsedLead{};
    }
  }
}

std::string peek_campaign_key(std::string_view json_body) {
  try {
    JsonScratch& tls = scratch();
    std::optional<simdjson::ondemand::parser> large_parser;
    std::string large_buffer;
    simdjson::ondemand::parser* parser = &tls.ondemand;
    std::string* buffer = &tls.buffer;
    if (json_body.size() > kLargeBody) {  // keep the thread cache small
      large_parser.emplace();
      parser = &*large_parser;
      buffer = &large_buffer;
    }
    fill_padded(*buffer, json_body);
    simdjson::ondemand::document doc;
    if (parser->iterate(buffer->data(), json_body.size(), buffer->size()).get(doc)) return {};
    simdjson::ondemand::object obj;
    if (doc.get_object().get(obj)) return {};
    for (auto field_result : obj) {
      simdjson::ondemand::field field;
      if (std::move(field_result).get(field)) return {};
      std::string_view key;
      if (field.unescaped_key().get(key)) return {};
      if (key != "SELLER_CAMPAIGN_KEY") continue;
      std::string_view value;
      if (field.value().get_string().get(value)) return {};
      return std::string(trim(value));
    }
    return {};
  } catch (...) {
    return {};
  }
}

}  // namespace leadflow
