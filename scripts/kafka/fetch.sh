#!/usr/bin/env bash
# The Apache Kafka release the tests run (scripts/kafka_cluster.sh), out of Maven Central.
#
#   scripts/kafka/fetch.sh          copies the release pinned in scripts/kafka/pom.xml and its
#                                   dependencies into the cache directory below, once: a complete
#                                   copy is reused as it is, with no network (the broker runs from
#                                   the jars there, `java -cp 'DIR/*'`).
#   scripts/kafka/fetch.sh --home   prints the cache directory (whether or not it is filled).
#
# The directory is ${XDG_CACHE_HOME:-$HOME/.cache}/leadflow/kafka-VERSION: outside the tree, so a
# clean clone and `git clean` keep it, and each version has its own. Maven checks every artifact's
# checksum and fails on a mismatch (-C, the strict checksum policy).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pom="$here/pom.xml"
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
[[ -n "$version" ]] || { echo "kafka/fetch.sh: no <kafka.version> in $pom" >&2; exit 1; }
home=${XDG_CACHE_HOME:-${HOME:?}/.cache}/leadflow/kafka-$version

if [[ "${1:-}" == --home ]]; then
  echo "$home"
  exit 0
fi
[[ $# -eq 0 ]] || { echo "usage: $0 [--home]" >&2; exit 2; }

# The marker is written last: a fetch cut short leaves no marker and is done again.
[[ -f "$home/.complete" ]] && exit 0

command -v mvn >/dev/null || { echo "kafka/fetch.sh: Maven is missing (scripts/deps.sh --test installs it)" >&2; exit 1; }
echo "leadflow: fetching Apache Kafka $version with Maven into $home" >&2
partial="$home.partial.$$"
trap 'rm -rf "$partial"' EXIT
rm -rf "$partial"
mkdir -p "$(dirname "$home")"
if ! mvn -B -q -C -f "$pom" dependency:copy-dependencies -DoutputDirectory="$partial" >"$partial.log" 2>&1; then
  cat "$partial.log" >&2
  rm -f "$partial.log"
  echo "kafka/fetch.sh: Maven could not fetch Apache Kafka $version" >&2
  exit 1
fi
rm -f "$partial.log"
[[ -f "$partial/kafka_2.13-$version.jar" ]] || { echo "kafka/fetch.sh: no kafka_2.13-$version.jar in what Maven copied" >&2; exit 1; }
echo "$version" >"$partial/.complete"
rm -rf "$home"
mv "$partial" "$home"
