#include "leadflow/base/process_metrics.hpp"

#include <gtest/gtest.h>

#include <ctime>
#include <string>

#include "leadflow/base/metrics.hpp"

namespace leadflow {
namespace {

// A real line of /proc/PID/stat, with a command name that holds spaces and parentheses.
constexpr const char* kStat =
    "4242 (leadflow (x) y) S 1 4242 4242 0 -1 4194560 51234 0 12 0 731 269 0 0 20 0 17 0 "
    "123456 987654321 4321 18446744073709551615 1 1 0 0 0 0 0 4096 17991 0 0 0 17 1 0 0 0 0 0";

TEST(ProcStat, ReadsTheFieldsCountedFromTheLastParenthesis) {
  const auto s = parse_proc_stat(kStat);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->utime_ticks, 731u);
  EXPECT_EQ(s->stime_ticks, 269u);
  EXPECT_EQ(s->threads, 17);
  EXPECT_EQ(s->start_ticks, 123456u);
  EXPECT_EQ(s->virtual_bytes, 987654321u);
  EXPECT_EQ(s->resident_pages, 4321);
}

TEST(ProcStat, RefusesWhatIsNotAStatLine) {
  EXPECT_FALSE(parse_proc_stat("").has_value());
  EXPECT_FALSE(parse_proc_stat("4242 leadflow S 1 2 3").has_value());
  EXPECT_FALSE(parse_proc_stat("4242 (leadflow) S 1 2 3").has_value());  // too few fields
  std::string bad = kStat;
  bad.replace(bad.find(" 731 "), 5, " 7x1 ");
  EXPECT_FALSE(parse_proc_stat(bad).has_value());
}

TEST(ProcStat, FindsTheBootTimeLine) {
  EXPECT_EQ(parse_boot_time("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n"), 1700000000);
  EXPECT_FALSE(parse_boot_time("cpu  1 2 3\nprocesses 9\n").has_value());
  EXPECT_FALSE(parse_boot_time("btime soon\n").has_value());
}

const prometheus::MetricFamily* find(const std::vector<prometheus::MetricFamily>& families,
                                     const std::string& name) {
  for (const auto& f : families)
    if (f.name == name) return &f;
  return nullptr;
}

TEST(ProcessMetrics, ThisProcessHasItsStandardMetricsAndBuildInfo) {
  std::vector<prometheus::MetricFamily> families;
  collect_process_metrics(families);
  for (const char* name :
       {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
        "process_max_fds", "process_threads", "process_start_time_seconds"}) {
    const auto* f = find(families, name);
    ASSERT_NE(f, nullptr) << name;
    ASSERT_EQ(f->metric.size(), 1u) << name;
  }
  EXPECT_EQ(find(families, "process_cpu_seconds_total")->type, prometheus::MetricType::Counter);
  EXPECT_GT(find(families, "process_resident_memory_bytes")->metric[0].gauge.value, 1e6);
  EXPECT_GE(find(families, "process_open_fds")->metric[0].gauge.value, 3);  // stdin, out, err
  EXPECT_GE(find(families, "process_threads")->metric[0].gauge.value, 1);
  // Started after 2020 and not in the future.
  const double start = find(families, "process_start_time_seconds")->metric[0].gauge.value;
  EXPECT_GT(start, 1.58e9);
  EXPECT_LE(start, static_cast<double>(std::time(nullptr)) + 1);
  const auto* info = find(families, "leadflow_build_info");
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->metric.size(), 1u);
  EXPECT_EQ(info->metric[0].gauge.value, 1);
  ASSERT_EQ(info->metric[0].label.size(), 2u);
  EXPECT_EQ(info->metric[0].label[0].name, "version");
  EXPECT_FALSE(info->metric[0].label[0].value.empty());
  EXPECT_EQ(info->metric[0].label[1].name, "commit");
}

TEST(ScrapeHook, ItsFamiliesAreScrapedWhileItLives) {
  auto hook = std::make_unique<ScrapeHook>([](auto& families) {
    families.push_back(gauge_family("leadflow_test_hook_value", "for the test",
                                    std::vector<GaugeSample>{{{{"k", "v"}}, 42}}));
  });
  const std::string text = render_metrics();
  EXPECT_NE(text.find("leadflow_test_hook_value{k=\"v\"} 42"), std::string::npos) << text;
  EXPECT_NE(text.find("process_open_fds"), std::string::npos);
  hook.reset();
  EXPECT_EQ(render_metrics().find("leadflow_test_hook_value"), std::string::npos);
}

}  // namespace
}  // namespace leadflow
