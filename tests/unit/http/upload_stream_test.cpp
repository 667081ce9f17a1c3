// A body handed out as it arrives (Routes::put_streamed), without a server: the reader decodes it
// piece by piece (Content-Length or chunked), lets go of the input it is done with, and never
// keeps the body in the request; the stream between the connection's loop and the handler holds
// a bounded amount and says why a body failed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>

#include "leadflow/http/parser.hpp"
#include "leadflow/http/stream.hpp"

namespace leadflow::http {
namespace {

ParseLimits streamed_limits(std::size_t larger = 1 << 20) {
  ParseLimits limits;
  limits.max_body_bytes = 16;
  limits.larger_body = [larger](std::string_view, std::string_view path) {
    return path == "/up" ? larger : 0;
  };
  limits.streamed_body = [](std::string_view method, std::string_view path) {
    return method == "PUT" && path == "/up";
  };
  return limits;
}

struct Streamed {
  ParseResult last;
  std::string body;          // what take_body handed out
  std::size_t held = 0;      // the most input kept at once
  std::string request_body;  // what the request itself held
};

// Feeds `wire` to a reader `step` bytes at a time, as a connection would: the input grows at its
// end, and what release_input() gives back is dropped from its front.
Streamed read_streamed(std::string_view wire, std::size_t step, const ParseLimits& limits) {
  RequestReader reader(limits);
  http::Request request;
  Streamed out;
  std::string in;
  for (std::size_t at = 0; at < wire.size();) {
    const std::size_t n = std::min(step, wire.size() - at);
    in.append(wire.substr(at, n));
    at += n;
    out.held = std::max(out.held, in.size());
    out.last = reader.read(in, request);
    reader.take_body(out.body);
    if (out.last.status != ParseStatus::kIncomplete) break;
    in.erase(0, reader.release_input());
  }
  out.request_body = std::string(request.body());
  return out;
}

std::string body_of(std::size_t n) {
  std::string body;
  for (std::size_t i = 0; body.size() < n; ++i) body += "person" + std::to_string(i) + "@x.io\r\n";
  body.resize(n);
  return body;
}

TEST(StreamedBody, AContentLengthBodyComesOutWholeWhateverTheReads) {
  const std::string body = body_of(5000);
  const std::string wire = "PUT /up?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\n\r\n" + body;
  for (const std::size_t step : {1, 7, 100, 4096, 100000}) {
    SCOPED_TRACE(step);
    const Streamed s = read_streamed(wire, step, streamed_limits());
    ASSERT_EQ(s.last.status, ParseStatus::kComplete);
    EXPECT_TRUE(s.last.body_streamed);
    EXPECT_EQ(s.body, body);
    EXPECT_EQ(s.request_body, "");  // never in the request
    if (step < 200) {
      EXPECT_LT(s.held, 300u);  // the input never grows with the body
    }
  }
}

TEST(StreamedBody, AChunkedBodyComesOutDecodedWhateverTheReads) {
  const std::string body = body_of(3000);
  std::string wire = "PUT /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (std::size_t at = 0; at < body.size(); at += 700) {
    const std::string part = body.substr(at, 700);
    char size[16];
    std::snprintf(size, sizeof size, "%zx", part.size());
    wire += std::string(size) + ";ext=1\r\n" + part + "\r\n";
  }
  wire += "0\r\nTrailer-Field: yes\r\n\r\nGET / HTTP/1.1\r\n";  // and a pipelined request after
  for (const std::size_t step : {1, 3, 64, 1000, 100000}) {
    SCOPED_TRACE(step);
    const Streamed s = read_streamed(wire, step, streamed_limits());
    ASSERT_EQ(s.last.status, ParseStatus::kComplete);
    EXPECT_EQ(s.body, body);
    EXPECT_EQ(s.request_body, "");
  }
}

TEST(StreamedBody, ABodyUnderTheListenersLimitOrOnAnotherRouteIsHeldWhole) {
  const Streamed small = read_streamed(
      "PUT /up HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello", 4, streamed_limits());
  ASSERT_EQ(small.last.status, ParseStatus::kComplete);
  EXPECT_FALSE(small.last.body_streamed);
  EXPECT_EQ(small.request_body, "hello");
  EXPECT_EQ(small.body, "");
}

TEST(StreamedBody, AChunkedBodyPastTheRoutesLimitFailsWith413) {
  std::string wire = "PUT /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 10; ++i) wire += "40\r\n" + std::string(64, 'a') + "\r\n";
  const Streamed s = read_streamed(wire, 50, streamed_limits(500));
  ASSERT_EQ(s.last.status, ParseStatus::kError);
  EXPECT_EQ(s.last.error_status, 413);
  EXPECT_LE(s.body.size(), 500u);
}

TEST(UploadStream, TheHandlerReadsWhatTheLoopPushedThenTheEnd) {
  UploadStream up(8);
  int wakes = 0;
  up.attach([&] { ++wakes; });
  up.push("abc");
  EXPECT_FALSE(up.full());
  up.push("defghi");
  EXPECT_TRUE(up.full());  // 9 >= 8: the loop reads no more
  std::string piece;
  EXPECT_EQ(up.read(piece), UploadStream::Read::kData);
  EXPECT_EQ(piece, "abcdefghi");
  EXPECT_EQ(wakes, 1);  // it was full: the loop is told to read again
  up.push("j");
  up.finish();
  EXPECT_EQ(up.read(piece), UploadStream::Read::kData);
  EXPECT_EQ(piece, "j");
  EXPECT_EQ(wakes, 1);  // not full: no wake-up needed
  EXPECT_EQ(up.read(piece), UploadStream::Read::kEnd);
  up.fail(408, "late");  // after the end: changes nothing
  EXPECT_EQ(up.failed_status(), 0);
}

TEST(UploadStream, AFailureEndsTheReadingAndSaysWhy) {
  UploadStream up(8);
  up.push("abc");
  up.fail(413, "too large");
  std::string piece;
  EXPECT_EQ(up.read(piece), UploadStream::Read::kFailed);
  EXPECT_EQ(up.failed_status(), 413);
  EXPECT_EQ(up.failed_detail(), "too large");
}

TEST(UploadStream, AHandlerWaitingForBytesWakesWhenTheConnectionGoes) {
  UploadStream up(8);
  UploadStream::Read got = UploadStream::Read::kData;
  std::thread handler([&] {
    std::string piece;
    got = up.read(piece);
  });
  up.detach();  // the client went away mid-body
  handler.join();
  EXPECT_EQ(got, UploadStream::Read::kFailed);
  EXPECT_EQ(up.failed_status(), 0);  // no answer to write
}

}  // namespace
}  // namespace leadflow::http
