#include "postback_receiver.hpp"

#include <stdexcept>

#include "leadflow/http/tls_cert.hpp"
#include "leadflow/postbacks/signature.hpp"

namespace leadflow::testing {

PostbackReceiver::PostbackReceiver(const std::string& dir, std::chrono::milliseconds idle_timeout)
    : cert_(dir + "/receiver-cert.pem"), key_(dir + "/receiver-key.pem") {
  if (const std::string why = ensure_self_signed(cert_, key_); !why.empty())
    throw std::runtime_error("receiver certificate: " + why);
  Routes routes;
  routes.post_inline("/{endpoint}", [this](const std::shared_ptr<Exchange>& x) {
    Received r;
    r.path = std::string(x->req.path());
    r.event_id = std::string(x->req.header("Leadflow-Event-Id"));
    r.signature = std::string(x->req.header("Leadflow-Signature"));
    const std::string body(x->req.body());
    r.body = nlohmann::json::parse(body, nullptr, false);
    r.raw_body = body;
    Endpoint e;
    {
      std::lock_guard lock(mu_);
      if (auto it = endpoints_.find(r.path); it != endpoints_.end()) e = it->second;
    }
    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    r.signature_ok = postbacks::verify(x->req.header("Leadflow-Signature"), e.secret, body, now_s);
    if (e.mode == Mode::kHang) {
      // Answered only when the server stops: long after any sender's timeout.
      x->res.status = 503;
      x->done_at(std::chrono::steady_clock::now() + std::chrono::hours(1));
    } else {
      const bool ok = e.mode == Mode::kOk || e.mode == Mode::kSlow;
      r.answered = !r.signature_ok ? 401 : ok ? 200 : e.fail_status;
      x->res.status = r.answered;
      x->res.body = "{}";
      if (e.mode == Mode::kSlow)
        x->done_at(std::chrono::steady_clock::now() + e.slow);
      else
        x->done();
    }
    std::lock_guard lock(mu_);
    received_.push_back(std::move(r));
    cv_.notify_all();
  });
  HttpServerOptions o;
  o.loops = 1;
  o.blocking_threads = 1;
  o.tls_cert = cert_;
  o.tls_key = key_;
  o.name = "postback-receiver";
  o.idle_timeout = idle_timeout;
  server_ = std::make_unique<HttpServer>(std::move(routes), o);
  std::string error;
  if (!server_->start(error)) throw std::runtime_error("receiver: " + error);
}

PostbackReceiver::~PostbackReceiver() { server_->stop(); }

void PostbackReceiver::set(const std::string& path, const std::string& secret, Mode mode,
                           int fail_status, std::chrono::milliseconds slow) {
  std::lock_guard lock(mu_);
  endpoints_[path] = {secret, mode, fail_status, slow};
}

std::string PostbackReceiver::url(const std::string& path) const {
  return "https://127.0.0.1:" + std::to_string(server_->port()) + path;
}

std::vector<PostbackReceiver::Received> PostbackReceiver::received() const {
  std::lock_guard lock(mu_);
  return received_;
}

bool PostbackReceiver::wait_for(const std::function<bool(const std::vector<Received>&)>& done,
                                std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return done(received_); });
}

}  // namespace leadflow::testing
