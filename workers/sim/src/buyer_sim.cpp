#include "leadflow/sim/buyer_sim.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "leadflow/base/text.hpp"
#include "leadflow/http/parser.hpp"
#include "leadflow/http/routes.hpp"
#include "leadflow/http/server.hpp"

namespace leadflow {

namespace {

using json = nlohmann::json;

// Fields that must never reach a buyer before it has won (SPEC §4.3: no name, e-mail, phone,
// street, IP in a ping). A ping carrying one is counted, so a demo or a test can see the leak.
constexpr std::string_view kPiiFields[] = {
    "first_name", "last_name",      "name",       "email", "phone",         "address",
    "street",     "street_address", "ip_address", "ip",    "date_of_birth", "dob"};

bool is_pii_field(std::string_view key) {
  return std::find(std::begin(kPiiFields), std::end(kPiiFields), key) != std::end(kPiiFields);
}

bool carries_pii(const json& ping) {
  if (!ping.is_object()) return false;
  for (const auto& [key, value] : ping.items()) {
    if (is_pii_field(key)) return true;
  }
  const auto custom = ping.find("custom_fields");
  if (custom != ping.end() && custom->is_object()) {
    for (const auto& [key, value] : custom->items()) {
      if (is_pii_field(key)) return true;
    }
  }
  return false;
}

double round_to_cents(double dollars) { return std::round(dollars * 100.0) / 100.0; }

std::string error_body(std::string_view message) { return json{{"error", message}}.dump(); }

}  // namespace

json BuyerSimStats::to_json() const {
  return json{{"pings", pings},
              {"bids", bids},
              {"no_bids", no_bids},
              {"posts", posts},
              {"accepted", accepted},
              {"rejected", rejected},
              {"duplicate_posts", duplicate_posts},
              {"errors", errors},
              {"timeouts", timeouts},
              {"pii_pings", pii_pings},
              {"connections", connections}};
}

std::string RecordedRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (iequals(k, name)) return v;
  }
  return "";
}

BuyerSimulator::BuyerSimulator(BuyerSimOptions options)
    : options_(std::move(options)), rng_(options_.seed) {
  if (options_.bid.min < 0 || options_.bid.max < options_.bid.min) {
    throw std::invalid_argument("buyer sim: bid range must satisfy 0 <= min <= max");
  }
  if (options_.loops < 1) throw std::invalid_argument("buyer sim: loops must be >= 1");
}

BuyerSimulator::~BuyerSimulator() { stop(); }

void BuyerSimulator::start() {
  {
    std::lock_guard lock(stop_mutex_);
    if (started_) throw std::logic_error("buyer sim: start() called twice");
    started_ = true;
  }
  if (options_.tls_cert.empty() != options_.tls_key.empty()) {
    throw std::runtime_error("buyer sim: TLS needs both a certificate and a key");
  }

  // Pings and posts are answered on the event loop: deciding an answer takes a lock and a JSON
  // parse, never I/O. The two GET routes run on the server's one blocking thread.
  Routes routes;
  routes.post_inline("/ping", [this](const std::shared_ptr<Exchange>& ex) { handle_ping(*ex); });
  routes.post_inline("/post", [this](const std::shared_ptr<Exchange>& ex) { handle_post(*ex); });
  routes.get("/healthz", [this](const http::Request&, http::Response& res) {
    res.set_content(json{{"status", "ok"}, {"name", options_.name}}.dump(), "application/json");
  });
  routes.get("/stats", [this](const http::Request&, http::Response& res) {
    json body = stats().to_json();
    body["name"] = options_.name;
    res.set_content(body.dump(), "application/json");
  });
  routes.on_error = [](const http::Request&, http::Response& res, std::string_view refusal) {
    res.set_content(error_body(refusal.empty() ? http::reason_phrase(res.status) : refusal),
                    "application/json");
  };
  routes.on_exception = [](http::Response& res, const std::string&) {
    res.status = 500;
    res.set_content(error_body("internal error"), "application/json");
  };

  HttpServerOptions o;
  o.host = options_.host;
  o.port = options_.port;
  o.loops = options_.loops;
  o.blocking_threads = 1;
  o.tls_cert = options_.tls_cert;
  o.tls_key = options_.tls_key;
  o.limits.max_body_bytes = 1 << 20;
  o.idle_timeout = std::chrono::seconds(options_.keep_alive_timeout_s);
  o.name = "buyer-sim";
  server_ = std::make_unique<HttpServer>(std::move(routes), std::move(o));
  std::string error;
  if (!server_->start(error)) {
    server_.reset();
    throw std::runtime_error("buyer sim: " + error);
  }
  port_ = server_->port();
}

void BuyerSimulator::stop() {
  std::lock_guard lock(stop_mutex_);
  if (stopping_) return;
  stopping_ = true;
  if (server_) server_->stop();
}

int BuyerSimulator::port() const { return port_; }

std::string BuyerSimulator::base_url() const {
  const bool tls = !options_.tls_cert.empty();
  std::string host = options_.host;
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return (tls ? "https://" : "http://") + host + ":" + std::to_string(port_);
}

BuyerSimStats BuyerSimulator::stats() const {
  std::lock_guard lock(mutex_);
  BuyerSimStats s = stats_;
  s.connections = connections_.size();
  return s;
}

std::vector<RecordedRequest> BuyerSimulator::pings() const {
  std::lock_guard lock(mutex_);
  return {pings_.begin(), pings_.end()};
}

std::vector<RecordedRequest> BuyerSimulator::posts() const {
  std::lock_guard lock(mutex_);
  return {posts_.begin(), posts_.end()};
}

void BuyerSimulator::reset_records() {
  std::lock_guard lock(mutex_);
  stats_ = {};
  received_ = 0;
  pings_.clear();
  posts_.clear();
  connections_.clear();
  answered_posts_.clear();
}

bool BuyerSimulator::wait_for_requests(std::uint64_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return received_cv_.wait_for(lock, timeout, [&] { return received_ >= n; });
}

void BuyerSimulator::set_bid(double dollars) { set_bid_range(dollars, dollars); }

void BuyerSimulator::set_bid_range(double min, double max) {
  std::lock_guard lock(mutex_);
  options_.bid = BidModel::uniform(min, max);
}

void BuyerSimulator::set_shared_bid(double dollars) {
  std::lock_guard lock(mutex_);
  options_.shared_bid = dollars;
}

void BuyerSimulator::set_no_bid_rate(double rate) {
  std::lock_guard lock(mutex_);
  options_.no_bid_rate = rate;
}

void BuyerSimulator::set_reject_rate(double rate) {
  std::lock_guard lock(mutex_);
  options_.reject_rate = rate;
}

void BuyerSimulator::set_error_rate(double rate) {
  std::lock_guard lock(mutex_);
  options_.error_rate = rate;
}

void BuyerSimulator::set_latency(std::chrono::milliseconds base, std::chrono::milliseconds jitter) {
  std::lock_guard lock(mutex_);
  options_.latency_ms = static_cast<int>(base.count());
  options_.jitter_ms = static_cast<int>(jitter.count());
}

void BuyerSimulator::set_reject_next(int n, std::string reason) {
  std::lock_guard lock(mutex_);
  reject_next_ = n;
  reject_next_reason_ = std::move(reason);
}

void BuyerSimulator::set_fail_next(int n, int status) {
  std::lock_guard lock(mutex_);
  fail_next_ = n;
  fail_status_ = status;
}

void BuyerSimulator::set_hang_next(int n) {
  std::lock_guard lock(mutex_);
  hang_next_ = n;
}

void BuyerSimulator::stub(std::string path, int status, std::string body,
                          std::string content_type) {
  std::lock_guard lock(mutex_);
  stubs_[std::move(path)] = Stub{status, std::move(body), std::move(content_type)};
}

void BuyerSimulator::clear_stubs() {
  std::lock_guard lock(mutex_);
  stubs_.clear();
}

// A uniform double in [0, 1) from the top 53 bits: the same on every platform, unlike
// std::uniform_real_distribution whose algorithm is left to the library.
double BuyerSimulator::draw() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

std::chrono::milliseconds BuyerSimulator::draw_latency() {
  const double u = draw();  // always drawn, so the sequence does not depend on the settings
  const int jitter = std::max(0, options_.jitter_ms);
  const int extra = std::min(jitter, static_cast<int>(u * (jitter + 1)));
  return std::chrono::milliseconds(std::max(0, options_.latency_ms) + extra);
}

void BuyerSimulator::record(const http::Request& req, std::deque<RecordedRequest>& into) {
  RecordedRequest r;
  r.path = req.path();
  r.body = req.body();
  r.headers.reserve(req.header_fields());
  for (std::size_t i = 0; i < req.header_fields(); ++i) {
    const http::HeaderField field = req.header_at(i);
    r.headers.emplace_back(field.name, field.value);
  }
  into.push_back(std::move(r));
  while (into.size() > options_.record_limit) into.pop_front();
  if (connections_.size() < 1'000'000) {
    connections_.insert(req.remote_addr() + ":" + std::to_string(req.remote_port()));
  }
  ++received_;
  received_cv_.notify_all();
}

// The answer leaves `delay` after the request was read, written by the connection's event loop.
void BuyerSimulator::answer_after(Exchange& ex, const Answer& a, std::chrono::milliseconds delay) {
  ex.res.status = a.status;
  ex.res.set_content(a.body, a.content_type);
  ex.done_at(ex.started + delay);
}

void BuyerSimulator::handle_ping(Exchange& ex) {
  const http::Request& req = ex.req;
  json ping = json::parse(req.body(), nullptr, /*allow_exceptions=*/false);
  Answer answer;
  std::chrono::milliseconds delay{0};
  {
    std::lock_guard lock(mutex_);
    ++stats_.pings;
    record(req, pings_);
    if (carries_pii(ping)) ++stats_.pii_pings;
    // Every ping draws the same five numbers in the same order, whatever the settings.
    const double u_error = draw();
    const double u_hang = draw();
    const double u_no_bid = draw();
    const double u_bid = draw();
    delay = draw_latency();

    bool hang = false;
    if (hang_next_ > 0) {
      --hang_next_;
      hang = true;
    } else if (u_hang < options_.timeout_rate) {
      hang = true;
    }
    if (hang) {
      ++stats_.timeouts;
      delay = std::chrono::milliseconds(options_.hang_ms);
    }

    if (auto stub = stubs_.find("/ping"); stub != stubs_.end()) {
      answer = {stub->second.status, stub->second.body, stub->second.content_type};
    } else if (fail_next_ > 0) {
      --fail_next_;
      ++stats_.errors;
      answer = {fail_status_, error_body("injected failure")};
    } else if (!ping.is_object()) {
      ++stats_.errors;
      answer = {400, error_body("body is not a JSON object")};
    } else if (u_error < options_.error_rate) {
      ++stats_.errors;
      answer = {500, error_body("simulated buyer error")};
    } else {
      if (hang || u_no_bid < options_.no_bid_rate) {
        ++stats_.no_bids;
        answer = {200, json{{"bid", 0}}.dump()};
      } else {
        const double bid =
            round_to_cents(options_.bid.min + u_bid * (options_.bid.max - options_.bid.min));
        ++stats_.bids;
        json offer = {{"bid", bid}};
        if (options_.shared_bid > 0) offer["shared_bid"] = round_to_cents(options_.shared_bid);
        answer = {200, offer.dump()};
      }
    }
  }
  answer_after(ex, answer, delay);
}

void BuyerSimulator::handle_post(Exchange& ex) {
  const http::Request& req = ex.req;
  const std::string key(req.header("Idempotency-Key"));
  json post = json::parse(req.body(), nullptr, /*allow_exceptions=*/false);
  Answer answer;
  std::chrono::milliseconds delay{0};
  {
    // Decide and remember under one lock, so two concurrent posts with one key get one answer.
    std::lock_guard lock(mutex_);
    ++stats_.posts;
    record(req, posts_);
    const double u_error = draw();
    const double u_reject = draw();
    delay = draw_latency();

    if (hang_next_ > 0) {
      // The buyer takes the lead but answers too late: the retry with the same key must get the
      // same answer, which is what makes a timed-out post safe to repeat.
      --hang_next_;
      ++stats_.timeouts;
      delay = std::chrono::milliseconds(options_.hang_ms);
    }

    const auto seen = key.empty() ? answered_posts_.end() : answered_posts_.find(key);
    if (seen != answered_posts_.end()) {
      ++stats_.duplicate_posts;
      answer = seen->second;
    } else if (auto stub = stubs_.find("/post"); stub != stubs_.end()) {
      answer = {stub->second.status, stub->second.body, stub->second.content_type};
    } else if (fail_next_ > 0) {
      --fail_next_;
      ++stats_.errors;
      answer = {fail_status_, error_body("injected failure")};
    } else if (!post.is_object()) {
      ++stats_.errors;
      answer = {400, json{{"accepted", false}, {"reason", "body is not a JSON object"}}.dump()};
    } else if (u_error < options_.error_rate) {
      ++stats_.errors;
      answer = {500, error_body("simulated buyer error")};
    } else {
      // Only final answers are remembered: after a 5xx the seller may retry and be heard afresh.
      if (reject_next_ > 0) {
        --reject_next_;
        ++stats_.rejected;
        answer = {200, json{{"accepted", false}, {"reason", reject_next_reason_}}.dump()};
      } else if (u_reject < options_.reject_rate) {
        ++stats_.rejected;
        answer = {200, json{{"accepted", false}, {"reason", options_.reject_reason}}.dump()};
      } else {
        ++stats_.accepted;
        const std::string id = options_.name + "-" + std::to_string(next_buyer_lead_id_++);
        answer = {200, json{{"accepted", true}, {"buyer_lead_id", id}}.dump()};
      }
      if (!key.empty()) answered_posts_.emplace(key, answer);
    }
  }
  answer_after(ex, answer, delay);
}

}  // namespace leadflow
