// leadflow-ingest: the HTTP front. In the embedded default it also runs the distribution workers
// (LEADFLOW_WORKERS, default 1), so one process is the whole service.
#include <signal.h>

#include <cstdio>
#include <cstring>

#include "leadflow/config.hpp"
#include "leadflow/ingest/app.hpp"
#include "leadflow/log.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::puts("usage: leadflow-ingest\nConfigured by LEADFLOW_* environment variables; see README.md.");
      return 0;
    }
    std::fprintf(stderr, "leadflow-ingest: unknown argument %s (configuration is by LEADFLOW_* variables)\n", argv[i]);
    return 2;
  }
  std::string error;
  auto config = leadflow::load_config_from_environment(error);
  if (!config) {
    std::fprintf(stderr, "leadflow-ingest: %s\n", error.c_str());
    return 2;
  }
  // Signals are taken by this thread alone, with sigwait: every other thread blocks them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  leadflow::App app(*config);
  if (!app.start(error)) {
    leadflow::log(leadflow::LogLevel::kError, "start_failed", {{"error", error}});
    std::fprintf(stderr, "leadflow-ingest: %s\n", error.c_str());
    return 1;
  }
  std::printf("{\"event\":\"listening\",\"port\":%d,\"http_port\":%d,\"metrics_port\":%d}\n",
              app.tls_port(), app.http_port(), app.metrics_port());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  leadflow::log(leadflow::LogLevel::kInfo, "stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
  app.stop();
  return 0;
}
