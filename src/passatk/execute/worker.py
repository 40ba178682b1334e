"""The warm worker: runs inside the sandbox and forks one child per program run.

Standard library only: it is started as ``python -I -S -B worker.py`` inside
bubblewrap (or as a plain process), long before any sample is seen, and then
evaluates batches of programs.  One JSON array ``[event, data]`` per line on
stdin/stdout:

controller -> worker
    ``["config", {...limits...}]`` once, then ``["batch", {"jobs": [...]}]``
    any number of times, then ``["stop", {}]``.
worker -> controller
    ``["ready", {...what isolation it obtained...}]`` after the config, and one
    ``["verdict", {...}]`` per job, in the order of the batch.

A job is a plain dict with a ``key`` and a ``kind``:

``python``   ``source``: the sample's program, then ``tests`` (optional): a program that
             raises if a test fails (HumanEval, MBPP), run in the same namespace; the
             functions named in ``wrap`` reach the tests with plain results only.
``call``     ``source``, ``func_name``, ``cases`` [[args, [acceptable results]], ...]: call-based tests.
``stdio``    ``source``, ``cases`` [[stdin, expected stdout], ...].
``command``  ``source``, ``argv``, ``filename``: the source is written to a file and
             the verifier command's exit status decides.

Verdict statuses: passed, failed, timeout, error, oom, sandbox_error.  A verdict
of ``passed`` is decided here, in the worker, which never runs sample code
itself: for ``python`` it needs the message that the harness in the child
writes, with a per-run random nonce, on a pipe that only the child has, after
the test code returned; for ``call`` and ``stdio`` the worker compares the
outputs against expected values that the child never sees; for ``command`` the
exit status of the trusted verifier decides.  Exit codes, printed markers and
killed parents are never read as a pass.  The tests of ``python`` jobs see the
sample's functions only through a guard that makes their results plain values
(:func:`_plain_maker`), so an object that claims to equal anything cannot pass.
"""

import ctypes
import gc
import json
import math
import os
import resource
import secrets
import select
import shutil
import signal
import sys
import tempfile
import time

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000

_LIBC = ctypes.CDLL(None, use_errno=True)
# Imported once here, not in every child: what HumanEval/MBPP-style programs typically import.
_PRELOAD = ("typing", "math", "re", "collections", "itertools", "functools", "heapq", "string", "hashlib",
            "bisect", "random", "fractions", "decimal", "datetime", "copy", "operator", "statistics")
# Run once in the worker so that every child starts with the compiler and the
# interpreter's lazily built state already made (a child's first compile()
# otherwise costs about 1 ms of CPU on its own).
_WARM_UP = """
from typing import List, Optional
import math, re


class _Box:
    def __init__(self, items: List[int]) -> None:
        self.items = items

    def total(self, scale: Optional[float] = None) -> float:
        return sum(x * (scale or 1.0) for x in self.items)


def _check(candidate):
    assert candidate([1, 2, 3]) == 6.0, f"got {candidate([1, 2, 3])!r}"
    assert {k: v for k, v in zip("ab", (1, 2))} == {"a": 1, "b": 2}
    assert [s.upper() for s in re.findall(r"[a-z]+", "ab cd")] == ["AB", "CD"]
    assert math.isclose(sum(map(lambda v: v / 2, range(4))), 3.0)
    try:
        assert candidate([]) == 1, "expected"
    except AssertionError as exc:
        str(exc)


_check(lambda xs: _Box(xs).total())
"""
_STDIO = []  # sys.stdin, sys.stdout, sys.stderr of every child (see _setup)
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_REPORT_LIMIT = 1 << 20  # bytes a harness may send about one run
_DETAIL_LIMIT = 300  # characters of an error message kept in a verdict
_TAIL_BYTES = 4096  # bytes of stderr kept


def _prctl(option, value):
    return _LIBC.prctl(option, ctypes.c_ulong(value), 0, 0, 0) == 0


def _emit(name, data):
    line = (json.dumps([name, data]) + "\n").encode()
    while line:
        line = line[os.write(1, line):]


# --------------------------------------------------------------------------- #
# the worker's own set-up
# --------------------------------------------------------------------------- #
def _write_id_maps(uid, gid):
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
        except OSError:
            pass


def _enter_namespaces(flags, uid, gid):
    """unshare(flags), private mounts, then fork: the child is init of the new pid namespace."""
    if _LIBC.unshare(flags) != 0:
        return None
    if flags & CLONE_NEWUSER:
        _write_id_maps(uid, gid)
    # our mounts must not propagate to the host
    if _LIBC.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return None
    return os.fork()


def _pid_namespace_works(flags, uid, gid):
    """Try ``flags`` in a throwaway process: can its init mount its own /proc?"""
    probe = os.fork()
    if probe == 0:
        code = 1
        try:
            pid = _enter_namespaces(flags, uid, gid)
            if pid == 0:
                ok = _LIBC.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) == 0
                os._exit(0 if ok and os.readlink("/proc/self") == "1" else 1)
            if pid is not None:
                code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(probe, 0)[1]) == 0


def _own_namespaces():
    """Process mode: take whatever namespaces this user may make; return (network, pid).

    With a pid namespace (tried first in a throwaway process) the worker forks
    once more and the child, as init with its own /proc, becomes the worker:
    samples then cannot signal anything outside, every orphan comes back to
    it, and all of them die with it.
    """
    uid, gid = os.geteuid(), os.getegid()
    wanted = CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID
    for flags in (wanted, CLONE_NEWUSER | wanted):
        if _pid_namespace_works(flags, uid, gid):
            pid = _enter_namespaces(flags, uid, gid)
            if pid is None:
                break
            if pid:  # stay behind as the process the controller knows, and end as the worker ends
                _, status = os.waitpid(pid, 0)
                os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if _LIBC.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
                os._exit(97)  # never run with a /proc of another pid namespace
            return True, True
    return _LIBC.unshare(CLONE_NEWNET) == 0, False


def _setup(cfg):
    """Harden the worker and report what it obtained."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    dumpable_off = _prctl(PR_SET_DUMPABLE, 0)  # samples of the same uid cannot ptrace or read our fds
    subreaper = _prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of samples come back to us, to be killed and reaped
    network, own_init = (True, False) if cfg["pidns"] else _own_namespaces()
    import builtins

    for name in ("exit", "quit"):  # what ``site`` would add; samples call them
        if not hasattr(builtins, name):
            setattr(builtins, name, sys.exit)
    sys.path.extend(cfg.get("import_paths") or ())
    for module in _PRELOAD:
        try:
            __import__(module)
        except ImportError:
            pass
    exec(compile(_WARM_UP, "<warm-up>", "exec"), {"__name__": "__warm_up__"})
    _HONEST[0] = _honest_maker()
    # Standard streams for the children, made once and never used here, so never holding data.
    _STDIO[:] = [open(0, "r", encoding="utf-8", errors="replace", closefd=False),
                 open(1, "w", encoding="utf-8", closefd=False), open(2, "w", encoding="utf-8", closefd=False)]
    # The dispositions a child starts with, set here once rather than in every child.  The
    # worker is in a session of its own and writes no large files, so it is not affected.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    gc.freeze()  # children's collections skip (and so do not copy) the worker's own objects
    cfg["base"] = tempfile.mkdtemp(prefix="passatk-run-", dir=cfg.get("tmp") or None)
    if cfg["pidns"]:  # what wiping /tmp after each run must leave in place
        cfg["tmp_keep"] = _paths_to(_mounts_below(cfg["tmp"]), cfg["tmp"]) | {cfg["base"]}
    # kill(-1) is only safe when we are alone in a pid namespace with our samples.
    cfg["kill_all"] = own_init or (bool(cfg["pidns"]) and os.getpid() < 16)
    return {
        "pid": os.getpid(),
        "uid": os.geteuid(),
        "python": sys.version.split()[0],
        "non_dumpable": dumpable_off,
        "subreaper": subreaper,
        "private_network": network,
        "own_pid_namespace": own_init or bool(cfg["pidns"]),
        "kill_all": cfg["kill_all"],
    }


# --------------------------------------------------------------------------- #
# killing and reaping everything a run left behind
# --------------------------------------------------------------------------- #
def _children():
    """Our direct children; as a subreaper we inherit every orphan a sample leaves."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:  # kernels without CONFIG_PROC_CHILDREN: scan /proc
        found = []
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    if int(fh.read().rsplit(b")", 1)[1].split()[1]) == me:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
        return found


def _kill_all(cfg):
    """SIGKILL every process a run left, including ones that called setsid, and reap them all."""
    while True:
        if cfg["kill_all"]:
            try:
                os.kill(-1, signal.SIGKILL)  # all of our pid namespace except us and its init
            except ProcessLookupError:
                pass
        else:  # layer by layer: when a parent dies its children come to us
            for pid in _children():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            while True:
                os.waitpid(-1, 0)
        except ChildProcessError:
            pass
        if cfg["kill_all"] or not _children():  # after kill(-1), no children left means nothing left
            return


# --------------------------------------------------------------------------- #
# running one child under the limits
# --------------------------------------------------------------------------- #
def _limit(which, value):
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass


def _enter_child(cfg, cpu_seconds, stdin_fd, stdout_fd, stderr_fd, keep=()):
    """In the forked child, before any sample code: session, limits, descriptors."""
    os.setsid()
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.dup2(stdin_fd, 0)
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    # Not the worker's own file objects: its sys.stdin has read ahead into the controller's stream.
    sys.stdin, sys.stdout, sys.stderr = _STDIO
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    soft = int(math.ceil(cpu_seconds)) + 1
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    except (ValueError, OSError):
        pass
    if cfg.get("memory_bytes"):
        _limit(resource.RLIMIT_AS, cfg["memory_bytes"])
    _limit(resource.RLIMIT_FSIZE, cfg["file_bytes"])
    _limit(resource.RLIMIT_CORE, 0)
    _limit(resource.RLIMIT_NOFILE, 256)
    if cfg.get("nproc"):
        _limit(resource.RLIMIT_NPROC, cfg["nproc"])


def _cpu_time(pid):
    """CPU seconds of ``pid`` and its reaped children, from /proc (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / _CLK_TCK


def _supervise(pid, cfg, cpu_limit, readers, stop=None):
    """Wait for ``pid`` within its CPU budget (wall-clock backstop), collecting the readers' bytes.

    ``readers`` are (report, stderr[, stdout]) pipes; the report keeps its first
    bytes, stderr its last ones.  Returns (how, wait_status, cpu, wall, buffers) where
    ``how`` is "exited", "timeout" or "stopped" (``stop(buffers)`` asked to end early).
    """
    start = time.monotonic()
    wall_limit = cpu_limit * cfg["wall_factor"] + 1.0
    pidfd = os.pidfd_open(pid)
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    bufs = [bytearray() for _ in readers]
    index = {fd: i for i, fd in enumerate(readers)}
    for fd in readers:
        os.set_blocking(fd, False)
        poller.register(fd, select.POLLIN)

    def take(fd):
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        buf = bufs[index[fd]]
        if index[fd] == 1:  # stderr: keep the tail
            buf += chunk
            del buf[:-_TAIL_BYTES]
        elif index[fd] != 0 or len(buf) <= _REPORT_LIMIT:  # stdout is bounded by ``stop``
            buf += chunk
        return True

    how = None
    cpu = checked = 0.0  # the CPU time read from /proc, and when
    while how is None:
        wall = time.monotonic() - start
        # CPU time cannot outrun wall time (but for threads, which the CPU rlimit backs up),
        # so /proc is read only once the budget could be spent.
        if cpu + (wall - checked) >= cpu_limit:
            cpu, checked = _cpu_time(pid), wall
        if cpu >= cpu_limit or wall >= wall_limit:
            how = "timeout"
            break
        for fd, _ in poller.poll(max(0.005, min(cpu_limit - cpu - (wall - checked), wall_limit - wall)) * 1000):
            if fd == pidfd:
                how = "exited"
            elif not take(fd):
                poller.unregister(fd)
            elif stop is not None and stop(bufs):
                how = "stopped"
    if how != "exited":
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass
    _, status, usage = os.wait4(pid, 0)
    os.close(pidfd)
    for fd in readers:  # what is already there; descendants may hold the pipe open
        for _ in range(64):
            if not take(fd):
                break
    cpu = usage.ru_utime + usage.ru_stime
    if how == "exited" and os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
        if cpu >= cpu_limit * 0.99:
            how = "timeout"  # the CPU rlimit fired before we looked
    return how, status, cpu, time.monotonic() - start, bufs


def _fork_run(cfg, cpu_limit, body, stdin_path=None, capture_stdout=False, stop=None):
    """Fork a child that runs ``body(report_fd)``; return the supervision outcome and the pipes' bytes."""
    report_r, report_w = os.pipe()
    out_r, out_w = os.pipe() if capture_stdout else (None, None)
    err_r, err_w = os.pipe()
    devnull = os.open(os.devnull, os.O_RDWR)
    stdin_fd = os.open(stdin_path, os.O_RDONLY) if stdin_path else devnull
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(report_r)
            os.close(err_r)
            if out_r is not None:
                os.close(out_r)
            os.chdir(cfg["cwd"])
            _enter_child(cfg, cpu_limit, stdin_fd, out_w if out_w is not None else devnull, err_w, keep=(report_w,))
            body(report_w)
        finally:
            os._exit(70)
    for fd in (report_w, err_w, out_w, devnull) + ((stdin_fd,) if stdin_path else ()):
        if fd is not None:
            os.close(fd)
    readers = [report_r, err_r] + ([out_r] if out_r is not None else [])
    try:
        how, status, cpu, wall, bufs = _supervise(pid, cfg, cpu_limit, readers, stop)
    finally:
        _kill_all(cfg)
        for fd in readers:
            os.close(fd)
    return how, status, cpu, wall, bytes(bufs[0]), bytes(bufs[1]), bytes(bufs[2]) if out_r is not None else b""


# --------------------------------------------------------------------------- #
# what runs in the child (sample code runs only here)
# --------------------------------------------------------------------------- #
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: made by a class statement (or type()), not implemented in C


class _Opaque:
    """What the tests see of an object of a class the sample made: equal only to itself."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<{self.name} object>"


def _plain_maker():
    """``plain(value)``: ``value`` as the tests may compare it, whatever classes the sample made.

    A returned object whose class the sample wrote could answer ``==`` (or
    ``__hash__``, ``__bool__``...) however it likes, e.g. equal to every
    expected value.  So before the tests see a result: instances of sample-made
    subclasses of int, float, complex, str, bytes, list, tuple, set, frozenset
    and dict become the plain built-in value (namedtuples become tuples,
    ``str`` subclasses plain strings); iterators are iterated lazily with the
    same treatment of each item; containers are searched through (and returned
    unchanged, the same object, when nothing in them needed it); any other
    object of a sample-made class becomes an :class:`_Opaque`, equal only to
    itself.  Classes implemented in C (the built-ins, numpy's) cannot be
    made by a sample and keep their own behaviour, as do the standard
    library's ``Fraction`` and ``Counter``.  Everything it uses is bound here,
    before any sample code runs.
    """
    trusted = {cls for cls in (getattr(sys.modules.get(m), n, None) for m, n in (("fractions", "Fraction"), ("collections", "Counter")))
               if isinstance(cls, type)}
    values = ((int, int.__int__), (float, float.__float__), (complex, complex.__complex__), (str, str.__str__), (bytes, bytes.__bytes__))
    sequences = (list, tuple, set, frozenset)
    issubclass_, type_, iter_, all_, zip_, len_, hasattr_ = issubclass, type, iter, all, zip, len, hasattr
    dict_items, dict_ = dict.items, dict
    flags = type.__dict__["__flags__"].__get__  # not cls.__flags__, which a metaclass could answer

    def lazily(value):
        for item in iter_(value):
            yield plain(item)

    def plain(value):
        cls = type_(value)
        if flags(cls) & _HEAPTYPE and cls not in trusted:
            for base, convert in values:
                if issubclass_(cls, base):
                    return convert(value)
            if issubclass_(cls, dict_):
                return {plain(k): plain(v) for k, v in dict_items(value)}
            for base in sequences:
                if issubclass_(cls, base):
                    return base([plain(x) for x in base.__iter__(value)])
            if hasattr_(cls, "__next__"):
                return lazily(value)
            return _Opaque(cls.__name__)
        if cls in sequences:
            items = [plain(x) for x in value]
            return value if all_(a is b for a, b in zip_(items, value)) else cls(items)
        if issubclass_(cls, dict_):
            pairs = [(plain(k), plain(v)) for k, v in dict_items(value)]
            same = len_(pairs) == len_(value) and all_(a is k and b is v for (a, b), (k, v) in zip_(pairs, dict_items(value)))
            return value if same else dict_(pairs)
        if hasattr_(cls, "__next__"):
            return lazily(value)
        return value

    return plain


def _honest_maker():
    """``honest(fn)``: ``fn`` whose results pass through ``plain`` (see :func:`_plain_maker`)."""
    plain, wraps = _plain_maker(), __import__("functools").wraps

    def honest(fn):
        def call(*args, **kwargs):
            return plain(fn(*args, **kwargs))

        try:
            return wraps(fn)(call)
        except Exception:  # attributes the sample made unreadable: the name is enough
            return call

    return honest


_HONEST = [None]  # honest(), made by _setup in the worker (before any sample code) and inherited by children


def _python_body(source, nonce, tests="", wrap=()):
    """Run ``source`` (the sample), then ``tests`` in the same namespace, with the functions
    named in ``wrap`` seen by the tests through ``honest`` (their results made plain)."""

    def body(fd):
        # Hold on to what the report needs before the sample can replace it.
        write, exit_, type_, str_, callable_, isinstance_, dict_ = os.write, os._exit, type, str, callable, isinstance, dict
        honest, _HONEST[0] = _HONEST[0], None  # not left where the sample could reach it by name
        import builtins

        status, detail = "passed", ""
        try:
            ns = {"__name__": "__main__", "__builtins__": builtins}
            exec(compile(source, "<sample>", "exec"), ns)
            if wrap:  # the tests get their own copy of the namespace: the sample's code (recursion
                ns = dict_(ns)  # included) keeps calling its functions directly
                for name in wrap:
                    fn = ns.get(name)
                    if callable_(fn) and not isinstance_(fn, type_):
                        ns[name] = honest(fn)
            if tests:
                exec(compile(tests, "<tests>", "exec"), ns)
        except MemoryError:
            status, detail = "oom", "MemoryError"
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the tests did not return
            status = "failed" if isinstance_(exc, AssertionError) else "error"
            try:
                detail = type_(exc).__name__ + ": " + str_(exc)
            except BaseException:
                detail = "exception"
        try:
            line = nonce + " " + status + " " + detail[:_DETAIL_LIMIT].replace("\n", " ") + "\n"
            write(fd, line.encode("utf-8", "replace"))
        finally:
            exit_(0)

    return body


def _stdio_body(source):
    def body(fd):
        import builtins

        os.close(fd)
        code = 0
        try:
            exec(compile(source, "<sample>", "exec"), {"__name__": "__main__", "__builtins__": builtins})
        except SystemExit as exc:  # as a real interpreter would: exit(None) is 0, exit("text") is 1
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException as exc:
            code = 1
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        try:
            sys.stdout.flush()
        except BaseException:
            code = code or 1
        os._exit(code & 0xFF)

    return body


def _call_body(source, func_name, args_list, nonce):
    def body(fd):
        write, exit_, dumps = os.write, os._exit, json.dumps
        import builtins

        def say(text):
            write(fd, (nonce + " " + text.replace("\n", " ") + "\n").encode("utf-8", "replace"))

        try:
            ns = {"__name__": "__main__", "__builtins__": builtins}
            exec(compile(source, "<sample>", "exec"), ns)
            owner = ns.get("Solution")
            fn = getattr(owner(), func_name) if owner is not None and hasattr(owner, func_name) else ns[func_name]
            for i, args in enumerate(args_list):
                say(f"{i} " + dumps(fn(*args)))
        except MemoryError:
            say("oom MemoryError")
        except BaseException as exc:
            say("error " + (type(exc).__name__ + ": " + str(exc))[:_DETAIL_LIMIT])
        exit_(0)

    return body


def _command_body(argv):
    def body(fd):
        os.close(fd)
        os.execvp(argv[0], argv)

    return body


# --------------------------------------------------------------------------- #
# verdicts: decided here, from what the child could not forge
# --------------------------------------------------------------------------- #
def _normalise(text):
    """Output compared after dropping trailing whitespace on each line and trailing blank lines."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def _tail(raw):
    return raw.decode("utf-8", "replace").strip()[-_DETAIL_LIMIT:]


def _abnormal(how, status, cpu, stderr=b""):
    """The verdict of a run that did not end on its own, or None if it did."""
    if how == "timeout":
        return "timeout", f"timed out (CPU {cpu:.2f} s)"
    if how == "stopped":
        return "failed", "output limit exceeded"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXFSZ:
            return "error", "file size limit exceeded"
        name = signal.Signals(sig).name if sig in set(signal.Signals) else str(sig)
        return "error", f"killed by {name}" + (f": {_tail(stderr)}" if stderr.strip() else "")
    return None


def _reported(report, nonce):
    """The (word, rest) lines of a harness report that carry this run's nonce."""
    lines = []
    for line in report.decode("utf-8", "replace").split("\n"):
        got, _, rest = line.partition(" ")
        if got == nonce:
            word, _, rest = rest.partition(" ")
            lines.append((word, rest))
    return lines


def run_python(job, cfg):
    nonce = secrets.token_hex(16)
    body = _python_body(job["source"], nonce, job.get("tests", ""), job.get("wrap", ()))
    how, status, cpu, wall, report, err, _ = _fork_run(cfg, cfg["timeout"], body)
    verdict = _abnormal(how, status, cpu, err)
    if verdict is None:
        # Processes the sample forked carry the harness too: every report must say passed.
        lines = _reported(report, nonce)
        bad = [(word, rest) for word, rest in lines if word != "passed"]
        if bad:
            verdict = bad[0] if bad[0][0] in ("failed", "error", "oom") else ("error", "malformed report")
        elif lines:
            verdict = "passed", ""
        else:
            code = os.waitstatus_to_exitcode(status)
            verdict = "error", f"ended without a verdict from the test harness (exit status {code})"
    if verdict[0] == "error" and "MemoryError" in verdict[1]:
        verdict = "oom", verdict[1]
    return verdict, cpu, wall


def run_call(job, cfg):
    nonce = secrets.token_hex(16)
    cases = job["cases"]
    expected = [{json.dumps(e, sort_keys=True) for e in accept} for _, accept in cases]

    def same(i, value):
        try:
            return i < len(expected) and json.dumps(json.loads(value), sort_keys=True) in expected[i]
        except ValueError:
            return False

    def first_wrong(lines):
        for i, (word, value) in enumerate(lines):
            if word != str(i):
                return i, word, value
            if not same(i, value):
                return i, "failed", f"wrong answer {value[:80]}"
        return None

    def stop(bufs):  # end early at the first wrong answer
        return first_wrong(_reported(bytes(bufs[0]), nonce)) is not None

    body = _call_body(job["source"], job["func_name"], [args for args, _ in cases], nonce)
    how, status, cpu, wall, report, err, _ = _fork_run(cfg, cfg["timeout"] * max(1, len(cases)), body, stop=stop)
    lines = _reported(report, nonce)
    wrong = first_wrong(lines)
    if wrong is not None and wrong[1] in ("failed", "error", "oom"):
        return (wrong[1], f"case {wrong[0]}: {wrong[2]}"), cpu, wall
    verdict = _abnormal(how, status, cpu, err) if how != "stopped" else None
    if verdict is not None:
        return verdict, cpu, wall
    if wrong is not None or len(lines) < len(cases):
        return ("error", f"case {len(lines)}: no result from the test harness"), cpu, wall
    return ("passed", ""), cpu, wall


def run_stdio(job, cfg):
    total_cpu = total_wall = 0.0
    in_path = os.path.join(cfg["cwd"], ".stdin")
    for i, (stdin, expected) in enumerate(job["cases"]):
        with open(in_path, "w", encoding="utf-8") as fh:
            fh.write(stdin)
        limit = len(expected.encode()) * 4 + 65536
        how, status, cpu, wall, _, err, out = _fork_run(
            cfg, cfg["timeout"], _stdio_body(job["source"]), stdin_path=in_path, capture_stdout=True,
            stop=lambda bufs: len(bufs[2]) > limit,
        )
        total_cpu, total_wall = total_cpu + cpu, total_wall + wall
        verdict = _abnormal(how, status, cpu, err)
        if verdict is None and os.WEXITSTATUS(status) != 0:
            detail = _tail(err)
            verdict = ("oom" if "MemoryError" in detail else "error",
                       f"exit status {os.WEXITSTATUS(status)}" + (f": {detail}" if detail else ""))
        if verdict is None and _normalise(out.decode("utf-8", "replace")) != _normalise(expected):
            verdict = "failed", f"wrong answer {_normalise(out.decode('utf-8', 'replace'))[:60]!r}"
        if verdict is not None:
            return (verdict[0], f"case {i}: {verdict[1]}"), total_cpu, total_wall
    return ("passed", ""), total_cpu, total_wall


def run_command(job, cfg):
    path = os.path.join(cfg["cwd"], job.get("filename") or "sample.txt")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(job["source"])
    argv = [a.replace("{file}", path) for a in job["argv"]]
    if not any("{file}" in a for a in job["argv"]):
        argv.append(path)
    how, status, cpu, wall, _, err, out = _fork_run(
        cfg, cfg["timeout"], _command_body(argv), capture_stdout=True, stop=lambda bufs: len(bufs[2]) > _REPORT_LIMIT
    )
    verdict = _abnormal(how, status, cpu, err)
    if verdict is None:
        code = os.WEXITSTATUS(status)
        verdict = ("passed", "") if code == 0 else ("failed", f"verifier exit status {code}: {_tail(out + err)}")
    return verdict, cpu, wall


RUNNERS = {"python": run_python, "call": run_call, "stdio": run_stdio, "command": run_command}


def run_job(job, cfg):
    """Run one job in a fresh work directory; always returns a verdict record."""
    cfg["cwd"] = tempfile.mkdtemp(prefix="w", dir=cfg["base"])
    try:
        (status, detail), cpu, wall = RUNNERS[job["kind"]](job, cfg)
    except Exception as exc:  # an infrastructure failure, e.g. fork() refused
        status, detail, cpu, wall = "sandbox_error", f"{type(exc).__name__}: {exc}", 0.0, 0.0
    finally:
        _kill_all(cfg)
        _wipe(cfg)
    return {"key": job["key"], "status": status, "detail": detail, "cpu": round(cpu, 4), "wall": round(wall, 4)}


def _mounts_below(top):
    """Mount points strictly below ``top`` (e.g. a read-only bind of a virtual environment in /tmp)."""
    found = set()
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                point = line.split()[4].replace("\\040", " ")
                if point.startswith(top.rstrip("/") + "/"):
                    found.add(point)
    except (OSError, IndexError):
        pass
    return found


def _paths_to(mounts, top):
    """The mount points and every directory between ``top`` and one of them."""
    keep = set()
    for point in mounts:
        while point != top and point not in keep:
            keep.add(point)
            point = os.path.dirname(point)
    return keep


def _clear(directory, keep):
    """Remove everything in ``directory``; around the paths in ``keep`` (binds and their parents)."""
    for entry in os.listdir(directory):
        full = os.path.join(directory, entry)
        if full in keep:
            if not os.path.ismount(full):  # a parent of a bind, on the tmpfs: a sample may write here
                _clear(full, keep)
        elif os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, ignore_errors=True)
        else:
            try:
                os.unlink(full)
            except OSError:
                pass


def _wipe(cfg):
    """Leave nothing a later sample could see: the run's directory, and in the sandbox all of /tmp.

    Binds below /tmp (a virtual environment there, ``--bind``) and the directories that lead to
    them are kept, and never walked: removing them would fail anyway, file by file.
    """
    shutil.rmtree(cfg["cwd"], ignore_errors=True)
    if cfg["pidns"]:
        _clear(cfg["tmp"], cfg["tmp_keep"])
        _clear(cfg["base"], set())


def serve():
    """Read events from stdin until "stop" or end of input; verdicts go to stdout."""
    cfg = None
    for line in sys.stdin.buffer:
        name, data = json.loads(line)
        if name == "config":
            cfg = dict(data)
            _emit("ready", _setup(cfg))
        elif name == "batch":
            for job in data["jobs"]:
                _emit("verdict", run_job(job, cfg))
        elif name == "stop":
            break
    if cfg is not None:
        shutil.rmtree(cfg["base"], ignore_errors=True)


if __name__ == "__main__":
    serve()
