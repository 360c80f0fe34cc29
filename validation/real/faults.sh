#!/usr/bin/env bash
# The fault check of validation/REAL.md (issue 44, item 6): three real
# nodes on 127.0.0.1-3, RF 3, 120,000 QUORUM writes at 500/s; node 3 is
# killed (kill -9) 60 s in and restarted 60 s later. Records when the live
# nodes saw it down and up again (gossip, in their system.log), the hints
# they wrote and replayed (Cassandra's metrics) and when the last hint file
# was delivered, then reads every key back at QUORUM (none of the
# acknowledged ones may be missing), and runs the same load in the twin
# (cassandra-5.0 preset) with node 3 down for as long as the real one was
# seen down, for the counts side by side. Latencies are not compared: three
# JVMs share the server's core.
#
#   validation/real/faults.sh [--out DIR]      (default validation/real/<UTC date>/faults)
#
# Writes DIR/writes (the load's `twin real` folder), DIR/readback (the
# QUORUM read of every key), DIR/timeline.json (kill, seen down, restart,
# seen up, CQL back, hints drained: seconds from the load's start; hints
# written and replayed by each node), DIR/hint-files.txt, the nodes'
# system logs, DIR/twin (the twin's run) and DIR/comparison.txt. Nothing
# else may run on the machine meanwhile; takes about 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."

out="validation/real/$(date -u +%Y-%m-%d)/faults"
while [ $# -gt 0 ]; do
    case "$1" in
    --out) out="$2"; shift 2 ;;
    *) echo "faults.sh: unknown argument '$1' (--out DIR)" >&2; exit 2 ;;
    esac
done

export TWIN_REAL_DIR="${TWIN_REAL_DIR:-$PWD/target/real-faults}"
# Three JVMs in 24 GiB beside the page cache: 2 GiB of heap each.
export TWIN_REAL_HEAP="${TWIN_REAL_HEAP:-2G}"
node=deploy/real/cassandra.sh
twin=target/release/twin
cargo build --release --quiet
rm -rf "$out" "$TWIN_REAL_DIR"
mkdir -p "$out"
trap '"$node" stop >/dev/null 2>&1 || true' EXIT

keys=120000
rate=500
kill_at=60
down_for=60
schema="-schema replication(factor=3)"
cat >"$out/writes.toml" <<EOF
# validation/real/faults.sh: QUORUM writes while node 3 is killed and restarted
name = "real-faults"
seed = 1
interval = "1s"
[cluster]
preset = "cassandra-5.0"
nodes = 3
instance = "polyglot-kvm"
[[load]]
name = "writes"
processes = 1
command = "cassandra-stress write no-warmup cl=QUORUM n=$keys -rate threads=20 limit=${rate}/s -pop seq=1..$keys $schema -mode native cql3"
EOF
"$node" start --nodes 3

# Cassandra's own counters, from its JMX metrics (nodetool's built-in sjk):
#   metric N NAME  -> the count of org.apache.cassandra.metrics:NAME on node N
metric() {
    "$node" nodetool "$1" sjk mx -mg -b "org.apache.cassandra.metrics:$2" -f Count 2>/dev/null |
        grep -Eo '^[0-9]+' | tail -1 || echo 0
}

start=$SECONDS
start_epoch=$(date +%s)
start_ns=$(date +%s%N)
# Hint files on the two live nodes, once a second (a file per target node
# goes when its hints are delivered): when they are written and when the
# replay has emptied them, without a JVM per look as nodetool would need.
(
    while :; do
        files=$(find "$TWIN_REAL_DIR"/node-1/hints "$TWIN_REAL_DIR"/node-2/hints -name '*.hints' 2>/dev/null | wc -l)
        echo "$(($(date +%s) - start_epoch)) $files"
        sleep 1
    done
) >"$out/hint-files.txt" &
poller=$!
taskset -c 0 "$twin" real "$out/writes.toml" --contact 127.0.0.1 --out "$out/writes" >"$out/writes.log" 2>&1 &
load=$!
sleep "$kill_at"
killed=$((SECONDS - start))
"$node" kill 3
sleep "$down_for"
restarted=$((SECONDS - start))
"$node" restart 3 >/dev/null
back=$((SECONDS - start))
wait "$load" || { echo "faults.sh: the write load failed; see $out/writes.log" >&2; tail -3 "$out/writes.log" >&2; exit 1; }
load_end=$((SECONDS - start))
# Hints drained: no node lists pending hints for another.
drained=""
for _ in $(seq 1 600); do
    pending=0
    for i in 1 2; do
        if "$node" nodetool "$i" listpendinghints 2>/dev/null | grep -q '127.0.0.3'; then pending=1; fi
    done
    if [ "$pending" = 0 ]; then drained=$((SECONDS - start)); break; fi
    sleep 1
done
kill "$poller" 2>/dev/null || true
# Seconds from the load's start of a Cassandra log line's timestamp
# (system.log writes the machine's time, UTC here, to the millisecond).
since_start() {
    local stamp
    stamp="$(echo "$1" | grep -Eo '20[0-9]{2}-[0-9]{2}-[0-9]{2} [0-9:]{8},[0-9]{3}' | head -1 | tr , .)"
    [ -n "$stamp" ] || { echo null; return; }
    echo "$(date -u -d "$stamp" +%s%N) $start_ns" | awk '{ printf "%.1f", ($1 - $2) / 1e9 }'
}
logs="$TWIN_REAL_DIR/node-1/logs/system.log $TWIN_REAL_DIR/node-2/logs/system.log"
# When the live nodes saw node 3 down, and up again after the restart
# (gossip: hints are written while it is down and replayed once it is up).
down_s=$(since_start "$(cat $logs | grep -h '127.0.0.3:7000 is now DOWN' | sort | head -1)")
up_s=$(since_start "$(cat $logs | grep -h '127.0.0.3:7000 is now UP' | sort | tail -1)")
# The last hint file delivered to node 3.
replayed_s=$(since_start "$(cat $logs | grep -h 'Finished hinted handoff of file .* to endpoint /127.0.0.3' | sort | tail -1)")
# The replay's end as the hint files show it: the first second after the
# restart with none left (the nodetool loop above is the check at the end).
replayed_files=$(awk -v from="$restarted" '$1 >= from && $2 == 0 { print $1; exit }' "$out/hint-files.txt")
written1=$(metric 1 "type=Storage,name=TotalHints")
written2=$(metric 2 "type=Storage,name=TotalHints")
replayed1=$(metric 1 "type=HintsService,name=HintsSucceeded")
replayed2=$(metric 2 "type=HintsService,name=HintsSucceeded")

cat >"$out/readback.toml" <<EOF
# validation/real/faults.sh: every written key read back at QUORUM
name = "real-faults-readback"
seed = 1
interval = "1s"
[cluster]
preset = "cassandra-5.0"
nodes = 3
instance = "polyglot-kvm"
[[load]]
name = "readback"
processes = 1
command = "cassandra-stress read no-warmup cl=QUORUM n=$keys -rate threads=20 -pop seq=1..$keys $schema -mode native cql3"
EOF
taskset -c 0 "$twin" real "$out/readback.toml" --contact 127.0.0.1 --out "$out/readback" >"$out/readback.log" 2>&1
"$node" stop >/dev/null
for i in 1 2 3; do
    cp "$TWIN_REAL_DIR/node-$i/logs/system.log" "$out/system-$i.log" 2>/dev/null && gzip -f "$out/system-$i.log"
done

cat >"$out/timeline.json" <<EOF
{
  "killed_s": $killed,
  "restarted_s": $restarted,
  "cql_back_s": $back,
  "load_end_s": $load_end,
  "seen_down_s": $down_s,
  "seen_up_s": $up_s,
  "hints_drained_s": $replayed_s,
  "hint_files_gone_s": ${replayed_files:-null},
  "hints_drained_nodetool_s": ${drained:-null},
  "hints_written": {"node1": $written1, "node2": $written2},
  "hints_replayed": {"node1": $replayed1, "node2": $replayed2}
}
EOF

# The twin's run: the same load and the same fault, node 3 down for as
# long as the live nodes saw it down-to-up after the kill (the real
# restart's length on this shared core is an input, not a prediction),
# with a quiet end for the hints to replay.
twin_down=$(awk -v k="$killed" -v u="$up_s" 'BEGIN { d = u - k; if (d < 1) d = 1; printf "%d", d + 0.5 }')
{
    sed -e 's/^name = "real-faults"/name = "twin-faults"/' \
        -e "s/^interval = \"1s\"/duration = \"$((load_end + 60))s\"\ninterval = \"1s\"/" "$out/writes.toml"
    cat <<EOF
[[fault]]
at = "${kill_at}s"
for = "${twin_down}s"
nodes = [2]
kind = "crash"
EOF
} >"$out/twin.toml"
"$twin" run "$out/twin.toml" --out "$out/twin" >"$out/twin.log" 2>&1
"$twin" measured "$out" | tee "$out/comparison.txt"
