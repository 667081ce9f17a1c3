#include "fake_http_client.hpp"

#include <strings.h>

#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

namespace leadflow::testing {

using namespace std::chrono_literals;
namespace {

FakeAnswer json_answer(nlohmann::json body, std::chrono::milliseconds delay) {
  FakeAnswer a;
  a.body = body.dump();
  a.delay = delay;
  return a;
}

}  // namespace

FakeAnswer FakeAnswer::bid(double dollars, std::chrono::milliseconds delay) {
  return json_answer({{"bid", dollars}}, delay);
}

FakeAnswer FakeAnswer::bids(double exclusive, double shared, std::chrono::milliseconds delay) {
  nlohmann::json offer = nlohmann::json::object();
  if (exclusive > 0) offer["bid"] = exclusive;
  if (shared > 0) offer["shared_bid"] = shared;
  return json_answer(offer, delay);
}

FakeAnswer FakeAnswer::no_bid(std::chrono::milliseconds delay) {
  return json_answer({{"bid", 0}}, delay);
}

FakeAnswer FakeAnswer::accept(std::string reference, std::chrono::milliseconds delay) {
  return json_answer({{"accepted", true}, {"buyer_lead_id", std::move(reference)}}, delay);
}

FakeAnswer FakeAnswer::reject(std::string reason, std::chrono::milliseconds delay) {
  return json_answer({{"accepted", false}, {"reason", std::move(reason)}}, delay);
}

FakeAnswer FakeAnswer::http_error(int status, std::chrono::milliseconds delay) {
  FakeAnswer a = json_answer(nlohmann::json::object(), delay);
  a.status = status;
  return a;
}

FakeAnswer FakeAnswer::transport_error(std::string error, std::chrono::milliseconds delay) {
  FakeAnswer a;
  a.kind = Kind::kTransportError;
  a.status = 0;
  a.error = std::move(error);
  a.delay = delay;
  return a;
}

FakeAnswer FakeAnswer::refused(std::chrono::milliseconds delay) {
  FakeAnswer a;
  a.kind = Kind::kRefused;
  a.status = 0;
  a.error = "Failed to connect: Connection refused";
  a.delay = delay;
  return a;
}

FakeAnswer FakeAnswer::no_answer() {
  FakeAnswer a;
  a.kind = Kind::kNoAnswer;
  a.status = 0;
  return a;
}

FakeAnswer FakeAnswer::not_sent(std::chrono::milliseconds delay) {
  FakeAnswer a;
  a.kind = Kind::kNotSent;
  a.status = 0;
  a.error = "not sent: no connection to the buyer came free";
  a.delay = delay;
  return a;
}

std::string FakeHttpClient::Sent::header(const std::string& name) const {
  for (const auto& [k, v] : request.headers)
    if (strcasecmp(k.c_str(), name.c_str()) == 0) return v;
  return "";
}

void FakeHttpClient::answer(const std::string& url, FakeAnswer answer) {
  std::lock_guard lock(mu_);
  scripts_[url].standing = std::move(answer);
}

void FakeHttpClient::answer_next(const std::string& url, FakeAnswer answer) {
  std::lock_guard lock(mu_);
  scripts_[url].next.push_back(std::move(answer));
}

void FakeHttpClient::send(HttpRequest request, std::function<void(HttpResponse)> done) {
  FakeAnswer a = FakeAnswer::refused();
  {
    std::lock_guard lock(mu_);
    auto it = scripts_.find(request.url);
    if (it != scripts_.end()) {
      Script& s = it->second;
      if (!s.next.empty()) {
        a = std::move(s.next.front());
        s.next.pop_front();
      } else if (s.standing) {
        a = *s.standing;
      }
    }
    sent_.push_back({request, clock_.elapsed()});
  }
  // The wait in the client's own queue for a connection, where no timeout runs: a kNotSent
  // answer's whole delay, else `queued`. Past the request's queue limit it is never sent.
  const auto limit = request.max_queue_wait.count() > 0 ? request.max_queue_wait : 30'000ms;
  std::chrono::milliseconds wait = a.kind == FakeAnswer::Kind::kNotSent ? a.delay : a.queued;
  if (wait >= limit) {
    a = FakeAnswer::not_sent();
    wait = limit;
  }
  HttpResponse r;
  std::chrono::milliseconds after = a.delay;  // from when it is sent
  if (a.kind == FakeAnswer::Kind::kNotSent) {
    after = 0ms;
    r.error = a.error;
    r.not_sent = r.not_delivered = true;
  } else if (a.kind == FakeAnswer::Kind::kNoAnswer || a.delay >= request.timeout) {
    after = request.timeout;
    r.timed_out = true;
    r.stalled_here = a.stalled;
    r.error = "timeout";
  } else if (a.kind == FakeAnswer::Kind::kTransportError) {
    r.error = a.error;
  } else if (a.kind == FakeAnswer::Kind::kRefused) {
    r.error = a.error;
    r.not_delivered = true;
  } else {
    r.status = a.status;
    r.body = a.body;
  }
  if (!r.not_sent) r.elapsed = after;
  const SteadyTime now = clock_.steady_now();
  if (wait > 0ms) {
    {
      std::lock_guard lock(mu_);
      unsent_.insert(now);
    }
    clock_.schedule(now + wait, [this, now] {
      std::lock_guard lock(mu_);
      unsent_.erase(unsent_.find(now));
    });
  }
  clock_.schedule(now + wait + after,
                  [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
}

std::chrono::nanoseconds FakeHttpClient::oldest_unsent() const {
  std::lock_guard lock(mu_);
  return unsent_.empty() ? std::chrono::nanoseconds{0} : clock_.steady_now() - *unsent_.begin();
}

std::vector<FakeHttpClient::Sent> FakeHttpClient::requests() const {
  std::lock_guard lock(mu_);
  return sent_;
}

std::vector<FakeHttpClient::Sent> FakeHttpClient::requests_to(const std::string& url) const {
  std::lock_guard lock(mu_);
  std::vector<Sent> out;
  for (const auto& s : sent_)
    if (s.request.url == url) out.push_back(s);
  return out;
}

std::size_t FakeHttpClient::count(const std::string& url) const { return requests_to(url).size(); }

}  // namespace leadflow::testing
