"""The worker: the trusted process of a sandboxed worker, between the controller and its zygote.

It reads the controller's events on stdin and answers on stdout, one JSON
array ``[event, data]`` per line:

controller -> worker
    ``["config", {...limits...}]`` once, then ``["batch", {"jobs": [...]}]``
    any number of times, then ``["stop", {}]``.
worker -> controller
    ``["ready", {...what isolation the samples got...}]`` after the config, and
    one ``["verdict", {...}]`` (a :class:`.verdict.Verdict`) per job, in the
    order of the batch.

It holds the jobs (tests, expected outputs) and never runs sample code: the
programs run in processes its zygote forks, in a sandbox of their own, and
the tests in a judge it forks for each job and kills after it (:mod:`.judge`).  Should the
zygote die, the worker ends too rather than fork another one from its own
memory, which holds jobs; the controller then starts a fresh pair.
"""

import os
import shutil
import sys

from . import hardening
from .channel import emit, events
from .judge import Judge
from .kinds import run_job
from .zygote import Zygote, ZygoteGone

__all__ = ["serve"]


def serve(sock):
    """Read events from stdin until "stop" or end of input; verdicts go to stdout."""
    zyg, cfg = Zygote(sock), None
    try:
        for name, data in events(sys.stdin.buffer):
            if name == "config":
                cfg = dict(data)
                zyg.configure(data)  # the zygote warms up while we do
                info = hardening.harden(cfg.get("cpus"))
                hardening.warm_up(cfg.get("import_paths") or (), cfg.get("preload") or ())
                cfg["base"] = hardening.private_dir("passatk-judge-", cfg.get("tmp"))
                cfg["cwd"] = cfg["base"]  # the judges' working directory, emptied after each job
                cfg["devnull"] = os.open(os.devnull, os.O_RDWR)  # every run's idle streams (nothing to read, nowhere to keep)
                cfg["judge"] = Judge(cfg)
                sample = zyg.wait_ready()
                emit("ready", {**sample, "judge": {**info, "pid": os.getpid()}, "python": sys.version.split()[0]})
            elif name == "batch":
                for job in data["jobs"]:
                    emit("verdict", run_job(job, cfg, zyg).to_dict())
            elif name == "stop":
                break
    except ZygoteGone as exc:
        print(f"passatk worker: {exc}", file=sys.stderr)
        os._exit(3)
    finally:
        if cfg is not None and cfg.get("base"):
            shutil.rmtree(cfg["base"], ignore_errors=True)
