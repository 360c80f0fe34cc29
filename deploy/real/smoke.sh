#!/usr/bin/env bash
# The real node's smoke test (CI): fetch Cassandra through Maven, start one
# node, run scenarios/quickstart-real.toml through `twin real` (20 s of
# load), check that the results folder parses and that the server's side
# (CPU seconds, GC log, thread pools) is filled, stop the node.
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
