#include "leadflow/base/audit.hpp"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <nlohmann/json.hpp>

#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"

namespace leadflow {
namespace {

struct AuditMetrics {
  prometheus::Family<prometheus::Counter>& events;
  prometheus::Counter& dropped;
};

AuditMetrics& audit_metrics() {
  static AuditMetrics m = [] {
    auto& r = *metrics_registry();
    return AuditMetrics{
        prometheus::BuildCounter()
            .Name("leadflow_audit_events_total")
            .Help("Audit events (failed authentications, rate-limit refusals, keys created and "
                  "revoked) by event, surface and kind")
            .Register(r),
        prometheus::BuildCounter()
            .Name("leadflow_audit_lines_dropped_total")
            .Help("Audit records counted but not written: more sources than the per-second "
                  "bound of audit lines")
            .Register(r)
            .Add({})};
  }();
  return m;
}

bool folds(AuditEvent e) { return e == AuditEvent::kAuthFailed || e == AuditEvent::kRateLimited; }

}  // namespace

std::string_view to_string(AuditEvent event) {
  switch (event) {
    case AuditEvent::kAuthFailed:
      return "auth_failed";
    case AuditEvent::kRateLimited:
      return "rate_limited";
    case AuditEvent::kKeyCreated:
      return "key_created";
    case AuditEvent::kKeyRevoked:
      return "key_revoked";
    case AuditEvent::kLeadReturned:
      return "lead_returned";
    case AuditEvent::kLeadSettled:
      return "lead_settled";
    case AuditEvent::kSignedIn:
      return "signed_in";
    case AuditEvent::kSignedOut:
      return "signed_out";
    case AuditEvent::kPasswordChanged:
      return "password_changed";
    case AuditEvent::kTwoFactorEnabled:
      return "two_factor_enabled";
    case AuditEvent::kTwoFactorDisabled:
      return "two_factor_disabled";
    case AuditEvent::kTimeZoneChanged:
      return "time_zone_changed";
    case AuditEvent::kPeriodClosed:
      return "period_closed";
  }
  return "unknown";
}

void AuditLog::record(const AuditRecord& r) {
  auto& metrics = audit_metrics();
  metrics.events
      .Add({{"event", std::string(to_string(r.event))},
            {"surface", std::string(r.surface)},
            {"kind", std::string(r.kind)}})
      .Increment();

  std::int64_t repeats = 0;
  if (folds(r.event)) {
    // One source: the key or campaign when known, else the address; per route.
    std::string source(to_string(r.event));
    source.append(1, ' ').append(r.route).append(1, ' ');
    if (!r.key_id.empty())
      source.append(r.key_id);
    else if (!r.campaign_id.empty())
      source.append(r.campaign_id);
    else
      source.append(r.client);
    const SteadyTime now = clock_.steady_now();
    bool warn = false;
    {
      std::lock_guard lock(mu_);
      if (now - second_started_ >= std::chrono::seconds(1)) {
        second_started_ = now;
        lines_this_second_ = 0;
        warned_this_second_ = false;
        // Sources quiet for a second have nothing left to fold: forget them, so the map holds
        // at most about two seconds' worth of sources.
        if (sources_.size() > kMaxLinesPerSecond)
          std::erase_if(sources_, [&](const auto& s) {
            return now - s.second.last_line >= std::chrono::seconds(1);
          });
      }
      auto it = sources_.find(source);
      if (it != sources_.end() && now - it->second.last_line < std::chrono::seconds(1)) {
        ++it->second.repeats;
        return;
      }
      if (lines_this_second_ >= kMaxLinesPerSecond) {
        metrics.dropped.Increment();
        warn = !warned_this_second_;
        warned_this_second_ = true;
        if (!warn) return;
      } else {
        ++lines_this_second_;
        Source& s = sources_[source];
        repeats = s.repeats;
        s = Source{now, 0};
      }
    }
    if (warn) {
      log(LogLevel::kWarn, "audit_lines_dropped",
          {{"limit_per_second", kMaxLinesPerSecond},
           {"counter", "leadflow_audit_lines_dropped_total"}});
      return;
    }
  }

  nlohmann::json fields = nlohmann::json::object();
  auto put = [&](const char* name, std::string_view value) {
    if (!value.empty()) fields[name] = value;
  };
  put("surface", r.surface);
  put("kind", r.kind);
  put("route", r.route);
  put("client", r.client);
  put("key_id", r.key_id);
  put("campaign_id", r.campaign_id);
  put("seller_id", r.seller_id);
  put("buyer_id", r.buyer_id);
  put("lead_id", r.lead_id);
  put("actor_key_id", r.actor_key_id);
  put("credential_last4", r.credential_last4);
  put("user_id", r.user_id);
  if (repeats > 0) fields["repeats"] = repeats;
  log_record(std::string("audit.").append(to_string(r.event)), fields);
}

AuditLog& audit_log() {
  static AuditLog log(SystemClock::instance());
  return log;
}

std::string credential_last4(std::string_view presented) {
  if (presented.size() < 24) return "";
  for (unsigned char c : presented)
    if (c <= 0x20 || c >= 0x7F) return "";
  return std::string(presented.substr(presented.size() - 4));
}

}  // namespace leadflow
