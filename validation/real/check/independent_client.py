"""An independent client for `twin real`'s check (validation/real/check/run.sh).

The same simple loads as validation/real/check/independent.toml, written
with another well-kept client, the DataStax Python driver, and nothing of
twin's: c-s's keyspace1.standard1 (five 34-byte blob columns), cl=ONE,
operation i due at start + i/rate (c-s's throttle=), at most `threads`
outstanding, latency from the moment the request is handed to the driver
to its callback. Prints one JSON object: per load, count, ops_per_s (count
over the load's duration, as c-s divides) and p50/p99 in milliseconds.
"""

import argparse
import json
import os
import threading
import time

from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import RoundRobinPolicy


def key_bytes(index, size=10):
    """A key's bytes as twin real makes them: hex, zero-padded to keysize."""
    text = format(index, "016x")[-size:]
    return text.rjust(size, "0").encode()


def percentile(sorted_values, fraction):
    """Nearest-rank percentile of a sorted list."""
    if not sorted_values:
        return 0.0
    rank = max(1, int(round(fraction * len(sorted_values) + 0.5)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def run_load(session, statement, values_of, rate, threads, seconds):
    """Paced closed loop: op i due at start + i/rate, <= threads outstanding."""
    latencies = []
    errors = [0]
    free = threading.Semaphore(threads)
    start = time.perf_counter()
    end = start + seconds
    index = 0
    while True:
        due = start + index / rate
        if due >= end:
            break
        free.acquire()
        now = time.perf_counter()
        if due > now:
            time.sleep(due - now)
        issued = time.perf_counter()
        future = session.execute_async(statement, values_of(index))

        def done(_rows, issued=issued):
            latencies.append(time.perf_counter() - issued)
            free.release()

        def failed(_error):
            errors[0] += 1
            free.release()

        future.add_callbacks(done, failed)
        index += 1
    for _ in range(threads):
        free.acquire()
    latencies.sort()
    return {
        "count": len(latencies),
        "errors": errors[0],
        "ops_per_s": round(len(latencies) / seconds, 3),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 3),
        "p99_ms": round(percentile(latencies, 0.99) * 1000, 3),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contact", default="127.0.0.1")
    parser.add_argument("--rate", type=float, default=2000.0)
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--first-key", type=int, default=1_000_001)
    args = parser.parse_args()

    profile = ExecutionProfile(
        load_balancing_policy=RoundRobinPolicy(),
        consistency_level=ConsistencyLevel.ONE,
        request_timeout=12.0,
    )
    cluster = Cluster([args.contact], execution_profiles={EXEC_PROFILE_DEFAULT: profile})
    session = cluster.connect()
    session.execute(
        "CREATE KEYSPACE IF NOT EXISTS keyspace1 WITH replication = "
        "{'class': 'SimpleStrategy', 'replication_factor': '1'} AND durable_writes = true"
    )
    columns = ", ".join(f'"C{c}" blob' for c in range(5))
    session.execute(
        f"CREATE TABLE IF NOT EXISTS keyspace1.standard1 (key blob PRIMARY KEY, {columns}) "
        "WITH compression = {'enabled': false}"
    )
    names = ", ".join(f'"C{c}"' for c in range(5))
    insert = session.prepare(
        f"INSERT INTO keyspace1.standard1 (key, {names}) VALUES (?, ?, ?, ?, ?, ?)"
    )
    select = session.prepare("SELECT * FROM keyspace1.standard1 WHERE key = ?")
    written = int(args.rate * args.seconds)
    first = args.first_key
    rows = [os.urandom(34) for _ in range(5)]
    results = {
        "client": "cassandra-driver (DataStax Python driver)",
        "rate": args.rate,
        "threads": args.threads,
        "seconds": args.seconds,
        "write": run_load(
            session,
            insert,
            lambda i: [key_bytes(first + i)] + rows,
            args.rate,
            args.threads,
            args.seconds,
        ),
    }
    # Reads of the keys just written, in a fixed shuffled order (uniform
    # over them, as `-pop dist=uniform(...)`).
    order = list(range(written))
    seed = 1
    for i in range(len(order) - 1, 0, -1):
        seed = (seed * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        j = seed % (i + 1)
        order[i], order[j] = order[j], order[i]
    results["read"] = run_load(
        session,
        select,
        lambda i: [key_bytes(first + order[i % written])],
        args.rate,
        args.threads,
        args.seconds,
    )
    cluster.shutdown()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
