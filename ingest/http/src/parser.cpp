#include "leadflow/http/parser.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <memory>

#include "leadflow/base/text.hpp"
#include "leadflow/http/forms.hpp"

namespace leadflow::http {
namespace {

// Clients may send stray CRLFs after a previous body (RFC 9112 2.2); a flood of them is not that.
constexpr std::size_t kMaxLeadingEmptyLines = 8;
// 16 hex digits already cover 64 bits; longer sizes only serve overflow tricks.
constexpr std::size_t kMaxChunkSizeDigits = 16;
// Per message: nobody uses chunk extensions, so they only need to be bounded, not honoured.
constexpr std::size_t kMaxChunkExtBytes = 4096;
// Chunk framing may be as large as the body limit, plus slack so that tiny limits still leave
// room for a few chunks.
constexpr std::size_t kChunkFramingSlack = 1024;
constexpr std::string_view kVersionPattern = "HTTP/d.d";

constexpr std::array<bool, 256> make_tchar_table() {
  std::array<bool, 256> table{};
  for (int c = '0'; c <= '9'; ++c) table[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) table[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) table[c] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) table[static_cast<unsigned char>(c)] = true;
  return table;
}
constexpr std::array<bool, 256> kTchar = make_tchar_table();

// HTAB is the one control character field values may carry; obs-text (0x80 and up) is allowed.
constexpr std::array<bool, 256> make_value_char_table() {
  std::array<bool, 256> table{};
  for (int c = 0x20; c < 0x100; ++c) table[c] = c != 0x7F;
  table['\t'] = true;
  return table;
}
constexpr std::array<bool, 256> kValueChar = make_value_char_table();

bool is_tchar(char c) { return kTchar[static_cast<unsigned char>(c)]; }
bool is_ows(char c) { return c == ' ' || c == '\t'; }
bool is_bad_value_char(char c) { return !kValueChar[static_cast<unsigned char>(c)]; }

// The scanners below work on locals so that the hot loops stay in registers.
std::size_t skip_tchars(std::string_view s, std::size_t i, std::size_t end) {
  const char* const data = s.data();
  while (i < end && is_tchar(data[i])) ++i;
  return i;
}

// Stops at CR, LF or any other byte a field value may not hold.
std::size_t skip_value_chars(std::string_view s, std::size_t i, std::size_t end) {
  const char* const data = s.data();
  while (i < end && !is_bad_value_char(data[i])) ++i;
  return i;
}

// Stops at SP or any control character; bytes from 0x80 up are left to the router to judge.
std::size_t skip_target_chars(std::string_view s, std::size_t i, std::size_t end) {
  const char* const data = s.data();
  for (; i < end; ++i) {
    const auto u = static_cast<unsigned char>(data[i]);
    if (u <= 0x20 || u == 0x7F) break;
  }
  return i;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

// Calls fn on each OWS-trimmed element of a comma-separated list, empty ones included so that
// callers can decide whether those are acceptable.
template <typename Fn>
void for_each_element(std::string_view list, Fn&& fn) {
  for (;;) {
    const std::size_t comma = list.find(',');
    fn(trim_blanks(list.substr(0, comma)));
    if (comma == std::string_view::npos) return;
    list.remove_prefix(comma + 1);
  }
}

// Whether `v`, possibly cut short, can still become "HTTP/" DIGIT "." DIGIT.
bool version_prefix_ok(std::string_view v) {
  if (v.size() > kVersionPattern.size()) return false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char p = kVersionPattern[i];
    if (p == 'd' ? !is_digit(v[i]) : v[i] != p) return false;
  }
  return true;
}

void percent_decode_into(std::string_view s, std::string& out) {
  out.clear();
  if (s.find('%') == std::string_view::npos) {
    out.assign(s);
    return;
  }
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
}

enum class Step { kOk, kNeedMore, kFail };

}  // namespace

// Reads one request from the front of a connection's input into an http::Request: offsets into
// the input while it reads, and once the request is whole, a copy of its bytes for the request to
// own. It can stop where the bytes run out and resume there once more have arrived (the input
// only ever grows at its end until the request is whole): the header section is parsed from its
// start, but only once it can be whole (RequestReader gates that); a body with a length is copied
// once, when all of it is there; chunk framing is read once, chunk by chunk.
class RequestParser {
 public:
  // `gated`: parse a header or trailer section only once the bytes may hold all of it, as
  // RequestReader does; without, every call parses as far as the bytes go (parse_request).
  RequestParser(const ParseLimits& limits, bool gated) : limits_(limits), gated_(gated) {}

  ParseResult resume(std::string_view input, http::Request& request) {
    in_ = input;
    req_ = &request;
    result_ = ParseResult{};
    const std::size_t from = phase_ == Phase::kHead ? 0 : pos_;
    const ParseResult r = step_on();
    examined_ += (pos_ >= from ? pos_ - from : 0) + 1;
    return r;
  }

  std::size_t examined() const { return examined_; }
  const ParseLimits& limits() const { return limits_; }

 private:
  enum class Phase { kHead, kBody, kChunks, kDone };
  enum class Chunk { kSize, kExtension, kSizeLineEnd, kData, kDataEnd, kTrailers };

  // What the header fields said about the message's framing, gathered as they are read.
  struct Framing {
    std::size_t host_count = 0;
    bool has_content_length = false;
    bool conflicting_lengths = false;
    std::uint64_t content_length = 0;
    bool has_transfer_encoding = false;
    std::size_t coding_count = 0;
    std::size_t chunked_count = 0;
    bool last_coding_chunked = false;
    bool connection_close = false;
    bool connection_keep_alive = false;
  };

  // Where a chunked body's reading stopped.
  struct Chunking {
    Chunk stage = Chunk::kSize;
    std::uint64_t size = 0;  // of the chunk whose size line is being read
    std::size_t digits = 0;
    bool in_extension = false;
    bool seen_semicolon = false;
    std::uint64_t left = 0;           // of the chunk's data still to come
    std::size_t extension_bytes = 0;  // per message
    std::size_t trailer_start = 0;
    std::size_t trailer_scan = 0;
  };

  ParseResult step_on() {
    if (phase_ == Phase::kHead) {
      if (gated_ && !head_may_be_whole()) {
        pos_ = 0;  // nothing parsed (and nothing counted twice)
        return finish(Step::kNeedMore);
      }
      // From the start: whatever a previous call found out about a section that was not whole.
      pos_ = 0;
      framing_ = Framing{};
      reset_request();
      const Step step = head();
      if (step != Step::kOk) return finish(step);
      head_end_ = pos_;
      const std::size_t bound = framing_.has_transfer_encoding
                                    ? body_limit_
                                    : static_cast<std::size_t>(framing_.content_length);
      if (bound > limits_.max_body_bytes && limits_.streamed_body &&
          limits_.streamed_body(in_.substr(req_->method_.offset, req_->method_.size),
                                req_->path())) {
        // The body is handed out as it is decoded (take_body): the request keeps its head only.
        streaming_ = true;
        body_left_ = framing_.content_length;
        req_->storage_.assign(in_.substr(0, head_end_));
        if (req_->query_.size > 0) parse_urlencoded(req_->query(), req_->params_);
        phase_ = framing_.has_transfer_encoding ? Phase::kChunks : Phase::kBody;
      } else if (framing_.has_transfer_encoding) {
        // Decoded chunks go right behind the head, in the request's own buffer.
        req_->storage_.assign(in_.substr(0, head_end_));
        phase_ = Phase::kChunks;
      } else {
        phase_ = Phase::kBody;
      }
    }
    result_.headers_complete = true;
    result_.body_streamed = streaming_;
    result_.body_bound = framing_.has_transfer_encoding
                             ? body_limit_
                             : static_cast<std::size_t>(framing_.content_length);
    if (streaming_ && phase_ == Phase::kBody) {
      const auto take =
          static_cast<std::size_t>(std::min<std::uint64_t>(body_left_, in_.size() - pos_));
      piece_.append(in_.substr(pos_, take));
      pos_ += take;
      body_left_ -= take;
      if (body_left_ > 0) return finish(Step::kNeedMore);
    } else if (streaming_ && phase_ == Phase::kChunks) {
      if (const Step step = chunked_body(); step != Step::kOk) return finish(step);
    } else if (phase_ == Phase::kBody) {
      const auto length = static_cast<std::size_t>(framing_.content_length);  // 0 without framing
      if (in_.size() - head_end_ < length) return finish(Step::kNeedMore);
      req_->storage_.reserve(head_end_ + length);
      req_->storage_.assign(in_.substr(0, head_end_ + length));
      req_->body_ = span(head_end_, length);
      pos_ = head_end_ + length;
    } else if (phase_ == Phase::kChunks) {
      const Step step = chunked_body();
      if (step != Step::kOk) return finish(step);
      req_->body_ = span(head_end_, req_->storage_.size() - head_end_);
    }
    if (!streaming_ && req_->query_.size > 0) parse_urlencoded(req_->query(), req_->params_);
    phase_ = Phase::kDone;
    result_.status = ParseStatus::kComplete;
    result_.consumed = pos_;
    return std::move(result_);
  }

  // Request line, header fields and their framing checks.
  Step head() {
    Step step = skip_leading_empty_lines();
    if (step != Step::kOk) return step;
    // Scanning stops at the header limit, so running out of bytes there means the section is
    // over the limit, whatever the rest of the input holds.
    const std::size_t start = pos_;
    const bool capped = in_.size() - start >= limits_.max_header_bytes;
    const std::size_t end = capped ? start + limits_.max_header_bytes : in_.size();
    step = request_line(end);
    if (step == Step::kOk) step = field_section(end, true);
    if (step == Step::kNeedMore && capped) step = fail(431, "Header section is too large.");
    if (step != Step::kOk) return step;
    return check_framing();
  }

  // Whether the input may hold a whole header section: an empty line has arrived (found by
  // looking at each byte once), or the input is over the header limit however many empty lines
  // lead it (then a parse is sure to end in a request or an error).
  bool head_may_be_whole() {
    if (in_.size() >= limits_.max_header_bytes + 2 * kMaxLeadingEmptyLines + 2) return true;
    return find_empty_line(head_scan_);
  }

  // Looks for a line end followed by an empty line ("\n\n" or "\n\r\n") from `scan` on, and
  // leaves `scan` where the next look should start.
  bool find_empty_line(std::size_t& scan) {
    const char* const data = in_.data();
    const std::size_t n = in_.size();
    while (scan < n) {
      const void* lf = std::memchr(data + scan, '\n', n - scan);
      if (lf == nullptr) {
        examined_ += n - scan;
        scan = n;
        return false;
      }
      const auto i = static_cast<std::size_t>(static_cast<const char*>(lf) - data);
      examined_ += i + 1 - scan;
      if (i + 1 >= n) {
        scan = i;  // what follows decides
        return false;
      }
      if (data[i + 1] == '\n') {
        scan = i + 1;
        return true;
      }
      if (data[i + 1] == '\r') {
        if (i + 2 >= n) {
          scan = i;
          return false;
        }
        if (data[i + 2] == '\n') {
          scan = i + 1;
          return true;
        }
      }
      scan = i + 1;
    }
    return false;
  }

  void reset_request() {
    http::Request& r = *req_;
    r.storage_.clear();
    r.method_ = r.target_ = r.query_ = r.body_ = {};
    r.path_.clear();
    r.version_minor_ = 1;
    r.headers_.clear();
    r.headers_.reserve(16);
    r.params_.clear();
    r.form_parts_.clear();
    r.keep_alive_ = true;
    r.expect_continue_ = false;
    r.route_ = {};
    r.match_count_ = 0;
  }

  // Offsets into the input, which are offsets into the request's copy of it too.
  http::Request::Span span(std::size_t offset, std::size_t size) const {
    return {static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size)};
  }
  http::Request::Span span_of(std::string_view part) const {
    return span(static_cast<std::size_t>(part.data() - in_.data()), part.size());
  }

  ParseResult finish(Step step) {
    if (step == Step::kNeedMore) result_.status = ParseStatus::kIncomplete;
    return std::move(result_);
  }

  Step fail(int status, const char* detail) {
    result_.status = ParseStatus::kError;
    result_.error_status = status;
    result_.error_detail = detail;
    return Step::kFail;
  }

  // Consumes CRLF or a bare LF at pos_; anything else there is reported with `detail`.
  Step line_end(std::size_t end, const char* detail) {
    if (pos_ >= end) return Step::kNeedMore;
    if (in_[pos_] == '\n') {
      ++pos_;
      return Step::kOk;
    }
    if (in_[pos_] != '\r') return fail(400, detail);
    if (pos_ + 1 >= end) return Step::kNeedMore;
    if (in_[pos_ + 1] != '\n') return fail(400, "Bare CR not followed by LF.");
    pos_ += 2;
    return Step::kOk;
  }

  Step skip_leading_empty_lines() {
    for (std::size_t lines = 0; pos_ < in_.size(); ++lines) {
      const char c = in_[pos_];
      if (c != '\r' && c != '\n') return Step::kOk;
      if (lines == kMaxLeadingEmptyLines)
        return fail(400, "Too many empty lines before the request line.");
      if (const Step step = line_end(in_.size(), ""); step != Step::kOk) return step;
    }
    return Step::kNeedMore;
  }

  Step request_line(std::size_t end) {
    const std::size_t method_start = pos_;
    pos_ = skip_tchars(in_, pos_, end);
    if (pos_ >= end) return Step::kNeedMore;
    if (pos_ == method_start || in_[pos_] != ' ')
      return fail(400, "Malformed method in the request line.");
    req_->method_ = span(method_start, pos_ - method_start);
    ++pos_;

    const std::size_t target_start = pos_;
    pos_ = skip_target_chars(in_, pos_, end);
    if (pos_ - target_start > limits_.max_target_bytes)
      return fail(414, "Request target is too long.");
    if (pos_ >= end) return Step::kNeedMore;
    if (in_[pos_] == '\r' || in_[pos_] == '\n')
      return fail(400, "Request line has no HTTP version.");
    if (in_[pos_] != ' ') return fail(400, "Control character in the request target.");
    if (pos_ == target_start) return fail(400, "Empty request target or more than one space.");
    const std::string_view target = in_.substr(target_start, pos_ - target_start);
    if (const Step step = split_target(target); step != Step::kOk) return step;
    req_->target_ = span_of(target);
    ++pos_;

    const std::size_t version_start = pos_;
    while (pos_ < end && in_[pos_] != '\r' && in_[pos_] != '\n' &&
           pos_ - version_start <= kVersionPattern.size()) {
      ++pos_;
    }
    const std::string_view version = in_.substr(version_start, pos_ - version_start);
    if (!version_prefix_ok(version))
      return fail(400, "Malformed HTTP version in the request line.");
    if (pos_ >= end) return Step::kNeedMore;
    if (version.size() != kVersionPattern.size())
      return fail(400, "Malformed HTTP version in the request line.");
    if (version[5] != '1' || version[7] > '1') return fail(505, "HTTP version not supported.");
    req_->version_minor_ = version[7] - '0';
    return line_end(end, "Malformed request line.");
  }

  Step split_target(std::string_view target) {
    std::string_view rest = target;
    if (target == "*") {
      req_->path_.assign(target);
      return Step::kOk;
    }
    if (target.front() != '/') {
      // Absolute-form: only the path and query matter to routing here.
      std::size_t scheme = 0;
      if (istarts_with(target, "http://")) {
        scheme = 7;
      } else if (istarts_with(target, "https://")) {
        scheme = 8;
      } else {
        return fail(400, "Request target is not in origin, absolute or asterisk form.");
      }
      rest = target.substr(scheme);
      const std::size_t authority_end = rest.find_first_of("/?#");
      if (authority_end == 0 || rest.empty())
        return fail(400, "Absolute request target has no host.");
      rest =
          authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
    }
    const std::size_t question = rest.find('?');
    std::string_view path = rest.substr(0, question);
    if (path.empty()) path = "/";
    percent_decode_into(path, req_->path_);
    if (question != std::string_view::npos) req_->query_ = span_of(rest.substr(question + 1));
    return Step::kOk;
  }

  // Reads field lines up to and including the blank line that ends them; `keep` is false for
  // trailers, which are checked for syntax and bounded but otherwise dropped.
  Step field_section(std::size_t end, bool keep) {
    std::size_t count = 0;
    for (;;) {
      if (pos_ >= end) return Step::kNeedMore;
      const char c = in_[pos_];
      if (c == '\r' || c == '\n') return line_end(end, "");
      if (is_ows(c))
        return fail(400, "Obsolete line folding or whitespace at the start of a field line.");
      if (++count > limits_.max_header_count) return fail(431, "Too many header fields.");

      const std::size_t name_start = pos_;
      pos_ = skip_tchars(in_, pos_, end);
      if (pos_ >= end) return Step::kNeedMore;
      if (in_[pos_] != ':') {
        if (is_ows(in_[pos_]))
          return fail(400, "Whitespace between a header field name and the colon.");
        if (in_[pos_] == '\r' || in_[pos_] == '\n')
          return fail(400, "Header field line without a colon.");
        return fail(400, "Invalid character in a header field name.");
      }
      if (pos_ == name_start) return fail(400, "Empty header field name.");
      const std::string_view name = in_.substr(name_start, pos_ - name_start);
      ++pos_;

      const std::size_t value_start = pos_;
      pos_ = skip_value_chars(in_, pos_, end);
      if (pos_ >= end) return Step::kNeedMore;
      if (in_[pos_] != '\r' && in_[pos_] != '\n')
        return fail(400, "Control character in a header field value.");
      const std::string_view value = trim_blanks(in_.substr(value_start, pos_ - value_start));
      if (const Step step = line_end(end, ""); step != Step::kOk) return step;
      if (keep) {
        req_->headers_.push_back({span_of(name), span_of(value)});
        if (const Step step = on_header(name, value); step != Step::kOk) return step;
      }
    }
  }

  // Framing conflicts are reported as soon as the offending field is complete.
  Step on_header(std::string_view name, std::string_view value) {
    if (iequals(name, "host")) {
      if (++framing_.host_count > 1) return fail(400, "More than one Host header.");
    } else if (iequals(name, "content-length")) {
      if (framing_.has_transfer_encoding)
        return fail(400, "Content-Length and Transfer-Encoding together.");
      return on_content_length(value);
    } else if (iequals(name, "transfer-encoding")) {
      if (framing_.has_content_length)
        return fail(400, "Content-Length and Transfer-Encoding together.");
      if (req_->version_minor_ == 0) return fail(400, "Transfer-Encoding in an HTTP/1.0 request.");
      framing_.has_transfer_encoding = true;
      for_each_element(value, [&](std::string_view coding) {
        if (coding.empty()) return;
        const bool chunked = iequals(coding, "chunked");
        ++framing_.coding_count;
        framing_.chunked_count += chunked ? 1 : 0;
        framing_.last_coding_chunked = chunked;
      });
    } else if (iequals(name, "connection")) {
      for_each_element(value, [&](std::string_view option) {
        if (iequals(option, "close")) framing_.connection_close = true;
        if (iequals(option, "keep-alive")) framing_.connection_keep_alive = true;
      });
    } else if (iequals(name, "expect")) {
      if (iequals(value, "100-continue")) req_->expect_continue_ = true;
    }
    return Step::kOk;
  }

  // Lists of identical values are tolerated (RFC 9110 8.6); anything that could be read as two
  // different lengths is not, since that is how requests get smuggled.
  Step on_content_length(std::string_view value) {
    bool ok = true;
    for_each_element(value, [&](std::string_view element) {
      if (!ok) return;
      if (element.empty()) {
        ok = false;
        return;
      }
      for (const char c : element) {
        if (!is_digit(c)) {
          ok = false;
          return;
        }
      }
      std::uint64_t length = 0;
      const auto [ptr, ec] =
          std::from_chars(element.data(), element.data() + element.size(), length);
      if (ec != std::errc() || ptr != element.data() + element.size()) {
        ok = false;
        return;
      }
      if (framing_.has_content_length && length != framing_.content_length) {
        framing_.conflicting_lengths = true;
        return;
      }
      framing_.has_content_length = true;
      framing_.content_length = length;
    });
    if (!ok) return fail(400, "Invalid Content-Length.");
    if (framing_.conflicting_lengths) return fail(400, "Conflicting Content-Length values.");
    return Step::kOk;
  }

  Step check_framing() {
    if (req_->version_minor_ == 1 && framing_.host_count == 0)
      return fail(400, "HTTP/1.1 request without a Host header.");
    if (framing_.has_transfer_encoding) {
      if (framing_.coding_count == 0) return fail(400, "Empty Transfer-Encoding.");
      // RFC 9112 6.3: without chunked last the body length cannot be known.
      if (!framing_.last_coding_chunked)
        return fail(400, "Transfer-Encoding does not end with chunked.");
      if (framing_.chunked_count > 1)
        return fail(400, "Transfer-Encoding applies chunked more than once.");
      if (framing_.coding_count > 1)
        return fail(501, "Transfer codings other than chunked are not supported.");
    }
    // An upload route may take more than the listener's limit (ParseLimits::larger_body).
    body_limit_ = limits_.max_body_bytes;
    if (limits_.larger_body) {
      // The request's bytes are not its own yet (method() reads them once copied): the method
      // is read from the input.
      const std::string_view method = in_.substr(req_->method_.offset, req_->method_.size);
      body_limit_ = std::max(body_limit_, limits_.larger_body(method, req_->path()));
    }
    if (framing_.has_content_length && framing_.content_length > body_limit_) {
      return fail(413, "Content-Length exceeds the body limit.");
    }
    req_->keep_alive_ = req_->version_minor_ == 1
                            ? !framing_.connection_close
                            : framing_.connection_keep_alive && !framing_.connection_close;
    return Step::kOk;
  }

  // Resumes where the previous call stopped: inside a size line, a chunk's data, or before the
  // trailer section (which, like the header section, is parsed once it can be whole).
  Step chunked_body() {
    const std::size_t end = in_.size();
    Chunking& c = chunking_;
    for (;;) {
      switch (c.stage) {
        case Chunk::kSize: {
          for (; pos_ < end; ++pos_) {
            const int digit = hex_value(in_[pos_]);
            if (digit < 0) break;
            if (c.digits >= kMaxChunkSizeDigits)
              return fail(400, "Chunk size has too many digits.");
            ++c.digits;
            c.size = c.size * 16 + static_cast<std::uint64_t>(digit);
          }
          // Hex digits only ever grow the size, so a partial size already over the limit is
          // final.
          if (c.size > body_limit_ - decoded_size())
            return fail(413, "Chunked body exceeds the body limit.");
          if (pos_ >= end) return Step::kNeedMore;
          if (c.digits == 0) return fail(400, "Missing or malformed chunk size.");
          c.stage = Chunk::kExtension;
          break;
        }
        case Chunk::kExtension: {
          // The whitespace before ';' counts too, or a stream of it would never end the line.
          for (; pos_ < end && in_[pos_] != '\r' && in_[pos_] != '\n'; ++pos_) {
            const char ch = in_[pos_];
            if (!c.in_extension) {
              if (!is_ows(ch) && ch != ';') break;  // the size line's end reports it
              c.in_extension = true;
            }
            if (++c.extension_bytes > kMaxChunkExtBytes)
              return fail(400, "Chunk extensions are too long.");
            if (ch == ';') c.seen_semicolon = true;
            if (!c.seen_semicolon && !is_ows(ch)) return fail(400, "Malformed chunk extension.");
            if (is_bad_value_char(ch)) return fail(400, "Control character in a chunk extension.");
          }
          if (pos_ >= end) return Step::kNeedMore;
          if (c.in_extension && !c.seen_semicolon && (in_[pos_] == '\r' || in_[pos_] == '\n'))
            return fail(400, "Malformed chunk extension.");
          c.stage = Chunk::kSizeLineEnd;
          break;
        }
        case Chunk::kSizeLineEnd: {
          if (const Step step = line_end(end, "Malformed chunk size line."); step != Step::kOk)
            return step;
          // Tiny chunks with padded sizes would let the raw body grow far beyond the decoded
          // limit.
          if (raw_body_size() - decoded_size() > body_limit_ + kChunkFramingSlack)
            return fail(413, "Chunked body framing is too large.");
          if (c.size == 0) {
            c.stage = Chunk::kTrailers;
            c.trailer_start = pos_;
            c.trailer_scan = pos_ - 1;  // the size line's LF: an empty line right after ends it
            break;
          }
          c.left = c.size;
          c.stage = Chunk::kData;
          break;
        }
        case Chunk::kData: {
          const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(c.left, end - pos_));
          (streaming_ ? piece_ : req_->storage_).append(in_.substr(pos_, take));
          decoded_ += take;
          pos_ += take;
          c.left -= take;
          if (c.left > 0) return Step::kNeedMore;
          c.stage = Chunk::kDataEnd;
          break;
        }
        case Chunk::kDataEnd: {
          if (const Step step = line_end(end, "Missing CRLF after chunk data."); step != Step::kOk)
            return step;
          c.size = 0;
          c.digits = 0;
          c.in_extension = c.seen_semicolon = false;
          c.stage = Chunk::kSize;
          break;
        }
        case Chunk::kTrailers:
          return trailer_section();
      }
    }
  }

  Step trailer_section() {
    Chunking& c = chunking_;
    const std::size_t end = in_.size();
    const bool capped = end - c.trailer_start >= limits_.max_header_bytes;
    if (gated_ && !capped && !find_empty_line(c.trailer_scan)) return Step::kNeedMore;
    pos_ = c.trailer_start;
    const std::size_t trailer_end = capped ? c.trailer_start + limits_.max_header_bytes : end;
    Step step = field_section(trailer_end, false);
    if (step == Step::kNeedMore && capped) step = fail(431, "Trailer section is too large.");
    if (step == Step::kNeedMore) pos_ = c.trailer_start;  // read again from its start
    return step;
  }

  std::size_t decoded_size() const {
    return streaming_ ? decoded_ : req_->storage_.size() - head_end_;
  }
  // The body's bytes read so far as they came (chunk framing and all).
  std::size_t raw_body_size() const { return raw_dropped_ + pos_ - head_end_; }

 public:
  // A streamed body's decoded bytes since the last call.
  void take_body(std::string& out) {
    out.append(piece_);
    piece_.clear();
  }
  // How many bytes at the front of the input a streamed body no longer needs (the caller drops
  // them; the next input begins after them). A trailer section is kept whole until it is read.
  std::size_t release_input() {
    if (!streaming_ || phase_ == Phase::kHead || phase_ == Phase::kDone ||
        (phase_ == Phase::kChunks && chunking_.stage == Chunk::kTrailers))
      return 0;
    const std::size_t n = pos_;
    raw_dropped_ += pos_ - head_end_;
    pos_ = head_end_ = 0;
    return n;
  }

 private:
  ParseLimits limits_;
  std::size_t body_limit_ = 0;  // the request's: max_body_bytes, or its route's larger one
  bool gated_;
  std::string_view in_;
  http::Request* req_ = nullptr;
  ParseResult result_;
  Phase phase_ = Phase::kHead;
  std::size_t pos_ = 0;
  std::size_t head_end_ = 0;   // where the header section ends (and the body starts) in the input
  std::size_t head_scan_ = 0;  // where the look for the header section's end goes on
  std::size_t examined_ = 0;
  Framing framing_;
  Chunking chunking_;
  // A streamed body (ParseLimits::streamed_body): decoded bytes not yet taken, what is left of
  // a Content-Length, bytes decoded and raw bytes given back to the caller.
  bool streaming_ = false;
  std::string piece_;
  std::uint64_t body_left_ = 0;
  std::size_t decoded_ = 0;
  std::size_t raw_dropped_ = 0;
};

ParseResult parse_request(std::string_view input, const ParseLimits& limits,
                          http::Request& request) {
  return RequestParser(limits, false).resume(input, request);
}

RequestReader::RequestReader(const ParseLimits& limits)
    : parser_(std::make_unique<RequestParser>(limits, true)) {}
RequestReader::~RequestReader() = default;
RequestReader::RequestReader(RequestReader&&) noexcept = default;
RequestReader& RequestReader::operator=(RequestReader&&) noexcept = default;

ParseResult RequestReader::read(std::string_view input, http::Request& request) {
  return parser_->resume(input, request);
}

void RequestReader::reset() {
  const std::size_t examined = parser_->examined();
  *parser_ = RequestParser(parser_->limits(), true);
  examined_before_ += examined;
}

void RequestReader::take_body(std::string& out) { parser_->take_body(out); }

std::size_t RequestReader::release_input() { return parser_->release_input(); }

std::size_t RequestReader::examined() const { return examined_before_ + parser_->examined(); }

std::string percent_decode(std::string_view s) {
  std::string out;
  percent_decode_into(s, out);
  return out;
}

}  // namespace leadflow::http
