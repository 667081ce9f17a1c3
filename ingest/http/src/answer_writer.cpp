#include "answer_writer.hpp"

#include <cstdio>
#include <ctime>

#include "leadflow/http/parser.hpp"

namespace leadflow::http {
namespace {

// "Sun, 22 Nov 2026 11:26:49 GMT", rebuilt once a second per thread.
const std::string& http_date() {
  thread_local std::time_t cached_at = 0;
  thread_local std::string cached;
  const std::time_t now = std::time(nullptr);
  if (now != cached_at) {
    cached_at = now;
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[64];
    const std::size_t n = std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    cached.assign(buf, n);
  }
  return cached;
}

}  // namespace

void serialize(std::string& out, const Response& res, bool head_only, bool close, bool http10,
               bool tls) {
  const bool bodiless = res.status < 200 || res.status == 204 || res.status == 304;
  out.reserve(out.size() + 128 + res.header_block().size() + res.body.size());
  out.append("HTTP/1.1 ").append(std::to_string(res.status)).append(1, ' ');
  out.append(reason_phrase(res.status)).append("\r\n");
  out.append(res.header_block());
  if (!bodiless)
    out.append("Content-Length: ").append(std::to_string(res.body.size())).append("\r\n");
  if (close)
    out.append("Connection: close\r\n");
  else if (http10)
    out.append("Connection: keep-alive\r\n");
  // Over TLS, every answer tells the browser to come back over TLS only, for a year, subdomains
  // included; never over plain HTTP, where an attacker could forge or strip it (RFC 6797 §7.2).
  if (tls) out.append("Strict-Transport-Security: max-age=31536000; includeSubDomains\r\n");
  out.append("Date: ").append(http_date()).append("\r\n\r\n");
  if (!head_only && !bodiless) out.append(res.body);
}

void serialize_stream_head(std::string& out, const Response& res, bool http10, bool tls) {
  out.append("HTTP/1.1 ").append(std::to_string(res.status)).append(1, ' ');
  out.append(reason_phrase(res.status)).append("\r\n");
  out.append(res.header_block());
  out.append(http10 ? "Connection: close\r\n" : "Transfer-Encoding: chunked\r\n");
  if (tls) out.append("Strict-Transport-Security: max-age=31536000; includeSubDomains\r\n");
  out.append("Date: ").append(http_date()).append("\r\n\r\n");
}

void append_chunk(std::string& out, std::string_view bytes) {
  if (bytes.empty()) return;
  char size[20];
  const int n = std::snprintf(size, sizeof size, "%zx\r\n", bytes.size());
  out.append(size, static_cast<std::size_t>(n)).append(bytes).append("\r\n");
}

// Here rather than beside the parser that declares it: answers are what use it.
std::string_view reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return status < 400 ? "OK" : status < 500 ? "Error" : "Server Error";
  }
}

}  // namespace leadflow::http
