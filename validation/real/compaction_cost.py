#!/usr/bin/env python3
"""What each compaction during a K-phase load cost a partition
(validation/REAL.md, K5-K7): the CompactionExecutor pool's CPU over the
compaction's span (`node0_compaction_cpu_fraction`, one timeseries.csv row a
second from the load's start) over the partitions of its `Compacted` line in
the repeat's system.log.gz. Compactions that overlap are each given the
pool's whole CPU meanwhile, so such figures are a little high.

The load's start on the log's clock: `<PHASE>_started_unix_s` in the repeat's
protocol.json (measure.sh records it from 2026-12-01 on); for the
measurements before, the phase's summary.json write time less its `seconds`
(twin real writes the folder as the load ends), which holds only in the
checkout that took the measurement (a fresh clone resets the file times).

    validation/real/compaction_cost.py REPEAT_DIR PHASE
    e.g. validation/real/compaction_cost.py validation/real/work/2026-12-01-k7/repeat-1 K7

Standard library only.
"""
import csv
import datetime
import gzip
import json
import os
import re
import sys

# The `Compacted` lines of standard1 in a repeat's system.log.gz.
PATTERN = re.compile(
    r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+) CompactionTask.*in ([\d,]+)ms.*?([\d,]+) total partitions merged"
)


def compactions(rep, start_wall, seconds):
    """Each compaction of standard1 that overlaps the load (from
    `start_wall`, unix seconds, for `seconds`): (begin, end) in seconds from
    the load's start, and its partitions."""
    for line in gzip.open(f"{rep}/system.log.gz", "rt"):
        if "Compacted" not in line or "standard1" not in line:
            continue
        m = PATTERN.search(line)
        if not m:
            continue
        # The node's log clock is the machine's, UTC.
        end = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
        end = end.replace(tzinfo=datetime.timezone.utc).timestamp() - start_wall
        begin = end - int(m.group(2).replace(",", "")) / 1000
        if end < 0 or begin > seconds:
            continue
        yield begin, end, int(m.group(3).replace(",", ""))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: compaction_cost.py REPEAT_DIR PHASE")
    rep, phase = sys.argv[1], sys.argv[2]
    summary_path = f"{rep}/{phase}/summary.json"
    seconds = json.load(open(summary_path))["seconds"]
    protocol = json.load(open(f"{rep}/protocol.json"))
    start_wall = protocol.get(f"{phase}_started_unix_s")
    if start_wall is None:
        start_wall = os.path.getmtime(summary_path) - seconds
    rows = list(csv.reader(open(f"{rep}/{phase}/timeseries.csv")))
    header = rows[0]
    ti, ci = header.index("time_s"), header.index("node0_compaction_cpu_fraction")
    series, prev = [], 0.0
    for row in rows[1:]:
        t = float(row[ti])
        series.append((prev, t, float(row[ci])))
        prev = t
    for begin, end, partitions in compactions(rep, start_wall, seconds):
        cpu = sum(f * (min(b, end) - max(a, begin)) for a, b, f in series if min(b, end) > max(a, begin))
        print(f"{phase} span {begin:.1f}-{end:.1f} s, {partitions} partitions, {cpu * 1e6 / partitions:.2f} us a partition")


if __name__ == "__main__":
    main()
