#include <nlohmann/json.hpp>

#include "leadflow/outcomes/outcomes.hpp"

namespace leadflow {

std::string encode_outcome(const OutcomeMessage& m) {
  return nlohmann::json{{"lead_id", m.lead_id},
                        {"status", to_string(m.status)},
                        {"buyer_id", m.buyer_id},
                        {"price", m.price},
                        {"payout", m.payout}}
      .dump();
}

std::optional<OutcomeMessage> decode_outcome(std::string_view payload) {
  const auto j = nlohmann::json::parse(payload, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  try {
    OutcomeMessage m;
    m.lead_id = j.at("lead_id").get<std::string>();
    const auto status = parse_delivery_status(j.at("status").get<std::string>());
    if (!status) return std::nullopt;
    m.status = *status;
    m.buyer_id = j.value("buyer_id", "");
    m.price = j.value("price", Cents{0});
    m.payout = j.value("payout", Cents{0});
    return m;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

OutcomeWaiters::Ticket::~Ticket() { owner_->forget(lead_id_); }

std::optional<OutcomeMessage> OutcomeWaiters::Ticket::wait_until(SteadyTime deadline) {
  std::unique_lock lock(slot_->mu);
  slot_->cv.wait_until(lock, deadline, [&] { return slot_->outcome.has_value(); });
  return slot_->outcome;
}

std::unique_ptr<OutcomeWaiters::Ticket> OutcomeWaiters::expect(const std::string& lead_id) {
  auto slot = std::make_shared<Slot>();
  {
    std::lock_guard lock(mu_);
    slots_[lead_id] = slot;
  }
  return std::make_unique<Ticket>(*this, lead_id, std::move(slot));
}

bool OutcomeWaiters::deliver(const OutcomeMessage& m) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(mu_);
    auto it = slots_.find(m.lead_id);
    if (it == slots_.end()) return false;
    slot = it->second;
  }
  {
    std::lock_guard lock(slot->mu);
    slot->outcome = m;
  }
  slot->cv.notify_all();
  return true;
}

std::size_t OutcomeWaiters::waiting() const {
  std::lock_guard lock(mu_);
  return slots_.size();
}

std::vector<std::string> OutcomeWaiters::waiting_for() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> ids;
  ids.reserve(slots_.size());
  for (const auto& [id, slot] : slots_) ids.push_back(id);
  return ids;
}

void OutcomeWaiters::forget(const std::string& lead_id) {
  std::lock_guard lock(mu_);
  slots_.erase(lead_id);
}

}  // namespace leadflow
