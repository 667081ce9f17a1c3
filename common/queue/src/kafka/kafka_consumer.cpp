// Consumer groups: offsets are stored only when the caller commits (enable.auto.offset.store
// =false) and written by auto-commit every second, on revoke and on close. Assignment is eager
// (roundrobin): a rebalance revokes every partition, so the revoke handler can finish everything
// in flight, commit it, and only then let the partitions go (see revoke()).

#include "kafka/kafka_consumer.hpp"

#include <utility>

#include "leadflow/base/log.hpp"

namespace leadflow::kafka {
namespace {

// Stored offsets are written this often (and always on revoke and close): a crash redelivers at
// most about a second of completed records.
constexpr int kAutoCommitIntervalMs = 1000;
// How often a group member refreshes its lag (librdkafka's statistics, served by poll()).
// Prometheus scrapes every 15 s; a fresher figure than that would only cost CPU.
constexpr const char* kStatisticsIntervalMs = "5000";
// How often a tail reader asks whether its topics gained partitions (the operator's
// kafka-topics --alter): a partition added is read from its start, so nothing produced to it is
// missed, only heard up to this much later.
constexpr auto kTailPartitionCheck = std::chrono::seconds(5);

}  // namespace

bool KafkaConsumer::open(const KafkaQueueOptions& options, const std::vector<std::string>& topics,
                         std::string& error) {
  Properties role = {
      {"group.id", group_},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "earliest"},
  };
  if (mode_ == Mode::kGroup) {
    const int heartbeat_ms = std::clamp(options.session_timeout_ms / 3, 1, 3000);
    role.insert(
        role.end(),
        {
            {"enable.auto.commit", "true"},
            {"auto.commit.interval.ms", std::to_string(kAutoCommitIntervalMs)},
            // Eager: every rebalance revokes everything first, which is what lets the revoke
            // handler drain in-flight work before anyone else may read those partitions.
            {"partition.assignment.strategy", "roundrobin"},
            {"session.timeout.ms", std::to_string(options.session_timeout_ms)},
            {"heartbeat.interval.ms", std::to_string(heartbeat_ms)},
            {"fetch.wait.max.ms", std::to_string(options.fetch_wait_ms)},
            {"statistics.interval.ms", kStatisticsIntervalMs},
        });
  } else {
    role.push_back({"enable.auto.commit", "false"});
    role.push_back({"fetch.wait.max.ms", std::to_string(options.fetch_wait_ms)});
  }
  Conf conf = make_conf(options, role, this, error);
  if (!conf) return false;
  rd_kafka_conf_set_error_cb(conf.get(), consumer_error_cb);
  if (mode_ == Mode::kGroup) {
    rd_kafka_conf_set_rebalance_cb(conf.get(), on_rebalance);
    rd_kafka_conf_set_stats_cb(conf.get(), on_statistics);
  }
  rk_ = make_handle(RD_KAFKA_CONSUMER, std::move(conf), error);
  if (!rk_) return false;
  // Errors, logs and rebalances are served by poll(), on the caller's thread.
  rd_kafka_poll_set_consumer(rk_.get());

  if (mode_ == Mode::kTail) return assign_tail(topics, error);
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(topics.size())));
  for (const auto& t : topics)
    rd_kafka_topic_partition_list_add(list.get(), t.c_str(), RD_KAFKA_PARTITION_UA);
  if (const rd_kafka_resp_err_t err = rd_kafka_subscribe(rk_.get(), list.get())) {
    error = std::string("subscribe: ") + rd_kafka_err2str(err);
    return false;
  }
  return true;
}

bool KafkaConsumer::assign_tail(const std::vector<std::string>& topics, std::string& error) {
  PartitionList list(rd_kafka_topic_partition_list_new(8));
  for (const auto& t : topics) {
    const int n = partition_count(rk_.get(), t, kQueryTimeoutMs);
    if (n <= 0) {
      error = "no partitions found for topic " + t;
      return false;
    }
    for (int p = 0; p < n; ++p)
      rd_kafka_topic_partition_list_add(list.get(), t.c_str(), p)->offset = RD_KAFKA_OFFSET_END;
    tail_partitions_[t] = n;
  }
  next_tail_check_ = std::chrono::steady_clock::now() + kTailPartitionCheck;
  // Resolve "the end" now rather than when the fetcher starts: a record produced right after this
  // returns must be seen, and OFFSET_END resolved later would skip it. Looking up timestamp -1
  // answers each partition's end offset. On failure fall back to a lazy OFFSET_END.
  PartitionList ends(rd_kafka_topic_partition_list_copy(list.get()));
  if (rd_kafka_offsets_for_times(rk_.get(), ends.get(), kQueryTimeoutMs) ==
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < ends->cnt; ++i)
      if (!ends->elems[i].err && ends->elems[i].offset >= 0)
        list->elems[i].offset = ends->elems[i].offset;
  } else {
    log(LogLevel::kWarn, "kafka_tail_end_lookup_failed", {{"topics", topics}});
  }
  if (const rd_kafka_resp_err_t err = rd_kafka_assign(rk_.get(), list.get())) {
    error = std::string("assign: ") + rd_kafka_err2str(err);
    return false;
  }
  return true;
}

void KafkaConsumer::follow_added_partitions() {
  next_tail_check_ = std::chrono::steady_clock::now() + kTailPartitionCheck;
  PartitionList added(rd_kafka_topic_partition_list_new(4));
  for (auto& [topic, known] : tail_partitions_) {
    const int n = partition_count(rk_.get(), topic, kQueryTimeoutMs);
    if (n <= known) continue;  // unchanged, or the cluster did not answer: asked again later
    // Created after this reader began: everything on them is news, read from the start.
    for (int p = known; p < n; ++p)
      rd_kafka_topic_partition_list_add(added.get(), topic.c_str(), p)->offset =
          RD_KAFKA_OFFSET_BEGINNING;
    log(LogLevel::kInfo, "kafka_tail_partitions_added",
        {{"topic", topic}, {"partitions", n}, {"were", known}});
    known = n;
  }
  if (added->cnt == 0) return;
  if (rd_kafka_error_t* e = rd_kafka_incremental_assign(rk_.get(), added.get())) {
    log(LogLevel::kError, "kafka_tail_assign_failed", {{"error", rd_kafka_error_string(e)}});
    rd_kafka_error_destroy(e);
  }
}

std::optional<QueueRecord> KafkaConsumer::poll(std::chrono::milliseconds timeout) {
  if (closing_ || !rk_) return std::nullopt;
  if (mode_ == Mode::kTail && std::chrono::steady_clock::now() >= next_tail_check_)
    follow_added_partitions();
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    const int wait_ms = timeout > spent ? clamp_ms(timeout - spent) : 0;
    Message msg(rd_kafka_consumer_poll(rk_.get(), wait_ms));
    if (!msg) return std::nullopt;
    if (msg->err) {
      // Transient (broker down, coordinator moving, partition end): librdkafka recovers by itself.
      if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
        log(LogLevel::kWarn, "kafka_consume_error",
            {{"group", group_},
             {"topic", msg->rkt ? rd_kafka_topic_name(msg->rkt) : ""},
             {"partition", msg->partition},
             {"error", rd_kafka_err2name(msg->err)},
             {"reason", rd_kafka_message_errstr(msg.get())}});
      if (wait_ms == 0) return std::nullopt;
      continue;
    }
    QueueRecord r;
    r.topic = rd_kafka_topic_name(msg->rkt);
    r.partition = msg->partition;
    r.offset = msg->offset;
    if (msg->key) r.key.assign(static_cast<const char*>(msg->key), msg->key_len);
    if (msg->payload) r.payload.assign(static_cast<const char*>(msg->payload), msg->len);
    // Read after consumer_poll returned: a rebalance it ran already bumped the generation.
    r.generation = generation_.load();
    return r;
  }
}

void KafkaConsumer::commit(std::string_view topic, int partition, std::int64_t next_offset) {
  // Allowed while closing: the revoke handler commits from inside close().
  if (mode_ == Mode::kTail || !rk_) return;
  PartitionList list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), std::string(topic).c_str(), partition)->offset =
      next_offset;
  rd_kafka_resp_err_t err = rd_kafka_offsets_store(rk_.get(), list.get());
  if (!err) err = list->elems[0].err;
  if (!err) return;
  // _STATE: the partition is no longer ours (a late commit after a rebalance); its new owner
  // reads from the last committed offset, which at-least-once allows.
  log(err == RD_KAFKA_RESP_ERR__STATE ? LogLevel::kDebug : LogLevel::kWarn, "kafka_commit_dropped",
      {{"group", group_},
       {"topic", std::string(topic)},
       {"partition", partition},
       {"error", rd_kafka_err2name(err)}});
}

int KafkaConsumer::on_statistics(rd_kafka_t*, char* json, std::size_t len, void* opaque) {
  auto* self = static_cast<KafkaConsumer*>(opaque);
  auto lag = lag_from_kafka_statistics(std::string_view(json, len));
  std::lock_guard lock(self->lag_mu_);
  self->lag_ = std::move(lag);
  return 0;  // librdkafka frees the text
}

std::vector<PartitionLag> KafkaConsumer::lag() const {
  std::lock_guard lock(lag_mu_);
  return lag_;
}

// Eager unless the operator chose cooperative-sticky through `extra`; both are handled.
bool KafkaConsumer::cooperative() const {
  const char* protocol = rd_kafka_rebalance_protocol(rk_.get());
  return protocol && std::strcmp(protocol, "COOPERATIVE") == 0;
}

void KafkaConsumer::on_rebalance(rd_kafka_t*, rd_kafka_resp_err_t err,
                                 rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  auto* self = static_cast<KafkaConsumer*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    self->assign(partitions);
  } else {
    if (err != RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS)
      log(LogLevel::kError, "kafka_rebalance_error",
          {{"group", self->group_}, {"error", rd_kafka_err2name(err)}});
    self->revoke(partitions);
  }
}

void KafkaConsumer::assign(rd_kafka_topic_partition_list_t* partitions) {
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
  if (cooperative()) {
    if (rd_kafka_error_t* e = rd_kafka_incremental_assign(rk_.get(), partitions)) {
      err = rd_kafka_error_code(e);
      rd_kafka_error_destroy(e);
    }
  } else {
    err = rd_kafka_assign(rk_.get(), partitions);
  }
  log(err ? LogLevel::kError : LogLevel::kInfo, "kafka_partitions_assigned",
      {{"group", group_}, {"partitions", partitions->cnt}, {"error", rd_kafka_err2name(err)}});
}

// In this order, so that no record is worked on by two consumers at once and none is skipped:
//   1. the handler finishes what is in flight and commit()s it (offsets stored, partitions still
//      ours, so the store succeeds);
//   2. the generation moves on: records handed out before are stale from now on;
//   3. the stored offsets are committed synchronously, so the next owner starts after them;
//   4. only then are the partitions given up.
// When the partitions were lost (session timed out) someone else may own them already: the
// handler still runs, so the caller drains cleanly, but the commit is skipped, as the group would
// refuse it.
void KafkaConsumer::revoke(rd_kafka_topic_partition_list_t* partitions) {
  const bool lost = rd_kafka_assignment_lost(rk_.get()) != 0;
  if (revoke_handler_) {
    try {
      revoke_handler_();
    } catch (const std::exception& e) {
      log(LogLevel::kError, "kafka_revoke_handler_failed", {{"group", group_}, {"what", e.what()}});
    }
  }
  generation_.fetch_add(1);
  if (!lost) {
    const rd_kafka_resp_err_t err = rd_kafka_commit(rk_.get(), nullptr, 0);
    if (err && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
      log(LogLevel::kWarn, "kafka_revoke_commit_failed",
          {{"group", group_}, {"error", rd_kafka_err2name(err)}});
  }
  if (cooperative()) {
    if (rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk_.get(), partitions))
      rd_kafka_error_destroy(e);
  } else {
    rd_kafka_assign(rk_.get(), nullptr);
  }
  log(lost ? LogLevel::kWarn : LogLevel::kInfo, "kafka_partitions_revoked",
      {{"group", group_}, {"partitions", partitions ? partitions->cnt : 0}, {"lost", lost}});
}

void KafkaConsumer::close() {
  if (closing_ || !rk_) return;
  closing_ = true;
  // Leaves the group: the rebalance callback runs here, on this thread (revoke handler, commit).
  if (const rd_kafka_resp_err_t err = rd_kafka_consumer_close(rk_.get()))
    log(LogLevel::kWarn, "kafka_consumer_close_failed",
        {{"group", group_}, {"error", rd_kafka_err2name(err)}});
  rk_.reset();
  // No statistics come after the handle is gone; the group's lag is no longer ours to report.
  std::lock_guard lock(lag_mu_);
  lag_.clear();
}

}  // namespace leadflow::kafka
