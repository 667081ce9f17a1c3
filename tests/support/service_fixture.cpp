#include "service_fixture.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "leadflow/domain/accounts.hpp"

namespace leadflow::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "leadflow-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

ServiceFixture::ServiceFixture(ServiceOptions options) {
  operator_key_ = new_api_key_secret();
  Config c;
  c.data_dir = dir_.path();
  c.store_url =
      options.store_url.empty() ? "sqlite:" + dir_.path() + "/leadflow.db" : options.store_url;
  c.shared_limits = options.shared_limits;
  c.listen = {"127.0.0.1", 0};
  if (options.plain_http) c.http_listen = ListenAddress{"127.0.0.1", 0};
  if (options.metrics_listen) c.metrics_listen = ListenAddress{"127.0.0.1", 0};
  if (options.auth_failure_limit > 0) c.auth_failure_limit_per_minute = options.auth_failure_limit;
  c.bootstrap_key = operator_key_;
  c.allow_private_buyers = true;  // the buyer simulators live on loopback
  c.workers = options.workers;
  c.worker_concurrency = 16;
  c.http_threads = 32;
  c.wait_ms = options.wait_ms;
  c.trusted_proxies = options.trusted_proxies;
  c.auction_timeout_ms = options.auction_timeout_ms;
  c.log_level = "warn";
  c.require_operator_2fa = options.require_operator_2fa;
  c.totp_key = options.totp_key;
  c.buyer_ca_file = options.buyer_ca_file;
  if (options.live_max_connections > 0) c.live_max_connections = options.live_max_connections;
  if (!options.verticals_json.empty()) {
    c.verticals_file = dir_.path() + "/verticals.json";
    std::ofstream(c.verticals_file) << options.verticals_json;
  }
  app_ = std::make_unique<App>(c, options.clock ? *options.clock : SystemClock::instance());
  std::string error;
  if (!app_->start(error)) throw std::runtime_error("service did not start: " + error);
}

ServiceFixture::~ServiceFixture() { app_->stop(); }

std::unique_ptr<httplib::SSLClient> ServiceFixture::https() const {
  auto c = std::make_unique<httplib::SSLClient>("127.0.0.1", app_->tls_port());
  c->set_ca_cert_path((dir_.path() + "/tls/cert.pem").c_str());
  c->enable_server_certificate_verification(true);
  c->set_read_timeout(30, 0);
  c->set_connection_timeout(5, 0);
  return c;
}

std::unique_ptr<httplib::Client> ServiceFixture::plain() const {
  auto c = std::make_unique<httplib::Client>("127.0.0.1", app_->http_port());
  c->set_read_timeout(30, 0);
  return c;
}

httplib::Result ServiceFixture::post(const std::string& path, const nlohmann::json& body,
                                     const std::string& key, httplib::Headers extra) const {
  if (!key.empty()) extra.emplace("Authorization", "Bearer " + key);
  return https()->Post(path.c_str(), extra, body.dump(), "application/json");
}

httplib::Result ServiceFixture::get(const std::string& path, const std::string& key) const {
  httplib::Headers h;
  if (!key.empty()) h.emplace("Authorization", "Bearer " + key);
  return https()->Get(path.c_str(), h);
}

std::string ServiceFixture::add_buyer(const BuyerSimulator& sim, const std::string& vertical,
                                      nlohmann::json overrides) {
  nlohmann::json body = {{"name", sim.name()},
                         {"verticals", {vertical}},
                         {"delivery",
                          {{"mode", "ping_post"},
                           {"ping_url", sim.ping_url()},
                           {"post_url", sim.post_url()},
                           {"timeout_ms", 1000}}},
                         {"pricing", {{"model", "bid"}, {"min_bid", 1.0}}},
                         {"duplicate_lookback_days", 0}};
  body.merge_patch(overrides);
  auto res = post("/v1/buyers", body, operator_key_);
  if (!res || res->status != 201)
    throw std::runtime_error("buyer not created: " + (res ? res->body : std::string("no answer")));
  return nlohmann::json::parse(res->body)["data"]["buyer_id"];
}

std::string ServiceFixture::add_seller(const std::string& name) {
  auto res = post("/v1/sellers", {{"name", name}}, operator_key_);
  if (!res || res->status != 201) throw std::runtime_error("seller not created");
  return nlohmann::json::parse(res->body)["data"]["seller_id"];
}

std::pair<std::string, std::string> ServiceFixture::add_campaign(const std::string& seller_id,
                                                                 nlohmann::json overrides) {
  nlohmann::json body = {{"seller_id", seller_id},
                         {"name", "Spring promo"},
                         {"vertical", "auto_insurance"},
                         {"payout", {{"model", "revshare"}, {"value", 70}}}};
  body.merge_patch(overrides);
  auto res = post("/v1/campaigns", body, operator_key_);
  if (!res || res->status != 201)
    throw std::runtime_error("campaign not created: " +
                             (res ? res->body : std::string("no answer")));
  auto j = nlohmann::json::parse(res->body)["data"];
  return {j["campaign_id"], j["campaign_key"]};
}

std::string ServiceFixture::add_api_key(nlohmann::json body) {
  auto res = post("/v1/api-keys", body, operator_key_);
  if (!res || res->status != 201)
    throw std::runtime_error("key not created: " + (res ? res->body : std::string("no answer")));
  return nlohmann::json::parse(res->body)["data"]["key"];
}

namespace {
std::string phone_for(int salt) {
  // 202-555-01XX style numbers cycle through valid exchanges: NXX with N in 2..9.
  char buf[16];
  std::snprintf(buf, sizeof buf, "202%03d%04d", 200 + (salt / 10000) % 700, salt % 10000);
  return buf;
}
}  // namespace

nlohmann::json sample_lead(int salt, const std::string& vertical) {
  return {{"first_name", "Ada"},
          {"last_name", "Lovelace"},
          {"email", "ada" + std::to_string(salt) + "@example.com"},
          {"phone", phone_for(salt)},
          {"zip_code", "90210"},
          {"vertical", vertical},
          {"source", "google"},
          {"landing_page", "lp-auto-1"},
          {"ip_address", "203.0.113.9"},
          {"user_agent", "Mozilla/5.0"},
          {"custom_fields", {{"vehicle_year", 2019}, {"credit_rating", "good"}}}};
}

nlohmann::json sample_campaign_lead(int salt, const std::string& campaign_key) {
  return {{"SELLER_CAMPAIGN_KEY", campaign_key},
          {"first_name", "Grace"},
          {"last_name", "Hopper"},
          {"email_address", "grace" + std::to_string(salt) + "@example.com"},
          {"phone_home", phone_for(salt + 5000)},
          {"zip_code", "10001"}};
}

std::unique_ptr<BuyerSimulator> start_buyer(const std::string& name, double bid, int latency_ms) {
  BuyerSimOptions o;
  o.name = name;
  o.bid = BidModel::fixed(bid);
  o.latency_ms = latency_ms;
  auto sim = std::make_unique<BuyerSimulator>(o);
  sim->start();
  return sim;
}

}  // namespace leadflow::testing
