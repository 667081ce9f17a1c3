#pragma once
// The HTTP/2 client's codec: one nghttp2 client session, turning requests into frames and frames
// into answers. Bytes in, bytes out: it knows no socket, no clock and no connection pool, so it is
// tested on plain bytes (tests/unit/delivery/h2_codec_test.cpp).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "leadflow/delivery/http_client.hpp"

struct nghttp2_session;

namespace leadflow {

/// Where an https:// URL sends a request: its buyer host (the pool's key, "https://host:port"),
/// the name and port to connect to, and what goes in :authority and :path.
struct H2Target {
  std::string key;
  std::string name;
  std::string port;
  std::string authority;  // host[:port] as the URL says it
  std::string path;       // path and query, "/" at least
};

/// https://host[:port][/path][?query]; nullopt for anything else (libcurl then says what is
/// wrong with it).
std::optional<H2Target> parse_https_url(const std::string& url);

/// How a stream ended, as the codec saw it.
struct H2StreamEnd {
  std::int32_t stream_id = 0;
  int status = 0;  // the final :status, 0 if none came
  std::string body;
  bool too_large = false;        // the answer passed kMaxResponseBytes: the codec reset it
  std::uint32_t error_code = 0;  // the stream's RST_STREAM code, 0 (NO_ERROR) if it ended cleanly
  /// The buyer says it never processed it: REFUSED_STREAM, or a stream past the last one its
  /// GOAWAY accepted. Such a stream may be sent again (RFC 9113 §8.7).
  bool refused = false;
  bool cancelled = false;  // cancel()ed here: its answer was given before (a timeout)
};

/// The answer a stream that ended (not cancelled) gives its caller: the buyer's status and body,
/// or why there is none. `elapsed` and the not-sent flags are the pool's to fill in.
HttpResponse response_of(H2StreamEnd& end);

/// One HTTP/2 client session (nghttp2), owned by one connection and used on one thread. Streams
/// end through `on_end`, called from inside receive() or produce(); it may not destroy the codec.
class H2Codec {
 public:
  using OnStreamEnd = std::function<void(H2StreamEnd)>;

  /// Starts the session: our SETTINGS (no push, a stream window that holds a whole capped answer)
  /// and a connection window for many streams at once, queued for the first produce(). Throws
  /// std::runtime_error if nghttp2 cannot make a session.
  explicit H2Codec(OnStreamEnd on_end);
  ~H2Codec();
  H2Codec(const H2Codec&) = delete;
  H2Codec& operator=(const H2Codec&) = delete;

  /// Starts a stream for `request` to `authority` and `path`: its id (> 0), or nghttp2's error
  /// (< 0; NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE or NGHTTP2_ERR_START_STREAM_NOT_ALLOWED mean this
  /// session takes no more streams). The request's body is read as frames are made: `request`
  /// must stay alive, unchanged, until its stream ends.
  std::int32_t submit(const HttpRequest& request, const std::string& authority,
                      const std::string& path);
  /// submit()'s error says this session takes no more streams (its ids are used up, or a GOAWAY
  /// came or went): the request was not sent and may go to another connection.
  static bool takes_no_more_streams(std::int32_t error);
  /// nghttp2's words for submit()'s error.
  static std::string error_text(std::int32_t error);

  /// Resets a stream whose answer was already given (RST_STREAM CANCEL); what still arrives for
  /// it is dropped, and it ends through on_end with `cancelled`.
  void cancel(std::int32_t stream_id);

  /// Takes `length` bytes read from the buyer. False on a protocol error (error() says which):
  /// the connection cannot go on.
  bool receive(const char* data, std::size_t length);

  /// Appends what the session has to send to `out`, until it has `batch` bytes or the session
  /// has no more. False on a protocol error (error() says which).
  bool produce(std::string& out, std::size_t batch);

  /// Queues a PING for the next produce(); false if nghttp2 would not. Its ACK clears
  /// awaiting_ping().
  bool ping();
  /// A PING was sent and its ACK has not come yet.
  bool awaiting_ping() const { return ping_outstanding_; }

  /// Streams the buyer lets us run at once (its SETTINGS_MAX_CONCURRENT_STREAMS), at most 100.
  std::size_t stream_limit() const;
  /// The buyer sent GOAWAY: no new streams here.
  bool goaway() const { return goaway_; }
  /// The buyer's GOAWAY said it will not process this stream (its id is past the last one).
  bool refused(std::int32_t stream_id) const { return goaway_ && stream_id > goaway_last_stream_; }
  /// Neither side wants to read or write any more (both said GOAWAY and every stream ended).
  bool finished() const;
  std::size_t open_streams() const { return streams_.size(); }
  const std::string& error() const { return error_; }

 private:
  struct Stream {
    const HttpRequest* request = nullptr;
    std::size_t body_offset = 0;  // of the request body, handed to nghttp2 so far
    int status = 0;
    std::string body;
    bool too_large = false;
    bool cancelled = false;
  };

  friend struct H2CodecCallbacks;  // nghttp2's callbacks, in h2_codec.cpp

  Stream* stream(std::int32_t id);

  OnStreamEnd on_end_;
  nghttp2_session* session_ = nullptr;
  std::unordered_map<std::int32_t, Stream> streams_;  // node-based: a Stream never moves
  bool goaway_ = false;
  std::int32_t goaway_last_stream_ = 0;
  bool ping_outstanding_ = false;
  std::string error_;
};

}  // namespace leadflow
