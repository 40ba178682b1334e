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
    return f"n = {i}  # every program distinct: none is shared with another request\nprint(sum(range(n % 97)))"


def run_code_body(i):
    return {"code": program(i), "language": "python", "stdin": ""}


def verify_body(i):
    return {"source": program(i), "stdio": [["", str(sum(range(i % 97)))]]}


def drive(clients, n, one):
    """``n`` calls of ``one(client, i)`` from ``clients`` threads; (seconds, latencies)."""
    per = [list(range(c, n, clients)) for c in range(clients)]
    lat = []

    def client(c, indices):
        out = []
        for i in indices:
            t0 = time.perf_counter()
            one(c, i)
            out.append(time.perf_counter() - t0)
        return out

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for got in pool.map(client, range(clients), per):
            lat.extend(got)
    return time.perf_counter() - t0, lat


def measure(args, call):
    """One client in turn (the latency of a request alone), then ``args.clients`` at once (throughput)."""
    seconds, lat = drive(1, args.sequential, lambda c, i: call(0, 10_000_000 + i))
    alone = {"requests_per_s": args.sequential / seconds, **percentiles(lat)}
    seconds, lat = drive(args.clients, args.requests, call)
    return {"one_client": alone, "loaded": {"requests_per_s": args.requests / seconds, **percentiles(lat)}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--sequential", type=int, default=200, help="requests sent one at a time, for the latency alone")
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

        def call_run_code(c, i):
            r = clients[c].post("/run_code", json=run_code_body(i))
            assert r.status_code == 200 and r.json()["status"] == "Success", r.text

        def call_verify(c, i):
            r = clients[c].post("/verify", json=verify_body(i))
            assert r.status_code == 200 and r.json()["passed"], r.text

        drive(args.clients, 4 * args.clients, call_run_code)  # warm every connection and worker
        for name, call in (("run_code", call_run_code), ("verify", call_verify)):
            figures[name] = measure(args, call)
            print(name, json.dumps(figures[name]), flush=True)
        for c in clients:
            c.close()
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(60)

    with Verifier(workers=args.workers, timeout=10.0, memory_mb=4096, wall_factor=2.0) as v:
        v.start()
        calls = {
            "run_code": lambda c, i: v.verify([{"source": program(i), "run": {"stdin": ""}, "timeout": 10.0}]),
            "verify": lambda c, i: v.verify([verify_body(i)]),
        }
        drive(args.clients, 4 * args.clients, calls["run_code"])
        for name, call in calls.items():
            figures[f"in_process_{name}"] = measure(args, call)
            print("in-process", name, json.dumps(figures[f"in_process_{name}"]), flush=True)
        for name in calls:
            http, inproc = figures[name], figures[f"in_process_{name}"]
            figures[f"overhead_{name}_ms"] = {
                "one_client_p50": http["one_client"]["p50_ms"] - inproc["one_client"]["p50_ms"],
                "loaded_per_request": 1000 / http["loaded"]["requests_per_s"] - 1000 / inproc["loaded"]["requests_per_s"],
            }
    print(json.dumps(figures, indent=2))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figures, fh, indent=2)


if __name__ == "__main__":
    main()
