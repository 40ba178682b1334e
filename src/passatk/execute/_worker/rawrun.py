"""The ``run`` kind: a program run as a script, its output returned rather than judged.

``passatk serve``'s ``/run_code`` (SandboxFusion's API) asks what a program
printed, not whether it passed: the job carries ``source``, ``stdin`` and
optionally ``files`` (``{relative path: base64}``, written into the run's
directory before the program starts) and ``fetch`` (relative paths read back
after it ended).  Nothing here is secret, so there is no judge: the worker
reads stdout and stderr on its own pipes, and the zygote, which never holds a
job's tests, writes and fetches the files (after every process of the run is
dead, so nothing can race it; links, FIFOs and paths that leave the run's
directory are refused).  The files travel in a memfd the worker makes, the
same one both ways.

The verdict's ``output`` is ``{"stdout", "stderr", "return_code", "how",
"files"}``; ``return_code`` is the exit status, minus the signal for a killed
program (as :mod:`subprocess` reports it) and None for one stopped by its
time limit.  Its status: ``passed`` for exit status 0, ``failed`` for
another or for output past :data:`OUTPUT_LIMIT`, ``timeout``, ``error`` for
a signal.
"""

import base64
import binascii
import json
import os
import stat

from . import supervise
from .channel import memfd
from .direct import run_direct, timeout_of

__all__ = ["FETCH_LIMIT", "OUTPUT_LIMIT", "fetch_files", "put_files", "run_raw"]

OUTPUT_LIMIT = 1 << 20  # bytes of stdout (and of stderr) kept; SandboxFusion keeps 1 MiB of each
FETCH_LIMIT = 16 << 20  # bytes of fetched files, all together


def _pread_all(fd):
    chunks, at = [], 0
    while True:
        chunk = os.pread(fd, 1 << 20, at)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        at += len(chunk)


def _inside(cwd, name):
    """``cwd``/``name`` when ``name`` is a plain relative path that stays inside ``cwd``, else None."""
    if not isinstance(name, str) or not name or name.startswith("/") or "\0" in name:
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return os.path.join(cwd, *parts)


# --------------------------------------------------------------------------- #
# in the zygote
# --------------------------------------------------------------------------- #
def put_files(cwd, fd):
    """Write the files of the memfd ``fd`` (JSON ``{path: base64 or None}``) below ``cwd``."""
    try:
        files = json.loads(_pread_all(fd) or b"{}")
    except ValueError:
        return
    for name, content in files.items():
        path = _inside(cwd, name)
        if path is None or not isinstance(content, str):
            continue
        try:
            data = base64.b64decode(content)
            os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
            out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view) :]
            finally:
                os.close(out)
        except (OSError, ValueError, binascii.Error):
            pass


def fetch_files(cwd, names, fd):
    """Read ``names`` below ``cwd`` into the memfd ``fd`` as JSON ``{path: base64}`` (missing ones left out)."""
    found, left = {}, FETCH_LIMIT
    real_cwd = os.path.realpath(cwd)
    for name in names:
        path = _inside(cwd, name)
        if path is None or not os.path.realpath(path).startswith(real_cwd + os.sep):
            continue
        try:
            src = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            info = os.fstat(src)
            if not stat.S_ISREG(info.st_mode) or info.st_size > left:
                continue
            data = _pread_all(src)[: info.st_size]
        except OSError:
            continue
        finally:
            os.close(src)
        left -= len(data)
        found[name] = base64.b64encode(data).decode()
    out = json.dumps(found).encode()
    os.ftruncate(fd, 0)
    view, at = memoryview(out), 0
    while at < len(out):
        at += os.pwrite(fd, view[at:], at)


# --------------------------------------------------------------------------- #
# in the worker
# --------------------------------------------------------------------------- #
def run_raw(job, cfg, zyg):
    """Run ``job["source"]`` with ``job["stdin"]``; ``(verdict, cpu, wall, None, output)`` for :func:`.kinds.run_job`."""
    in_fd = memfd(job.get("stdin", "").encode("utf-8", "surrogatepass"), "stdin")
    io_fd, extra = None, {}
    if job.get("files") or job.get("fetch"):
        io_fd = memfd(json.dumps(job.get("files") or {}).encode(), "files")
        extra = {"channel": io_fd, "files": True, "fetch": list(job.get("fetch") or ())}
    try:
        how, ran, out, err = run_direct(
            cfg, zyg, timeout_of(job, cfg), "script", job["source"], in_fd, OUTPUT_LIMIT, err_limit=OUTPUT_LIMIT, **extra
        )
        fetched = json.loads(_pread_all(io_fd) or b"{}") if job.get("fetch") else {}
    finally:
        os.close(in_fd)
        if io_fd is not None:
            os.close(io_fd)
    status_word = ran["status"]
    code = None
    if how == "timeout":
        verdict = supervise.abnormal(how, status_word, ran["cpu"], err)
    elif os.WIFSIGNALED(status_word):
        code = -os.WTERMSIG(status_word)
        verdict = (
            ("failed", f"output limit of {OUTPUT_LIMIT} bytes exceeded")
            if how == "stopped"
            else supervise.abnormal("exited", status_word, ran["cpu"], err)
        )
    else:
        code = os.WEXITSTATUS(status_word)
        verdict = ("passed", "") if code == 0 else ("failed", f"exit status {code}")
        if how == "stopped":
            verdict = ("failed", f"output limit of {OUTPUT_LIMIT} bytes exceeded")
    output = {
        "stdout": out[:OUTPUT_LIMIT].decode("utf-8", "replace"),
        "stderr": err.decode("utf-8", "replace"),
        "return_code": code,
        "how": how,
        "files": fetched,
    }
    return verdict, ran["cpu"], ran["wall"], None, output
