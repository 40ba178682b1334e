"""The Verifier on Ray across a cluster of several nodes (simulated on this machine): a node lost mid-batch loses nothing.

``ray.cluster_utils.Cluster`` starts a head node and worker nodes as separate
raylets on this machine; ``Verifier(backend="ray", address=...)`` runs its
rewards there through the same pool protocol as the local Verifier.  Kept out of
``test_ray_backend.py``, whose module-wide local cluster would be the Ray this
process uses.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from pathlib import Path

import pytest

from passatk import Verifier

pytestmark = [
    pytest.mark.ray,
    pytest.mark.sandbox,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="Ray is not installed: pip install 'passatk[ray]'"),
]

RUNNING = "pk-sample-runs"  # the name a sample gives its process while it sleeps, visible in /proc


def _task(i: int) -> dict:
    """A task that takes 0.3 s; it passes unless i % 3 == 0 (a wrong answer), or i % 5 == 0 (stdio, passes)."""
    nap = f"import ctypes, time\nctypes.CDLL(None).prctl(15, {RUNNING.encode()!r}, 0, 0, 0)\ntime.sleep(0.3)\n"
    if i % 5 == 0:
        return {"source": nap + "print(int(input()) + 1)\n", "stdio": [[f"{i}\n", f"{i + 1}\n"]]}
    expected = i + 1 if i % 3 else i + 2
    return {"source": nap + "def f(x):\n    return x + 1\n", "tests": f"assert f({i}) == {expected}", "entry_point": "f"}


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _node_running_a_sample(nodes: list) -> object | None:
    """The worker node one of whose processes is a sample running now (found under its raylet), or None."""
    raylets = {node.all_processes["raylet"][0].process.pid: node for node in nodes}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _name(int(entry)) == RUNNING:
            pid: int | None = int(entry)
            while pid not in (None, 0, 1):
                if pid in raylets:
                    return raylets[pid]
                pid = _parent(pid)
    return None


def test_a_node_removed_mid_batch_loses_nothing():
    """Three worker nodes, two actors; the node of a running sample is removed: every verdict comes once, as the local Verifier's."""
    from ray.cluster_utils import Cluster

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    tasks = [_task(i) for i in range(16)]
    with Verifier(workers=2, timeout=2.0) as local:
        expected = local.verify(tasks)
    assert [v.passed for v in expected] == [i % 3 != 0 or i % 5 == 0 for i in range(16)]

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        nodes = [cluster.add_node(num_cpus=1) for _ in range(3)]
        cluster.wait_for_nodes()
        removed: list = []

        def remove_a_busy_node() -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                node = _node_running_a_sample(nodes)
                if node is not None:
                    cluster.remove_node(node, allow_graceful=False)
                    removed.append(node)
                    return
                time.sleep(0.005)

        with Verifier(workers=2, timeout=2.0, backend="ray", address=cluster.address) as remote:
            remote.start()  # the actors are up: what follows is the batch
            killer = threading.Thread(target=remove_a_busy_node)
            killer.start()
            got = remote.verify(tasks)
            killer.join()
            assert removed, "no sample was seen running on a worker node"
            again = remote.verify(tasks[:4])  # the pool goes on with the actors left (and the one started in place)
    finally:
        cluster.shutdown()
    assert len(got) == len(tasks)
    assert [(v.key, v.status, v.detail, v.pass_fraction) for v in got] == [
        (v.key, v.status, v.detail, v.pass_fraction) for v in expected
    ]
    assert [v.status for v in again] == [v.status for v in expected[:4]]
