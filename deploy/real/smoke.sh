#!/usr/bin/env bash
# The real node's smoke test (CI): fetch Cassandra through Maven, start one
# node, run scenarios/quickstart-real.toml through `twin real` (20 s of
# load), check that the results folder parses and that the server's side
# (CPU seconds, GC log, thread pools) is filled; then a load whose every try
# times out (a 1-us client timeout), which c-s's rule ends at its first
# failed operation (FAILURE, the process listed under `failures`); stop the
# node.
#
#   deploy/real/smoke.sh            # uses target/real-smoke for the node
set -euo pipefail
cd "$(dirname "$0")/../.."

export TWIN_REAL_DIR="${TWIN_REAL_DIR:-$PWD/target/real-smoke}"
export TWIN_REAL_HEAP="${TWIN_REAL_HEAP:-2G}"
out="$TWIN_REAL_DIR/results"
script=deploy/real/cassandra.sh

cleanup() { "$script" stop >/dev/null 2>&1 || true; }
trap cleanup EXIT

"$script" fetch
"$script" start
cargo build --release --quiet
# The client on core 0; the node runs on the others (cassandra.sh's default).
taskset -c 0 target/release/twin real scenarios/quickstart-real.toml \
    --contact 127.0.0.1 --server-dir "$TWIN_REAL_DIR/node-1" --out "$out" >"$TWIN_REAL_DIR/smoke.log"
tail -n 4 "$TWIN_REAL_DIR/smoke.log"
python3 - "$out" <<'PY'
import csv, json, sys, pathlib
out = pathlib.Path(sys.argv[1])
summary = json.loads((out / "summary.json").read_text())
problems = []
for op in ("write", "read"):
    figures = summary["ops"].get(op)
    if not figures or figures["count"] == 0:
        problems.append(f"no {op} operations")
    elif figures["errors"]:
        problems.append(f"{figures['errors']} {op} errors")
for name, load in summary["load_server"].items():
    for field in ("cpu_seconds", "cpu_us_per_op", "gc", "thread_pools", "thread_cpu_seconds", "thread_runs", "thread_preemptions"):
        if load.get(field) is None:
            problems.append(f"load `{name}`: server figure `{field}` missing")
if summary["server"]["missing"]:
    problems.append("not measured: " + "; ".join(summary["server"]["missing"]))
rows = list(csv.DictReader((out / "timeseries.csv").open()))
if len(rows) < 15:
    problems.append(f"timeseries.csv has {len(rows)} rows for 20 s")
for column in ("node0_cpu_utilisation", "node0_gc_pause_ms", "node0_pending_tasks", "node0_compaction_cpu_fraction", "node0_compiler_cpu_fraction"):
    if any(row[column] == "" for row in rows):
        problems.append(f"timeseries.csv: empty {column} cells")
for hlog in ("write-write.hlog", "read-read.hlog"):
    if not (out / "hdr" / hlog).is_file():
        problems.append(f"hdr/{hlog} missing")
if not (out / "server" / "gc.log").is_file():
    problems.append("server/gc.log missing")
if problems:
    sys.exit("real node smoke test: " + "; ".join(problems))
threads = {}
for load in summary["load_server"].values():
    for group, seconds in load["thread_cpu_seconds"].items():
        threads[group] = threads.get(group, 0.0) + seconds
busiest = ", ".join(f"{g} {s:.1f}" for g, s in sorted(threads.items(), key=lambda t: -t[1])[:3])
runs = sum(sum(load["thread_runs"].values()) for load in summary["load_server"].values())
preempted = sum(sum(load["thread_preemptions"].values()) for load in summary["load_server"].values())
operations = sum(o['count'] for o in summary['ops'].values())
print(f"real node smoke test: {summary['server_version']}, {operations} operations, server {summary['server']['cpu_seconds']} CPU s ({busiest}), {runs / max(operations, 1):.1f} thread runs an operation ({preempted / max(runs, 1):.0%} preempted), {summary['server']['gc']['pauses']} GC pauses: results folder complete")
PY

# c-s's failure rule, for real: every try times out (1 us), so each thread's
# first operation fails both its tries and the process stops at once.
cat >"$TWIN_REAL_DIR/failure.toml" <<'EOF'
name = "smoke-failure"
seed = 1
[cluster]
preset = "cassandra-3.11"
nodes = 1
instance = "i3.4xlarge"
[[load]]
name = "timeouts"
processes = 1
client_timeout = "1us"
command = "cassandra-stress write no-warmup cl=ONE duration=10s -rate threads=4 limit=100/s -pop seq=1..1000 -errors retries=1 -mode native cql3"
EOF
taskset -c 0 target/release/twin real "$TWIN_REAL_DIR/failure.toml" \
    --contact 127.0.0.1 --out "$TWIN_REAL_DIR/failure" >"$TWIN_REAL_DIR/failure.log"
grep -q "^FAILURE: an operation failed every try" "$TWIN_REAL_DIR/failure.log" || {
    echo "real node smoke test: a load whose every try timed out did not say FAILURE" >&2
    exit 1
}
python3 - "$TWIN_REAL_DIR/failure/summary.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
load = summary["loads"]["timeouts"]
failures = load.get("failures", [])
errors = load["ops"].get("write", {}).get("errors", 0)
if [f["process"] for f in failures] != [0] or failures[0]["at_s"] > 5:
    sys.exit(f"real node smoke test: failures {failures}: expected process 0 ended within 5 s")
if not 1 <= errors <= 4:
    sys.exit(f"real node smoke test: {errors} failed writes; expected 1 to 4 (one a thread at most)")
print(f"real node smoke test: c-s's failure rule: the process ended at {failures[0]['at_s']} s after {errors} failed writes")
PY
