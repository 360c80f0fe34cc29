#!/usr/bin/env bash
# The real measurement of validation/REAL.md: every phase, in order, on a
# new node per repeat, each phase one `twin real` results folder.
#
#   validation/real/measure.sh [--repeats N] [--first K] [--out DIR] [--phases 'P1 P2 C1 ...']
#
# The default phases are the scored measurement's; the background work's
# calibration (K1, F1) runs with --phases 'P1 K1 C1 F1' (REAL.md), the
# diagnostics K2-K10 after them (K8-K10 record a Flight Recorder profile,
# DIR/repeat-<n>/K8.jfr, with the JDK's jcmd).
#
# --first K runs repeats K..N only (a repeat added to a stored measurement).
#
# Writes DIR (default validation/real/<UTC date>)/repeat-<n>/<phase>/,
# DIR/machine.txt and DIR/repeat-<n>/protocol.json (the phases as run, with
# the rates computed from S1-S3, and whether the page cache was dropped).
# Nothing else may run on the machine meanwhile. Needs root to drop the
# page cache before the reads from disk (else it says so and records it).
set -euo pipefail
cd "$(dirname "$0")/../.."

repeats=3
first=1
out="validation/real/$(date -u +%Y-%m-%d)"
phases="P1 P2 C1 C4 P3 C2 C3 S1 S2 S3 W25 W50 W80 M25 M50 M80 D25 D50 D80 X25 X50 X80 Z1 L1"
while [ $# -gt 0 ]; do
    case "$1" in
    --repeats) repeats="$2"; shift 2 ;;
    --first) first="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --phases) phases="$2"; shift 2 ;;
    *) echo "measure.sh: unknown argument '$1' (--repeats N, --first K, --out DIR, --phases LIST)" >&2; exit 2 ;;
    esac
done

export TWIN_REAL_DIR="${TWIN_REAL_DIR:-$PWD/target/real-measure}"
node=deploy/real/cassandra.sh
twin=target/release/twin
cargo build --release --quiet
mkdir -p "$out"
# A repeat added later keeps the first repeat's machine record.
[ "$first" -gt 1 ] && [ -f "$out/machine.txt" ] || {
    echo "# $(date -u +%FT%TZ)"
    lscpu
    echo
    free -b
    echo
    for f in rotational read_ahead_kb scheduler nr_requests; do
        echo "vda $f: $(cat /sys/block/vda/queue/$f 2>/dev/null || echo ?)"
    done
    java -version 2>&1
    echo "Cassandra $(sed -n 's:.*<cassandra.version>\(.*\)</cassandra.version>.*:\1:p' deploy/real/pom.xml)"
} >"$out/machine.txt"

trap '"$node" stop >/dev/null 2>&1 || true' EXIT

# Drops the OS page cache; prints true or false.
drop_cache() {
    sync
    if echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then echo true; else echo false; fi
}

# The op rate of a finished phase's summary (all op kinds).
rate_of() {
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(sum(o["ops_per_s"] for o in s["ops"].values()))' "$1/summary.json"
}

# The machine's speed just before a phase (REAL.md, "The machine's speed
# beside each phase"): the kernel's HOLD benchmark (`twin bench hold`, a
# fixed CPU- and memory-bound job of 100,000 pending events), three times
# on the server's cores while the node idles; prints the median of the
# twin kernel's wall seconds. The guest's speed drifts from minute to
# minute (a 15-19% spread over two idle minutes, 2026-11-30) and from hour
# to hour; this records it beside each phase.
speed() {
    local cores n
    n="$(nproc)"
    cores="${TWIN_REAL_CORES:-$(if [ "$n" -le 1 ]; then echo 0; else echo "1-$((n - 1))"; fi)}"
    for _ in 1 2 3; do
        taskset -c "$cores" "$twin" bench hold --pending 100000 --until 100 --json |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["twin_wall_seconds"])'
    done | sort -g | sed -n 2p
}

# One phase: writes a one-load scenario and runs it through twin real.
#   phase ID COMMAND
run_phase() {
    local id=$1 command=$2 dir=$3
    # Each phase starts from a quiet node: memtables flushed, compactions
    # done (REAL.md); the page cache is dropped after, where the phase asks.
    local settle_start=$SECONDS
    "$node" settle 1 >/dev/null
    record "${id}_settle_s" "$((SECONDS - settle_start))"
    record "${id}_speed_s" "$(speed)"
    if [ "${drop:-}" = "$id" ]; then
        record "${id}_cache_dropped" "$(drop_cache)"
    fi
    run_load "$id" "$command" "$dir"
}

# The key cache's entries on node 1 (`nodetool info`'s Key Cache line).
# The key cache's entries on node 1 (`nodetool info`'s Key Cache line).
key_cache_entries() {
    local entries
    entries=$("$node" nodetool 1 info | sed -n 's/^Key Cache *: entries \([0-9]*\),.*/\1/p')
    echo "${entries:-null}"
}

# The key cache's whole line on node 1 (entries, size, capacity, hits), as
# a JSON string: `nodetool info` prints its size in its own units.
key_cache_line() {
    "$node" nodetool 1 info | sed -n 's/^Key Cache *: \(.*\)$/"\1"/p' | grep . || echo null
}

# A phase's load alone, from the node as it is: writes a one-load
# scenario and runs it through twin real.
#   run_load ID COMMAND DIR
run_load() {
    local id=$1 command=$2 dir=$3
    # On the node's log clock, for validation/real/compaction_cost.py.
    record "${id}_started_unix_s" "$(date +%s.%N)"
    local scenario="$dir/$id.toml"
    cat >"$scenario" <<EOF
# validation/REAL.md phase $id, written by validation/real/measure.sh
name = "real-$id"
seed = 1
interval = "1s"
[cluster]
preset = "cassandra-3.11"
nodes = 1
instance = "i3.4xlarge"
[[load]]
name = "$id"
processes = 1
command = "$command"
EOF
    echo "== $(date -u +%T) phase $id: $command"
    taskset -c 0 "$twin" real "$scenario" --contact 127.0.0.1 \
        --server-dir "$TWIN_REAL_DIR/node-1" --out "$dir/$id" >"$dir/$id.log" 2>&1 || {
        echo "measure.sh: phase $id failed; see $dir/$id.log" >&2
        tail -n 3 "$dir/$id.log" >&2
        return 1
    }
    grep -E "^Op rate|Latency 99th" "$dir/$id.log" | head -2 | sed 's/^/   /'
}

# One phase of background work (REAL.md's K1 and F1): a nodetool command
# whose CPU deploy/real/cassandra.sh's `work` records by thread.
#   run_work ID DIR SETTLE NODETOOL-ARGS...
run_work() {
    local id=$1 dir=$2 settle=$3
    shift 3
    if [ "$settle" = settle ]; then
        settle_start=$SECONDS
        "$node" settle 1 >/dev/null
        record "${id}_settle_s" "$((SECONDS - settle_start))"
    fi
    echo "== $(date -u +%T) phase $id: nodetool $*"
    "$node" work 1 "$dir/$id" "$@" | sed 's/^/   /'
}

# REAL.md's K2 and K3: from a settled node, K1's major compaction
# started DELAY seconds into a load run beside it (its results as IDL).
#   compact_under_load ID DELAY COMMAND DIR
compact_under_load() {
    local id=$1 delay=$2 command=$3 dir=$4 load
    "$node" settle 1 >/dev/null
    run_load "${id}L" "$command" "$dir" &
    load=$!
    sleep "$delay"
    run_work "$id" "$dir" no-settle compact keyspace1 standard1
    wait "$load"
}

wanted() { case " $phases " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

cs="cassandra-stress"
mode="-mode native cql3"
for repeat in $(seq "$first" "$repeats"); do
    dir="$out/repeat-$repeat"
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "== repeat $repeat of $repeats: a new node"
    "$node" stop >/dev/null 2>&1 || true
    "$node" start
    protocol="$dir/protocol.json"
    echo "{" >"$protocol"
    record() { echo "  \"$1\": $2," >>"$protocol"; }
    # Fresh keys for every write phase: a counter of key ranges.
    next_key=2000001
    # new_keys N: sets $keys to the next N unused keys, `seq=a..b` (not
    # in a command substitution, whose subshell would lose the counter).
    new_keys() {
        local a=$next_key b=$((next_key + $1 - 1))
        next_key=$((b + 1))
        keys="seq=$a..$b"
    }
    mem="-pop dist=uniform(1..1000000)"
    disk="-pop dist=uniform(10000001..10500000) -col n=FIXED(1) size=FIXED(4096)"

    wanted P1 && run_phase P1 "$cs write n=1000000 no-warmup cl=ONE -rate threads=50 -pop seq=1..1000000 $mode" "$dir"
    # K1: a major compaction of P1's small rows alone (after their own
    # compactions have settled), before P2 adds its 4-KB rows.
    wanted K1 && run_work K1 "$dir" settle compact keyspace1 standard1
    wanted P2 && run_phase P2 "$cs write n=500000 no-warmup cl=ONE -rate threads=50 -pop seq=10000001..10500000 -col n=FIXED(1) size=FIXED(4096) $mode" "$dir"
    if wanted C1; then
        new_keys 300000
        run_phase C1 "$cs write no-warmup cl=ONE duration=60s -rate threads=50 limit=5000/s -pop $keys $mode" "$dir"
    fi
    # F1: the flush of what C1 left in the memtable (no settle first).
    wanted F1 && run_work F1 "$dir" no-settle flush keyspace1 standard1
    # K2 (REAL.md, named 2026-11-30 before its measurement): K1's major
    # compaction on a busy core, of what P1 and C1 left, started 15 s into
    # 90 s of C4's writes (10,000/s, new keys; K2L, their own results).
    if wanted K2; then
        new_keys 900000
        compact_under_load K2 15 "$cs write no-warmup cl=ONE duration=90s -rate threads=50 limit=10000/s -pop $keys $mode" "$dir"
    fi
    # K3 (REAL.md, named 2026-11-30 before its measurement): K2 with the
    # core saturated: the compaction started 10 s into 60 s of S1's
    # writes (200 closed-loop threads, no limit; K3L).
    if wanted K3; then
        new_keys 3000000
        compact_under_load K3 10 "$cs write no-warmup cl=ONE duration=60s -rate threads=200 -pop $keys $mode" "$dir"
    fi
    # K4 (REAL.md, named 2026-11-30 before its measurement): a background
    # size-tiered compaction of fresh flushes on an idle node: four
    # batches of 470,000 new keys (L1's flush size), each flushed; the
    # fourth flush fills the tier (the four flushes: C1's 61-MiB SSTable
    # is a tier below theirs, ~95 MiB) and the work phase waits its
    # compaction out.
    if wanted K4; then
        "$node" settle 1 >/dev/null
        for batch in 1 2 3 4; do
            new_keys 470000
            run_load "K4W$batch" "$cs write n=470000 no-warmup cl=ONE -rate threads=50 -pop $keys $mode" "$dir"
            if [ "$batch" -lt 4 ]; then "$node" nodetool 1 flush keyspace1 standard1 >/dev/null; fi
        done
        TWIN_REAL_WORK_COMPACTION=1 run_work K4 "$dir" no-settle flush keyspace1 standard1
    fi
    # K5 (REAL.md, named 2026-12-01 before its measurement): L1's first
    # five minutes on a new JVM (after P1 alone).
    if wanted K5; then
        new_keys 20000000
        run_phase K5 "$cs write no-warmup cl=ONE duration=5m -rate threads=100 -pop $keys $mode" "$dir"
    fi
    # C4: C1's writes at a second rate (REAL.md, named 2026-11-29).
    if wanted C4; then
        new_keys 600000
        run_phase C4 "$cs write no-warmup cl=ONE duration=60s -rate threads=50 limit=10000/s -pop $keys $mode" "$dir"
    fi
    # P3: the read path's warm-up (REAL.md, named 2026-11-30): C2's reads
    # for a minute, not compared, so that C2 measures compiled reads.
    wanted P3 && run_phase P3 "$cs read no-warmup cl=ONE duration=60s -rate threads=50 limit=3000/s $mem $mode" "$dir"
    wanted C2 && run_phase C2 "$cs read no-warmup cl=ONE duration=60s -rate threads=50 limit=3000/s $mem $mode" "$dir"
    if wanted C3; then
        drop=C3
        run_phase C3 "$cs read no-warmup cl=ONE duration=60s -rate threads=50 limit=1000/s $disk $mode" "$dir"
    fi
    if wanted S1; then
        new_keys 2000000
        run_phase S1 "$cs write no-warmup cl=ONE duration=30s -rate threads=200 -pop $keys $mode" "$dir"
    fi
    wanted S2 && run_phase S2 "$cs read no-warmup cl=ONE duration=30s -rate threads=200 $mem $mode" "$dir"
    if wanted S3; then
        drop=S3
        run_phase S3 "$cs read no-warmup cl=ONE duration=30s -rate threads=200 $disk $mode" "$dir"
    fi
    # K6 (REAL.md, named 2026-12-01 before its measurement): K5's load
    # (L1's, five minutes) after the reads from memory alone (P3 C2 S2).
    # Run as run_phase would, with the key cache's line recorded before and
    # after the load (added 2026-12-01 for its second and third repeats).
    if wanted K6; then
        new_keys 20000000
        settle_start=$SECONDS
        "$node" settle 1 >/dev/null
        record K6_settle_s "$((SECONDS - settle_start))"
        record K6_speed_s "$(speed)"
        record K6_key_cache_before "$(key_cache_line)"
        run_load K6 "$cs write no-warmup cl=ONE duration=5m -rate threads=100 -pop $keys $mode" "$dir"
        record K6_key_cache_after "$(key_cache_line)"
    fi
    # K7 (REAL.md, named 2026-12-01 before its measurement): K6's load
    # after the same reads, the key cache emptied right before it.
    if wanted K7; then
        new_keys 20000000
        settle_start=$SECONDS
        "$node" settle 1 >/dev/null
        record K7_settle_s "$((SECONDS - settle_start))"
        record K7_speed_s "$(speed)"
        record K7_key_cache_entries_before "$(key_cache_entries)"
        "$node" nodetool 1 invalidatekeycache >/dev/null
        record K7_key_cache_entries_after "$(key_cache_entries)"
        record K7_key_cache_before "$(key_cache_line)"
        run_load K7 "$cs write no-warmup cl=ONE duration=5m -rate threads=100 -pop $keys $mode" "$dir"
        record K7_key_cache_after "$(key_cache_line)"
    fi
    # K8, K9 (REAL.md, named 2026-12-01 before their measurement): K6's
    # and K7's loads with a Flight Recorder profile of the node meanwhile.
    # K10 (named 2026-12-01 before its measurement): K8 with keys of c-s's
    # shape (twin real's since then).
    for k in K8 K9 K10; do
        wanted "$k" || continue
        new_keys 20000000
        settle_start=$SECONDS
        "$node" settle 1 >/dev/null
        record "${k}_settle_s" "$((SECONDS - settle_start))"
        record "${k}_speed_s" "$(speed)"
        record "${k}_key_cache_entries_before" "$(key_cache_entries)"
        if [ "$k" = K9 ]; then
            "$node" nodetool 1 invalidatekeycache >/dev/null
        fi
        record "${k}_key_cache_entries_after" "$(key_cache_entries)"
        pid=$("$node" pid 1)
        # The JVM resolves a relative file name against its own working
        # directory (the node's, which the next repeat deletes).
        jcmd "$pid" JFR.start name="$k" settings=profile filename="$PWD/$dir/$k.jfr" >/dev/null
        run_load "$k" "$cs write no-warmup cl=ONE duration=5m -rate threads=100 -pop $keys $mode" "$dir"
        jcmd "$pid" JFR.stop name="$k" >/dev/null
    done
    s1=$(rate_of "$dir/S1" 2>/dev/null || echo 0)
    s2=$(rate_of "$dir/S2" 2>/dev/null || echo 0)
    s3=$(rate_of "$dir/S3" 2>/dev/null || echo 0)
    sx=$(python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(2/(1/a+1/b) if a>0 and b>0 else 0)" "$s1" "$s2")
    record S1_ops_per_s "$s1"
    record S2_ops_per_s "$s2"
    record S3_ops_per_s "$s3"
    record X_basis_ops_per_s "$sx"
    for pct in 25 50 80; do
        rate() { python3 -c "import sys; print(max(1, round(float(sys.argv[1]) * int(sys.argv[2]) / 100)))" "$1" "$pct"; }
        if wanted "W$pct"; then
            new_keys 1000000
            run_phase "W$pct" "$cs write no-warmup cl=ONE duration=30s -rate threads=200 limit=$(rate "$s1")/s -pop $keys $mode" "$dir"
        fi
        if wanted "M$pct"; then
            run_phase "M$pct" "$cs read no-warmup cl=ONE duration=30s -rate threads=200 limit=$(rate "$s2")/s $mem $mode" "$dir"
        fi
        if wanted "D$pct"; then
            drop="D$pct"
            run_phase "D$pct" "$cs read no-warmup cl=ONE duration=30s -rate threads=200 limit=$(rate "$s3")/s $disk $mode" "$dir"
        fi
        if wanted "X$pct"; then
            run_phase "X$pct" "$cs mixed ratio(write=1,read=1) no-warmup cl=ONE duration=30s -rate threads=200 limit=$(rate "$sx")/s $mem $mode" "$dir"
        fi
    done
    if wanted Z1; then
        new_keys 120000
        run_phase Z1 "$cs write no-warmup cl=ONE duration=60s -rate threads=50 limit=2000/s -pop $keys -col n=FIXED(1) size=FIXED(4096) $mode" "$dir"
    fi
    if wanted L1; then
        new_keys 50000000
        run_phase L1 "$cs write no-warmup cl=ONE duration=10m -rate threads=100 -pop $keys $mode" "$dir"
    fi
    echo "  \"repeat\": $repeat" >>"$protocol"
    echo "}" >>"$protocol"
    "$node" stop
    # The node's data is not kept (gigabytes); its logs are.
    cp "$TWIN_REAL_DIR/node-1/logs/system.log" "$dir/system.log" 2>/dev/null || true
    gzip -f "$dir/system.log" 2>/dev/null || true
done
echo "measured: $out"
