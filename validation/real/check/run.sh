#!/usr/bin/env bash
# twin real against an independent client: the same simple loads
# (independent.toml) through `twin real` and through the DataStax Python
# driver (independent_client.py, pinned in requirements.txt, in a venv),
# alternating, on one node started here; prints throughput and p50/p99 of
# each and whether they agree within 10%.
#
#   validation/real/check/run.sh [OUT_DIR]     # default target/real-check/results
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=validation/real/check
out="${1:-target/real-check/results}"
export TWIN_REAL_DIR="${TWIN_REAL_DIR:-$PWD/target/real-check}"
node=deploy/real/cassandra.sh

venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --only-binary=:all: -r "$here/requirements.txt"
fi
cargo build --release --quiet
trap '"$node" stop >/dev/null 2>&1 || true' EXIT
"$node" start
mkdir -p "$out"
real() { taskset -c 0 target/release/twin real "$here/independent.toml" --contact 127.0.0.1 --server-dir "$TWIN_REAL_DIR/node-1" --out "$1" >"$1.log" 2>&1; }
python_client() { taskset -c 0 "$venv/bin/python" "$here/independent_client.py" --first-key "$1" >"$2"; }
echo "== warm-up (the JVM compiles its code): twin real, not compared"
real "$out/warm-up"
for round in 1 2 3; do
    echo "== round $round: twin real, then the Python driver"
    real "$out/twin-$round"
    python_client $((round * 1000000 + 1)) "$out/python-$round.json"
done
python3 - "$out" <<'PY'
import json, pathlib, statistics, sys
out = pathlib.Path(sys.argv[1])
rows = []
for op in ("write", "read"):
    for figure, twin_key in (("ops_per_s", None), ("p50_ms", "p50"), ("p99_ms", "p99")):
        twin, python = [], []
        for round in (1, 2, 3):
            summary = json.loads((out / f"twin-{round}" / "summary.json").read_text())
            ops = summary["loads"][op]["ops"][op]
            twin.append(ops["ops_per_s"] if twin_key is None else ops["latency_ms"][twin_key])
            python.append(json.loads((out / f"python-{round}.json").read_text())[op][figure])
        t, p = statistics.median(twin), statistics.median(python)
        error = (t - p) / p if p else float("inf")
        rows.append((op, figure, t, min(twin), max(twin), p, min(python), max(python), error))
print(f"{'op':<6} {'figure':<10} {'twin real (median, min-max)':>30} {'Python driver (median, min-max)':>34} {'twin/python - 1':>16}")
for op, figure, t, tlo, thi, p, plo, phi, error in rows:
    print(f"{op:<6} {figure:<10} {t:>12.3f} ({tlo:.3f}-{thi:.3f}) {p:>14.3f} ({plo:.3f}-{phi:.3f}) {error:>+15.1%}{'' if abs(error) <= 0.10 else '  outside 10%'}")
(out / "comparison.json").write_text(json.dumps([dict(zip(("op", "figure", "twin_real", "twin_min", "twin_max", "python", "python_min", "python_max", "error"), row)) for row in rows], indent=1) + "\n")
PY
