#!/usr/bin/env bash
# A throwaway three-node Apache Kafka cluster (KRaft) on loopback, living entirely in one directory.
#
#   kafka_cluster.sh start DIR        three nodes, each broker and controller, on free loopback
#                                     ports; waits until every broker answers and a topic with
#                                     three replicas can be made; writes DIR/bootstrap
#                                     (host:port,host:port,host:port) and prints it. A cluster
#                                     still running in DIR is killed and its data thrown away first.
#                                     A node that cannot start (a port taken meanwhile) makes it
#                                     start again on other ports, three times at most.
#   kafka_cluster.sh stop DIR         kills every node and removes DIR.
#   kafka_cluster.sh kill DIR N       kill -9 of node N (1-3), which keeps its data and ports.
#   kafka_cluster.sh restart DIR N... starts nodes N... again (those not running) and waits until
#                                     their brokers answer. Nodes started alone after the whole
#                                     cluster died wait for each other (a quorum is two): name
#                                     them all in one call.
#   kafka_cluster.sh controller DIR   prints the node id of the active controller.
#
# Node N lives in DIR/nodeN: server.properties, data/, server.log, and pid (its JVM, for the fault
# tests' kill -9 and SIGSTOP). The release is the one scripts/kafka/fetch.sh caches (scripts/deps.sh
# --test fetches it); nothing here touches the network beyond loopback. docs/kafka.md says more.
set -euo pipefail

usage() {
  echo "usage: $0 start|stop DIR | kill DIR N | restart DIR N... | controller DIR" >&2
  exit 2
}
die() {
  echo "kafka_cluster.sh: $*" >&2
  exit 1
}

[[ $# -ge 2 ]] || usage
command=$1
dir=$2
shift 2
nodes=("$@")
[[ -n "$dir" ]] || usage
case "$dir" in
  /*) ;;
  *) dir="$PWD/$dir" ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
home=$("$root/scripts/kafka/fetch.sh" --home)
# Each JVM small: three of them share two cores with the tests. The serial collector and the
# client compiler alone start faster and use fewer threads than the defaults, and the load of
# the tests is far below what either bounds.
# KAFKA_CLUSTER_JVM_OPTS replaces the heap, collector and compiler options (the benchmark's
# BENCH_KAFKA_JVM: docs/kafka.md).
read -r -a jvm <<<"${KAFKA_CLUSTER_JVM_OPTS:--Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
jvm+=(-XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true)

need_release() {
  [[ -f "$home/.complete" ]] ||
    die "no Apache Kafka in $home; run scripts/deps.sh --test (or scripts/kafka/fetch.sh)"
  command -v java >/dev/null || die "java is missing (scripts/deps.sh --test installs it)"
}

run_tool() {
  java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dlog4j2.configurationFile="$dir/log4j2-tools.properties" -cp "$home/*" "$@"
}

pid_of() { cat "$dir/node$1/pid" 2>/dev/null || true; }

# Alive: signalled, and not a zombie its new parent has yet to reap.
alive() {
  kill -0 "$1" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]
}

is_running() {
  local pid
  pid=$(pid_of "$1")
  [[ -n "$pid" ]] && alive "$pid"
}

kill_node() {
  local pid
  pid=$(pid_of "$1")
  [[ -n "$pid" ]] || return 0
  # SIGCONT too: a node a test paused must not outlive its cluster as a stopped process.
  kill -KILL "$pid" 2>/dev/null || true
  kill -CONT "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    alive "$pid" || break
    sleep 0.05
  done
  rm -f "$dir/node$1/pid"
}

port_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Six TCP ports nobody listens on right now (a broker's and a controller's per node). Another
# process may still take one before its node binds it; that node then fails and start says so.
free_ports() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c '
import socket
socks = [socket.socket() for _ in range(6)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))' && return
  fi
  local found=() port
  for _ in $(seq 1 400); do
    port=$((20000 + RANDOM % 40000))
    # A refused connection means nothing listens there.
    if ! port_answers "$port" && [[ " ${found[*]} " != *" $port "* ]]; then found+=("$port"); fi
    ((${#found[@]} == 6)) && break
  done
  ((${#found[@]} == 6)) || die "no six free TCP ports found on 127.0.0.1"
  echo "${found[*]}"
}

launch() {
  local n=$1
  # setsid and no inherited descriptors: the node outlives this script, and whoever waits for
  # this script's output (CTest) does not wait for the node.
  setsid java "${jvm[@]}" -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -cp "$home/*" kafka.Kafka "$dir/node$n/server.properties" \
    >>"$dir/node$n/server.log" 2>&1 </dev/null &
  echo $! >"$dir/node$n/pid"
}

# Waits until node N's broker port takes connections and the node says it has started.
wait_node() {
  local n=$1 port deadline=$((SECONDS + ${2:-90}))
  port=$(sed -n 's/^# broker port //p' "$dir/node$n/server.properties")
  while ((SECONDS < deadline)); do
    is_running "$n" || { tail -n 30 "$dir/node$n/server.log" >&2; die "node $n exited; see $dir/node$n/server.log"; }
    if port_answers "$port" && grep -q 'Kafka Server started' "$dir/node$n/server.log"; then
      return 0
    fi
    sleep 0.2
  done
  tail -n 30 "$dir/node$n/server.log" >&2
  die "node $n did not start within ${2:-90} s; see $dir/node$n/server.log"
}

write_logging() {
  # The nodes log at INFO to their server.log; the one-shot tools only their errors.
  cat >"$dir/log4j2.properties" <<'PROPS'
status = error
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.out.ref = out
logger.clients.name = org.apache.kafka.clients
logger.clients.level = warn
PROPS
  sed 's/^rootLogger.level = info/rootLogger.level = error/' "$dir/log4j2.properties" \
    >"$dir/log4j2-tools.properties"
}

start() {
  need_release
  [[ -d "$dir" ]] && stop
  mkdir -p "$dir"
  write_logging
  local ports broker=() controller=() voters="" bootstrap="" n
  read -r -a ports <<<"$(free_ports)"
  for n in 1 2 3; do
    broker[n]=${ports[2 * (n - 1)]}
    controller[n]=${ports[2 * (n - 1) + 1]}
    voters+="${voters:+,}$n@127.0.0.1:${controller[n]}"
    bootstrap+="${bootstrap:+,}127.0.0.1:${broker[n]}"
  done
  # A cluster id is 16 random bytes in URL-safe base64 without padding (what
  # `kafka-storage random-uuid` prints), made here without starting a JVM for it.
  local cluster_id
  cluster_id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')

  for n in 1 2 3; do
    mkdir -p "$dir/node$n/data"
    cat >"$dir/node$n/server.properties" <<PROPS
# broker port ${broker[n]}
# Combined mode: every node is a broker and a voter of the metadata quorum (a static quorum).
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:${broker[n]},CONTROLLER://127.0.0.1:${controller[n]}
advertised.listeners=PLAINTEXT://127.0.0.1:${broker[n]}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$dir/node$n/data
# What a production cluster of three runs: every record on three replicas, acknowledged by two.
default.replication.factor=3
min.insync.replicas=2
offsets.topic.replication.factor=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
unclean.leader.election.enable=false
# leadflow creates its topics; a name it did not create is a mistake, not a new topic.
auto.create.topics.enable=false
# Smaller than the defaults, for two cores shared with the tests: fewer internal partitions to
# place at the first group's start, fewer threads, and no wait before a group's first rebalance.
offsets.topic.num.partitions=8
transaction.state.log.num.partitions=4
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
background.threads=2
log.cleaner.threads=1
PROPS
  done
  # Formatting starts a JVM per node: in parallel.
  local pids=()
  for n in 1 2 3; do
    run_tool kafka.tools.StorageTool format -t "$cluster_id" -c "$dir/node$n/server.properties" \
      >"$dir/node$n/format.log" 2>&1 &
    pids+=($!)
  done
  for n in 1 2 3; do
    wait "${pids[n - 1]}" || { cat "$dir/node$n/format.log" >&2; die "formatting node $n failed"; }
  done

  for n in 1 2 3; do launch "$n"; done
  for n in 1 2 3; do wait_node "$n"; done
  # Every broker registered and a leader for new partitions: a topic with three replicas can be
  # made. It stays (removing it would cost another JVM's start); leadflow never reads it.
  local deadline=$((SECONDS + 60))
  until run_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" --create \
    --topic leadflow-cluster-check --partitions 1 --replication-factor 3 >"$dir/check.log" 2>&1; do
    ((SECONDS < deadline)) || { cat "$dir/check.log" >&2; die "no topic could be created; see $dir/node*/server.log"; }
    sleep 1
  done
  echo "$bootstrap" >"$dir/bootstrap"
  echo "$bootstrap"
}

stop() {
  local n
  for n in 1 2 3; do kill_node "$n"; done
  rm -rf "$dir"
}

check_nodes() {
  local n
  ((${#nodes[@]} > 0)) || usage
  for n in "${nodes[@]}"; do
    [[ "$n" =~ ^[1-3]$ ]] || usage
    [[ -f "$dir/node$n/server.properties" ]] || die "no cluster in $dir; run: $0 start $dir"
  done
}

restart() {
  local n
  for n in "${nodes[@]}"; do
    is_running "$n" && continue
    # The last run's log aside, so that its "started" line is not taken for this run's.
    mv -f "$dir/node$n/server.log" "$dir/node$n/server.log.1" 2>/dev/null || true
    launch "$n"
  done
  for n in "${nodes[@]}"; do wait_node "$n"; done
}

controller() {
  need_release
  local out
  out=$(run_tool org.apache.kafka.tools.MetadataQuorumCommand \
    --bootstrap-server "$(cat "$dir/bootstrap")" describe --status 2>&1) ||
    die "the quorum did not answer: $out"
  sed -n 's/^LeaderId:[[:space:]]*//p' <<<"$out"
}

case "$command" in
  start)
    ((${#nodes[@]} == 0)) || usage
    # A port found free may be taken by another process before its node binds it (the free ports
    # come from the range the kernel also hands to outgoing connections): then the node exits and
    # the cluster is made again on other ports, up to three times in all.
    for attempt in 1 2 3; do
      if (start); then exit 0; fi
      ((attempt < 3)) && echo "kafka_cluster.sh: starting again on other ports" >&2
    done
    exit 1
    ;;
  stop) ((${#nodes[@]} == 0)) || usage; stop ;;
  kill)
    check_nodes
    for n in "${nodes[@]}"; do kill_node "$n"; done
    ;;
  restart) check_nodes; need_release; restart ;;
  controller) ((${#nodes[@]} == 0)) || usage; controller ;;
  *) usage ;;
esac
