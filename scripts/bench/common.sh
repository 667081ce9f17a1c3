# shellcheck shell=bash disable=SC2154  # pids, work, root, build, operator: set by the sourcing script
# Helpers shared by scripts/bench.sh and the phases under scripts/bench/ (sourced, not run).
# They expect $operator to hold an operator key where they call the API.

# What the sourcing script started goes at exit (trap cleanup EXIT): the processes in $pids, the
# Kafka mock ($mock_pid) or cluster ($kafka_cluster_dir) last so that they can still flush to it, the PostgreSQL server under
# $work/pg if there is one, and $work.
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ -n "${mock_pid:-}" ]]; then kill -TERM "$mock_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  if [[ -n "${kafka_cluster_dir:-}" ]]; then
    "$root/scripts/kafka_cluster.sh" stop "$kafka_cluster_dir" >/dev/null 2>&1 || true
  fi
  if [[ -d "$work/pg" ]]; then "$root/scripts/pg_server.sh" stop "$work/pg" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}

# start_kafka KIND [MOCK_ARGS...]: sets bootstrap to a Kafka cluster's. KIND real: a three-node
# KRaft cluster (scripts/kafka_cluster.sh, kafka_cluster_dir; BENCH_KAFKA_JVM gives its JVM
# options), on which leadflow creates its topics; mock: leadflow-kafka-mock from $build with
# MOCK_ARGS (its topics: the mock cannot create them), mock_pid. Exits if none answers.
start_kafka() {
  local kind=$1
  shift
  bootstrap=""
  if [[ "$kind" == real ]]; then
    kafka_cluster_dir="$work/kafka-cluster"
    bootstrap=$(KAFKA_CLUSTER_JVM_OPTS="${BENCH_KAFKA_JVM:-}" "$root/scripts/kafka_cluster.sh" start \
      "$kafka_cluster_dir" | tail -n 1)
  else
    mkdir -p "$work/kafka-mock"
    "$build/tests/leadflow-kafka-mock" "$@" < /dev/null > "$work/kafka-mock/out" \
      2> "$work/kafka-mock/log" &
    mock_pid=$!
    for _ in $(seq 1 100); do
      bootstrap=$(sed -n 's/^BOOTSTRAP //p' "$work/kafka-mock/out")
      [[ -n "$bootstrap" ]] && break
      sleep 0.1
    done
  fi
  [[ -n "$bootstrap" ]] && return 0
  echo "bench: the Kafka cluster ($kind) did not start" >&2
  [[ -f "$work/kafka-mock/log" ]] && cat "$work/kafka-mock/log" >&2
  exit 1
}

# A free TCP port on loopback.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null \
    || shuf -i 20000-60000 -n 1
}

# The median of numbers given one per line or separated by spaces.
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

now() { date +%s.%N; }

# api DIR PORT METHOD PATH JSON: an operator call to the leadflow whose data dir is DIR.
api() {
  curl -sS --cacert "$1/tls/cert.pem" -X "$3" "https://127.0.0.1:$2$4" \
    -H "Authorization: Bearer $operator" -H 'Content-Type: application/json' -d "$5"
}

# field NAME: the string value of "NAME" in the JSON on stdin.
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
