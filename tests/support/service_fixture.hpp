#pragma once
// A whole leadflow service in the test process: real SQLite file, real durable queue, real HTTPS
// on loopback (verified against the service's own generated certificate), buyer simulators.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "leadflow/base/config.hpp"
#include "leadflow/ingest_app/ingest_app.hpp"
#include "leadflow/sim/buyer_sim.hpp"

namespace leadflow::testing {

/// A fresh directory under /tmp, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct ServiceOptions {
  int workers = 1;
  int wait_ms = 3000;
  bool plain_http = false;
  std::vector<std::string> trusted_proxies;
  int auction_timeout_ms = 10000;
  bool metrics_listen = false;      // also the plain-HTTP listener of /metrics, /healthz, /readyz
  int auth_failure_limit = 0;       // failed authentications a minute per address; 0: the default
  const Clock* clock = nullptr;     // the service's clock; nullptr: the system clock
  std::string verticals_json = "";  // LEADFLOW_VERTICALS' document, written to a file; "": none

  // Two services on one store stand for two replicas.
  std::string store_url = "";  // LEADFLOW_STORE; "": a SQLite file of the service's own
  std::optional<bool> shared_limits =
      std::nullopt;                   // LEADFLOW_SHARED_LIMITS; unset: follows the shape
  bool require_operator_2fa = false;  // LEADFLOW_REQUIRE_OPERATOR_2FA
  std::string totp_key = "";          // the TOTP sealing key (32 bytes); "": secrets kept plain
  int live_max_connections = 0;       // LEADFLOW_LIVE_MAX_CONNECTIONS; 0: the default
  std::string buyer_ca_file = "";     // LEADFLOW_BUYER_CA_FILE (postback receivers' too)
};

class ServiceFixture {
 public:
  explicit ServiceFixture(ServiceOptions options = {});
  ~ServiceFixture();

  App& app() { return *app_; }
  const std::string& operator_key() const { return operator_key_; }
  const std::string& data_dir() const { return dir_.path(); }

  /// An HTTPS client that verifies the service's certificate.
  std::unique_ptr<httplib::SSLClient> https() const;
  std::unique_ptr<httplib::Client> plain() const;

  httplib::Result post(const std::string& path, const nlohmann::json& body, const std::string& key,
                       httplib::Headers extra = {}) const;
  httplib::Result get(const std::string& path, const std::string& key) const;

  /// Creates a ping/post buyer for `vertical` pointing at the simulator; returns its buyer_id.
  std::string add_buyer(const BuyerSimulator& sim, const std::string& vertical = "auto_insurance",
                        nlohmann::json overrides = nlohmann::json::object());
  std::string add_seller(const std::string& name = "Acme Leads");
  /// Creates a campaign and returns {campaign_id, campaign_key}.
  std::pair<std::string, std::string> add_campaign(
      const std::string& seller_id, nlohmann::json overrides = nlohmann::json::object());
  /// Creates an API key and returns its secret.
  std::string add_api_key(nlohmann::json body);

 private:
  TempDir dir_;
  std::string operator_key_;
  std::unique_ptr<App> app_;
};

/// A valid Surface A lead body; `salt` makes e-mail and phone unique so intake dedupe leaves it be.
nlohmann::json sample_lead(int salt, const std::string& vertical = "auto_insurance");
/// The same person as a Surface B body with the given campaign key.
nlohmann::json sample_campaign_lead(int salt, const std::string& campaign_key);

/// A simulator started on an ephemeral loopback port.
std::unique_ptr<BuyerSimulator> start_buyer(const std::string& name, double bid,
                                            int latency_ms = 0);

}  // namespace leadflow::testing
