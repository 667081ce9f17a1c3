// leadflow-worker: a distribution worker process for the scale-out shape (Kafka + PostgreSQL).
// The embedded default runs its workers inside leadflow-ingest, since one process owns the
// embedded queue's directory.
#include <cstdio>
#include <cstring>

#include "leadflow/config.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::puts("usage: leadflow-worker\nConfigured by LEADFLOW_* environment variables; see README.md.");
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
  if (config->queue_url == "embedded") {
    std::fprintf(stderr,
                 "leadflow-worker: LEADFLOW_QUEUE=embedded runs the workers inside leadflow-ingest "
                 "(LEADFLOW_WORKERS); a separate worker process needs LEADFLOW_QUEUE=kafka://...\n");
    return 2;
  }
  std::fprintf(stderr, "leadflow-worker: LEADFLOW_QUEUE: Kafka support is not in this build yet\n");
  return 2;
}
