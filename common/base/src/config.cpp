#include "leadflow/base/config.hpp"

#include <arpa/inet.h>
#include <algorithm>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>

#include "leadflow/base/text.hpp"

extern char** environ;

namespace leadflow {
namespace {

const std::set<std::string, std::less<>>& known_settings() {
  static const std::set<std::string, std::less<>> names = {
      "LEADFLOW_STORE",
      "LEADFLOW_QUEUE",
      "LEADFLOW_SHAPE",
      "LEADFLOW_DATA_DIR",
      "LEADFLOW_LISTEN",
      "LEADFLOW_HTTP_LISTEN",
      "LEADFLOW_METRICS_LISTEN",
      "LEADFLOW_TLS_CERT",
      "LEADFLOW_TLS_KEY",
      "LEADFLOW_BOOTSTRAP_KEY",
      "LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL",
      "LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE",
      "LEADFLOW_ALLOW_PRIVATE_BUYERS",
      "LEADFLOW_REQUIRE_OPERATOR_2FA",
      "LEADFLOW_TOTP_KEY_FILE",
      "LEADFLOW_TRUSTED_PROXIES",
      "LEADFLOW_RETURN_REASONS",
      "LEADFLOW_VERTICALS",
      "LEADFLOW_HTTP_THREADS",
      "LEADFLOW_HTTP_LOOPS",
      "LEADFLOW_HEADER_TIMEOUT_MS",
      "LEADFLOW_BODY_TIMEOUT_MS",
      "LEADFLOW_BODY_MIN_RATE",
      "LEADFLOW_TLS_HANDSHAKE_TIMEOUT_MS",
      "LEADFLOW_MAX_CONNECTIONS",
      "LEADFLOW_MAX_CONNECTIONS_PER_ADDRESS",
      "LEADFLOW_WORKER_NICE",
      "LEADFLOW_LIVE_MAX_CONNECTIONS",
      "LEADFLOW_LIVE_POLL_MS",
      "LEADFLOW_RETENTION_DAYS",
      "LEADFLOW_WORKERS",
      "LEADFLOW_WORKER_CONCURRENCY",
      "LEADFLOW_REOFFER_CONCURRENCY",
      "LEADFLOW_BUYER_CONNECTIONS",
      "LEADFLOW_BUYER_HOST_CONNECTIONS",
      "LEADFLOW_BUYER_CA_FILE",
      "LEADFLOW_BUYER_HTTP2",
      "LEADFLOW_WAIT_MS",
      "LEADFLOW_MAX_WAIT_MS",
      "LEADFLOW_AUCTION_TIMEOUT_MS",
      "LEADFLOW_QUEUE_PARTITIONS",
      "LEADFLOW_MAX_BACKLOG",
      "LEADFLOW_IP_RATE_LIMIT",
      "LEADFLOW_AUTH_FAILURE_LIMIT",
      "LEADFLOW_SHARED_LIMITS",
      "LEADFLOW_LOG_LEVEL",
      "LEADFLOW_TOPIC_PREFIX",
      "LEADFLOW_KAFKA_REPLICATION",
      "LEADFLOW_KAFKA_MESSAGE_TIMEOUT_MS",
      "LEADFLOW_KAFKA_LINGER_MS",
      "LEADFLOW_KAFKA_FETCH_WAIT_MS",
      "LEADFLOW_KAFKA_MAX_BUFFERED",
      "LEADFLOW_KAFKA_RETENTION_MS",
      "LEADFLOW_KAFKA_DEAD_RETENTION_MS",
      "LEADFLOW_KAFKA_SEGMENT_MS",
      "LEADFLOW_KAFKA_PROPERTIES",
      "LEADFLOW_WORKER_GROUP",
      "LEADFLOW_BACKLOG_INTERVAL_MS",
      "LEADFLOW_POSTBACK_CONCURRENCY",
      "LEADFLOW_POSTBACK_TIMEOUT_MS",
      "LEADFLOW_POSTBACK_RETENTION_DAYS"};
  return names;
}

template <typename T>
bool parse_int(std::string_view text, T min, T max, T& out) {
  T value{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size() || value < min || value > max)
    return false;
  out = value;
  return true;
}

// The TOTP sealing key from the first line of `path`: 64 hex digits, as 32 raw bytes; nullopt
// when the file cannot be read or holds anything else.
std::optional<std::string> read_hex_key(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.size() != 64) return std::nullopt;
  std::string key;
  for (std::size_t i = 0; i < line.size(); i += 2) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(line.data() + i, line.data() + i + 2, value, 16);
    if (ec != std::errc{} || ptr != line.data() + i + 2) return std::nullopt;
    key.push_back(static_cast<char>(value));
  }
  return key;
}

bool valid_cidr(const std::string& cidr) {
  const auto slash = cidr.find('/');
  const std::string addr = cidr.substr(0, slash);
  unsigned char buf[16];
  const bool v4 = inet_pton(AF_INET, addr.c_str(), buf) == 1;
  const bool v6 = !v4 && inet_pton(AF_INET6, addr.c_str(), buf) == 1;
  if (!v4 && !v6) return false;
  if (slash == std::string::npos) return true;
  int bits = 0;
  return parse_int<int>(std::string_view(cidr).substr(slash + 1), 0, v4 ? 32 : 128, bits);
}

}  // namespace

std::optional<ListenAddress> parse_listen(const std::string& text) {
  // "host:port", "[v6]:port" or ":port" (all interfaces).
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  ListenAddress out;
  out.host = text.substr(0, colon);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']')
    out.host = out.host.substr(1, out.host.size() - 2);
  if (out.host.empty()) out.host = "0.0.0.0";
  if (!parse_int<int>(std::string_view(text).substr(colon + 1), 0, 65535, out.port))
    return std::nullopt;
  return out;
}

std::optional<Config> load_config(const Getenv& getenv,
                                  const std::vector<std::string>& environ_names,
                                  std::string& error) {
  for (const auto& name : environ_names) {
    if (name.rfind("LEADFLOW_", 0) == 0 && !known_settings().contains(name)) {
      error = name + ": unknown setting";
      return std::nullopt;
    }
  }
  Config c;
  auto get = [&](const char* name) -> std::optional<std::string> {
    const char* v = getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  auto fail = [&](const char* name, const std::string& why) {
    error = std::string(name) + ": " + why;
    return std::nullopt;
  };
  auto int_setting = [&](const char* name, auto min, auto max, auto& out) {
    auto v = get(name);
    if (!v) return true;
    if (!parse_int(std::string_view(*v), min, max, out)) {
      error = std::string(name) + ": expected an integer from " + std::to_string(min) + " to " +
              std::to_string(max) + ", got \"" + *v + "\"";
      return false;
    }
    return true;
  };

  if (auto v = get("LEADFLOW_DATA_DIR")) {
    if (v->empty()) return fail("LEADFLOW_DATA_DIR", "must not be empty");
    c.data_dir = *v;
  }
  c.store_url = "sqlite:" + c.data_dir + "/leadflow.db";
  if (auto v = get("LEADFLOW_STORE")) {
    const bool sqlite = v->rfind("sqlite:", 0) == 0 && v->size() > 7;
    const bool pg = v->rfind("postgresql://", 0) == 0 || v->rfind("postgres://", 0) == 0;
    if (!sqlite && !pg) return fail("LEADFLOW_STORE", "expected sqlite:PATH or postgresql://...");
    c.store_url = *v;
  }
  if (auto v = get("LEADFLOW_QUEUE")) {
    constexpr const char* kQueueForm = "expected embedded or kafka://host:port[,host:port]";
    if (*v != "embedded") {
      if (v->rfind("kafka://", 0) != 0) return fail("LEADFLOW_QUEUE", kQueueForm);
      std::string brokers = v->substr(8);
      while (!brokers.empty() && brokers.back() == '/') brokers.pop_back();
      std::size_t start = 0;
      do {
        const auto comma = brokers.find(',', start);
        const std::string item =
            brokers.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        const auto l = parse_listen(item);
        if (!l || l->port == 0 || item.front() == ':') return fail("LEADFLOW_QUEUE", kQueueForm);
        start = comma == std::string::npos ? std::string::npos : comma + 1;
      } while (start != std::string::npos);
      c.kafka_brokers = brokers;
    }
    c.queue_url = *v;
  }
  // The shape is a setting of its own; left unset, it follows the queue (Kafka means the
  // scale-out shape), which is decided here and nowhere else.
  c.shape = c.kafka_queue() ? Shape::kScaleOut : Shape::kEmbedded;
  if (auto v = get("LEADFLOW_SHAPE")) {
    if (*v == "embedded")
      c.shape = Shape::kEmbedded;
    else if (*v == "scale-out")
      c.shape = Shape::kScaleOut;
    else
      return fail("LEADFLOW_SHAPE", "expected embedded or scale-out");
  }
  if (c.shape == Shape::kScaleOut && !c.kafka_queue())
    return fail("LEADFLOW_SHAPE",
                "scale-out needs a shared queue: LEADFLOW_QUEUE=kafka://host:port");
  // Where the limits are counted: "auto" follows the shape (shared through the store in
  // scale-out, where several replicas take requests; this process's own in the embedded shape).
  if (auto v = get("LEADFLOW_SHARED_LIMITS"); v && !v->empty()) {
    if (*v == "on")
      c.shared_limits = true;
    else if (*v == "off")
      c.shared_limits = false;
    else if (*v != "auto")
      return fail("LEADFLOW_SHARED_LIMITS", "expected auto, on or off");
  }
  if (auto v = get("LEADFLOW_LISTEN")) {
    auto l = parse_listen(*v);
    if (!l) return fail("LEADFLOW_LISTEN", "expected host:port");
    c.listen = *l;
  }
  if (auto v = get("LEADFLOW_HTTP_LISTEN"); v && !v->empty()) {
    auto l = parse_listen(*v);
    if (!l) return fail("LEADFLOW_HTTP_LISTEN", "expected host:port");
    c.http_listen = *l;
  }
  if (auto v = get("LEADFLOW_METRICS_LISTEN"); v && !v->empty()) {
    auto l = parse_listen(*v);
    if (!l) return fail("LEADFLOW_METRICS_LISTEN", "expected host:port");
    c.metrics_listen = *l;
  }
  c.tls_cert = get("LEADFLOW_TLS_CERT").value_or("");
  c.tls_key = get("LEADFLOW_TLS_KEY").value_or("");
  if (c.tls_cert.empty() != c.tls_key.empty())
    return fail(c.tls_cert.empty() ? "LEADFLOW_TLS_CERT" : "LEADFLOW_TLS_KEY",
                "LEADFLOW_TLS_CERT and LEADFLOW_TLS_KEY are set together or not at all");
  if (auto v = get("LEADFLOW_BOOTSTRAP_KEY"); v && !v->empty()) {
    if (v->size() < 24) return fail("LEADFLOW_BOOTSTRAP_KEY", "must be at least 24 characters");
    for (char ch : *v)
      if (ch <= ' ' || ch > '~')
        return fail("LEADFLOW_BOOTSTRAP_KEY", "must be printable ASCII without spaces");
    c.bootstrap_key = *v;
  }
  c.bootstrap_operator_email = get("LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL").value_or("");
  c.bootstrap_operator_password_file =
      get("LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE").value_or("");
  if (c.bootstrap_operator_email.empty() != c.bootstrap_operator_password_file.empty())
    return fail(c.bootstrap_operator_email.empty() ? "LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL"
                                                   : "LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE",
                "LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL and LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE "
                "are set together or not at all");
  if (auto v = get("LEADFLOW_ALLOW_PRIVATE_BUYERS")) {
    if (*v == "1" || *v == "true")
      c.allow_private_buyers = true;
    else if (*v == "0" || *v == "false" || v->empty())
      c.allow_private_buyers = false;
    else
      return fail("LEADFLOW_ALLOW_PRIVATE_BUYERS", "expected 1 or 0");
  }
  if (auto v = get("LEADFLOW_REQUIRE_OPERATOR_2FA")) {
    if (*v == "1" || *v == "true")
      c.require_operator_2fa = true;
    else if (*v == "0" || *v == "false" || v->empty())
      c.require_operator_2fa = false;
    else
      return fail("LEADFLOW_REQUIRE_OPERATOR_2FA", "expected 1 or 0, got \"" + *v + "\"");
  }
  if (auto v = get("LEADFLOW_TOTP_KEY_FILE"); v && !v->empty()) {
    auto key = read_hex_key(*v);
    if (!key)
      return fail("LEADFLOW_TOTP_KEY_FILE",
                  "expected a readable file whose first line is 64 hex digits: \"" + *v + "\"");
    c.totp_key = std::move(*key);
  }
  if (auto v = get("LEADFLOW_TRUSTED_PROXIES"); v && !v->empty()) {
    std::size_t start = 0;
    while (start <= v->size()) {
      const auto comma = v->find(',', start);
      std::string item =
          v->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!valid_cidr(item))
        return fail("LEADFLOW_TRUSTED_PROXIES", "not a CIDR: \"" + item + "\"");
      c.trusted_proxies.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  if (auto v = get("LEADFLOW_RETURN_REASONS"); v && !v->empty()) {
    c.return_reasons.clear();
    std::size_t start = 0;
    while (start <= v->size()) {
      const auto comma = v->find(',', start);
      std::string item =
          v->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const bool ok =
          !item.empty() && item.size() <= 40 &&
          item.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
      if (!ok)
        return fail("LEADFLOW_RETURN_REASONS",
                    "a reason code is 1-40 of a-z, 0-9 and _: \"" + item + "\"");
      if (std::find(c.return_reasons.begin(), c.return_reasons.end(), item) ==
          c.return_reasons.end())
        c.return_reasons.push_back(item);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  c.verticals_file = get("LEADFLOW_VERTICALS").value_or("");
  if (auto v = get("LEADFLOW_BUYER_HTTP2"); v && !v->empty()) {
    if (*v != "auto" && *v != "on" && *v != "off")
      return fail("LEADFLOW_BUYER_HTTP2", "expected auto, on or off");
    c.buyer_http2 = *v;
  }
  if (auto v = get("LEADFLOW_BUYER_CA_FILE"); v && !v->empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*v, ec))
      return fail("LEADFLOW_BUYER_CA_FILE", "not a readable file: \"" + *v + "\"");
    c.buyer_ca_file = *v;
  }
  if (!int_setting("LEADFLOW_HTTP_THREADS", 4, 4096, c.http_threads)) return std::nullopt;
  if (!int_setting("LEADFLOW_HTTP_LOOPS", 0, 64, c.http_loops)) return std::nullopt;
  if (!int_setting("LEADFLOW_HEADER_TIMEOUT_MS", 100, 600000, c.header_timeout_ms) ||
      !int_setting("LEADFLOW_BODY_TIMEOUT_MS", 100, 600000, c.body_timeout_ms) ||
      !int_setting("LEADFLOW_BODY_MIN_RATE", 1, 1'000'000'000, c.body_min_rate) ||
      !int_setting("LEADFLOW_TLS_HANDSHAKE_TIMEOUT_MS", 100, 600000, c.tls_handshake_timeout_ms) ||
      !int_setting("LEADFLOW_MAX_CONNECTIONS", 1, 10'000'000, c.max_connections) ||
      !int_setting("LEADFLOW_MAX_CONNECTIONS_PER_ADDRESS", 0, 10'000'000,
                   c.max_connections_per_address))
    return std::nullopt;
  if (!int_setting("LEADFLOW_LIVE_MAX_CONNECTIONS", 0, 1'000'000, c.live_max_connections) ||
      !int_setting("LEADFLOW_LIVE_POLL_MS", 100, 60'000, c.live_poll_ms))
    return std::nullopt;
  if (!int_setting("LEADFLOW_WORKER_NICE", 0, 19, c.worker_nice)) return std::nullopt;
  if (!int_setting("LEADFLOW_RETENTION_DAYS", 0, 36'500, c.retention_days)) return std::nullopt;
  if (!int_setting("LEADFLOW_WORKERS", 0, 64, c.workers)) return std::nullopt;
  if (!int_setting("LEADFLOW_WORKER_CONCURRENCY", 1, 10000, c.worker_concurrency))
    return std::nullopt;
  if (!int_setting("LEADFLOW_REOFFER_CONCURRENCY", 0, 10000, c.reoffer_concurrency))
    return std::nullopt;
  if (!int_setting("LEADFLOW_BUYER_CONNECTIONS", 1, 1'000'000, c.buyer_connections) ||
      !int_setting("LEADFLOW_BUYER_HOST_CONNECTIONS", 1, 1'000'000, c.buyer_host_connections))
    return std::nullopt;
  if (!int_setting("LEADFLOW_WAIT_MS", 0, 600000, c.wait_ms)) return std::nullopt;
  if (!int_setting("LEADFLOW_MAX_WAIT_MS", 0, 600000, c.max_wait_ms)) return std::nullopt;
  if (!int_setting("LEADFLOW_AUCTION_TIMEOUT_MS", 100, 600000, c.auction_timeout_ms))
    return std::nullopt;
  if (!int_setting("LEADFLOW_QUEUE_PARTITIONS", 1, 1024, c.queue_partitions)) return std::nullopt;
  if (!int_setting("LEADFLOW_BACKLOG_INTERVAL_MS", 100, 600000, c.backlog_interval_ms))
    return std::nullopt;
  if (!int_setting("LEADFLOW_POSTBACK_CONCURRENCY", 1, 100'000, c.postback_concurrency) ||
      !int_setting("LEADFLOW_POSTBACK_TIMEOUT_MS", 100, 60'000, c.postback_timeout_ms))
    return std::nullopt;
  if (!int_setting("LEADFLOW_POSTBACK_RETENTION_DAYS", 0, 36'500, c.postback_retention_days))
    return std::nullopt;
  if (!int_setting("LEADFLOW_MAX_BACKLOG", std::int64_t{1}, std::int64_t{1'000'000'000},
                   c.max_backlog))
    return std::nullopt;
  // LEADFLOW_IP_RATE_LIMIT is the former name of LEADFLOW_AUTH_FAILURE_LIMIT; the new one wins.
  if (!int_setting("LEADFLOW_IP_RATE_LIMIT", 1, 1'000'000, c.auth_failure_limit_per_minute))
    return std::nullopt;
  if (!int_setting("LEADFLOW_AUTH_FAILURE_LIMIT", 1, 1'000'000, c.auth_failure_limit_per_minute))
    return std::nullopt;
  if (auto v = get("LEADFLOW_LOG_LEVEL")) {
    if (*v != "debug" && *v != "info" && *v != "warn" && *v != "error")
      return fail("LEADFLOW_LOG_LEVEL", "expected debug, info, warn or error");
    c.log_level = *v;
  }
  if (auto v = get("LEADFLOW_TOPIC_PREFIX")) {
    if (v->empty() || v->size() > 100) return fail("LEADFLOW_TOPIC_PREFIX", "1 to 100 characters");
    for (char ch : *v)
      if (!is_alnum(ch) && ch != '.' && ch != '_' && ch != '-')
        return fail("LEADFLOW_TOPIC_PREFIX", "letters, digits, '.', '_' and '-' only");
    c.topic_prefix = *v;
  }
  if (!int_setting("LEADFLOW_KAFKA_REPLICATION", 1, 32, c.kafka_replication)) return std::nullopt;
  if (!int_setting("LEADFLOW_KAFKA_MESSAGE_TIMEOUT_MS", 100, 300000, c.kafka_message_timeout_ms))
    return std::nullopt;
  if (!int_setting("LEADFLOW_KAFKA_MAX_BUFFERED", 1, 10'000'000, c.kafka_max_buffered))
    return std::nullopt;
  if (!int_setting("LEADFLOW_KAFKA_LINGER_MS", 0, 1000, c.kafka_linger_ms)) return std::nullopt;
  if (!int_setting("LEADFLOW_KAFKA_FETCH_WAIT_MS", 1, 1000, c.kafka_fetch_wait_ms))
    return std::nullopt;
  // An hour at least: a shorter retention could delete leads before a worker restarted reads them.
  constexpr std::int64_t kHourMs = 3'600'000, kYearsMs = 10 * 365 * 24 * kHourMs;
  if (!int_setting("LEADFLOW_KAFKA_RETENTION_MS", kHourMs, kYearsMs, c.kafka_retention_ms) ||
      !int_setting("LEADFLOW_KAFKA_DEAD_RETENTION_MS", kHourMs, kYearsMs,
                   c.kafka_dead_retention_ms) ||
      !int_setting("LEADFLOW_KAFKA_SEGMENT_MS", std::int64_t{60'000}, kYearsMs, c.kafka_segment_ms))
    return std::nullopt;
  if (auto v = get("LEADFLOW_KAFKA_PROPERTIES"); v && !v->empty()) {
    // "name=value;name=value": librdkafka properties for a real cluster (TLS, SASL, ...).
    std::size_t start = 0;
    while (start < v->size()) {
      auto semi = v->find(';', start);
      if (semi == std::string::npos) semi = v->size();
      const std::string item = v->substr(start, semi - start);
      start = semi + 1;
      if (item.empty()) continue;
      const auto eq = item.find('=');
      if (eq == std::string::npos || eq == 0)
        return fail("LEADFLOW_KAFKA_PROPERTIES", "expected name=value;name=value");
      c.kafka_properties[item.substr(0, eq)] = item.substr(eq + 1);
    }
  }
  if (auto v = get("LEADFLOW_WORKER_GROUP")) {
    if (v->empty() || v->size() > 200) return fail("LEADFLOW_WORKER_GROUP", "1 to 200 characters");
    c.worker_group = *v;
  }
  if (c.max_wait_ms < c.wait_ms)
    return fail("LEADFLOW_MAX_WAIT_MS", "must be at least LEADFLOW_WAIT_MS");
  return c;
}

std::optional<Config> load_config_from_environment(std::string& error) {
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    names.emplace_back(entry.substr(0, entry.find('=')));
  }
  return load_config([](const char* n) { return std::getenv(n); }, names, error);
}

}  // namespace leadflow
