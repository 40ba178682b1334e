"""passatk serve under load: throughput and p50/p99 latency of /run_code and /verify, and the overhead per request.

Starts ``python -m passatk serve`` on a free loopback port, warms it, then for
each endpoint sends ``--requests`` requests from ``--clients`` concurrent
clients (httpx, one connection each) and reports requests per second and the
latency percentiles.  The same programs are then decided by a
:class:`passatk.Verifier` in process (same workers, same limits, the same
concurrency from threads): the difference in latency is what the HTTP layer
costs per request.

    .venv/bin/python benchmarks/bench_serve.py --clients 64 --requests 2000 --workers 2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from passatk import Verifier


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentiles(xs):
    xs = sorted(xs)
    pick = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
    return {"p50_ms": 1000 * pick(0.50), "p99_ms": 1000 * pick(0.99), "mean_ms": 1000 * statistics.fmean(xs)}


def program(i):
    return f"n = {i % 97}\nprint(sum(range(n)))"


def run_code_body(i):
    return {"code": program(i), "language": "python", "stdin": ""}


def verify_body(i):
    return {"source": program(i), "stdio": [["", str(sum(range(i % 97)))]]}


def drive(clients, n, one):
    """``n`` calls of ``one(i)`` from ``clients`` threads; (seconds, latencies)."""
    per = [list(range(c, n, clients)) for c in range(clients)]
    lat = []

    def client(indices):
        out = []
        for i in indices:
            t0 = time.perf_counter()
            one(i)
            out.append(time.perf_counter() - t0)
        return out

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for got in pool.map(client, per):
            lat.extend(got)
    return time.perf_counter() - t0, lat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    ap.add_argument("--json", type=str, default=None, help="write the figures here too")
    args = ap.parse_args()

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    srv = subprocess.Popen(
        [sys.executable, "-m", "passatk", "serve", "--port", str(port), "--workers", str(args.workers), "--max-queue", "100000"],
        stderr=subprocess.DEVNULL,
    )
    figures = {
        "clients": args.clients,
        "requests": args.requests,
        "workers": args.workers,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    try:
        for _ in range(600):
            try:
                if httpx.get(url + "/v1/ping", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        clients = [httpx.Client(base_url=url, timeout=300) for _ in range(args.clients)]  # one connection per client thread
        tl = threading.local()
        pool_of = iter(clients)
        lock = threading.Lock()

        def me():
            if not hasattr(tl, "c"):
                with lock:
                    tl.c = next(pool_of)
            return tl.c

        def call_run_code(i):
            r = me().post("/run_code", json=run_code_body(i))
            assert r.status_code == 200 and r.json()["status"] == "Success", r.text

        def call_verify(i):
            r = me().post("/verify", json=verify_body(i))
            assert r.status_code == 200 and r.json()["passed"], r.text

        drive(args.clients, 4 * args.clients, call_run_code)  # warm every connection and worker
        for name, call in (("run_code", call_run_code), ("verify", call_verify)):
            seconds, lat = drive(args.clients, args.requests, call)
            figures[name] = {"requests_per_s": args.requests / seconds, **percentiles(lat)}
            print(name, json.dumps(figures[name]), flush=True)
        for c in clients:
            c.close()
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(60)

    with Verifier(workers=args.workers, timeout=10.0, memory_mb=4096, wall_factor=2.0) as v:
        v.start()
        calls = {
            "run_code": lambda i: v.verify([{"source": program(i), "run": {"stdin": ""}, "timeout": 10.0}]),
            "verify": lambda i: v.verify([verify_body(i)]),
        }
        for name, call in calls.items():
            drive(args.clients, 4 * args.clients, call)
            seconds, lat = drive(args.clients, args.requests, call)
            figures[f"in_process_{name}"] = {"requests_per_s": args.requests / seconds, **percentiles(lat)}
            print("in-process", name, json.dumps(figures[f"in_process_{name}"]), flush=True)
        for name in calls:
            http, inproc = figures[name], figures[f"in_process_{name}"]
            figures[f"overhead_{name}_ms"] = {
                "p50": http["p50_ms"] - inproc["p50_ms"],
                "mean": http["mean_ms"] - inproc["mean_ms"],
                "per_request_cpu_bound_ms": 1000 / http["requests_per_s"] - 1000 / inproc["requests_per_s"],
            }
    print(json.dumps(figures, indent=2))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=2)


if __name__ == "__main__":
    main()
