"""Runs whose output the worker reads itself, and the limits every kind shares.

A ``stdio``, ``command``, ``run`` or ``unittest`` job has no judge process: the
worker starts the sample's program in the zygote, reads its stdout and stderr
on pipes it made, and decides from them (see :mod:`.kinds`).  The kinds'
modules (:mod:`.kinds`, :mod:`.rawrun`, :mod:`.unittests`, :mod:`.compiled`)
import this one, and it imports none of them.
"""

import os

__all__ = ["GRACE", "TAIL_BYTES", "module_of", "run_direct", "timeout_of", "wall_limit"]

TAIL_BYTES = 4096  # bytes of stderr kept
GRACE = 10.0  # seconds the zygote may take past a run's own limits before it counts as gone


def wall_limit(cfg, cpu):
    """The wall-clock seconds a run of ``cpu`` CPU seconds may take: ``wall_limit({"wall_factor": 2.0}, 3.0) == 7.0``."""
    return cpu * cfg["wall_factor"] + 1.0


def timeout_of(job, cfg):
    """The CPU seconds of one run: the job's own ``timeout``, else the worker's (``timeout_of({}, {"timeout": 3}) == 3``)."""
    return job.get("timeout") or cfg["timeout"]


def module_of(job):
    """``{"module": name}`` when the job names the ``__name__`` its program runs under, else ``{}`` (see :mod:`.sample`)."""
    return {"module": job["module"]} if "module" in job else {}


def run_direct(cfg, zyg, timeout, mode, source, stdin, out_limit, err_limit=TAIL_BYTES, **extra):
    """One run whose output the worker reads itself: ``(how it ended, the zygote's record, stdout, stderr)``.

    ``how`` is ``"stopped"`` when the worker stopped reading (output past
    ``out_limit``), else the zygote's word (``"exited"``, ``"timeout"``, ...).
    """
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    wall = wall_limit(cfg, timeout)
    try:
        zyg.start(mode, source, timeout, wall, stdin, out_w, err_w, **extra)
    finally:
        os.close(out_w)
        os.close(err_w)
    waited, ran = zyg.collect([(out_r, out_limit, "head"), (err_r, err_limit, "tail")], wall, GRACE)
    how = "stopped" if waited.how == "stopped" else ran["how"]
    return how, ran, waited.buffers[0], waited.buffers[1]
