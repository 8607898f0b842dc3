#!/usr/bin/env bash
# A driver's own integration tests (tests/integration/standard of cassandra-driver's or
# scylla-driver's repository), run with the driver's connection class and with cqlcodec's (and,
# with DRIVER_SUITE_CLASSES naming install, with cqlcodec.driver.install() on every Cluster), on
# protocol v4 and v5, then compared: a test that passes with the driver's class and not with
# cqlcodec's is a bug.
# Long (minutes per module); not part of CI. docs/development.md has the setup.
#
#   tools/driver_suite.sh compiled|pure [test module names...]   (default: every module)
#
# Environment (defaults in brackets):
#   DRIVER_SUITE_SRC       a checkout of datastax/python-driver or scylladb/python-driver (its
#                          tests/ is what runs) [required]
#   DRIVER_SUITE_CCM       a folder holding ccmlib (apache/cassandra-ccm; scylladb/scylla-ccm for
#                          scylla-driver's tests), put on PYTHONPATH []
#   DRIVER_SUITE_PYTHON    a python with that driver, pytest, pytest-timeout, scales, pytz,
#                          pure-sasl, packaging (and mypy, librt for the compiled build) [python3]
#   DRIVER_SUITE_PROTOCOLS [4 5]
#   DRIVER_SUITE_CLASSES   [driver cqlcodec]  the runs to make (then the comparison of what is there):
#                          driver (the driver alone), cqlcodec (its connection class),
#                          install (its connection class and install() on every Cluster)
#   DRIVER_SUITE_OUT       where junit files and logs go [<repo>/.driver-suite/<build>]
#   DRIVER_SUITE_BUILD     a compiled copy made by `tools/devtest.sh build` to use instead of
#                          compiling one into $DRIVER_SUITE_OUT/build []
#   DRIVER_SUITE_TIMEOUT   seconds per test (pytest-timeout) [120]
#   DRIVER_SUITE_RESET     1: drop every user keyspace before each run (0: keep them) [1]
#   EVENT_LOOP_MANAGER     the driver's test reactor: libev, asyncio, asyncore [libev]
#   CQLCODEC_DRIVER_SUITE_FILL_FROM  bodies of this many bytes and more filled in place as they
#                          arrive (cqlcodec.connection.large_bodies) [its default, 1 MiB]
# The tests connect to Cassandra on 127.0.0.1:9042 (USE_CASS_EXTERNAL=1), for example
#   CASS_CQL_PORT=9042 CASS_STORAGE_PORT=27500 CASS_JMX_PORT=27599 tools/cassandra.sh start
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: driver_suite.sh compiled|pure [test modules...]}; shift
src=${DRIVER_SUITE_SRC:?DRIVER_SUITE_SRC: a checkout of datastax/python-driver}
py=${DRIVER_SUITE_PYTHON:-python3}
out=${DRIVER_SUITE_OUT:-$here/.driver-suite/$build}
mkdir -p "$out"
classes=${DRIVER_SUITE_CLASSES:-driver cqlcodec}
case "$build" in
  pure) codec="$here" ;;
  compiled)
    codec=${DRIVER_SUITE_BUILD:-$out/build}
    if [[ -z "${DRIVER_SUITE_BUILD:-}" && " $classes " == *" cqlcodec "* ]]; then
      DEVTEST_DIR="$codec" PYTHON="$py" bash "$here/tools/devtest.sh" build >/dev/null
    fi
    ;;
  *) echo "build must be compiled or pure" >&2; exit 2 ;;
esac
modules=()
for name in "$@"; do modules+=("tests/integration/standard/$name"); done
[ ${#modules[@]} -gt 0 ] || modules=(tests/integration/standard)

export PYTHONPATH="$src:$here/tools:$codec${DRIVER_SUITE_CCM:+:$DRIVER_SUITE_CCM}"
# every run starts from a server without the keyspaces of earlier runs (driver_suite_plugin.py)
export CQLCODEC_DRIVER_SUITE_RESET=${DRIVER_SUITE_RESET:-1}
export USE_CASS_EXTERNAL=1 CASSANDRA_VERSION=${CASSANDRA_VERSION:-5.0.9}
cd "$src"
for protocol in ${DRIVER_SUITE_PROTOCOLS:-4 5}; do
  for class in $classes; do
    run="v$protocol-$class"
    echo "[driver_suite] $run: ${modules[*]} (log: $out/$run.log)" >&2
    PROTOCOL_VERSION=$protocol CQLCODEC_DRIVER_SUITE_CLASS=$class \
      "$py" -m pytest -p driver_suite_plugin -p no:cacheprovider -rA \
      --timeout="${DRIVER_SUITE_TIMEOUT:-120}" --junitxml="$out/$run.xml" "${modules[@]}" \
      >"$out/$run.log" 2>&1 || true
    grep -a -E '^=+ .* in [0-9.]+s' "$out/$run.log" | tail -1 >&2 || true
  done
done
"$py" "$here/tools/driver_suite_compare.py" "$out"
