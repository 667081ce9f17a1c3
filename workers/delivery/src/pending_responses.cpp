#include "leadflow/delivery/pending_responses.hpp"

#include <utility>

namespace leadflow {

PendingResponses::PendingResponses(const Clock& clock)
    : clock_(clock), state_(std::make_shared<State>()) {}

std::size_t PendingResponses::send(HttpClient& http, HttpRequest request) {
  std::size_t index;
  {
    std::lock_guard lock(state_->mu);
    index = state_->answers.size();
    state_->answers.emplace_back();
  }
  http.send(std::move(request), [state = state_, index](HttpResponse r) {
    {
      std::lock_guard lock(state->mu);
      state->answers[index] = std::move(r);
    }
    state->cv.notify_all();
  });
  return index;
}

std::optional<HttpResponse> PendingResponses::wait(std::size_t index, SteadyTime deadline) {
  std::unique_lock lock(state_->mu);
  auto& answers = state_->answers;
  if (!clock_.wait_until(lock, state_->cv, deadline, [&] { return answers[index].has_value(); }))
    return std::nullopt;
  return answers[index];
}

HttpResponse send_and_wait(HttpClient& http, const Clock& clock, HttpRequest request) {
  PendingResponses pending(clock);
  const std::size_t index = pending.send(http, std::move(request));
  return *pending.wait(index);
}

}  // namespace leadflow
