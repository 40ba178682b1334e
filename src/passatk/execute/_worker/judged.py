"""Task kind ``judged``: a compiled language's tests in a judge program of their own, calling the sample's.

The job (made by :mod:`passatk.execute.judged`)::

    {"kind": "judged", "language": "cpp",
     "sample": {a ``program`` job: the call server's source, file, steps (build..., run with "call")},
     "judge": {"source": the tests and the proxy, "file": "test.cpp", "steps": [...], "keep": ["test"],
               optional "harness", "copies", "workdir" as in a ``program`` job (Go)},
     "fallback": {the compiled-mode ``program`` job}}

The judge program is trusted code (the benchmark's tests, the trusted prompt,
passatk's proxy): the worker builds it itself, once per problem (kept in
memory, :data:`_BUILT`), in its own sandbox, never the sample's.  For each
job the worker

1. starts the sample's recipe in the zygote (``steps`` mode, see :mod:`.steps`):
   the call server is built in the sample's sandbox and run with the sample's
   end of a socket as descriptor 3, its standard streams going to pipes the
   worker drains and never reads as answers;
2. writes the judge program's files into the judges' directory and forks the
   judge (:func:`.hardening.enter_child`: its own session, limits, no
   privileges), which execs the judge program with the other end of the socket
   as descriptor 3;
3. waits for the judge; its exit status decides: 0 passes, 3 is the proxy's
   "the sample's process ended or broke the protocol" (``error``), anything
   else a failed test (``failed``); then stops the sample's run and wipes the
   judges' directory.

A call server that did not build is ``compile_error`` (its first error, as in
the compiled mode).  A judge program that does not build (a type the call
channel does not carry) makes the worker run the job's ``fallback`` instead,
and the verdict says ``judged: false``.
"""

import fnmatch
import hashlib
import json
import os
import shutil
import socket

from . import compiled, hardening, steps, supervise

__all__ = ["run_judged"]

_GRACE = 10.0
_LINGER = 0.1
_BUILT = {}  # {digest of the judge's source and steps: {"files": {name: (bytes, mode)}} or {"error": detail}}
_BUILT_MAX = 64
_BUILT_BYTES = 256 << 20  # Go and Rust test binaries weigh 5 to 15 MB each: at most this much is kept
_TAIL = 4096
BROKEN = 3  # the proxy's exit status when the sample's process ended or broke the protocol


def _build_judge(judge, cfg):
    """The judge program's files, built once per problem by the worker (trusted code), or the build's error."""
    key = hashlib.sha256(json.dumps(judge, sort_keys=True).encode()).hexdigest()
    if key in _BUILT:
        return _BUILT[key]
    # Go's module is built in a fixed directory of the sandbox's own /tmp, as the sample's program is (after this)
    work = judge.get("workdir") or os.path.join(cfg["cwd"], "build-" + key[:16])
    os.makedirs(work, exist_ok=True)
    path = steps.place(work, judge["source"], judge)
    here = os.getcwd()
    os.chdir(work)
    try:
        built = None
        for step in compiled._steps({"steps": [s for s in judge["steps"] if s["phase"] != "run"]}, cfg):
            report = steps._step(step, path, None)
            if report["how"] != "exited" or report["code"] != 0:
                built = {"error": compiled.first_error(report.get("output", "")) if report["how"] == "exited" else report["how"]}
                break
        if built is None:
            files = {}
            for name in sorted(os.listdir(work)):
                if any(fnmatch.fnmatchcase(name, pattern) for pattern in judge["keep"]):
                    with open(os.path.join(work, name), "rb") as fh:
                        files[name] = (fh.read(), os.stat(os.path.join(work, name)).st_mode & 0o777)
            built = {"files": files} if files else {"error": "the build made none of " + ", ".join(judge["keep"])}
    finally:
        os.chdir(here)
        shutil.rmtree(work, ignore_errors=True)
    held = sum(len(data) for b in _BUILT.values() for data, _ in b.get("files", {}).values())
    if len(_BUILT) >= _BUILT_MAX or held + sum(len(data) for data, _ in built.get("files", {}).values()) > _BUILT_BYTES:
        _BUILT.clear()
    _BUILT[key] = built
    return built


def _start_judge(cfg, built, step, channel, err_w):
    """Write the judge program's files and fork it, ``channel`` as its descriptor 3; its pid."""
    where = os.path.join(cfg["cwd"], "judge")
    os.makedirs(os.path.join(where, ".tmp"), exist_ok=True)
    for name, (data, mode) in built["files"].items():
        fd = os.open(os.path.join(where, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    devnull = cfg["devnull"]
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(where)
            limits = {**cfg, "memory_bytes": step["memory_bytes"]}
            hardening.enter_child(limits, step["cpu"], devnull, devnull, err_w, keep=(channel,))
            if channel != steps.PROOF_FD:
                os.dup2(channel, steps.PROOF_FD)
                os.close(channel)
            os.set_inheritable(steps.PROOF_FD, True)
            argv = [a.replace("{dir}", where) for a in step["argv"]]
            os.execvpe(argv[0], argv, {k: v.replace("{dir}", where) for k, v in step["env"].items()})
        except BaseException as exc:
            try:
                os.write(2, f"passatk: cannot run the judge program: {exc}\n".encode())
            except OSError:
                pass
        finally:
            os._exit(127)
    return pid


def _drain(fd):
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def run_judged(job, cfg, zyg):
    """The judged job's verdict: ``((status, detail), cpu, wall, None, None, judged)``."""
    built = _build_judge(job["judge"], cfg)
    if "files" not in built:  # the channel cannot carry this problem's types: the compiled mode decides
        verdict, cpu, wall, passed, *_ = compiled.run_program({**job["fallback"], **_timeout(job)}, cfg, zyg)
        return verdict, cpu, wall, passed, None, False
    sample = job["sample"]
    s_steps = compiled._steps({**sample, **_timeout(job)}, cfg)
    run_step = [s for s in job["judge"]["steps"] if s["phase"] == "run"][0]
    j_step = compiled._steps({"steps": [run_step], **_timeout(job)}, cfg)[0]
    s_cpu = sum(s["cpu"] for s in s_steps) + compiled._SLACK
    s_wall = sum(s["wall"] for s in s_steps) + compiled._SLACK
    memories = [s["memory_bytes"] for s in s_steps]
    memory = None if any(m is None for m in memories) else max(memories)
    judge_end, sample_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    rep_r, rep_w = os.pipe()
    jerr_r, jerr_w = os.pipe()
    spec = {
        "file": sample["file"],
        "steps": s_steps,
        **{k: sample[k] for k in ("links", "dirs", "copies", "workdir", "harness") if k in sample},
    }
    try:
        try:
            zyg.start(
                "steps", sample["source"], s_cpu, s_wall, cfg["devnull"], out_w, err_w,
                channel=rep_w, call=sample_end.fileno(), memory_bytes=memory, **spec,
            )  # fmt: skip
        finally:
            for fd in (out_w, err_w, rep_w):
                os.close(fd)
            sample_end.close()
        try:
            pid = _start_judge(cfg, built, j_step, judge_end.fileno(), jerr_w)
        finally:
            os.close(jerr_w)
            judge_end.close()
        readers = [(out_r, _TAIL, "tail"), (err_r, _TAIL, "tail"), (rep_r, 1 << 20, "head"), (jerr_r, _TAIL, "tail")]
        try:
            outcome = supervise.supervise(
                pid, j_step["cpu"], s_wall + j_step["wall"], readers, {zyg.sock.fileno(): zyg.on_readable}
            )
        finally:
            supervise.kill_all(False)  # whatever the judge program left
        ran = zyg.finish(_GRACE, linger=_LINGER)
        said = outcome.buffers[2] + _drain(rep_r)  # the sample's run has ended: its report is whole
    finally:
        for fd in (out_r, err_r, rep_r, jerr_r):
            os.close(fd)
        cfg["judge"].scratch.wipe()
    reports = compiled.step_reports(said)
    verdict = _decide(s_steps, reports, outcome, ran, outcome.buffers[3], outcome.buffers[1])
    return verdict, outcome.cpu + ran["cpu"], outcome.wall, None, None, True


_MARKS = ("passatk:", "Assertion", "assert", "Error", "panicked", "FAIL")


def _said(err):
    """What the judge program said about its failure: the first line that names it (a stack's end says little), else the tail."""
    for line in err.decode("utf-8", "replace").splitlines():
        if any(mark in line for mark in _MARKS):
            return line.strip()[:300]
    return supervise.tail(err)


def _timeout(job):
    return {"timeout": job["timeout"]} if job.get("timeout") else {}


def _decide(s_steps, reports, outcome, ran, judge_err, sample_err):
    """The (status, detail) of a judged run: the call server's build, then the judge's exit status."""
    for i, (step, report) in enumerate(zip(s_steps, reports)):
        if step["phase"] == "run" or i != report.get("step"):
            break
        if report["how"] != "exited" or report.get("code") != 0:
            why = {"timeout": f"the build timed out (CPU {report['cpu']:.2f} s)", "stopped": "the build wrote too much"}
            return "compile_error", why.get(report["how"]) or compiled.first_error(report.get("output", ""))
    status = outcome.status
    if outcome.how == "exited" and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return "passed", ""
    run = reports[-1] if len(reports) == len(s_steps) else None
    if (run is not None and run["how"] == "timeout") or ran["how"] == "timeout":
        return "timeout", f"timed out (CPU {(run or ran)['cpu']:.2f} s)"
    if outcome.how == "timeout":
        return "timeout", f"the tests timed out (CPU {outcome.cpu:.2f} s)"
    said = _said(judge_err)
    if outcome.how == "exited" and os.WIFEXITED(status) and os.WEXITSTATUS(status) == BROKEN:
        if compiled._out_of_memory(sample_err.decode("utf-8", "replace")):
            return "oom", said
        how = ""
        if run is not None and run["how"] == "exited":
            how = (
                f" (the program exited with status {run['code']})"
                if run.get("signal") is None
                else f" (killed by signal {run['signal']})"
            )
        return "error", (said or "the sample's process ended") + how
    if outcome.how == "exited" and os.WIFSIGNALED(status):
        return "failed", said or f"the tests failed (signal {os.WTERMSIG(status)})"
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    return "failed", said or f"the tests failed (exit status {code})"
