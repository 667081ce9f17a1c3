#pragma once
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "leadflow/domain/lead.hpp"

namespace leadflow {

/// The queue payload of a lead: compact JSON of every Lead field. Round-trips every field;
/// custom fields come back ordered by name.
std::string encode_lead(const Lead& lead);
std::optional<Lead> decode_lead(std::string_view payload);

/// JSON views for API bodies.
nlohmann::json custom_fields_to_json(const CustomFields& fields);
/// Inverse of custom_fields_to_json (object of string|number values; anything else is skipped).
CustomFields custom_fields_from_json(const nlohmann::json& j);
nlohmann::json attempts_to_json(const std::vector<Attempt>& attempts);
std::vector<Attempt> attempts_from_json(const nlohmann::json& j);
nlohmann::json ineligible_to_json(const std::vector<Ineligibility>& v);
std::vector<Ineligibility> ineligible_from_json(const nlohmann::json& j);
nlohmann::json attempt_to_json(const Attempt& a);
nlohmann::json distribution_to_json(
    const Distribution& d);  // accepted, buyer_id, price, currency, delivery_status
/// The full lead (PII included) as GET /v1/leads/{id} shows it.
nlohmann::json lead_record_to_json(const LeadRecord& r, bool with_attempts);

}  // namespace leadflow
