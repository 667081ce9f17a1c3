// The audit log: one JSON line per event on stderr, whatever the log level, with a counter per
// event; repeats of one event from one source within a second are folded into the next line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/base/audit.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/metrics.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

std::vector<json> lines_of(const std::string& text) {
  std::vector<json> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    json j = json::parse(text.substr(start, end - start), nullptr, false);
    if (!j.is_discarded()) out.push_back(std::move(j));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

double counter(const std::string& series) {
  const std::string text = render_metrics();
  const auto at = text.find("\n" + series + " ");
  return at == std::string::npos ? 0 : std::stod(text.substr(at + series.size() + 2));
}

AuditRecord failed_from(const std::string& client) {
  AuditRecord r;
  r.event = AuditEvent::kAuthFailed;
  r.surface = "campaign";
  r.kind = "unknown_key";
  r.route = "/api/v1/lead";
  r.client = client;
  r.credential_last4 = "WXYZ";
  return r;
}

TEST(Audit, EachEventIsALineAndACounterWhateverTheLogLevel) {
  ManualClock clock;
  AuditLog audit(clock);
  set_log_level(LogLevel::kError);  // diagnostics turned down: audit lines still go out
  const std::string series =
      "leadflow_audit_events_total{event=\"auth_failed\",kind=\"unknown_key\","
      "surface=\"campaign\"}";
  const double before = counter(series);
  ::testing::internal::CaptureStderr();
  audit.record(failed_from("198.51.100.7"));
  AuditRecord made;
  made.event = AuditEvent::kKeyCreated;
  made.surface = "api";
  made.kind = "api_key";
  made.route = "/v1/api-keys";
  made.client = "198.51.100.7";
  made.key_id = "key_01KAP3ZJ6Q8X5E7R9T2W4Y6B8D";
  made.seller_id = "sl_01KAP3ZJ6Q8X5E7R9T2W4Y6B8D";
  made.actor_key_id = "key_01KAP3ZJ6Q8X5E7R9T2W4Y6B8E";
  audit.record(made);
  const auto lines = lines_of(::testing::internal::GetCapturedStderr());
  set_log_level(LogLevel::kInfo);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["event"], "audit.auth_failed");
  EXPECT_EQ(lines[0]["client"], "198.51.100.7");
  EXPECT_EQ(lines[0]["route"], "/api/v1/lead");
  EXPECT_EQ(lines[0]["surface"], "campaign");
  EXPECT_EQ(lines[0]["kind"], "unknown_key");
  EXPECT_EQ(lines[0]["credential_last4"], "WXYZ");
  EXPECT_FALSE(lines[0].contains("key_id"));  // no empty fields
  EXPECT_EQ(lines[1]["event"], "audit.key_created");
  EXPECT_EQ(lines[1]["key_id"], made.key_id);
  EXPECT_EQ(lines[1]["seller_id"], made.seller_id);
  EXPECT_EQ(lines[1]["actor_key_id"], made.actor_key_id);
  EXPECT_EQ(counter(series), before + 1);
}

TEST(Audit, RepeatsWithinASecondAreFoldedIntoTheNextLine) {
  ManualClock clock;
  AuditLog audit(clock);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 50; ++i) audit.record(failed_from("198.51.100.7"));
  audit.record(failed_from("198.51.100.8"));  // another address has its own line
  clock.advance(std::chrono::milliseconds(1001));
  audit.record(failed_from("198.51.100.7"));
  const auto lines = lines_of(::testing::internal::GetCapturedStderr());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["client"], "198.51.100.7");
  EXPECT_FALSE(lines[0].contains("repeats"));
  EXPECT_EQ(lines[1]["client"], "198.51.100.8");
  EXPECT_EQ(lines[2]["client"], "198.51.100.7");
  EXPECT_EQ(lines[2]["repeats"], 49);  // the ones not written since the last line
}

TEST(Audit, AFloodOfSourcesIsBoundedPerSecond) {
  ManualClock clock;
  AuditLog audit(clock);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 5000; ++i) audit.record(failed_from("2001:db8::" + std::to_string(i)));
  const auto lines = lines_of(::testing::internal::GetCapturedStderr());
  EXPECT_LE(lines.size(), AuditLog::kMaxLinesPerSecond + 1);
  EXPECT_GE(lines.size(), AuditLog::kMaxLinesPerSecond);
}

}  // namespace
}  // namespace leadflow
