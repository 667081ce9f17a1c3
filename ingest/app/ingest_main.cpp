// leadflow-ingest: the HTTP front. In the embedded default it also runs the distribution workers
// (LEADFLOW_WORKERS, default 1), so one process is the whole service.
#include <cstdio>
#include <cstring>

#include "leadflow/base/config.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/open_files.hpp"
#include "leadflow/base/stop_signals.hpp"
#include "leadflow/ingest_app/ingest_app.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::puts(
          "usage: leadflow-ingest\nConfigured by LEADFLOW_* environment variables; see "
          "docs/configuration.md.");
      return 0;
    }
    std::fprintf(
        stderr, "leadflow-ingest: unknown argument %s (configuration is by LEADFLOW_* variables)\n",
        argv[i]);
    return 2;
  }
  std::string error;
  auto config = leadflow::load_config_from_environment(error);
  if (!config) {
    std::fprintf(stderr, "leadflow-ingest: %s\n", error.c_str());
    return 2;
  }
  const leadflow::StopSignals signals;  // before any thread starts
  const unsigned long open_files = leadflow::raise_open_file_limit();
  if (open_files < 16384) {
    leadflow::log(leadflow::LogLevel::kWarn, "open_file_limit_low",
                  {{"limit", static_cast<std::int64_t>(open_files)},
                   {"hint", "connections past it are refused; raise the hard limit (ulimit -Hn)"}});
  }

  leadflow::App app(*config);
  if (!app.start(error)) {
    leadflow::log(leadflow::LogLevel::kError, "start_failed", {{"error", error}});
    std::fprintf(stderr, "leadflow-ingest: %s\n", error.c_str());
    return 1;
  }
  std::printf("{\"event\":\"listening\",\"port\":%d,\"http_port\":%d,\"metrics_port\":%d}\n",
              app.tls_port(), app.http_port(), app.metrics_port());
  std::fflush(stdout);
  leadflow::log(leadflow::LogLevel::kInfo, "stopping", {{"signal", signals.wait()}});
  app.stop();
  return 0;
}
