#pragma once
// leadflow's own request and answer types: what the parser fills and what handlers read and
// write. Built for the front's hot path (~15k requests a second): a request's head and body live
// in one buffer it owns, and its header fields are offsets into that buffer, looked up by a
// linear scan without regard to case (the parser caps them at 100; most requests carry fewer
// than ten, so a scan beats any map and allocates nothing).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace leadflow {
class Routes;
}  // namespace leadflow

namespace leadflow::http {

class StreamBody;    // leadflow/http/stream.hpp
class UploadStream;  // leadflow/http/stream.hpp

class RequestParser;
class EventLoop;

/// One header field of a request: views into the request that holds it.
struct HeaderField {
  std::string_view name;   // as sent
  std::string_view value;  // without surrounding whitespace
};

/// One part of a multipart/form-data body.
struct FormPart {
  std::string name;
  std::string filename;
  std::string content_type;
  std::string content;
};

/// One HTTP request as read from a connection. Filled by the parser and the router, then
/// read-only for handlers. Movable (it holds offsets, never pointers into itself); not
/// thread-safe, but a handler may read it from whichever thread answers.
class Request {
 public:
  std::string_view method() const { return view(method_); }  // as sent: methods are case-sensitive
  std::string_view target() const { return view(target_); }  // the raw request-target
  const std::string& path() const { return path_; }          // percent-decoded ("+" stays "+")
  std::string_view query() const { return view(query_); }    // raw, after '?' ("" if none)
  int version_minor() const { return version_minor_; }       // HTTP/1.<minor>: 0 or 1
  bool keep_alive() const { return keep_alive_; }
  bool expect_continue() const { return expect_continue_; }
  std::string_view body() const { return view(body_); }  // de-chunked when chunked
  /// A route that takes its body as it arrives (Routes::put_streamed), for a body larger than
  /// the listener's limit: body() is empty and the bytes come from this stream. Otherwise null.
  UploadStream* upload() const { return upload_.get(); }

  /// The value of the first field named `name` (any case), "" when there is none.
  std::string_view header(std::string_view name) const;
  /// The value of the `index`th field named `name`, "" when there are fewer.
  std::string_view header(std::string_view name, std::size_t index) const;
  std::size_t header_count(std::string_view name) const;
  bool has_header(std::string_view name) const { return header_count(name) > 0; }
  std::size_t header_fields() const { return headers_.size(); }
  HeaderField header_at(std::size_t i) const;

  /// Query parameters, decoded ("+" is a space), ordered by name (a name's repeats in the order
  /// sent); a repeated "name=value" pair counts once.
  const std::vector<std::pair<std::string, std::string>>& params() const { return params_; }
  bool has_param(std::string_view name) const;
  /// The first value of `name`, "" when absent.
  std::string param(std::string_view name) const;

  /// The matched route's pattern ("/v1/leads/{id}"), "" when no route took the request.
  std::string_view route() const { return route_; }
  /// The path segment the route's `index`th "{...}" matched, counted from 1 (as regex groups).
  std::string_view match(std::size_t index) const;

  /// The parts of a multipart/form-data body, ordered by name; filled for routed requests.
  const std::vector<FormPart>& form_parts() const { return form_parts_; }

  const std::string& remote_addr() const { return remote_addr_; }
  int remote_port() const { return remote_port_; }
  /// Whether the request came over TLS on this listener.
  bool tls() const { return tls_; }

 private:
  friend class RequestParser;
  friend class EventLoop;
  friend class leadflow::Routes;

  struct Span {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;
  };
  struct Field {
    Span name, value;
  };
  static constexpr std::size_t kMaxMatches = 4;

  std::string_view view(Span s) const {
    return s.offset + s.size <= storage_.size()
               ? std::string_view(storage_.data() + s.offset, s.size)
               : std::string_view();
  }

  std::string storage_;  // the request line and header section as received, then the body
  Span method_, target_, query_, body_;
  std::string path_;
  int version_minor_ = 1;
  bool keep_alive_ = true;
  bool expect_continue_ = false;
  std::vector<Field> headers_;
  std::vector<std::pair<std::string, std::string>> params_;
  std::vector<FormPart> form_parts_;
  std::string_view route_;  // points into the route table, which outlives every request
  std::array<Span, kMaxMatches> matches_{};
  std::size_t match_count_ = 0;
  std::string remote_addr_;
  int remote_port_ = 0;
  bool tls_ = false;
  std::shared_ptr<UploadStream> upload_;
};

/// The answer a handler builds. Header fields are kept as the "Name: value\r\n" lines the server
/// writes, ordered by name without regard to case: one buffer for all of them. The server owns
/// the framing fields (Content-Length, Connection, Date): a handler's are ignored. Not
/// thread-safe; one thread at a time builds it.
class Response {
 public:
  int status = 200;
  std::string body;
  /// Set (with a 200): the body is not `body` but this stream, written chunked as its producer
  /// pushes, and the connection serves nothing else until the stream or the connection ends.
  std::shared_ptr<StreamBody> stream;

  /// Sets the body and its Content-Type.
  void set_content(std::string content, std::string_view content_type);
  /// Sets a field, replacing any of the same name. A name or value holding CR or LF is ignored
  /// (it would split the answer).
  void set_header(std::string_view name, std::string_view value);
  bool has_header(std::string_view name) const;
  /// The field's value, "" when absent.
  std::string_view header(std::string_view name) const;
  /// Every field as "Name: value\r\n" lines, ready to be written.
  std::string_view header_block() const { return headers_; }

 private:
  std::string headers_;
};

}  // namespace leadflow::http
