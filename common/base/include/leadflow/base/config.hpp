#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace leadflow {

/// How the processes are arranged (LEADFLOW_SHAPE). Embedded: leadflow-ingest is the whole
/// service (front and distribution workers in one process, outcomes handed over in memory, rate
/// limits per process). Scale-out: leadflow-ingest is a front only, leadflow-worker processes
/// distribute, outcomes come back announced through the store (PostgreSQL's NOTIFY; the results
/// topic with a store that cannot announce), and rate limits are shared through the store.
enum class Shape { kEmbedded, kScaleOut };

struct ListenAddress {
  std::string host;
  int port = 0;
};

/// Every LEADFLOW_* setting (SPEC §1), read once at start. Unknown LEADFLOW_* variables and
/// malformed values stop start-up with a message naming the setting.
struct Config {
  std::string store_url = "sqlite:leadflow-data/leadflow.db";  // LEADFLOW_STORE
  std::string queue_url = "embedded";                          // LEADFLOW_QUEUE
  Shape shape = Shape::kEmbedded;            // LEADFLOW_SHAPE (default: scale-out with Kafka)
  std::string data_dir = "leadflow-data";    // LEADFLOW_DATA_DIR (embedded queue, generated cert)
  ListenAddress listen{"127.0.0.1", 8443};   // LEADFLOW_LISTEN (TLS)
  std::optional<ListenAddress> http_listen;  // LEADFLOW_HTTP_LISTEN (plain, Surface B)
  std::optional<ListenAddress> metrics_listen;  // LEADFLOW_METRICS_LISTEN (plain)
  std::string tls_cert, tls_key;                // LEADFLOW_TLS_CERT / _KEY
  std::string bootstrap_key;                    // LEADFLOW_BOOTSTRAP_KEY
  /// The first operator user, made by leadflow-ingest when the store has no user at all: its
  /// e-mail (LEADFLOW_BOOTSTRAP_OPERATOR_EMAIL) and the file whose first line is its password
  /// (LEADFLOW_BOOTSTRAP_OPERATOR_PASSWORD_FILE). Both or neither.
  std::string bootstrap_operator_email;
  std::string bootstrap_operator_password_file;
  bool allow_private_buyers = false;  // LEADFLOW_ALLOW_PRIVATE_BUYERS
  /// Operators must sign in with a second factor (LEADFLOW_REQUIRE_OPERATOR_2FA=1): one without
  /// it can only enrol (docs/two-factor.md).
  bool require_operator_2fa = false;
  /// The 32-byte key that seals dashboard users' TOTP secrets in the store, read from the file
  /// LEADFLOW_TOTP_KEY_FILE names (its first line: 64 hex digits). Empty: secrets are kept plain.
  std::string totp_key;
  std::vector<std::string> trusted_proxies;  // LEADFLOW_TRUSTED_PROXIES (CIDRs)
  /// The reason codes a return may give (LEADFLOW_RETURN_REASONS, comma-separated); "other"
  /// needs a note.
  std::vector<std::string> return_reasons = {"invalid_phone",  "invalid_email", "duplicate",
                                             "not_interested", "fraud",         "other"};
  std::string verticals_file;  // LEADFLOW_VERTICALS
  int http_threads = 128;      // LEADFLOW_HTTP_THREADS: handlers that may wait (per listener)
  int http_loops = 0;          // LEADFLOW_HTTP_LOOPS: event loops per listener; 0: one per core
  // The front's bounds per listener (docs/security.md):
  int header_timeout_ms = 10000;  // LEADFLOW_HEADER_TIMEOUT_MS: header section, first byte on
  int body_timeout_ms = 10000;    // LEADFLOW_BODY_TIMEOUT_MS: a body, plus its size at ...
  int body_min_rate = 4096;       // LEADFLOW_BODY_MIN_RATE: ... this many bytes a second
  int tls_handshake_timeout_ms = 10000;  // LEADFLOW_TLS_HANDSHAKE_TIMEOUT_MS
  int max_connections = 10000;           // LEADFLOW_MAX_CONNECTIONS: open at once
  // The live feed (GET /v1/live, docs/operations.md "The live feed"), per process:
  int live_max_connections = 1000;        // LEADFLOW_LIVE_MAX_CONNECTIONS: streams open at once
  int live_poll_ms = 500;                 // LEADFLOW_LIVE_POLL_MS: how often the store is read
  int max_connections_per_address = 256;  // LEADFLOW_MAX_CONNECTIONS_PER_ADDRESS: 0, none
  int workers = 1;                        // LEADFLOW_WORKERS: in-process worker loops (embedded)
  int worker_concurrency = 10000;  // LEADFLOW_WORKER_CONCURRENCY: auctions in flight per worker
  int reoffer_concurrency = 16;    // LEADFLOW_REOFFER_CONCURRENCY: re-offers in flight per process
  int buyer_connections = 8192;    // LEADFLOW_BUYER_CONNECTIONS: HTTP/1.1 requests in flight, all
  std::string buyer_ca_file;  // LEADFLOW_BUYER_CA_FILE: CAs that verify buyers ("" = the system's)
  int buyer_host_connections = 2048;
  /// LEADFLOW_BUYER_HTTP2: "auto" (HTTP/2 with HTTPS buyers that offer it, through leadflow's
  /// own transport on nghttp2), "on" (the same), "off" (HTTP/1.1 to every buyer).
  std::string buyer_http2 = "auto";  // LEADFLOW_BUYER_HOST_CONNECTIONS: ... to one buyer host
  int worker_nice = 10;            // LEADFLOW_WORKER_NICE: in-process workers' CPU niceness (0-19)
  int wait_ms = 3000;              // LEADFLOW_WAIT_MS: default sync budget (Surface A)
  int max_wait_ms = 30000;         // LEADFLOW_MAX_WAIT_MS: ceiling for Prefer: wait=N
  int auction_timeout_ms = 10000;  // LEADFLOW_AUCTION_TIMEOUT_MS
  int queue_partitions = 8;        // LEADFLOW_QUEUE_PARTITIONS
  std::int64_t max_backlog = 1'000'000;  // LEADFLOW_MAX_BACKLOG
  /// LEADFLOW_AUTH_FAILURE_LIMIT (formerly LEADFLOW_IP_RATE_LIMIT): failed authentications a
  /// minute per client address, both surfaces together; past it, 429.
  int auth_failure_limit_per_minute = 20;
  /// LEADFLOW_SHARED_LIMITS ("auto", "on", "off"): whether the rate limits, the failed-
  /// authentication limit, the sign-in limits and the test-ping limits are counted in the store,
  /// shared by every process using it (on), or by each process alone (off). Unset or "auto":
  /// shared in the scale-out shape. See limits_shared().
  std::optional<bool> shared_limits;
  std::string log_level = "info";         // LEADFLOW_LOG_LEVEL
  std::string topic_prefix = "leadflow";  // LEADFLOW_TOPIC_PREFIX
  // Scale-out (LEADFLOW_QUEUE=kafka://..., LEADFLOW_STORE=postgresql://...).
  std::string kafka_brokers;            // from LEADFLOW_QUEUE: "host:port,host:port"
  int kafka_replication = 3;            // LEADFLOW_KAFKA_REPLICATION: for topics leadflow creates
  int kafka_message_timeout_ms = 5000;  // LEADFLOW_KAFKA_MESSAGE_TIMEOUT_MS: unacknowledged → 503
  int kafka_linger_ms = 20;         // LEADFLOW_KAFKA_LINGER_MS: batching of async leads under load
  int kafka_fetch_wait_ms = 100;    // LEADFLOW_KAFKA_FETCH_WAIT_MS: an idle fetch's hold
  int kafka_max_buffered = 100000;  // LEADFLOW_KAFKA_MAX_BUFFERED: local producer queue bound
  // retention.ms and segment.ms of the topics leadflow creates (docs/erasure.md): as the manifests
  // set on theirs. LEADFLOW_KAFKA_RETENTION_MS (leads, retry, results),
  // LEADFLOW_KAFKA_DEAD_RETENTION_MS (dead letters), LEADFLOW_KAFKA_SEGMENT_MS (all four).
  std::int64_t kafka_retention_ms = 604'800'000;         // 7 days
  std::int64_t kafka_dead_retention_ms = 2'592'000'000;  // 30 days
  std::int64_t kafka_segment_ms = 86'400'000;            // 1 day
  std::map<std::string, std::string>
      kafka_properties;  // LEADFLOW_KAFKA_PROPERTIES: "k=v;k=v" librdkafka extras
  std::string worker_group =
      "leadflow-workers";  // LEADFLOW_WORKER_GROUP: the workers' consumer group
  // LEADFLOW_BACKLOG_INTERVAL_MS: how often the ingest reads the workers' backlog from the queue
  int backlog_interval_ms = 10000;
  // LEADFLOW_RETENTION_DAYS (docs/erasure.md): leads received more than this many days ago lose
  // their personal data to the retention pass; 0, never.
  int retention_days = 0;
  // LEADFLOW_POSTBACK_CONCURRENCY / _TIMEOUT_MS: the postback sender's requests in flight and
  // one attempt's time (docs/postbacks.md)
  int postback_concurrency = 256;
  int postback_timeout_ms = 5000;
  // LEADFLOW_POSTBACK_RETENTION_DAYS: delivered and expired postbacks are deleted, with their
  // attempts, this many days after their event or last replay; 0, never (docs/postbacks.md)
  int postback_retention_days = 30;

  bool scale_out() const { return shape == Shape::kScaleOut; }
  /// Whether the limits are shared through the store (LEADFLOW_SHARED_LIMITS).
  bool limits_shared() const { return shared_limits.value_or(scale_out()); }
  /// The queue adapter: Kafka when LEADFLOW_QUEUE names brokers, otherwise the embedded log.
  bool kafka_queue() const { return !kafka_brokers.empty(); }
};

using Getenv = std::function<const char*(const char*)>;

/// Reads the configuration. On a bad setting returns nullopt and puts "LEADFLOW_X: why" in `error`.
/// `environ_names` lists every variable name present, to refuse unknown LEADFLOW_* ones.
std::optional<Config> load_config(const Getenv& getenv,
                                  const std::vector<std::string>& environ_names,
                                  std::string& error);
/// The process environment.
std::optional<Config> load_config_from_environment(std::string& error);

std::optional<ListenAddress> parse_listen(const std::string& text);

}  // namespace leadflow
