#!/usr/bin/env python3
"""The roots relay's cost (docs/decisions/0051-a-roots-relay-for-wrapped-servers.md).

Run by bench/relay.sh, which sets up the hermetic environment. Against `cat`
as the echo server, interleaved in one run:
  - direct: the client's pipes reach `cat` itself;
  - relay:  `berth exec -w shop --roots home -- cat`.
1. Round trip of one small message at a time (write a line, read it back),
   ROUNDS messages per side, sides alternated in blocks; the median and p99
   per message, and the relay's added median.
2. MESSAGES small messages pipelined through the relay (a writer thread, the
   reader here); the relay's peak memory (VmHWM of the berth process, read
   from /proc before stdin closes) after 1,000 and after all of them.
"""
import os
import statistics
import subprocess
import sys
import threading
import time

ROUNDS = int(os.environ.get("ROUNDS", "20000"))
MESSAGES = int(os.environ.get("MESSAGES", "1000000"))
LINE = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}\n'

DIRECT = ["cat"]
RELAY = ["berth", "exec", "-w", "shop", "--roots", "home", "--", "cat"]


def start(cmd):
    # Buffered both ways: a raw pipe's readline reads one byte per call.
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def round_trips(p, n, out):
    r, w = p.stdout, p.stdin
    for _ in range(n):
        t = time.perf_counter_ns()
        w.write(LINE)
        w.flush()
        got = r.readline()
        out.append(time.perf_counter_ns() - t)
        assert got == LINE, got


def peak_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def latency():
    procs = {"direct": start(DIRECT), "relay": start(RELAY)}
    times = {"direct": [], "relay": []}
    # Warm up both, then alternate blocks so load changes hit both sides.
    for p in procs.values():
        round_trips(p, 200, [])
    block = 500
    for _ in range(ROUNDS // block):
        for side in ("direct", "relay"):
            round_trips(procs[side], block, times[side])
    for p in procs.values():
        p.stdin.close()
        p.wait()
    med = {s: statistics.median(t) / 1000 for s, t in times.items()}
    p99 = {s: sorted(t)[int(len(t) * 0.99)] / 1000 for s, t in times.items()}
    for s in ("direct", "relay"):
        print(f"round trip {s}: median {med[s]:.1f} us, p99 {p99[s]:.1f} us ({len(times[s])} messages)")
    print(f"relay adds: {med['relay'] - med['direct']:.1f} us per message at the median")


def memory():
    p = start(RELAY)
    # berth exec resolves first; the pid is berth's own for the whole session.
    peaks = {}

    def write():
        batch = LINE * 1000
        for _ in range(MESSAGES // 1000):
            p.stdin.write(batch)
        p.stdin.flush()

    t0 = time.perf_counter()
    threading.Thread(target=write, daemon=True).start()
    r = p.stdout
    for i in range(MESSAGES):
        got = r.readline()
        assert got == LINE, got
        if i + 1 == 1000:
            peaks["after 1,000"] = peak_kib(p.pid)
    elapsed = time.perf_counter() - t0
    peaks[f"after {MESSAGES:,}"] = peak_kib(p.pid)
    p.stdin.close()
    p.wait()
    print(f"pipelined {MESSAGES:,} messages through the relay in {elapsed:.2f} s "
          f"({MESSAGES / elapsed:,.0f}/s)")
    for k, v in peaks.items():
        print(f"relay VmHWM {k}: {v} KiB")


if __name__ == "__main__":
    what = sys.argv[1:] or ["latency", "memory"]
    if "latency" in what:
        latency()
    if "memory" in what:
        memory()
