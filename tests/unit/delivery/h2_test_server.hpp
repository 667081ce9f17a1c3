#pragma once
// A buyer's side of HTTP/2 in memory, for the HTTP/2 client's unit tests: nghttp2's own server
// session, fed the bytes the client's codec produces and producing the frames it reads. No socket,
// no thread; the test says what the buyer answers and when.
#include <nghttp2/nghttp2.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace leadflow::testing {

class H2TestServer {
 public:
  /// A request as the buyer received it.
  struct Request {
    std::map<std::string, std::string> fields;  // pseudo-headers and headers, as sent
    std::string body;
    bool complete = false;  // its END_STREAM came
    std::uint32_t reset_code = 0;
    bool closed = false;
  };

  /// `max_streams`: the SETTINGS_MAX_CONCURRENT_STREAMS it announces.
  explicit H2TestServer(std::uint32_t max_streams = 100) {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_header_callback(cb, &on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, &on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, &on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(cb, &on_close);
    nghttp2_session_server_new(&session_, cb, this);
    nghttp2_session_callbacks_del(cb);
    const nghttp2_settings_entry settings[] = {
        {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, max_streams}};
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings, 1);
  }
  ~H2TestServer() { nghttp2_session_del(session_); }
  H2TestServer(const H2TestServer&) = delete;
  H2TestServer& operator=(const H2TestServer&) = delete;

  /// Takes bytes the client sent; false if they broke HTTP/2.
  bool receive(const std::string& bytes) {
    const auto rv = nghttp2_session_mem_recv(
        session_, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    return rv == static_cast<ssize_t>(bytes.size());
  }

  /// Every frame the buyer has to send, as bytes.
  std::string produce() {
    std::string out;
    for (;;) {
      const std::uint8_t* data = nullptr;
      const ssize_t n = nghttp2_session_mem_send(session_, &data);
      if (n <= 0) break;
      out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
    return out;
  }

  /// Answers stream `id` with `status` and `body`.
  void respond(std::int32_t id, int status, std::string body) {
    bodies_[id] = {std::move(body), 0};
    const std::string code = std::to_string(status);
    nghttp2_nv nv[] = {
        {const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(":status")),
         const_cast<std::uint8_t*>(reinterpret_cast<const std::uint8_t*>(code.data())), 7,
         code.size(), NGHTTP2_NV_FLAG_NONE}};
    nghttp2_data_provider provider{};
    provider.source.ptr = this;
    provider.read_callback = &read_body;
    ASSERT_EQ(0, nghttp2_submit_response(session_, id, nv, 1, &provider));
  }

  /// Resets stream `id` with `code` (NGHTTP2_REFUSED_STREAM: never processed).
  void reset(std::int32_t id, std::uint32_t code) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id, code);
  }

  /// GOAWAY: streams after `last_stream` will not be processed.
  void goaway(std::int32_t last_stream) {
    nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, last_stream, NGHTTP2_NO_ERROR, nullptr, 0);
  }

  /// PINGs received (each ACKed by nghttp2 in the next produce()).
  int pings() const { return pings_; }

  /// The streams the buyer has seen, by id.
  const std::map<std::int32_t, Request>& requests() const { return requests_; }
  const Request& request(std::int32_t id) { return requests_[id]; }
  std::vector<std::int32_t> complete_unanswered() const {
    std::vector<std::int32_t> ids;
    for (const auto& [id, r] : requests_) {
      if (r.complete && !r.closed && bodies_.count(id) == 0) ids.push_back(id);
    }
    return ids;
  }

 private:
  static H2TestServer& self(void* user) { return *static_cast<H2TestServer*>(user); }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t name_length, const std::uint8_t* value, std::size_t value_length,
                       std::uint8_t, void* user) {
    self(user)
        .requests_[frame->hd.stream_id]
        .fields[std::string(reinterpret_cast<const char*>(name), name_length)] =
        std::string(reinterpret_cast<const char*>(value), value_length);
    return 0;
  }

  static int on_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* data,
                     std::size_t length, void* user) {
    self(user).requests_[id].body.append(reinterpret_cast<const char*>(data), length);
    return 0;
  }

  static int on_frame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type == NGHTTP2_PING && (frame->hd.flags & NGHTTP2_FLAG_ACK) == 0)
      ++self(user).pings_;  // nghttp2 queues its ACK for the next produce()
    const bool request_frame = frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA;
    if (request_frame && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
      self(user).requests_[frame->hd.stream_id].complete = true;
    }
    return 0;
  }

  static int on_close(nghttp2_session*, std::int32_t id, std::uint32_t code, void* user) {
    Request& r = self(user).requests_[id];
    r.closed = true;
    r.reset_code = code;
    return 0;
  }

  static ssize_t read_body(nghttp2_session*, std::int32_t id, std::uint8_t* buffer,
                           std::size_t length, std::uint32_t* flags, nghttp2_data_source* source,
                           void*) {
    auto& [body, offset] = static_cast<H2TestServer*>(source->ptr)->bodies_[id];
    const std::size_t n = std::min(length, body.size() - offset);
    std::memcpy(buffer, body.data() + offset, n);
    offset += n;
    if (offset == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  nghttp2_session* session_ = nullptr;
  std::map<std::int32_t, Request> requests_;
  int pings_ = 0;
  std::map<std::int32_t, std::pair<std::string, std::size_t>> bodies_;
};

}  // namespace leadflow::testing
