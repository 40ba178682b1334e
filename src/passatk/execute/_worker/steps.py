"""A program's recipe, step by step, in the sample's process (mode ``steps`` of :mod:`.sample`).

Compiled languages need two sandboxed steps: a trusted compiler on untrusted
source, then the program it built.  This process, forked from the zygote
like every sample's process, writes the program into the run's directory
(on the sandbox's tmpfs), then runs each step of the recipe as a child of
its own, under that step's limits:

* CPU seconds (``RLIMIT_CPU`` and a CPU budget read from ``/proc``, as the
  zygote does for a Python run) and a wall-clock backstop;
* an address-space limit (``RLIMIT_AS``) at or below this process's own;
* its own process group, killed whole when the step ends.

Build steps read ``/dev/null`` and write into a pipe read here (the head is
kept, and a step that writes more than :data:`OUTPUT_LIMIT` is stopped); the
last step, the run, gets the run's own standard streams, which the worker
reads itself.  A step with ``proof`` also gets, as descriptor 3, a pipe read
here: the benchmark's harness (passatk's Go TestMain, Rust's wrapped tests;
see :mod:`passatk.execute.languages`) writes there once the tests have
returned, and what it wrote (at most :data:`PROOF_LIMIT` bytes, else the step
is stopped) goes to the worker as the report's ``proof``.  After each step
one JSON line goes to the worker on the report descriptor: ``{"step",
"how", "code", "signal", "cpu", "wall", "output", "proof"}``; a failed build
step ends the recipe.

The report descriptor is closed in every child before it execs, and this
process is not dumpable (inherited from the zygote), so the program can
neither write a report nor read this process's memory; what it can do (kill
this process) ends the run without a report, which the worker counts as an
error.  The worker decides; this process only says how each step ended.

``spec`` (from the worker): ``file``, the program's file name; ``workdir``,
a fixed directory to build in instead of the run's (under bubblewrap, in the
sandbox's own ``/tmp``: Go's build cache keys depend on it); ``links``,
``{name: target}`` symbolic links made beside it (a prepared toolchain cache,
bound read-only); ``copies``, ``{name: file or directory}`` copied beside it; ``harness``,
``{name: text}`` written beside it; ``dirs``,
directories to make; ``steps``, each with
``argv`` (``{file}`` is the program's path, ``{dir}`` the run's directory), ``env``, ``cpu``, ``wall``,
``memory_bytes`` (None: this process's limit) and ``phase`` ("build" or "run").
"""

import json
import math
import os
import resource
import shutil
import signal

from . import supervise

__all__ = ["OUTPUT_LIMIT", "place", "run"]

OUTPUT_LIMIT = 64 << 10  # bytes of a build step's output kept; past it the step is stopped
PROOF_LIMIT = 64 << 10  # bytes a run may write on its proof descriptor; past it the run is stopped
PROOF_FD = 3
_REPORTED = 16 << 10  # bytes of it sent to the worker


def _exec(step, path, stdin, stdout, stderr, proof=None):
    """In the step's child: own process group, its streams (and proof descriptor), its limits, then the command."""
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        os.dup2(stdin, 0)
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        if proof is not None:
            os.dup2(proof, PROOF_FD)
            os.set_inheritable(PROOF_FD, True)  # dup2 onto itself keeps close-on-exec
        os.closerange(3 if proof is None else PROOF_FD + 1, 65536)
        soft = int(math.ceil(step["cpu"])) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
        if step.get("memory_bytes"):
            hard = resource.getrlimit(resource.RLIMIT_AS)[1]
            limit = step["memory_bytes"] if hard == resource.RLIM_INFINITY else min(step["memory_bytes"], hard)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        here = os.getcwd()
        argv = [a.replace("{file}", path).replace("{dir}", here) for a in step["argv"]]
        os.execvpe(argv[0], argv, {k: v.replace("{dir}", here) for k, v in step["env"].items()})
    except BaseException as exc:
        try:
            os.write(2, f"passatk: cannot run {step['argv'][0]!r}: {exc}\n".encode())
        except OSError:
            pass
    finally:
        os._exit(127)


def _step(step, path, run_streams, call=None):
    """Run one step; return its report (without the step's index).

    ``call``: the sample's end of a judged job's call channel, given to a run
    step with ``call`` as descriptor 3 (see :mod:`passatk.execute.judged`).
    """
    if step["phase"] == "run":
        out_r, streams = None, run_streams
    else:
        out_r, out_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY)
        streams = (devnull, out_w, out_w)
    proof_r, proof_w = os.pipe() if step.get("proof") else (None, None)
    pid = os.fork()
    if pid == 0:
        _exec(step, path, *streams, proof=call if step.get("call") and call is not None else proof_w)
    if out_r is not None:
        for fd in streams[:2]:
            os.close(fd)
    if proof_w is not None:
        os.close(proof_w)
    if call is not None and step.get("call"):  # the run holds it now: its end is the channel's end
        os.close(call)
    readers = [(out_r, OUTPUT_LIMIT, "head")] if out_r is not None else []
    readers += [(proof_r, PROOF_LIMIT, "head")] if proof_r is not None else []
    try:
        outcome = supervise.supervise(pid, step["cpu"], step["wall"], readers)
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)  # whatever the step left in its group
        except OSError:
            pass
        for fd, _, _ in readers:
            os.close(fd)
    said = dict(zip((fd for fd, _, _ in readers), outcome.buffers))
    status = outcome.status
    exited = outcome.how == "exited" and os.WIFEXITED(status)
    return {
        "how": outcome.how,
        "code": os.WEXITSTATUS(status) if exited else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu": round(outcome.cpu, 4),
        "wall": round(outcome.wall, 4),
        "output": said[out_r][:_REPORTED].decode("utf-8", "replace") if out_r is not None else "",
        "proof": said[proof_r].decode("utf-8", "replace") if proof_r is not None else "",
    }


def place(cwd, source, spec):
    """Write the program and what ``spec`` puts beside it (dirs, harness files, links, copies) into ``cwd``; the program's path."""
    path = os.path.join(cwd, spec["file"])
    for name in (".tmp", *spec.get("dirs", ())):
        os.makedirs(os.path.join(cwd, name), exist_ok=True)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(source)
    for name, text in spec.get("harness", {}).items():  # the harness's own files (Go: passatk's TestMain)
        with open(os.path.join(cwd, name), "w", encoding="utf-8") as fh:
            fh.write(text)
    for name, target in spec.get("links", {}).items():
        os.symlink(target, os.path.join(cwd, name))
    for name, original in spec.get("copies", {}).items():  # Go follows neither a linked go.mod nor a linked vendor/
        if os.path.isdir(original):
            shutil.copytree(original, os.path.join(cwd, name), symlinks=True)
        else:
            shutil.copyfile(original, os.path.join(cwd, name))
    return path


def run(source, report_fd, spec):
    """Write the program, run the recipe's steps, report each; never returns."""
    cwd = os.getcwd()
    if spec.get("workdir"):  # a fixed directory (in the sandbox's private /tmp, wiped after each run)
        cwd = spec["workdir"]
        os.mkdir(cwd, 0o700)
        os.chdir(cwd)
    path = place(cwd, source, spec)
    os.set_inheritable(report_fd, False)
    call = spec.get("call_fd")
    for i, step in enumerate(spec["steps"]):
        report = _step(step, path, (0, 1, 2), call)
        if step.get("call"):
            call = None
        os.write(report_fd, (json.dumps({"step": i, **report}) + "\n").encode())
        if step["phase"] != "run" and (report["how"] != "exited" or report["code"] != 0):
            break
    os.close(report_fd)
    os._exit(0)
