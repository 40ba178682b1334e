"""Task kind ``program``: a program in another language, built and run step by step, judged by the worker.

The job (made by :mod:`passatk.execute.languages`)::

    {"kind": "program", "language": "cpp", "source": program text, "file": "test.cpp",
     "links": {name: target}, "copies": {name: directory}, "dirs": [...],
     "steps": [{"argv": [...], "env": {...}, "phase": "build", "cpu": 30.0, "memory_mb": 4096}, ...,
               {"argv": ["./a.out"], "env": {...}, "phase": "run", "startup": 0.5, "proof": True}],
     "rule": {...}, "stdin": optional text, "harness": {name: text}}

``harness`` files (passatk's Go TestMain) are written beside the program
before the build.

Build steps carry their own CPU seconds and memory; the run step gets the
job's ``timeout`` (or the worker's) plus the recipe's ``startup`` allowance
(an interpreter's or a JVM's own start), and the worker's memory limit.
``{heap_mb}`` in a run step's argv or env is half of its memory limit (JVM
``-Xmx``, Node's ``--max-old-space-size``, ``GOMEMLIMIT``); a step's
``min_memory_mb`` raises its address-space limit (not its heap) for a runtime
that reserves that much virtual memory before it runs anything (V8: about
700 MiB).

The sample's process runs the steps (:mod:`.steps`) and reports how each
ended; the run's standard output and error come to the worker on pipes it
made, and the worker decides.  ``rule`` is the benchmark harness's reading of
a run, as data:

``exit``      the exit status a pass needs (0);
``silent``    any byte written to stdout or stderr fails (HumanEval-X JavaScript:
              ``console.assert`` only prints "Assertion failed" and exits 0);
``quiet``     any byte on stderr fails (MultiPL-E Racket: rackunit reports there);
``forbid``    strings that fail the run wherever they appear in its output;
``require``   strings the run's stdout must contain (a test harness's own
              end-of-tests line, e.g. Rust's ``test result: ok.``);
``proof``     lines the run must have written on its descriptor 3 (a run step
              with ``proof``: see :mod:`.steps`), which only the harness
              writes, once the tests have returned: a run that ended early
              with status 0, having printed every marker, lacks them;
``failed``    strings that mark a failed test rather than a crash: the status
              is then ``failed``, else ``error``.

A failed build step is ``compile_error`` with the compiler's first error as
the detail.  A job with ``output`` true (``passatk serve``'s ``/run_code``,
a Verifier ``run`` task) also gets what happened back in the verdict's
``output``: ``build``, each build step's ``how``, ``return_code``, ``cpu``,
``wall`` and ``output`` (its stdout and stderr together), then the run's
``stdout``, ``stderr``, ``return_code`` (minus the signal for a killed run,
None for one stopped by its limits or never started) and ``how``, as
:mod:`.rawrun` gives them for Python.  What this does not give is the judge-process guarantee of
Python tasks: the tests are compiled into the sample's own program, as every
reference harness does, so a program can end early with status 0 (see
docs/guide/languages.md, what the verdict means); ``proof`` (Go, Rust) makes that a failure, but
for a sample written to forge the harness's lines (the same page).
"""

import json
import os
import signal

from . import supervise
from .channel import memfd
from .direct import GRACE, wall_limit
from .rawrun import OUTPUT_LIMIT as RAW_LIMIT

__all__ = ["first_error", "judge", "run_program", "step_reports"]

OUTPUT_LIMIT = 4 << 20  # bytes of stdout or stderr read from a run; past it the run is stopped
_SLACK = 2.0  # CPU seconds of the sample's process itself, above its steps'


def _memory(step, cfg):
    mb = step.get("memory_mb")
    if mb is None:
        return cfg.get("memory_bytes")
    return int(mb) << 20


def _fill(text, heap_mb):
    return text.replace("{heap_mb}", str(heap_mb))


def _steps(job, cfg):
    """The steps with their limits decided: CPU, wall, memory; ``{heap_mb}`` filled in."""
    timeout = job.get("timeout") or cfg["timeout"]
    out = []
    for step in job["steps"]:
        memory = _memory(step, cfg)
        cpu = float(step["cpu"]) if step.get("cpu") else timeout + float(step.get("startup", 0.0))
        heap = max(64, (memory >> 20) // 2) if memory else 1024
        if memory and step.get("min_memory_mb"):  # a runtime that reserves this much address space up front (V8)
            memory = max(memory, int(step["min_memory_mb"]) << 20)
        out.append(
            {
                "argv": [_fill(a, heap) for a in step["argv"]],
                "env": {k: _fill(v, heap) for k, v in step.get("env", {}).items()},
                "phase": step.get("phase", "run"),
                "cpu": cpu,
                "wall": wall_limit(cfg, cpu),
                "memory_bytes": memory,
                **({"proof": True} if step.get("proof") else {}),
                **({"call": True} if step.get("call") else {}),  # a judged program's call server (see .judged)
            }
        )
    return out


def first_error(text):
    """The compiler's first error, in a line or two (or the first line said, if none is marked)."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not ln.startswith("# ")]  # go: "# package"
    for i, line in enumerate(lines):
        low = line.lower()
        if "error" in low and not low.lstrip().startswith(("warning", "note")):
            detail = line.strip()
            if len(detail) < 40 and i + 1 < len(lines):  # "error[E0425]: ..." is long enough; "error:" alone is not
                detail += " " + lines[i + 1].strip()
            return detail[:300]
    return (lines[0].strip() if lines else "the build failed without a message")[:300]


def _abnormal(report):
    """The (status, detail) of a step that was stopped or killed, or None."""
    if report["how"] == "timeout":
        return "timeout", f"timed out (CPU {report['cpu']:.2f} s)"
    if report["how"] == "stopped":
        return "failed", "output limit exceeded"
    sig = report.get("signal")
    if sig is not None:
        if sig == signal.SIGXFSZ:
            return "error", "file size limit exceeded"
        name = signal.Signals(sig).name if sig in set(signal.Signals) else str(sig)
        return "error", f"killed by {name}"
    return None


def judge(rule, report, out, err):
    """The (status, detail) of a finished run under the harness's ``rule``."""
    text = out.decode("utf-8", "replace")
    errors = err.decode("utf-8", "replace")
    both = text + "\n" + errors
    how = _abnormal(report)
    code = report.get("code")
    if how is not None and how[0] != "error":
        return how
    marked = next((s for s in rule.get("failed", ()) if s in both), None)
    if how is not None:
        status = "failed" if marked else ("oom" if _out_of_memory(both) else how[0])
        return status, how[1] + (f": {supervise.tail(err)}" if err.strip() else "")
    if code != rule.get("exit", 0):
        detail = supervise.tail(err) or supervise.tail(out)
        status = "failed" if marked else ("oom" if _out_of_memory(both) else "error")
        return status, f"exit status {code}" + (f": {detail}" if detail else "")
    if rule.get("silent") and (out or err):
        return "failed", "output " + repr(supervise.tail(out + err)[:200])
    if rule.get("quiet") and err.strip():
        return "failed", "stderr " + repr(supervise.tail(err)[:200])
    hit = next((s for s in rule.get("forbid", ()) if s in both), None)
    if hit is not None:
        return "failed", f"{hit!r} in the output"
    missing = next((s for s in rule.get("require", ()) if s not in text), None)
    if missing is not None:
        return "failed", f"exit status 0 without {missing!r} on stdout (the tests did not run to the end)"
    said = set(report.get("proof", "").splitlines())
    missing = next((s for s in rule.get("proof", ()) if s not in said), None)
    if missing is not None:
        return "failed", f"exit status 0, but the program ended before its tests did (the harness never wrote {missing!r})"
    return "passed", ""


_OOM_MARKS = ("OutOfMemoryError", "bad_alloc", "out of memory", "Cannot allocate memory", "memory allocation of")


def _out_of_memory(text):
    return any(m in text for m in _OOM_MARKS)


def _output(steps, reports, out, err):
    """What the job's steps did, for a job that asks for its ``output``."""
    build = [
        {"how": r["how"], "return_code": r.get("code"), "cpu": r["cpu"], "wall": r["wall"], "output": r.get("output", "")}
        for step, r in zip(steps, reports)
        if step["phase"] != "run"
    ]
    ran = reports[-1] if len(reports) == len(steps) and steps[-1]["phase"] == "run" else None
    code = None
    if ran is not None and ran["how"] == "exited":
        code = ran["code"] if ran.get("signal") is None else -ran["signal"]
    return {
        "build": build,
        "stdout": out[:RAW_LIMIT].decode("utf-8", "replace"),
        "stderr": err[:RAW_LIMIT].decode("utf-8", "replace"),
        "return_code": code,
        "how": ran["how"] if ran is not None else None,
        "files": {},
    }


def run_program(job, cfg, zyg):
    """Run ``job``'s recipe in the sample's process; ``((status, detail), cpu, wall, None[, output])``."""
    steps = _steps(job, cfg)
    cpu = sum(s["cpu"] for s in steps) + _SLACK
    wall = sum(s["wall"] for s in steps) + _SLACK
    memories = [s["memory_bytes"] for s in steps]
    memory = None if any(m is None for m in memories) else max(memories)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    rep_r, rep_w = os.pipe()
    stdin = (
        memfd(job["stdin"].encode("utf-8", "surrogatepass"), "stdin") if job.get("stdin") else os.open(os.devnull, os.O_RDONLY)
    )
    spec = {
        "file": job["file"],
        "steps": steps,
        **{k: job[k] for k in ("links", "dirs", "copies", "workdir", "harness") if k in job},
    }
    try:
        zyg.start("steps", job["source"], cpu, wall, stdin, out_w, err_w, channel=rep_w, memory_bytes=memory, **spec)
    finally:
        for fd in (out_w, err_w, rep_w, stdin):
            os.close(fd)
    readers = [(out_r, OUTPUT_LIMIT, "head"), (err_r, OUTPUT_LIMIT, "head"), (rep_r, 1 << 20, "head")]
    waited, ran = zyg.collect(readers, wall, GRACE)
    out, err, said = waited.buffers
    reports = step_reports(said)
    verdict = _decide(job, steps, reports, waited.how, ran, out, err)
    extra = [_output(steps, reports, out, err)] if job.get("output") else []
    return (verdict, ran["cpu"], ran["wall"], None, *extra)


def step_reports(said):
    """The build steps' reports, one JSON line each, up to the first line that is not one."""
    reports = []
    for line in said.splitlines():
        try:
            reports.append(json.loads(line))
        except ValueError:
            break
    return reports


def _decide(job, steps, reports, waited_how, ran, out, err):
    """The (status, detail) of a finished recipe."""
    if waited_how == "stopped":
        return "failed", "output limit exceeded"
    for i, (step, report) in enumerate(zip(steps, reports)):
        if step["phase"] == "run" or i != report.get("step"):
            break
        if report["how"] != "exited" or report.get("code") != 0:
            why = {"timeout": f"the build timed out (CPU {report['cpu']:.2f} s)", "stopped": "the build wrote too much"}
            detail = why.get(report["how"]) or first_error(report.get("output", ""))
            if report["how"] == "exited" and _out_of_memory(report.get("output", "")):
                detail = "the build ran out of memory: " + detail
            return "compile_error", detail
    if len(reports) != len(steps):
        how = supervise.abnormal(ran["how"], ran["status"], ran["cpu"], err)
        if how is not None and how[0] == "timeout":
            return how
        return "error", "the program's process ended without a report" + (f" ({how[1]})" if how else "")
    return judge(job.get("rule", {}), reports[-1], out, err)
