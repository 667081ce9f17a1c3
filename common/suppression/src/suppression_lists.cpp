#include "leadflow/suppression/suppression_lists.hpp"

#include <prometheus/gauge.h>

#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"

namespace leadflow {

bool SuppressionLists::refresh() {
  std::lock_guard refreshing(refresh_mu_);
  const auto lists = store_.list_suppression_lists();
  if (!lists) return false;  // the lists held stay as they were
  const std::shared_ptr<const Snapshot> before = snapshot();
  auto next = std::make_shared<Snapshot>();
  bool whole = true;
  for (const SuppressionList& l : *lists) {
    HeldList held{l, nullptr};
    const auto was = before->by_id.find(l.id);
    if (was != before->by_id.end() && was->second.list.entries_version == l.entries_version) {
      held.set = was->second.set;
    } else if (auto entries = store_.suppression_entries(l.id, l.entries_version)) {
      held.set = std::make_shared<const SuppressionSet>(std::move(*entries));
    } else {
      // Not read now (the store failed, or the list changed again meanwhile): what was held of
      // it stays until the next refresh.
      whole = false;
      if (was == before->by_id.end()) continue;
      held = was->second;
    }
    next->by_owner[l.buyer_id].push_back(held.set);
    next->by_id.emplace(l.id, std::move(held));
  }
  next->known = before->known || whole;
  std::lock_guard lock(mu_);
  snapshot_ = std::move(next);
  return whole;
}

std::shared_ptr<const SuppressionLists::Snapshot> SuppressionLists::snapshot() const {
  std::lock_guard lock(mu_);
  return snapshot_;
}

bool SuppressionLists::known() const { return snapshot()->known; }

std::optional<bool> SuppressionLists::buyer_suppresses(std::string_view buyer_id,
                                                       const PersonFingerprints& person) const {
  const auto s = snapshot();
  if (!s->known) return std::nullopt;
  const auto it = s->by_owner.find(buyer_id);
  if (it == s->by_owner.end()) return false;
  for (const auto& set : it->second)
    if (set->suppresses(person)) return true;
  return false;
}

std::optional<bool> SuppressionLists::operator_suppresses(const PersonFingerprints& person) const {
  return buyer_suppresses("", person);
}

std::optional<std::string_view> SuppressionLists::operator_listed_field(
    std::string_view email, std::string_view phone) const {
  const auto s = snapshot();
  if (!s->known) return std::nullopt;
  const auto it = s->by_owner.find("");
  if (it == s->by_owner.end()) return std::string_view();
  const PersonFingerprints person = person_fingerprints(email, phone);
  for (const auto& set : it->second)
    if (person.email && set->contains(*person.email)) return std::string_view("email");
  for (const auto& set : it->second)
    if (person.phone && set->contains(*person.phone)) return std::string_view("phone");
  return std::string_view();
}

bool SuppressionLists::any_buyer_list() const {
  const auto s = snapshot();
  return !s->by_owner.empty() && (s->by_owner.size() > 1 || !s->by_owner.contains(""));
}

SuppressionLists::Held SuppressionLists::held() const {
  const auto s = snapshot();
  Held h;
  for (const auto& [id, l] : s->by_id) {
    ++h.lists;
    h.entries += l.set->size();
    h.bytes += l.set->memory_bytes();
  }
  return h;
}

namespace {

struct SuppressionGauges {
  prometheus::Gauge& lists;
  prometheus::Gauge& entries;
  prometheus::Gauge& bytes;
  prometheus::Gauge& known;
};

SuppressionGauges& gauges() {
  static SuppressionGauges g = [] {
    auto& r = *metrics_registry();
    const auto one = [&r](const char* name, const char* help) -> prometheus::Gauge& {
      return prometheus::BuildGauge().Name(name).Help(help).Register(r).Add({});
    };
    return SuppressionGauges{
        one("leadflow_suppression_lists", "Suppression lists this process holds"),
        one("leadflow_suppression_entries", "Entries of the suppression lists this process holds"),
        one("leadflow_suppression_memory_bytes",
            "Memory the suppression lists this process holds take"),
        one("leadflow_suppression_known",
            "1 once this process has read every suppression list whole, else 0 (leads wait)")};
  }();
  return g;
}

}  // namespace

SuppressionRefresh::SuppressionRefresh(SuppressionLists& lists, std::chrono::milliseconds every)
    : lists_(lists), every_(every) {
  read_once();
  thread_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, every_, [this] { return stopping_; })) {
      lock.unlock();
      read_once();
      lock.lock();
    }
  });
}

SuppressionRefresh::~SuppressionRefresh() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SuppressionRefresh::read_once() {
  const bool known_before = lists_.known();
  if (!lists_.refresh() && !known_before)
    log(LogLevel::kWarn, "suppression_lists_unknown",
        {{"detail", "the store could not give the suppression lists; leads wait for them"}});
  const SuppressionLists::Held h = lists_.held();
  SuppressionGauges& g = gauges();
  g.lists.Set(static_cast<double>(h.lists));
  g.entries.Set(static_cast<double>(h.entries));
  g.bytes.Set(static_cast<double>(h.bytes));
  g.known.Set(lists_.known() ? 1 : 0);
}

}  // namespace leadflow
