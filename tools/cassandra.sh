#!/usr/bin/env bash
# A real single-node Apache Cassandra (default 5.0.9) for the integration tests,
# built from Maven Central jars (no Apache tarball), listening on a loopback address (127.0.0.1 by default).
#
#   tools/cassandra.sh [start]   start (or find running) node; wait for CQL; last stdout line = PID
#   tools/cassandra.sh stop      SIGTERM the recorded PID, SIGKILL after CASS_STOP_TIMEOUT s
#   tools/cassandra.sh status    print the PID and exit 0 if the node is up, else exit 1
#
# Both start and stop are idempotent. Needs java (17) and mvn on PATH; the first start
# fetches org.apache.cassandra:cassandra-all and its runtime dependencies with Maven into
# the jar cache, every later start runs offline from that cache.
#
# Environment (defaults in brackets):
#   CASSANDRA_VERSION  [5.0.9]
#   CASS_CACHE_DIR     [${XDG_CACHE_HOME:-~/.cache}/cqlcodec/cassandra]   jars: lib-<version>/
#   CASS_RUN_DIR       [<repo>/.cassandra/<version>-<cql port>]           conf, data, logs, pid file
#   CASS_CQL_PORT [9042]  CASS_STORAGE_PORT [7000]  CASS_JMX_PORT [7199]  (on CASS_ADDRESS)
#   CASS_ADDRESS       [127.0.0.1]  listen and rpc address (a loopback address: 127.0.0.2 ...)
#   CASS_SEEDS         [<CASS_ADDRESS>:<CASS_STORAGE_PORT>]  the seed list of a multi-node cluster
#   CASS_NUM_TOKENS    [1]        vnodes per node; 1 = the single token 0 (initial_token)
#   CASS_HEAP          [1G]       maximum Java heap (-Xmx)
#   CASS_START_TIMEOUT [180]      seconds to wait for the CQL port
#   CASS_STOP_TIMEOUT  [45]       seconds between SIGTERM and SIGKILL
#   CASS_CLEAN         [0]        1 = wipe data before starting a node that is not running
#   CASS_FAST_START    [1]        1 = C1-only JIT (boots in ~6 s instead of ~12 s on 2 cores)
#   CASS_EXTRA_JVM_OPTS           extra JVM flags (word-split), appended last
#   CASS_AUTH          [0]        1 = password authentication: PasswordAuthenticator,
#                                 CassandraAuthorizer; superuser cassandra/cassandra, made at
#                                 the first start (start waits for it: about 10 s more)
#
# The CQL port takes plain and TLS connections both (client encryption, optional), with a
# self-signed certificate for CASS_ADDRESS made by keytool at the first start:
# <run dir>/conf/node-cert.pem is the certificate a client may verify against.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
CASSANDRA_VERSION="${CASSANDRA_VERSION:-5.0.9}"
CASS_CQL_PORT="${CASS_CQL_PORT:-9042}"
CASS_STORAGE_PORT="${CASS_STORAGE_PORT:-7000}"
CASS_JMX_PORT="${CASS_JMX_PORT:-7199}"
CASS_CACHE_DIR="${CASS_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cqlcodec/cassandra}"
CASS_ADDRESS="${CASS_ADDRESS:-127.0.0.1}"
CASS_SEEDS="${CASS_SEEDS:-$CASS_ADDRESS:$CASS_STORAGE_PORT}"
CASS_NUM_TOKENS="${CASS_NUM_TOKENS:-1}"
if [[ "$CASS_ADDRESS" == "127.0.0.1" ]]; then run_name="$CASSANDRA_VERSION-$CASS_CQL_PORT"
else run_name="$CASSANDRA_VERSION-$CASS_ADDRESS-$CASS_CQL_PORT"; fi
CASS_RUN_DIR="${CASS_RUN_DIR:-$here/.cassandra/$run_name}"
CASS_HEAP="${CASS_HEAP:-1G}"
CASS_START_TIMEOUT="${CASS_START_TIMEOUT:-180}"
CASS_STOP_TIMEOUT="${CASS_STOP_TIMEOUT:-45}"
JAVA="${JAVA:-java}"

LIB_DIR="$CASS_CACHE_DIR/lib-$CASSANDRA_VERSION"
PID_FILE="$CASS_RUN_DIR/cassandra.pid"
CONF_DIR="$CASS_RUN_DIR/conf"
LOG_DIR="$CASS_RUN_DIR/logs"
MAIN_CLASS=org.apache.cassandra.service.CassandraDaemon

log() { echo "[cassandra.sh] $*" >&2; }

port_open() { # port on CASS_ADDRESS
  (exec 3<>"/dev/tcp/$CASS_ADDRESS/$1") 2>/dev/null
}

# The PID in the pid file, if that process is alive and really is our Cassandra
# (guards against a recycled PID after a crash or reboot).
our_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid=$(cat "$PID_FILE")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r "/proc/$pid/cmdline" ]]; then
    tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$MAIN_CLASS" || return 1
    tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$CONF_DIR/cassandra.yaml" || return 1
  fi
  echo "$pid"
}

stop_node() {
  local pid
  if ! pid=$(our_pid); then
    rm -f "$PID_FILE"
    log "not running ($CASS_RUN_DIR)"
    return 0
  fi
  log "stopping PID $pid (SIGTERM)"
  kill -TERM "$pid" 2>/dev/null || true
  local waited=0
  while kill -0 "$pid" 2>/dev/null && (( waited < CASS_STOP_TIMEOUT * 2 )); do
    sleep 0.5; waited=$(( waited + 1 ))
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "PID $pid still alive after $CASS_STOP_TIMEOUT s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
  fi
  rm -f "$PID_FILE"
  log "stopped"
}

fetch_jars() {
  [[ -f "$LIB_DIR/.complete" ]] && return 0
  command -v mvn >/dev/null || { log "ERROR: mvn not on PATH (needed once to fetch the jars)"; exit 1; }
  log "fetching org.apache.cassandra:cassandra-all:$CASSANDRA_VERSION and its runtime deps with mvn"
  local pomdir="$CASS_CACHE_DIR/pom-$CASSANDRA_VERSION"
  rm -rf "$LIB_DIR"
  mkdir -p "$pomdir" "$LIB_DIR"
  cat > "$pomdir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>cqlcodec</groupId><artifactId>cassandra-runtime</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.cassandra</groupId><artifactId>cassandra-all</artifactId>
      <version>$CASSANDRA_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
  local t0; t0=$(date +%s)
  if ! mvn -B -q -f "$pomdir/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$LIB_DIR" > "$pomdir/mvn.log" 2>&1; then
    log "ERROR: mvn failed (is cassandra-all:$CASSANDRA_VERSION on Maven Central?)"
    tail -30 "$pomdir/mvn.log" >&2
    exit 1
  fi
  touch "$LIB_DIR/.complete"
  log "jars fetched in $(( $(date +%s) - t0 )) s: $(ls "$LIB_DIR"/*.jar | wc -l) jars in $LIB_DIR"
}

write_config() {
  mkdir -p "$CONF_DIR" "$LOG_DIR" "$CASS_RUN_DIR"/{data,commitlog,saved_caches,hints,cdc_raw,triggers}
  local extra_yaml=""
  case "$CASSANDRA_VERSION" in
    5.*) extra_yaml="storage_compatibility_mode: NONE" ;;  # a fresh 5.0 node: all 5.0 features on
  esac
  local tokens_yaml="num_tokens: 1
initial_token: 0"
  if [[ "$CASS_NUM_TOKENS" != "1" ]]; then
    tokens_yaml="num_tokens: $CASS_NUM_TOKENS"
  fi
  local keystore="$CONF_DIR/keystore.p12" tls_yaml=""
  if [[ ! -f "$keystore" ]]; then
    local keytool
    keytool=$(dirname "$(readlink -f "$(command -v "$JAVA")")")/keytool
    [[ -x "$keytool" ]] || keytool=$(command -v keytool || true)
    if [[ -n "$keytool" ]] && "$keytool" -genkeypair -alias node -keyalg EC \
        -groupname secp256r1 -validity 3650 -dname "CN=$CASS_ADDRESS" \
        -ext "SAN=IP:$CASS_ADDRESS" -storetype PKCS12 -keystore "$keystore" \
        -storepass cqlcodec -keypass cqlcodec -noprompt >/dev/null 2>&1; then
      "$keytool" -exportcert -rfc -alias node -keystore "$keystore" -storepass cqlcodec \
        -file "$CONF_DIR/node-cert.pem" >/dev/null 2>&1 || true
    else
      rm -f "$keystore"
      log "no keytool beside $JAVA: the CQL port takes plain connections only"
    fi
  fi
  if [[ -f "$keystore" ]]; then
    tls_yaml="client_encryption_options:
  enabled: true
  optional: true
  keystore: $keystore
  keystore_password: cqlcodec
  store_type: PKCS12"
  fi
  local auth_yaml="authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer"
  if [[ "${CASS_AUTH:-0}" == "1" ]]; then
    # roles and permissions are read from system_auth at every request, not cached for
    # seconds: a GRANT or a new role works at once (tests create them and use them)
    auth_yaml="authenticator: PasswordAuthenticator
authorizer: CassandraAuthorizer
roles_validity: 0ms
permissions_validity: 0ms
credentials_validity: 0ms"
  fi
  cat > "$CONF_DIR/cassandra.yaml" <<EOF
# written by tools/cassandra.sh: loopback only
cluster_name: 'cqlcodec'
$tokens_yaml
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
$auth_yaml
role_manager: CassandraRoleManager
data_file_directories:
  - $CASS_RUN_DIR/data
commitlog_directory: $CASS_RUN_DIR/commitlog
saved_caches_directory: $CASS_RUN_DIR/saved_caches
hints_directory: $CASS_RUN_DIR/hints
cdc_raw_directory: $CASS_RUN_DIR/cdc_raw
commitlog_sync: periodic
commitlog_sync_period: 10000ms
commitlog_segment_size: 32MiB
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "$CASS_SEEDS"
listen_address: $CASS_ADDRESS
rpc_address: $CASS_ADDRESS
storage_port: $CASS_STORAGE_PORT
native_transport_port: $CASS_CQL_PORT
start_native_transport: true
endpoint_snitch: SimpleSnitch
memtable_heap_space: 128MiB
memtable_offheap_space: 128MiB
concurrent_reads: 8
concurrent_writes: 8
concurrent_counter_writes: 8
concurrent_compactors: 1
key_cache_size: 16MiB
disk_failure_policy: stop
commit_failure_policy: stop
auto_snapshot: false
$tls_yaml
$extra_yaml
EOF
  cat > "$CONF_DIR/logback.xml" <<EOF
<configuration scan="false">
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>$LOG_DIR/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <filter class="ch.qos.logback.classic.filter.ThresholdFilter"><level>WARN</level></filter>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO">
    <appender-ref ref="FILE" />
    <appender-ref ref="STDOUT" />
  </root>
</configuration>
EOF
}

launch() {
  # The JPMS flags of apache/cassandra conf/jvm17-server.options, plus what cassandra-env.sh adds.
  local jvm_opts=(
    -Xms256M "-Xmx$CASS_HEAP" -Xss256k
    -XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxTenuringThreshold=1 -XX:G1HeapRegionSize=16m
    -XX:G1RSetUpdatingPauseTimePercent=5 -XX:MaxGCPauseMillis=300 -XX:InitiatingHeapOccupancyPercent=70
    -XX:+HeapDumpOnOutOfMemoryError "-XX:HeapDumpPath=$LOG_DIR" -XX:+ExitOnOutOfMemoryError
    -XX:+PerfDisableSharedMem -XX:+UseTLAB -XX:+ResizeTLAB
    -ea -da:net.openhft...
    -Djava.net.preferIPv4Stack=true
    -Djdk.attach.allowAttachSelf=true
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
    --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
    --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
    --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
    --add-exports java.sql/java.sql=ALL-UNNAMED
    --add-exports java.base/java.lang.ref=ALL-UNNAMED
    --add-exports jdk.unsupported/sun.misc=ALL-UNNAMED
    --add-exports jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
    --add-exports jdk.attach/sun.tools.attach=ALL-UNNAMED
    --add-opens java.base/java.lang.module=ALL-UNNAMED
    --add-opens java.base/jdk.internal.loader=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
    --add-opens java.base/jdk.internal.reflect=ALL-UNNAMED
    --add-opens java.base/jdk.internal.math=ALL-UNNAMED
    --add-opens java.base/jdk.internal.module=ALL-UNNAMED
    --add-opens java.base/jdk.internal.util.jar=ALL-UNNAMED
    --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED
    --add-opens java.base/java.io=ALL-UNNAMED
    --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
    --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED
    --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/java.util.concurrent=ALL-UNNAMED
    --add-opens java.base/java.util.concurrent.atomic=ALL-UNNAMED
    --add-opens java.base/java.util.concurrent.locks=ALL-UNNAMED
    --add-opens java.base/java.net=ALL-UNNAMED
    --add-opens java.base/java.nio.charset=ALL-UNNAMED
    --add-opens java.base/java.nio.file.attribute=ALL-UNNAMED
    --add-opens java.base/java.nio.file.spi=ALL-UNNAMED
    -Dio.netty.tryReflectionSetAccessible=true
    -Dio.netty.allocator.useCacheForAllThreads=true
    -Dio.netty.allocator.maxOrder=11
    "-javaagent:$(ls "$LIB_DIR"/jamm-*.jar | head -1)"
    "-Dcassandra.config=file://$CONF_DIR/cassandra.yaml"
    "-Dlogback.configurationFile=file://$CONF_DIR/logback.xml"
    "-Dcassandra.logdir=$LOG_DIR"
    "-Dcassandra.storagedir=$CASS_RUN_DIR"
    -Dcassandra-foreground=yes
    "-Dcassandra.triggers_dir=$CASS_RUN_DIR/triggers"
    # JMX: a local-only connector on 127.0.0.1
    "-Dcassandra.jmx.local.port=$CASS_JMX_PORT"
    -Dcom.sun.management.jmxremote.authenticate=false
    "-Djava.rmi.server.hostname=$CASS_ADDRESS"
    -Dcassandra.skip_wait_for_gossip_to_settle=0
    -Dcassandra.ring_delay_ms=1000
  )
  if [[ "${CASS_FAST_START:-1}" == "1" ]]; then jvm_opts+=( -XX:TieredStopAtLevel=1 ); fi
  # the default superuser is made at once, not 10 s after the node is up
  if [[ "${CASS_AUTH:-0}" == "1" ]]; then jvm_opts+=( -Dcassandra.superuser_setup_delay_ms=0 ); fi
  # shellcheck disable=SC2206
  jvm_opts+=( ${CASS_EXTRA_JVM_OPTS:-} )
  log "starting Cassandra $CASSANDRA_VERSION: CQL $CASS_ADDRESS:$CASS_CQL_PORT, $CASS_NUM_TOKENS token(s), logs in $LOG_DIR"
  date +%s%N > "$CASS_RUN_DIR/start_ts"
  nohup setsid "$JAVA" "${jvm_opts[@]}" -cp "$LIB_DIR/*" "$MAIN_CLASS" \
      > "$LOG_DIR/stdout.log" 2>&1 < /dev/null &
  echo $! > "$PID_FILE"
}

# CASS_AUTH=1: the CQL port opens before the default superuser exists; wait for the line
# the role manager logs when it made it (once per data directory: then a marker file)
wait_for_superuser() {
  local pid=$1 deadline=$2
  [[ -f "$CASS_RUN_DIR/data/superuser_ready" ]] && return 0
  until grep -q "Created default superuser role" "$LOG_DIR/system.log" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null || (( $(date +%s) > deadline )); then
      log "ERROR: no default superuser role after $CASS_START_TIMEOUT s (see $LOG_DIR/system.log)"
      stop_node
      exit 1
    fi
    sleep 0.5
  done
  touch "$CASS_RUN_DIR/data/superuser_ready"
  log "default superuser cassandra/cassandra ready"
}

start_node() {
  local pid
  if pid=$(our_pid); then
    if port_open "$CASS_CQL_PORT"; then
      log "already running: PID $pid, CQL on $CASS_ADDRESS:$CASS_CQL_PORT"
      echo "$pid"
      return 0
    fi
    log "PID $pid is starting; waiting for the CQL port"
  else
    rm -f "$PID_FILE"
    for p in "$CASS_CQL_PORT" "$CASS_STORAGE_PORT" "$CASS_JMX_PORT"; do
      if port_open "$p"; then log "ERROR: $CASS_ADDRESS:$p is taken by another process"; exit 1; fi
    done
    fetch_jars
    if [[ "${CASS_CLEAN:-0}" == "1" ]]; then
      log "CASS_CLEAN=1: wiping the data of $CASS_RUN_DIR"
      rm -rf "$CASS_RUN_DIR"/{data,commitlog,saved_caches,hints,cdc_raw}
    elif [[ -d "$CASS_RUN_DIR/data" && "$(cat "$CASS_RUN_DIR/num_tokens" 2>/dev/null || echo 1)" != "$CASS_NUM_TOKENS" ]]; then
      # a node cannot change its token count: the test data goes, the new ring starts empty
      log "CASS_NUM_TOKENS changed to $CASS_NUM_TOKENS: wiping the data of $CASS_RUN_DIR"
      rm -rf "$CASS_RUN_DIR"/{data,commitlog,saved_caches,hints,cdc_raw}
    fi
    mkdir -p "$CASS_RUN_DIR"
    echo "$CASS_NUM_TOKENS" > "$CASS_RUN_DIR/num_tokens"
    write_config
    launch
  fi
  pid=$(cat "$PID_FILE")
  local deadline=$(( $(date +%s) + CASS_START_TIMEOUT ))
  until port_open "$CASS_CQL_PORT"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "ERROR: Cassandra (PID $pid) exited during startup; last lines of $LOG_DIR/stdout.log:"
      tail -30 "$LOG_DIR/stdout.log" >&2 || true
      rm -f "$PID_FILE"
      exit 1
    fi
    if (( $(date +%s) > deadline )); then
      log "ERROR: CQL port not open after $CASS_START_TIMEOUT s"
      stop_node
      exit 1
    fi
    sleep 0.5
  done
  if [[ "${CASS_AUTH:-0}" == "1" ]]; then wait_for_superuser "$pid" "$deadline"; fi
  if [[ -f "$CASS_RUN_DIR/start_ts" ]]; then
    local ms=$(( ($(date +%s%N) - $(cat "$CASS_RUN_DIR/start_ts")) / 1000000 ))
    log "CQL port open $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s after JVM launch"
  fi
  log "Cassandra $CASSANDRA_VERSION up (PID $pid): CQLCODEC_CASSANDRA=$CASS_ADDRESS:$CASS_CQL_PORT"
  echo "$pid"
}

case "${1:-start}" in
  start) start_node ;;
  stop) stop_node ;;
  status)
    if pid=$(our_pid) && port_open "$CASS_CQL_PORT"; then echo "$pid"; else exit 1; fi ;;
  *) echo "usage: $0 [start|stop|status]" >&2; exit 2 ;;
esac
