#pragma once
// A gzip stream made in memory as gzip(1) writes one (zlib's deflate with a gzip wrapper), for
// the tests of what reads gzip.
#include <gtest/gtest.h>

#include <zlib.h>

#include <string>
#include <string_view>

namespace leadflow::testing {

// `text` as one gzip member, at zlib's `level` (0 stores it, 9 compresses best).
inline std::string gzip_member(std::string_view text, int level = Z_DEFAULT_COMPRESSION) {
  z_stream s{};
  EXPECT_EQ(deflateInit2(&s, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&s, text.size()) + 64, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  s.avail_in = static_cast<uInt>(text.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

// A CSV of e-mail addresses with a header and a second column, `lines` lines, CRLF.
inline std::string sample_email_csv(int lines) {
  std::string csv = "email,note\r\n";
  for (int i = 0; i < lines; ++i)
    csv += "person." + std::to_string(i) + "@example.com,a customer since " +
           std::to_string(2000 + i % 25) + "\r\n";
  return csv;
}

}  // namespace leadflow::testing
