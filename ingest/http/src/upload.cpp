// The event loop's side of a streamed upload (Routes::put_streamed): its handler runs once the
// header section is in, and the body reaches it piece by piece through an UploadStream as the
// connection reads it, never held whole.
#include <openssl/ssl.h>

#include <algorithm>

#include "event_loop.hpp"

namespace leadflow::http {

// A streamed upload's header section is in (Routes::put_streamed): its handler runs now, on the
// blocking pool, and takes the body as it arrives (feed_upload), so the body is never held
// whole; `r` is the first read, which may have decoded some of it already.
// false: the connection was closed (and is gone).
bool EventLoop::start_upload(Conn& c, const ParseResult& r) {
  const auto& o = server_.options;
  c.head_read = true;
  const auto rate = std::max<std::size_t>(1, o.body_min_rate);
  c.deadline =
      SteadyClock::now() + o.body_timeout + std::chrono::milliseconds(r.body_bound * 1000 / rate);
  // No body is held here, so none counts in max_upload_bytes; what bounds these uploads is how
  // many run at once: each holds a blocking thread while its body arrives, and what its handler
  // makes of the body (a suppression list's fingerprints).
  const std::size_t streams = server_.upload_streams.fetch_add(1, std::memory_order_relaxed);
  c.upload_streams = &server_.upload_streams;
  if (streams >= o.max_upload_streams) {
    c.in.clear();
    done_reading(c);
    answer_error(c, 503, "Too many large uploads at once; retry later.");
    return true;
  }
  Reading& rd = *c.reading;
  c.upload = std::make_shared<UploadStream>(kUploadPending);
  c.upload->attach([this, id = c.id] { stream_ready(id); });
  http::Request head = rd.request;  // a copy: the reader goes on with the body
  head.upload_ = c.upload;
  if (head.expect_continue() && head.version_minor() == 1)
    c.out.append("HTTP/1.1 100 Continue\r\n\r\n");
  dispatch_request(c, std::move(head));
  if (pass_upload(c, r) && !feed_upload(c)) return false;
  return c.out_off >= c.out.size() || flush_out(c);  // the 100 Continue
}

// Hands what the reader decoded of a streamed body to its handler and drops the bytes it is done
// with. false: the body is over (whole, or failed: then the connection closes after the answer).
bool EventLoop::pass_upload(Conn& c, const ParseResult& r) {
  Reading& rd = *c.reading;
  std::string piece;
  rd.reader.take_body(piece);
  c.upload->push(piece);
  if (r.status == ParseStatus::kIncomplete) {
    c.in.erase(0, rd.reader.release_input());
    return true;
  }
  if (r.status == ParseStatus::kComplete) {
    c.upload->finish();
    c.upload->detach();  // no more wake-ups: its handler reads what waits, then the end
    c.in.erase(0, r.consumed);
    c.upload.reset();
    done_reading(c);
  } else {
    c.upload->fail(r.error_status, r.error_detail);
    end_upload_early(c);
  }
  return false;
}

// Reads what arrived of a streamed body into its stream while the handler keeps up; the
// connection reads no more from its socket while the stream is full. false: the connection was
// closed (and is gone).
bool EventLoop::feed_upload(Conn& c) {
  c.last_active = SteadyClock::now();  // a wait on the handler is no stall of the client's
  while (c.upload && !c.upload->full()) {
    if (!c.in.empty()) {
      const ParseResult r = c.reading->reader.read(c.in, c.reading->request);
      if (!pass_upload(c, r)) break;
      if (c.upload->full()) break;
    }
    // Bytes OpenSSL decrypted but read_in left for later raise no epoll event.
    if (c.ssl && !c.read_closed && c.in.size() < cap_of(c) && SSL_pending(c.ssl) > 0) {
      read_in(c);
      continue;
    }
    break;
  }
  if (c.upload && c.read_closed && !c.upload->full()) {
    // The client went away before its body was whole: its handler finds it failed, and no
    // answer is written.
    close_conn(c);
    return false;
  }
  update_interest(c);
  return true;
}

// The body being streamed is over before it was whole (it failed, or the handler answered
// without it): nothing more of it is read, and the connection closes after the answer.
void EventLoop::end_upload_early(Conn& c) {
  c.upload->detach();
  c.upload.reset();
  c.in.clear();
  done_reading(c);
  c.close_after_write = true;
  c.keep_alive = false;
  update_interest(c);
}

}  // namespace leadflow::http
