#!/usr/bin/env bash
# Installs what leadflow needs from Debian's packages, skipping what is already there.
# Usage: scripts/deps.sh [--test] [--bench] [--scale-out]
#   --test   adds a PostgreSQL server and psql (the tests start their own server),
#            clang-format (scripts/check_format.sh), nginx with its echo module (HTTPS and
#            HTTP/2 buyers in tests/integration/http2_buyer_test.cpp), and clang with libFuzzer
#            and the sanitizers' runtimes plus llvm-symbolizer for their reports (scripts/fuzz.sh),
#            and Prometheus with promtool (the dashboard and alert rules tests, tests/ops), and
#            chromium (the web dashboard's end-to-end test, tests/web), and a Java runtime and
#            Maven, with which it then fetches the pinned Apache Kafka the scale-out tests run
#            (scripts/kafka/fetch.sh: once, from Maven Central, into a cache outside the tree)
# Node and npm come too (Debian's nodejs and npm, where no npm is there yet): the build runs Vite
# to make the web dashboard that leadflow-ingest embeds (ingest/web).
#   --bench  adds those, wrk, nginx and its echo module (scripts/bench.sh)
#   --scale-out  a PostgreSQL server and psql, a Java runtime and Maven, and the pinned Apache
#            Kafka (scripts/run.sh --scale-out runs the scale-out shape on this machine)
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ca-certificates curl openssl tzdata
  libcpp-httplib-dev libssl-dev zlib1g-dev libbrotli-dev
  librdkafka-dev libsimdjson-dev nlohmann-json3-dev prometheus-cpp-dev
  libcurl4-openssl-dev libnghttp2-dev libsqlite3-dev libpq-dev libgtest-dev
  libjemalloc-dev libsodium-dev
)
# A machine that already has a Node with npm keeps it: Debian's npm conflicts with other builds of
# nodejs.
command -v npm >/dev/null || packages+=(nodejs npm)
kafka=0
for arg in "$@"; do
  case "$arg" in
    --test)
      packages+=(postgresql postgresql-client clang-format nginx-light libnginx-mod-http-echo
        clang libclang-rt-14-dev llvm prometheus chromium)
      # The same as for npm: a machine with its own Java or Maven keeps them.
      command -v java >/dev/null || packages+=(openjdk-17-jre-headless)
      command -v mvn >/dev/null || packages+=(maven)
      kafka=1
      ;;
    --bench) packages+=(postgresql postgresql-client wrk nginx-light libnginx-mod-http-echo) ;;
    --scale-out)
      packages+=(postgresql postgresql-client)
      command -v java >/dev/null || packages+=(openjdk-17-jre-headless)
      command -v mvn >/dev/null || packages+=(maven)
      kafka=1
      ;;
    *) echo "deps.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "leadflow: installing ${missing[*]}" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ((kafka)); then
  "$(dirname "$0")/kafka/fetch.sh"
fi
