// leadflow-worker: a distribution worker process for the scale-out shape (Kafka + PostgreSQL).
// The embedded default runs its workers inside leadflow-ingest, since one process owns the
// embedded queue's directory.
#include <cstdio>
#include <cstring>

#include "leadflow/base/config.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/open_files.hpp"
#include "leadflow/base/stop_signals.hpp"
#include "leadflow/worker_app/worker_process.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::puts(
          "usage: leadflow-worker\nConfigured by LEADFLOW_* environment variables; see "
          "docs/configuration.md.");
      return 0;
    }
    std::fprintf(stderr, "leadflow-worker: unknown argument %s\n", argv[i]);
    return 2;
  }
  std::string error;
  auto config = leadflow::load_config_from_environment(error);
  if (!config) {
    std::fprintf(stderr, "leadflow-worker: %s\n", error.c_str());
    return 2;
  }
  const leadflow::StopSignals signals;  // before any thread starts
  const unsigned long open_files = leadflow::raise_open_file_limit();
  if (open_files < 16384) {
    leadflow::log(leadflow::LogLevel::kWarn, "open_file_limit_low",
                  {{"limit", static_cast<std::int64_t>(open_files)},
                   {"hint", "connections past it are refused; raise the hard limit (ulimit -Hn)"}});
  }

  leadflow::WorkerProcess worker(*config);
  if (!worker.start(error)) {
    leadflow::log(leadflow::LogLevel::kError, "start_failed", {{"error", error}});
    std::fprintf(stderr, "leadflow-worker: %s\n", error.c_str());
    return 1;
  }
  std::printf("{\"event\":\"worker_ready\",\"metrics_port\":%d}\n", worker.metrics_port());
  std::fflush(stdout);
  leadflow::log(leadflow::LogLevel::kInfo, "stopping", {{"signal", signals.wait()}});
  worker.stop();
  return 0;
}
