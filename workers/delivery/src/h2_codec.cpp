#include "h2_codec.hpp"

#include "leadflow/base/text.hpp"
#include "outbound_common.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace leadflow {
namespace {

// Streams per connection at most, whatever the buyer allows: a connection's streams share one
// TCP window and one TLS stream, so past this another connection is cheaper than a longer queue.
constexpr std::size_t kMaxStreamsPerConnection = 100;
// Flow-control windows we grant the buyer: a whole capped answer per stream, and room for many
// streams at once per connection, so no answer waits on a WINDOW_UPDATE round trip.
constexpr std::uint32_t kStreamWindow = outbound::kMaxResponseBytes;
constexpr std::int32_t kConnectionWindow = 32 << 20;
constexpr const char* kUserAgent = "leadflow/0.1";

// Connection-specific fields HTTP/2 forbids (RFC 9113 8.2.2), and those the transport sets itself.
bool dropped_header(std::string_view lower) {
  return lower == "connection" || lower == "keep-alive" || lower == "proxy-connection" ||
         lower == "transfer-encoding" || lower == "upgrade" || lower == "host" || lower == "te" ||
         lower == "expect" || lower == "content-length";
}

nghttp2_nv field(std::string_view name, std::string_view value) {
  // nghttp2 copies names and values on submit (no NO_COPY flags), so views of temporaries do.
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value.data())), name.size(),
          value.size(), NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

std::optional<H2Target> parse_https_url(const std::string& url) {
  constexpr std::string_view kScheme = "https://";
  if (url.size() <= kScheme.size() || !iequals(url.substr(0, kScheme.size()), kScheme)) {
    return std::nullopt;
  }
  const std::string_view rest = std::string_view(url).substr(kScheme.size());
  const auto end = rest.find_first_of("/?#");
  const std::string_view authority = rest.substr(0, end);
  if (authority.empty() || authority.find_first_of("@ \t\r\n") != std::string_view::npos) {
    return std::nullopt;
  }
  H2Target t;
  t.key = outbound::host_key(url);
  t.authority = std::string(authority);
  std::string_view port;
  if (authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    t.name = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return std::nullopt;
      port = after.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    t.name = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
    if (t.name.empty()) return std::nullopt;
  }
  if (port.empty()) port = "443";
  if (!all_digits(port) || port.size() > 5) return std::nullopt;
  t.port = std::string(port);
  std::string_view path = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  path = path.substr(0, path.find('#'));
  // One character pushed, then the rest appended: g++ 12 at -O3 sees a restrict overlap
  // (-Wrestrict) in "/" + path and in assigning "/", where there is none.
  if (path.empty() || path.front() != '/') t.path.push_back('/');
  t.path.append(path);
  return t;
}

HttpResponse response_of(H2StreamEnd& end) {
  HttpResponse r;
  if (end.too_large) {
    r.error = outbound::too_large_error();
  } else if (end.error_code != NGHTTP2_NO_ERROR) {
    // REFUSED_STREAM, or a stream past a GOAWAY's last one: the buyer says it never processed
    // it, so the auction may ask the next buyer.
    r.not_delivered = end.refused;
    // A reset may be the buyer's or nghttp2's own (an answer breaking HTTP/2's rules).
    r.error = std::string(end.refused ? "stream refused by the buyer: " : "stream reset: ") +
              nghttp2_http2_strerror(end.error_code);
  } else if (end.status < 200) {
    r.error = "stream closed without an answer";
  } else {
    r.status = end.status;
    r.body = std::move(end.body);
  }
  return r;
}

// nghttp2's callbacks: the session's user data is its H2Codec.
struct H2CodecCallbacks {
  static int on_header(nghttp2_session* /*session*/, const nghttp2_frame* frame,
                       const std::uint8_t* name, std::size_t name_length, const std::uint8_t* value,
                       std::size_t value_length, std::uint8_t /*flags*/, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS) return 0;
    H2Codec::Stream* s = static_cast<H2Codec*>(user)->stream(frame->hd.stream_id);
    if (s == nullptr || name_length != 7 || std::memcmp(name, ":status", 7) != 0) return 0;
    // A 1xx comes before the final answer, whose :status replaces it.
    int status = 0;
    const char* first = reinterpret_cast<const char*>(value);
    std::from_chars(first, first + value_length, status);
    s->status = status;
    return 0;
  }

  static int on_data(nghttp2_session* session, std::uint8_t /*flags*/, std::int32_t stream_id,
                     const std::uint8_t* data, std::size_t length, void* user) {
    H2Codec::Stream* s = static_cast<H2Codec*>(user)->stream(stream_id);
    if (s == nullptr || s->cancelled || s->too_large) return 0;
    if (s->body.size() + length > outbound::kMaxResponseBytes) {
      s->too_large = true;
      s->body.clear();
      nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
      return 0;
    }
    s->body.append(reinterpret_cast<const char*>(data), length);
    return 0;
  }

  static int on_frame(nghttp2_session* /*session*/, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type == NGHTTP2_PING && (frame->hd.flags & NGHTTP2_FLAG_ACK) != 0)
      static_cast<H2Codec*>(user)->ping_outstanding_ = false;
    if (frame->hd.type == NGHTTP2_GOAWAY) {
      // No new streams here; nghttp2 closes those above last_stream_id as refused (never
      // processed), and the rest may still be answered.
      auto* codec = static_cast<H2Codec*>(user);
      codec->goaway_ = true;
      codec->goaway_last_stream_ = frame->goaway.last_stream_id;
    }
    return 0;
  }

  static int on_close(nghttp2_session* /*session*/, std::int32_t stream_id,
                      std::uint32_t error_code, void* user) {
    auto* codec = static_cast<H2Codec*>(user);
    auto it = codec->streams_.find(stream_id);
    if (it == codec->streams_.end()) return 0;
    H2Codec::Stream s = std::move(it->second);
    codec->streams_.erase(it);
    H2StreamEnd end;
    end.stream_id = stream_id;
    end.status = s.status;
    end.body = std::move(s.body);
    end.too_large = s.too_large;
    end.error_code = error_code;
    end.refused = error_code == NGHTTP2_REFUSED_STREAM || codec->refused(stream_id);
    end.cancelled = s.cancelled;
    codec->on_end_(std::move(end));
    return 0;
  }

  static ssize_t read_body(nghttp2_session* /*session*/, std::int32_t stream_id,
                           std::uint8_t* buffer, std::size_t length, std::uint32_t* flags,
                           nghttp2_data_source* source, void* /*user*/) {
    H2Codec::Stream* s = static_cast<H2Codec*>(source->ptr)->stream(stream_id);
    if (s == nullptr) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    const std::string& body = s->request->body;
    const std::size_t n = std::min(length, body.size() - s->body_offset);
    std::memcpy(buffer, body.data() + s->body_offset, n);
    s->body_offset += n;
    if (s->body_offset == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  // One set for every session of the process: read-only once made.
  static const nghttp2_session_callbacks* get() {
    static const auto* callbacks = [] {
      nghttp2_session_callbacks* c = nullptr;
      if (nghttp2_session_callbacks_new(&c) != 0) {
        throw std::runtime_error("nghttp2_session_callbacks_new failed");
      }
      nghttp2_session_callbacks_set_on_header_callback(c, &on_header);
      nghttp2_session_callbacks_set_on_data_chunk_recv_callback(c, &on_data);
      nghttp2_session_callbacks_set_on_frame_recv_callback(c, &on_frame);
      nghttp2_session_callbacks_set_on_stream_close_callback(c, &on_close);
      return c;
    }();
    return callbacks;
  }
};

H2Codec::H2Codec(OnStreamEnd on_end) : on_end_(std::move(on_end)) {
  if (nghttp2_session_client_new(&session_, H2CodecCallbacks::get(), this) != 0) {
    session_ = nullptr;
    throw std::runtime_error("nghttp2_session_client_new failed");
  }
  const nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, kStreamWindow},
  };
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, std::size(settings));
  nghttp2_session_set_local_window_size(session_, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
}

H2Codec::~H2Codec() {
  // nghttp2_session_del calls no stream-close callback: streams still open end silently, their
  // callers answered by the pool.
  if (session_ != nullptr) nghttp2_session_del(session_);
}

H2Codec::Stream* H2Codec::stream(std::int32_t id) {
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : &it->second;
}

std::int32_t H2Codec::submit(const HttpRequest& rq, const std::string& authority,
                             const std::string& path) {
  std::vector<std::string> names;
  names.reserve(rq.headers.size());
  std::vector<nghttp2_nv> fields;
  fields.reserve(rq.headers.size() + 6);
  fields.push_back(field(":method", rq.method));
  fields.push_back(field(":scheme", "https"));
  fields.push_back(field(":authority", authority));
  fields.push_back(field(":path", path));
  bool has_user_agent = false;
  for (const auto& [name, value] : rq.headers) {
    // HTTP/2 field names are lower case; a buyer may reject any other.
    std::string& lower = names.emplace_back(ascii_lower(name));
    if (dropped_header(lower)) continue;
    has_user_agent = has_user_agent || lower == "user-agent";
    fields.push_back(field(lower, value));
  }
  if (!has_user_agent) fields.push_back(field("user-agent", kUserAgent));
  const bool bodyless = rq.body.empty() && (rq.method == "GET" || rq.method == "HEAD");
  const std::string length = std::to_string(rq.body.size());
  if (!bodyless) fields.push_back(field("content-length", length));

  nghttp2_data_provider provider{};
  provider.source.ptr = this;  // the stream is found by its id when its body is read
  provider.read_callback = &H2CodecCallbacks::read_body;
  const std::int32_t id = nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(),
                                                 rq.body.empty() ? nullptr : &provider, nullptr);
  if (id > 0) streams_[id].request = &rq;
  return id;
}

bool H2Codec::takes_no_more_streams(std::int32_t error) {
  return error == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE ||
         error == NGHTTP2_ERR_START_STREAM_NOT_ALLOWED;
}

std::string H2Codec::error_text(std::int32_t error) { return nghttp2_strerror(error); }

void H2Codec::cancel(std::int32_t stream_id) {
  if (Stream* s = stream(stream_id)) s->cancelled = true;
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream_id, NGHTTP2_CANCEL);
}

bool H2Codec::ping() {
  if (nghttp2_submit_ping(session_, NGHTTP2_FLAG_NONE, nullptr) != 0) return false;
  ping_outstanding_ = true;
  return true;
}

bool H2Codec::receive(const char* data, std::size_t length) {
  const ssize_t rv =
      nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(data), length);
  if (rv < 0) {
    error_ = std::string("HTTP/2 error: ") + nghttp2_strerror(static_cast<int>(rv));
    return false;
  }
  return true;
}

bool H2Codec::produce(std::string& out, std::size_t batch) {
  while (out.size() < batch) {
    const std::uint8_t* data = nullptr;
    const ssize_t n = nghttp2_session_mem_send(session_, &data);
    if (n < 0) {
      error_ = std::string("HTTP/2 error: ") + nghttp2_strerror(static_cast<int>(n));
      return false;
    }
    if (n == 0) break;
    out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
  }
  return true;
}

std::size_t H2Codec::stream_limit() const {
  const std::uint32_t peer =
      nghttp2_session_get_remote_settings(session_, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
  return std::min<std::size_t>(peer, kMaxStreamsPerConnection);
}

bool H2Codec::finished() const {
  return nghttp2_session_want_read(session_) == 0 && nghttp2_session_want_write(session_) == 0;
}

}  // namespace leadflow
