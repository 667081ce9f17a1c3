#!/usr/bin/env bash
# A throwaway PostgreSQL server for tests, living entirely in one directory.
#
#   pg_server.sh start DIR     initdb into DIR/data, start on a free loopback port, write the
#                              admin URL (postgresql://postgres@127.0.0.1:PORT/postgres) to
#                              DIR/url and print it. A server still running in DIR is stopped
#                              and its data thrown away first.
#   pg_server.sh stop DIR      stop the server (if running) and remove DIR.
#   pg_server.sh restart DIR   restart the server, keeping its data and port (fault tests).
#   pg_server.sh halt DIR      stop the server, keeping its data and port (an outage) ...
#   pg_server.sh resume DIR    ... and start it again.
#
# PostgreSQL refuses to run as root: as root, DIR belongs to the `postgres` system user and the
# server runs as that user; otherwise it runs as the caller, with `postgres` as superuser name.
# Authentication is `trust`, which is safe only because the server listens on 127.0.0.1 and on a
# socket inside DIR.
#
# LEADFLOW_PG_FSYNC=off (the tests' server, tests/CMakeLists.txt) starts it with fsync off: every
# commit still reaches the kernel before it returns, so killing any process, the server's
# included, loses nothing; only the machine itself crashing would, which no test does. It made a
# test's CREATE DATABASE about 0.6 s to 0.3 s and its DROP DATABASE 1.3 s to 0.3 s on the 2-core
# machine (DROP waits for a checkpoint). Benchmarks and the scale-out demo keep fsync on.
set -euo pipefail

usage() {
  echo "usage: $0 start|stop|restart|halt|resume DIR" >&2
  exit 2
}

[[ $# -eq 2 ]] || usage
command=$1
dir=$2
[[ -n "$dir" ]] || usage
# Absolute, so that the server (which changes directory) and the URL file agree on it.
case "$dir" in
  /*) ;;
  *) dir="$PWD/$dir" ;;
esac
data="$dir/data"

die() {
  echo "pg_server.sh: $*" >&2
  exit 1
}

# The newest installed server: /usr/lib/postgresql/<version>/bin, as Debian lays it out.
find_bin_dir() {
  local candidate best=""
  # In version order, so the last usable one is the newest.
  while IFS= read -r candidate; do
    if [[ -x "$candidate/pg_ctl" && -x "$candidate/initdb" ]]; then best=$candidate; fi
  done < <(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V)
  if [[ -n "$best" ]]; then
    echo "$best"
    return
  fi
  # Other layouts: whatever initdb is on the PATH.
  local initdb
  initdb=$(command -v initdb || true)
  [[ -n "$initdb" ]] || die "no PostgreSQL server found (install the Debian package 'postgresql')"
  dirname "$initdb"
}

bin=$(find_bin_dir)

# Runs a server command as the user the server must run as.
as_server_user() {
  if [[ $EUID -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

is_running() {
  [[ -f "$data/postmaster.pid" ]] && as_server_user "$bin/pg_ctl" status -D "$data" >/dev/null 2>&1
}

stop_server() {
  if is_running; then
    as_server_user "$bin/pg_ctl" stop -D "$data" -m fast -w >/dev/null
  fi
}

# A TCP port nobody listens on right now. Another process may still take it before the server
# binds it; pg_ctl -w then fails and start reports the log.
free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])' && return
  fi
  local port
  for _ in $(seq 1 200); do
    port=$((20000 + RANDOM % 40000))
    # A refused connection means nothing listens there.
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  die "no free TCP port found on 127.0.0.1"
}

start() {
  if [[ -d "$data" ]]; then
    stop_server
    rm -rf "$data"
  fi
  mkdir -p "$dir"
  rm -f "$dir/url" "$dir/server.log"

  if [[ $EUID -eq 0 ]]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the 'postgres' system user"
    chown postgres: "$dir"
    # The server user must be able to reach DIR through its parents.
    runuser -u postgres -- test -x "$dir" ||
      die "user postgres cannot reach $dir; choose a directory whose parents it may enter"
  fi
  as_server_user "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 \
    --locale=C >"$dir/initdb.log" 2>&1 ||
    die "initdb failed; see $dir/initdb.log"

  # A Unix socket path is limited to ~107 bytes; in a deep build directory only TCP is used.
  local socket_dir="$dir"
  if [[ ${#dir} -gt 90 ]]; then socket_dir=""; fi

  local port
  port=$(free_port)
  # In postgresql.conf, not on the pg_ctl command line, so that restart keeps them.
  cat >>"$data/postgresql.conf" <<EOF

# pg_server.sh
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$socket_dir'
fsync = ${LEADFLOW_PG_FSYNC:-on}
max_connections = 200
EOF

  if ! as_server_user "$bin/pg_ctl" start -D "$data" -l "$dir/server.log" -w -t 60 >/dev/null; then
    cat "$dir/server.log" >&2 || true
    die "the server did not start; see $dir/server.log"
  fi
  local url="postgresql://postgres@127.0.0.1:$port/postgres"
  echo "$url" >"$dir/url"
  echo "$url"
}

stop() {
  stop_server
  rm -rf "$dir"
}

restart() {
  [[ -f "$data/postgresql.conf" ]] || die "no server in $dir; run: $0 start $dir"
  as_server_user "$bin/pg_ctl" restart -D "$data" -l "$dir/server.log" -m fast -w -t 60 \
    >/dev/null || die "the server did not restart; see $dir/server.log"
}

halt() {
  [[ -f "$data/postgresql.conf" ]] || die "no server in $dir; run: $0 start $dir"
  stop_server
}

resume() {
  [[ -f "$data/postgresql.conf" ]] || die "no server in $dir; run: $0 start $dir"
  is_running && return 0
  as_server_user "$bin/pg_ctl" start -D "$data" -l "$dir/server.log" -w -t 60 \
    >/dev/null || die "the server did not start; see $dir/server.log"
}

case "$command" in
  start) start ;;
  stop) stop ;;
  restart) restart ;;
  halt) halt ;;
  resume) resume ;;
  *) usage ;;
esac
