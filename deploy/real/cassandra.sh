#!/usr/bin/env bash
# A real Apache Cassandra on this machine, for `twin real` (issue 44).
#
#   deploy/real/cassandra.sh fetch                 resolve the pinned server (pom.xml) from Maven Central
#   deploy/real/cassandra.sh start [--nodes 1|3]   start one node on 127.0.0.1 (or three on 127.0.0.1-3), wait for CQL
#   deploy/real/cassandra.sh stop                  stop every node cleanly (SIGTERM, Cassandra drains), wait for exit
#   deploy/real/cassandra.sh status                which nodes run, their pids and CQL addresses
#   deploy/real/cassandra.sh kill N                kill -9 node N (1-based), for the fault check
#   deploy/real/cassandra.sh restart N             start node N again on its data (after kill)
#   deploy/real/cassandra.sh pid N                 print node N's pid (for `twin real --server-pid`)
#   deploy/real/cassandra.sh nodetool N ARGS...    Cassandra's nodetool against node N (over local JMX)
#   deploy/real/cassandra.sh settle N              flush node N's memtables and wait until its
#                                                  compactions are done (a quiet node between phases)
#   deploy/real/cassandra.sh work N OUT ARGS...    run `nodetool ARGS` against node N (a flush or a
#                                                  compaction) and record in OUT what it cost: each
#                                                  thread's CPU before and after, and the node's log
#                                                  lines meanwhile (REAL.md's K1 and F1)
#   deploy/real/cassandra.sh runnable N SECONDS [INTERVAL]
#                                                  every INTERVAL s (default 0.5) for SECONDS, a line: the
#                                                  time and, by thread group, node N's threads the kernel
#                                                  holds runnable (state R): how many share its cores
#   deploy/real/cassandra.sh spinners N SECONDS [INTERVAL]
#                                                  every INTERVAL s (default 0.1) for SECONDS, a line: the
#                                                  time and node N's shared-pool workers by what they do:
#                                                  spinning (parked with a timeout: SEPWorker's doWaitSpin),
#                                                  stopped (parked without one), on a core or runnable, other
#   deploy/real/cassandra.sh spin-cost [RUNS]      what a spinning worker's 10-us parks cost on the
#                                                  server's cores (ParkSpin.java; no node needed)
#
# Everything lives under $TWIN_REAL_DIR (default: target/real in this
# checkout): node-N/ holds the node's cassandra.yaml, data, commitlog, hints,
# saved caches, system.log, gc.log and pid. The jars stay in Maven's local
# repository (~/.m2), so a second fetch downloads nothing.
#
# Settings (environment):
#   TWIN_REAL_DIR    where the nodes live (default: <checkout>/target/real)
#   TWIN_REAL_CORES  cores the server is pinned to, as taskset -c takes them
#                    (default: every core but 0, which is left to the client;
#                    core 0 on a one-core machine)
#   TWIN_REAL_HEAP   the JVM heap, -Xms = -Xmx (default: a quarter of this
#                    machine's memory, at most 8G: the rule of Cassandra's
#                    own cassandra-env.sh above 8 GB of memory)
#   TWIN_REAL_START_TIMEOUT  seconds to wait for CQL (default 180)
#
# The yaml states only what a node on this machine must have (addresses,
# directories, the seed list, the snitch and partitioner Cassandra requires);
# every other setting is Cassandra 5.0's default from its Config class, so
# the twin's cassandra-5.0 preset models the defaults, not a tuning.
#
# A failure to fetch or to start is one line on stderr and a non-zero exit.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
checkout="$(cd "$here/../.." && pwd)"
dir="${TWIN_REAL_DIR:-$checkout/target/real}"
timeout_s="${TWIN_REAL_START_TIMEOUT:-180}"
version="$(sed -n 's:.*<cassandra.version>\(.*\)</cassandra.version>.*:\1:p' "$here/pom.xml")"

die() {
    echo "cassandra.sh: $*" >&2
    exit 1
}

cores_default() {
    local n
    n="$(nproc)"
    if [ "$n" -le 1 ]; then echo 0; else echo "1-$((n - 1))"; fi
}

heap_default() {
    local kb mb
    kb="$(awk '/MemTotal/ {print $2}' /proc/meminfo)"
    mb=$((kb / 1024 / 4))
    if [ "$mb" -gt 8192 ]; then mb=8192; fi
    echo "${mb}M"
}

# The runtime classpath of pom.xml, resolved by Maven into ~/.m2 (the local
# repository spares a refetch); cached in $dir/classpath.txt.
classpath() {
    local cp="$dir/classpath.txt"
    if [ ! -s "$cp" ] || [ "$here/pom.xml" -nt "$cp" ]; then
        mkdir -p "$dir"
        command -v mvn >/dev/null || die "Maven (mvn) is not installed; it fetches Cassandra $version from Maven Central"
        command -v java >/dev/null || die "Java is not installed; Cassandra $version runs on Java 17"
        if ! mvn -B -q -f "$here/pom.xml" dependency:build-classpath \
            -Dmdep.outputFile="$cp.tmp" -Dmdep.includeScope=runtime >"$dir/fetch.log" 2>&1; then
            die "cannot resolve org.apache.cassandra:cassandra-all:$version from Maven Central (Maven's output: $dir/fetch.log)"
        fi
        mv "$cp.tmp" "$cp"
    fi
    cat "$cp"
}

node_dir() { echo "$dir/node-$1"; }
node_ip() { echo "127.0.0.$1"; }
node_pid() {
    local f
    f="$(node_dir "$1")/pid"
    [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && cat "$f"
}
nodes_count() {
    if [ -s "$dir/nodes" ]; then cat "$dir/nodes"; else echo 0; fi
}

write_yaml() {
    local i=$1 nodes=$2 d seeds
    d="$(node_dir "$i")"
    seeds="$(node_ip 1):7000"
    mkdir -p "$d/data" "$d/commitlog" "$d/hints" "$d/saved_caches" "$d/cdc_raw" "$d/logs"
    cat >"$d/cassandra.yaml" <<EOF
# Written by deploy/real/cassandra.sh for node $i of $nodes. Only what a
# node on this machine must have; everything else is Cassandra $version's
# default (its Config class).
cluster_name: twin-real
num_tokens: 16
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "$seeds"
listen_address: $(node_ip "$i")
rpc_address: $(node_ip "$i")
native_transport_port: 9042
storage_port: 7000
commitlog_sync: periodic
commitlog_sync_period: 10000ms
data_file_directories:
  - $d/data
commitlog_directory: $d/commitlog
hints_directory: $d/hints
saved_caches_directory: $d/saved_caches
cdc_raw_directory: $d/cdc_raw
EOF
    cat >"$d/logback.xml" <<EOF
<configuration scan="false">
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>$d/logs/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
  <logger name="org.apache.cassandra" level="INFO"/>
</configuration>
EOF
}

# Cassandra 5.0's JVM options for Java 17 (its conf/jvm17-server.options and
# jvm-server.options), with GC logging on: G1's pause phases at debug (the
# object copy time G1 learns its copy cost from, apart from root and card
# scanning), the pause it predicted as it chose each collection set
# (gc+ergo+cset at trace), its heap ergonomics, and at each pause the cards
# the application threads refined themselves and the time it took them
# (gc+refine+stats at debug: "Mutator refinement: ...ms, refined: N",
# REAL.md's test for L1's dearer compaction).
jvm_options() {
    local i=$1 d heap
    d="$(node_dir "$i")"
    heap="${TWIN_REAL_HEAP:-$(heap_default)}"
    cat <<EOF
-Xms$heap
-Xmx$heap
-Xss256k
-XX:+UseG1GC
-XX:+ParallelRefProcEnabled
-XX:MaxTenuringThreshold=1
-XX:G1HeapRegionSize=16m
-XX:G1RSetUpdatingPauseTimePercent=5
-XX:MaxGCPauseMillis=300
-XX:InitiatingHeapOccupancyPercent=70
-XX:+UseTLAB
-XX:+ResizeTLAB
-XX:+UseNUMA
-XX:+PerfDisableSharedMem
-XX:+HeapDumpOnOutOfMemoryError
-XX:+CrashOnOutOfMemoryError
-XX:HeapDumpPath=$d
-Xlog:gc*=info,gc+phases=debug,gc+ergo+heap=debug,gc+ergo+cset=trace,gc+ergo=debug,gc+refine+stats=debug,safepoint=info:file=$d/gc.log:time,uptime,pid,tid,level
-Djava.net.preferIPv4Stack=true
-Djdk.attach.allowAttachSelf=true
-Dio.netty.tryReflectionSetAccessible=true
-Dio.netty.allocator.useCacheForAllThreads=true
-Dio.netty.allocator.maxOrder=11
-Dcassandra-foreground=yes
-Dcassandra.config=file://$d/cassandra.yaml
-Dcassandra.storagedir=$d
-Dcassandra.logdir=$d/logs
-Dcassandra.jmx.local.port=$((7198 + i))
-Dlogback.configurationFile=$d/logback.xml
--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED
--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED
--add-exports=java.sql/java.sql=ALL-UNNAMED
--add-exports=java.base/java.lang.ref=ALL-UNNAMED
--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
--add-exports=jdk.attach/sun.tools.attach=ALL-UNNAMED
--add-opens=java.base/java.lang.module=ALL-UNNAMED
--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED
--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED
--add-opens=java.base/jdk.internal.math=ALL-UNNAMED
--add-opens=java.base/jdk.internal.module=ALL-UNNAMED
--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED
--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED
--add-opens=java.base/java.io=ALL-UNNAMED
--add-opens=java.base/java.lang.reflect=ALL-UNNAMED
--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
--add-opens=java.base/java.lang=ALL-UNNAMED
--add-opens=java.base/java.util=ALL-UNNAMED
EOF
}

# Cassandra's nodetool (in cassandra-all) against node i's local JMX port,
# on core 0 beside the client, with a small heap.
nodetool() {
    local i=$1
    shift
    node_pid "$i" >/dev/null || die "nodetool: node '$i' does not run"
    # shellcheck disable=SC2046
    taskset -c 0 java -Xmx256m $(jvm_options "$i" | grep -- '^--add-') -cp "$(classpath)" \
        -Dcassandra.storagedir="$(node_dir "$i")" -Dlogback.configurationFile="$(node_dir "$i")/logback.xml" \
        org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p $((7198 + i)) "$@"
}

# Every thread of process pid now: its id, its state (R: runnable), its CPU
# in clock ticks (utime + stime of /proc/PID/task/TID/stat) and its name,
# tab-separated.
thread_stat() {
    local f
    for f in /proc/"$1"/task/*/stat; do
        cat "$f" 2>/dev/null || true
    done | awk '{
        lp = index($0, "(")
        rp = 0
        for (k = length($0); k > lp; k--) if (substr($0, k, 1) == ")") { rp = k; break }
        n = split(substr($0, rp + 2), field, " ")
        # After the name: field 3 (state) is field[1], utime (14) field[12].
        print $1 "\t" field[1] "\t" field[12] + field[13] "\t" substr($0, lp + 1, rp - lp - 1)
    }'
}

# The samplers' loop: `SAMPLE PID` every INTERVAL s for SECONDS while node
# N runs.
#   sample_node MODE SAMPLE N SECONDS INTERVAL
sample_node() {
    local mode=$1 sample=$2 i=$3 seconds=$4 interval=$5 pid end
    pid="$(node_pid "$i")" || die "$mode: node '$i' does not run"
    [[ "$seconds" =~ ^[0-9]+$ ]] || die "$mode: SECONDS must be a whole number, not '$seconds'"
    end=$((SECONDS + seconds))
    while [ $SECONDS -lt $end ] && kill -0 "$pid" 2>/dev/null; do
        "$sample" "$pid"
        sleep "$interval"
    done
}

# One line: the time and, by thread group, process pid's threads the kernel
# holds runnable (state R).
runnable_sample() {
    thread_stat "$1" | awk -F '\t' -v t="$(date +%s.%N)" '{
        name = $4; gsub(/[-:#_ 0-9]+$/, "", name)
        if ($2 == "R") runnable[name]++
    } END { line = t; for (n in runnable) line = line " " n "=" runnable[n]; print line }'
}

# One line: the time and process pid's shared-pool workers by what they do.
# A worker's blocking system call tells its state without stopping the
# JVM: parkNanos waits in futex(2) with a timeout (the fourth argument a
# pointer; SEPWorker's spinning park), park() with none (a stopped worker);
# /proc/TID/syscall says "running" for a thread on a core or runnable.
# Names as models::jvm::is_shared_pool_thread takes them; plain bash reads
# (no process per thread) keep the sampler light on the client's core.
spinners_sample() {
    local spinning=0 stopped=0 running=0 other=0 t name call
    for t in /proc/"$1"/task/*; do
        { read -r name <"$t/comm"; } 2>/dev/null || continue # a thread gone meanwhile
        case "$name" in
        Native-Transpo* | MutationStage* | ReadStage* | SharedPool*) ;;
        *) continue ;;
        esac
        { read -r -a call <"$t/syscall"; } 2>/dev/null || continue
        if [ "${call[0]}" = running ]; then
            running=$((running + 1))
        elif [ "${call[0]}" = 202 ] && [ "${call[4]}" != 0x0 ]; then
            spinning=$((spinning + 1))
        elif [ "${call[0]}" = 202 ]; then
            stopped=$((stopped + 1))
        else
            other=$((other + 1))
        fi
    done
    echo "$EPOCHREALTIME spinning=$spinning stopped=$stopped running=$running other=$other"
}

# Every thread of process pid now: id, CPU ticks and name (what `work`
# records).
thread_cpu() {
    thread_stat "$1" | cut -f1,3,4
}

# Node i's compactions pending or running (0 when none).
compactions_busy() {
    local stats pending running
    stats="$(nodetool "$1" compactionstats)"
    pending="$(echo "$stats" | sed -n 's/^pending tasks:\{0,1\} *\([0-9]*\).*/\1/p' | head -1)"
    running="$(echo "$stats" | grep -c -E '^ *[0-9a-f]{8}-' || true)"
    echo $((${pending:-1} + running))
}

# Waits until node i has no compaction pending or running.
wait_compactions() {
    local deadline=$((SECONDS + ${TWIN_REAL_SETTLE_TIMEOUT:-900}))
    until [ "$(compactions_busy "$1")" = 0 ]; do
        [ $SECONDS -lt $deadline ] || die "node $1 still compacting after ${TWIN_REAL_SETTLE_TIMEOUT:-900}s"
        sleep 2
    done
}

# Every thread of PID: its id, the times it was put on a core so far
# (schedstat's third field) and its name.
thread_runs() {
    local t runs name
    for t in /proc/"$1"/task/*; do
        runs="$(cut -d' ' -f3 "$t/schedstat" 2>/dev/null)" || continue
        name="$(cat "$t/comm" 2>/dev/null)" || continue
        printf '%s\t%s\t%s\n' "${t##*/}" "$runs" "$name"
    done
}

# Waits until node i answers on its CQL port, or fails with the log's last
# error line.
wait_for_cql() {
    local i=$1 ip pid d deadline
    ip="$(node_ip "$i")"
    d="$(node_dir "$i")"
    deadline=$((SECONDS + timeout_s))
    while [ $SECONDS -lt $deadline ]; do
        pid="$(node_pid "$i" || true)"
        if [ -z "$pid" ]; then
            die "node $i exited during start-up: $(grep -E 'ERROR|Exception' "$d/logs/system.log" "$d/stdout.log" 2>/dev/null | head -1 | cut -c1-300)"
        fi
        if grep -q "Starting listening for CQL clients" "$d/logs/system.log" 2>/dev/null &&
            (exec 3<>"/dev/tcp/$ip/9042") 2>/dev/null; then
            return 0
        fi
        sleep 1
    done
    die "node $i did not answer CQL on $ip:9042 within ${timeout_s}s (log: $d/logs/system.log)"
}

start_node() {
    local i=$1 nodes=$2 d cp cores
    d="$(node_dir "$i")"
    if node_pid "$i" >/dev/null; then die "node $i already runs (pid $(node_pid "$i"))"; fi
    cp="$(classpath)"
    cores="${TWIN_REAL_CORES:-$(cores_default)}"
    [ -f "$d/cassandra.yaml" ] || write_yaml "$i" "$nodes"
    jvm_options "$i" >"$d/jvm.options"
    # shellcheck disable=SC2046
    (cd "$d" && exec taskset -c "$cores" java @"$d/jvm.options" -cp "$cp" \
        org.apache.cassandra.service.CassandraDaemon >"$d/stdout.log" 2>&1) &
    echo $! >"$d/pid"
    # The subshell execs taskset, which execs java: the pid is the JVM's.
    wait_for_cql "$i"
    echo "node $i: $(node_ip "$i"):9042 pid $(cat "$d/pid") cores $cores heap ${TWIN_REAL_HEAP:-$(heap_default)} (Cassandra $version)"
}

cmd="${1:-}"
shift || true
case "$cmd" in
fetch)
    classpath >/dev/null
    echo "Cassandra $version: $(tr ':' '\n' <"$dir/classpath.txt" | wc -l) jars in Maven's local repository"
    ;;
start)
    nodes=1
    while [ $# -gt 0 ]; do
        case "$1" in
        --nodes) nodes="${2:-}"; shift 2 ;;
        --nodes=*) nodes="${1#--nodes=}"; shift ;;
        *) die "start: unknown argument '$1' (expected --nodes 1|3)" ;;
        esac
    done
    case "$nodes" in 1 | 3) ;; *) die "start: --nodes must be 1 or 3, not '$nodes'" ;; esac
    running="$(nodes_count)"
    for i in $(seq 1 "$running"); do
        if node_pid "$i" >/dev/null; then die "node $i already runs; stop it first (cassandra.sh stop)"; fi
    done
    # A fresh cluster each start: the nodes' data from an earlier start
    # would carry another topology.
    rm -rf "$dir"/node-*
    mkdir -p "$dir"
    echo "$nodes" >"$dir/nodes"
    for i in $(seq 1 "$nodes"); do start_node "$i" "$nodes"; done
    ;;
stop)
    for i in $(seq 1 "$(nodes_count)"); do
        pid="$(node_pid "$i" || true)"
        [ -n "$pid" ] || continue
        kill -TERM "$pid"
        for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
        if kill -0 "$pid" 2>/dev/null; then
            kill -KILL "$pid"
            echo "node $i did not stop within 60 s of SIGTERM: killed" >&2
        else
            echo "node $i stopped"
        fi
        rm -f "$(node_dir "$i")/pid"
    done
    ;;
work)
    i="${1:-}"
    out="${2:-}"
    shift 2 || die "work: usage: cassandra.sh work N OUT NODETOOL-ARGS..."
    [ $# -gt 0 ] || die "work: no nodetool command given"
    pid="$(node_pid "$i")" || die "work: node '$i' does not run"
    log="$(node_dir "$i")/logs/system.log"
    mkdir -p "$out"
    from="$(stat -c %s "$log")"
    thread_cpu "$pid" >"$out/threads-before.tsv"
    thread_runs "$pid" >"$out/runs-before.tsv"
    started="$(date +%s.%N)"
    nodetool "$i" "$@" >"$out/nodetool.txt" 2>&1 || die "work: nodetool $* failed: $(tail -n 1 "$out/nodetool.txt")"
    # TWIN_REAL_WORK_COMPACTION=1: the command starts a background
    # compaction (a flush that fills a size tier): wait for it to show,
    # then for it to finish, so that its CPU is inside the window.
    if [ "${TWIN_REAL_WORK_COMPACTION:-0}" = 1 ]; then
        shown=$((SECONDS + 30))
        until [ "$(compactions_busy "$i")" != 0 ]; do
            [ $SECONDS -lt $shown ] || die "work: no compaction started within 30 s of nodetool $*"
            sleep 0.2
        done
        wait_compactions "$i"
    fi
    ended="$(date +%s.%N)"
    thread_cpu "$pid" >"$out/threads-after.tsv"
    thread_runs "$pid" >"$out/runs-after.tsv"
    tail -c +"$((from + 1))" "$log" >"$out/system.log"
    printf '{\n  "command": "nodetool %s",\n  "started_unix_s": %s,\n  "seconds": %s\n}\n' \
        "$*" "$started" "$(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.3f", b - a }')" >"$out/work.json"
    # The CPU the flush and compaction threads spent, as a check at a glance.
    awk -F '\t' 'FNR == NR { before[$1] = $2; next }
        { spent = $2 - before[$1]; if ($3 ~ /^Compaction/) c += spent; else if ($3 ~ /Memtable/) f += spent }
        END { printf "compaction threads %.2f CPU s, flush threads %.2f CPU s\n", c / 100, f / 100 }' \
        "$out/threads-before.tsv" "$out/threads-after.tsv"
    ;;
runnable)
    sample_node runnable runnable_sample "${1:-}" "${2:-}" "${3:-0.5}"
    ;;
spinners)
    [ "$(uname -m)" = x86_64 ] || die "spinners: reads x86-64 system call numbers (futex is 202), not $(uname -m)'s"
    sample_node spinners spinners_sample "${1:-}" "${2:-}" "${3:-0.1}"
    ;;
spin-cost)
    runs="${1:-3}"
    for _ in $(seq 1 "$runs"); do
        taskset -c "${TWIN_REAL_CORES:-$(cores_default)}" java "$here/ParkSpin.java" 5 ||
            die "spin-cost: java ParkSpin.java failed"
    done
    ;;
status)
    for i in $(seq 1 "$(nodes_count)"); do
        if pid="$(node_pid "$i")"; then echo "node $i: $(node_ip "$i"):9042 pid $pid"; else echo "node $i: down"; fi
    done
    ;;
kill)
    i="${1:-}"
    pid="$(node_pid "$i" || true)"
    [ -n "$pid" ] || die "kill: node '$i' does not run"
    kill -KILL "$pid"
    rm -f "$(node_dir "$i")/pid"
    echo "node $i killed (kill -9, pid $pid)"
    ;;
restart)
    i="${1:-}"
    [ -f "$(node_dir "$i")/cassandra.yaml" ] || die "restart: node '$i' was never started"
    start_node "$i" "$(nodes_count)"
    ;;
pid)
    node_pid "${1:-}" || die "pid: node '${1:-}' does not run"
    ;;
nodetool)
    i="${1:-}"
    shift || true
    nodetool "$i" "$@"
    ;;
settle)
    i="${1:-}"
    nodetool "$i" flush
    # Wait for the flushes' compactions (and any still running) to finish.
    wait_compactions "$i"
    echo "node $i settled: memtables flushed, no compaction pending or running"
    ;;
*)
    die "usage: cassandra.sh fetch | start [--nodes 1|3] | stop | status | kill N | restart N | pid N | nodetool N ARGS | settle N | work N OUT ARGS | runnable N SECONDS [INTERVAL] | spinners N SECONDS [INTERVAL] | spin-cost [RUNS]"
    ;;
esac
