#pragma once
#include <string>
#include <vector>

namespace leadflow {

/// One offending field of a request: `field` is its path ("email", "custom_fields.age",
/// "delivery.timeout_ms"), `code` a stable machine word ("required", "invalid_format",
/// "unknown_field", "too_long", "out_of_range", "invalid_type", "not_allowed"), `message` for
/// people.
struct FieldError {
  std::string field;
  std::string code;
  std::string message;
};

using FieldErrors = std::vector<FieldError>;

}  // namespace leadflow
