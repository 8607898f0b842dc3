#!/usr/bin/env bash
# A real 3-node Apache Cassandra cluster on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (vnodes),
# each node a tools/cassandra.sh node; for the multi-node tests (nox -s cluster).
#
#   tools/cluster.sh [start]      start the nodes one after another (each joins the ring
#                                 before the next starts); idempotent; when a node fails
#                                 three tries, the nodes started are stopped again
#   tools/cluster.sh stop         stop every node
#   tools/cluster.sh status       print "node address pid" per node that is up; exit 1 unless all are
#   tools/cluster.sh start-node N start node N (1-based) again
#   tools/cluster.sh stop-node N  stop node N
#
# Environment (defaults in brackets): CLUSTER_NODES [3], CLUSTER_CQL_PORT [33042] and
# CLUSTER_STORAGE_PORT [33000] (the same on every address), CLUSTER_JMX_BASE [33100]
# (node N: base + N), CLUSTER_NUM_TOKENS [16], CASS_HEAP [512M], CLUSTER_CLEAN [0]
# (1 = wipe the nodes' data first), CLUSTER_DIR [<repo>/.cassandra/cluster-<version>].
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
CLUSTER_NODES="${CLUSTER_NODES:-3}"
CLUSTER_CQL_PORT="${CLUSTER_CQL_PORT:-33042}"
CLUSTER_STORAGE_PORT="${CLUSTER_STORAGE_PORT:-33000}"
CLUSTER_JMX_BASE="${CLUSTER_JMX_BASE:-33100}"
CLUSTER_NUM_TOKENS="${CLUSTER_NUM_TOKENS:-16}"
CLUSTER_DIR="${CLUSTER_DIR:-$here/.cassandra/cluster-${CASSANDRA_VERSION:-5.0.9}}"
export CASS_HEAP="${CASS_HEAP:-512M}"

node() { # N command: tools/cassandra.sh for node N
  local n=$1; shift
  # a joining node looks for the seed in its gossip once the ring delay is over (1 s in
  # tools/cassandra.sh, for one node): on 2 busy cores the first exchange can take longer
  local extra="${CASS_EXTRA_JVM_OPTS:-}"
  if (( n > 1 )); then extra="-Dcassandra.ring_delay_ms=5000 $extra"; fi
  CASS_EXTRA_JVM_OPTS="$extra" CASS_ADDRESS="127.0.0.$n" CASS_CQL_PORT="$CLUSTER_CQL_PORT" \
    CASS_STORAGE_PORT="$CLUSTER_STORAGE_PORT" CASS_JMX_PORT="$((CLUSTER_JMX_BASE + n))" \
    CASS_SEEDS="127.0.0.1:$CLUSTER_STORAGE_PORT" CASS_NUM_TOKENS="$CLUSTER_NUM_TOKENS" \
    CASS_RUN_DIR="$CLUSTER_DIR/node$n" CASS_CLEAN="${CLUSTER_CLEAN:-0}" \
    bash "$here/tools/cassandra.sh" "$@"
}

stop_nodes() { # N: stop nodes N..1 (a node not running is fine)
  for m in $(seq "$1" -1 1); do node "$m" stop; done
}

case "${1:-start}" in
  start)
    for n in $(seq 1 "$CLUSTER_NODES"); do
      echo "[cluster.sh] node $n (127.0.0.$n)" >&2
      # a node that joins while the seed's gossip is still settling can give up ("Unable
      # to contact any seeds"): it is started again, twice at most
      for attempt in 1 2 3; do
        if node "$n" start >/dev/null; then break; fi
        if (( attempt == 3 )); then
          # a half-started cluster is of no use and holds memory and ports: stop what started
          echo "[cluster.sh] node $n did not start three times; stopping nodes 1-$n" >&2
          stop_nodes "$n" || true
          exit 1
        fi
        echo "[cluster.sh] node $n did not start; trying again" >&2
        sleep 10
      done
    done
    echo "[cluster.sh] $CLUSTER_NODES nodes up: CQLCODEC_CLUSTER=127.0.0.1:$CLUSTER_CQL_PORT" >&2 ;;
  stop)
    stop_nodes "$CLUSTER_NODES" ;;
  status)
    up=0
    for n in $(seq 1 "$CLUSTER_NODES"); do
      if pid=$(node "$n" status); then echo "$n 127.0.0.$n $pid"; up=$((up + 1)); fi
    done
    (( up == CLUSTER_NODES )) ;;
  start-node) node "${2:?node number}" start ;;
  stop-node) node "${2:?node number}" stop ;;
  *) echo "usage: $0 [start|stop|status|start-node N|stop-node N]" >&2; exit 2 ;;
esac
