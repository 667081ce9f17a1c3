#pragma once
// leadflow-ingest as a child process of the test, for tests that kill it for real (kill -9) and
// start it again on the same data directory.
#include <map>
#include <memory>
#include <string>

#include <httplib.h>

#include "child_process.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {

struct IngestProcess {
  std::unique_ptr<ChildProcess> process;
  int port = 0;  // its HTTPS listener, on loopback
};

/// Starts leadflow-ingest on `dir` (LEADFLOW_DATA_DIR), listening on a loopback port of its
/// choosing, with `env` added to its environment; waits (30 s at most) for the line that names
/// the port. Throws when it does not start.
IngestProcess start_ingest_process(const TempDir& dir, std::map<std::string, std::string> env);

/// An HTTPS client of the process on `port` that verifies the certificate it generated in `dir`.
std::unique_ptr<httplib::SSLClient> ingest_client(const TempDir& dir, int port);

}  // namespace leadflow::testing
