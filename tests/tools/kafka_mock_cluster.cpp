// leadflow-kafka-mock: librdkafka's mock Kafka cluster (rdkafka_mock.h) as a process of its own,
// so that separate ingest and worker processes, tests and the benchmark can share one cluster.
//
//   leadflow-kafka-mock [--brokers N] [--topic NAME:PARTITIONS]... [--exit-on-stdin-eof]
//
// Prints one line "BOOTSTRAP host:port,..." on stdout, then reads commands from stdin, one a line,
// and answers each with "OK" or "ERR why":
//   down ID    broker ID (1..N, or -1 for all) closes its connections and refuses new ones
//   up ID      broker ID accepts connections again
// At stdin EOF it keeps serving (so it can run in the background with stdin from /dev/null) until
// SIGTERM or SIGINT, then destroys the cluster and exits 0. With --exit-on-stdin-eof it stops at
// EOF as well: a test passes it so that the cluster goes away with the test process, even when
// that process dies without stopping it.
//
// What the mock does (librdkafka 2.0.2): produce, idempotent producer, fetch, consumer groups with
// offset commits, metadata, ListOffsets. It does not implement the CreateTopics admin API, which
// is why topics are created here with --topic (replication min(3, N)). A broker that is "down"
// does not move its partitions' leadership elsewhere.
//
// Self-contained on purpose: linked to librdkafka only.

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

struct TopicSpec {
  std::string name;
  int partitions = 1;
};

bool parse_int(std::string_view s, int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

int usage(const char* why) {
  std::fprintf(stderr,
               "leadflow-kafka-mock: %s\nusage: leadflow-kafka-mock [--brokers N] "
               "[--topic NAME:PARTITIONS]... [--exit-on-stdin-eof]\n",
               why);
  return 2;
}

void reply(const std::string& line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

// One command line: "down ID" or "up ID".
std::string run_command(rd_kafka_mock_cluster_t* cluster, std::string_view line) {
  const auto space = line.find(' ');
  const std::string_view verb = line.substr(0, space);
  int id = 0;
  if (space == std::string_view::npos || !parse_int(line.substr(space + 1), id))
    return "ERR expected: down ID | up ID";
  rd_kafka_resp_err_t err;
  if (verb == "down") {
    err = rd_kafka_mock_broker_set_down(cluster, id);
  } else if (verb == "up") {
    err = rd_kafka_mock_broker_set_up(cluster, id);
  } else {
    return "ERR unknown command " + std::string(verb);
  }
  return err ? std::string("ERR ") + rd_kafka_err2str(err) : "OK";
}

}  // namespace

int main(int argc, char** argv) {
  int brokers = 3;
  std::vector<TopicSpec> topics;
  bool exit_on_eof = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--exit-on-stdin-eof") {
      exit_on_eof = true;
      continue;
    }
    if (i + 1 >= argc) return usage("missing value after an option");
    const std::string_view value = argv[++i];
    if (arg == "--brokers") {
      if (!parse_int(value, brokers) || brokers < 1)
        return usage("--brokers wants a positive number");
    } else if (arg == "--topic") {
      const auto colon = value.rfind(':');
      TopicSpec t;
      if (colon == std::string_view::npos || colon == 0 ||
          !parse_int(value.substr(colon + 1), t.partitions) || t.partitions < 1)
        return usage("--topic wants NAME:PARTITIONS");
      t.name = std::string(value.substr(0, colon));
      topics.push_back(std::move(t));
    } else {
      return usage("unknown option");
    }
  }

  // Block the stop signals before librdkafka starts its threads (they inherit the mask), and take
  // them through a signalfd next to stdin.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a reader that went away must not kill the cluster
  const int signal_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
  if (signal_fd < 0) {
    std::perror("signalfd");
    return 1;
  }

  // The handle only hosts the cluster; it connects nowhere.
  char why[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "log_level", "4", why, sizeof why);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, why, sizeof why);
  if (!rk) {
    std::fprintf(stderr, "leadflow-kafka-mock: %s\n", why);
    return 1;
  }
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(rk, brokers);
  if (!cluster) {
    std::fprintf(stderr, "leadflow-kafka-mock: could not create the mock cluster\n");
    rd_kafka_destroy(rk);
    return 1;
  }
  for (const TopicSpec& t : topics) {
    if (const rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(
            cluster, t.name.c_str(), t.partitions, std::min(3, brokers))) {
      std::fprintf(stderr, "leadflow-kafka-mock: topic %s: %s\n", t.name.c_str(),
                   rd_kafka_err2str(err));
      rd_kafka_mock_cluster_destroy(cluster);
      rd_kafka_destroy(rk);
      return 1;
    }
  }
  reply(std::string("BOOTSTRAP ") + rd_kafka_mock_cluster_bootstraps(cluster));

  bool stdin_open = true;
  std::string pending;
  for (;;) {
    pollfd fds[2] = {{signal_fd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    if (poll(fds, stdin_open ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      std::perror("poll");
      break;
    }
    if (fds[0].revents & POLLIN) break;  // SIGTERM or SIGINT
    if (!stdin_open || !(fds[1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[4096];
    const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (exit_on_eof) break;
      stdin_open = false;  // keep serving until told to stop
      continue;
    }
    pending.append(buf, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
      std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      if (!line.empty()) reply(run_command(cluster, line));
    }
  }

  rd_kafka_mock_cluster_destroy(cluster);
  rd_kafka_destroy(rk);
  close(signal_fd);
  return 0;
}
