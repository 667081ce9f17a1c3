#pragma once
// Private: entity tags and If-Match on the records people edit (docs/versions.md). A record's
// ETag is its version as a strong entity tag, "v7"; a change honours If-Match (RFC 9110 §13.1.1)
// with the strong comparison: "*" allows any existing record, a list of tags the versions they
// name, and a tag of any other form (a weak one included) matches nothing.
#include <cstdint>
#include <string>
#include <string_view>

#include "leadflow/http/message.hpp"
#include "leadflow/management/management.hpp"

namespace leadflow {

/// "\"v7\"" for version 7.
std::string etag_of(std::int64_t version);
/// Sets the ETag header to `version`'s tag.
void set_etag(http::Response& res, std::int64_t version);
/// What the request's If-Match fields (all of them, as one list) allow: any version when there
/// is none.
IfMatch if_match_of(const http::Request& req);
/// Answers a change that versions stopped: 412 when the record is not at a version the If-Match
/// allows (problem+json naming the current ETag, which the ETag header carries too), 409 when
/// others kept changing it. False, with nothing sent, for any other outcome. `what`: "buyer".
bool refuse_version(http::Response& res, const Management::Created& change, std::string_view what);

}  // namespace leadflow
