#pragma once
// Private: an answer as the bytes a connection writes.
#include <string>
#include <string_view>

#include "leadflow/http/message.hpp"

namespace leadflow::http {

/// Appends the status line, `res`'s header fields, the framing fields (Content-Length,
/// Connection when it must be said, Date), Strict-Transport-Security when the answer goes over
/// `tls`, and the body unless `head_only` or bodiless.
void serialize(std::string& out, const Response& res, bool head_only, bool close, bool http10,
               bool tls);
/// The head of a streamed answer (Response::stream): `res`'s fields, then Transfer-Encoding:
/// chunked (HTTP/1.1) or Connection: close (HTTP/1.0, whose body ends with the connection).
void serialize_stream_head(std::string& out, const Response& res, bool http10, bool tls);
/// `bytes` as one chunk of a chunked body (nothing for none).
void append_chunk(std::string& out, std::string_view bytes);

}  // namespace leadflow::http
