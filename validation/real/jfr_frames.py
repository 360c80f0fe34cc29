#!/usr/bin/env python3
"""Where a K-phase's compactions spend their CPU (validation/REAL.md, K8 and
K9): the compaction threads' samples of the phase's Flight Recorder
recording (`<PHASE>.jfr`, measure.sh), by method, for each compaction the
repeat's system.log.gz names (its span: the `Compacted` line's time less
its duration, as compaction_cost.py reads them).

For each compaction: its partitions, the `CompactionExecutor` threads'
samples within its span, and those samples a thousand partitions; then the
samples' share under the key cache's lookup (a stack with a frame of
`getCachedPosition`, the key cache's classes or Caffeine's) and the
methods that take the most samples, on top of the stack (self) and
anywhere in it (inclusive). JFR samples a thread only while it runs Java
code (state STATE_RUNNABLE), one stack every 10 ms with
`settings=profile`. Under the key cache's lookup, the top frames with their
source lines tell a hash table's probe from a walk along a collision chain
(JDK 17's `ConcurrentHashMap.get`: line 940 the bin's first node, 946-947
the nodes after it).

    validation/real/jfr_frames.py REPEAT_DIR PHASE [TOP]
    e.g. validation/real/jfr_frames.py validation/real/work/2026-12-01-k8/repeat-1 K8

Needs the JDK's `jfr` tool on PATH. Standard library only.
"""
import collections
import datetime
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compaction_cost import compactions  # noqa: E402

if len(sys.argv) not in (3, 4):
    sys.exit("usage: jfr_frames.py REPEAT_DIR PHASE [TOP]")
rep, phase = sys.argv[1], sys.argv[2]
top = int(sys.argv[3]) if len(sys.argv) == 4 else 12
protocol = json.load(open(f"{rep}/protocol.json"))
start = protocol[f"{phase}_started_unix_s"]
seconds = json.load(open(f"{rep}/{phase}/summary.json"))["seconds"]

# The compactions of the load, as compaction_cost.py finds them, in unix
# seconds.
spans = [(start + begin, start + end, partitions) for begin, end, partitions in compactions(rep, start, seconds)]
if not spans:
    # A compaction still running when the node stopped logs no line: the
    # load as a whole, its partitions unknown.
    print(f"{rep}: no compaction of standard1 ended during {phase}; the samples of the whole load")
    spans.append((start, start + seconds, 0))

# What marks a stack as under the key cache's lookup.
KEY_CACHE = re.compile(r"getCachedPosition|KeyCache|CaffeineCache|InstrumentingCache|benmanes\.caffeine")


def samples(path):
    """Yields (unix time, thread, frames top first, the top frame with its
    line) for each execution sample of `jfr print`'s text output."""
    day = datetime.datetime.fromtimestamp(start, datetime.timezone.utc).date()
    proc = subprocess.Popen(
        ["jfr", "print", "--stack-depth", "128", "--events", "jdk.ExecutionSample", path],
        stdout=subprocess.PIPE,
        text=True,
    )
    when, thread, frames, in_stack, top_line = None, None, [], False, None
    for line in proc.stdout:
        s = line.strip()
        if s.startswith("jdk.ExecutionSample"):
            when, thread, frames, in_stack = None, None, [], False
        elif s.startswith("startTime = "):
            clock = s.split("=", 1)[1].strip().split()[0]
            t = datetime.datetime.strptime(clock, "%H:%M:%S.%f").time()
            stamp = datetime.datetime.combine(day, t, datetime.timezone.utc).timestamp()
            # A recording past midnight UTC.
            when = stamp + 86400 if stamp < start - 3600 else stamp
        elif s.startswith("sampledThread = "):
            thread = s.split('"')[1] if '"' in s else s
        elif s.startswith("stackTrace = ["):
            in_stack = True
        elif in_stack and s == "]":
            in_stack = False
        elif in_stack and s and s != "...":
            if not frames:
                top_line = re.sub(r"\s+bci:.*$", "", s)
            frames.append(re.sub(r"\s+line:.*$", "", s))
        elif s == "}" and when is not None and thread is not None:
            yield when, thread, frames, top_line
            when, thread = None, None
    if proc.wait() != 0:
        sys.exit(f"jfr print {path} failed")


per_span = [
    {
        "samples": 0,
        "key_cache": 0,
        "self": collections.Counter(),
        "incl": collections.Counter(),
        "cache_lines": collections.Counter(),
    }
    for _ in spans
]
for when, thread, frames, top_line in samples(f"{rep}/{phase}.jfr"):
    if not thread.startswith("CompactionExecutor"):
        continue
    for i, (begin, end, _) in enumerate(spans):
        if begin <= when <= end:
            acc = per_span[i]
            acc["samples"] += 1
            if any(KEY_CACHE.search(f) for f in frames):
                acc["key_cache"] += 1
                acc["cache_lines"][top_line] += 1
            if frames:
                acc["self"][frames[0]] += 1
            for method in dict.fromkeys(frames):
                acc["incl"][method] += 1
            break

print(f"{rep} {phase}: compactions of standard1 during the load (seconds from its start)")
print("  #   from     to  partitions  samples  per 1000 partitions  under the key cache")
for i, ((begin, end, partitions), acc) in enumerate(zip(spans, per_span)):
    share = acc["key_cache"] / acc["samples"] if acc["samples"] else 0.0
    per_thousand = f"{1000 * acc['samples'] / partitions:.2f}" if partitions else "-"
    print(
        f"{i + 1:3} {begin - start:6.0f} {end - start:6.0f} {partitions:11,} {acc['samples']:8,}"
        f" {per_thousand:>20} {acc['key_cache']:8,} ({100 * share:.0f}%)"
    )
for i, acc in enumerate(per_span):
    if not acc["samples"]:
        continue
    print(f"\ncompaction {i + 1}: top methods, self (on top of the stack)")
    for method, n in acc["self"].most_common(top):
        print(f"  {100 * n / acc['samples']:5.1f}%  {method}")
    print(f"compaction {i + 1}: under the key cache's lookup, the top frames with their lines")
    for frame, n in acc["cache_lines"].most_common(5):
        print(f"  {100 * n / acc['samples']:5.1f}%  {frame}")
    print(f"compaction {i + 1}: top methods, inclusive (anywhere in the stack)")
    for method, n in acc["incl"].most_common(top):
        print(f"  {100 * n / acc['samples']:5.1f}%  {method}")
