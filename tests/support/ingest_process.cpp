#include "ingest_process.hpp"

#include <chrono>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace leadflow::testing {

IngestProcess start_ingest_process(const TempDir& dir, std::map<std::string, std::string> env) {
  env["LEADFLOW_DATA_DIR"] = dir.path();
  env["LEADFLOW_LISTEN"] = "127.0.0.1:0";
  IngestProcess s;
  s.process = std::make_unique<ChildProcess>(binary_path("leadflow-ingest"), env);
  const std::string line = s.process->read_line(std::chrono::seconds(30));
  if (line.empty()) throw std::runtime_error("the service did not start");
  s.port = nlohmann::json::parse(line)["port"];
  return s;
}

std::unique_ptr<httplib::SSLClient> ingest_client(const TempDir& dir, int port) {
  auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
  c->set_ca_cert_path((dir.path() + "/tls/cert.pem").c_str());
  c->enable_server_certificate_verification(true);
  c->set_connection_timeout(2, 0);
  c->set_read_timeout(10, 0);
  return c;
}

}  // namespace leadflow::testing
