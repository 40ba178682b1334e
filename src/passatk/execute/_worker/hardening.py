"""Limits and hardening: what a process does to itself before it can be trusted or before sample code runs.

* :func:`harden` — every process of a worker, once: die with the parent, not
  dumpable (so that no process of the same user without ``CAP_SYS_PTRACE`` can
  ptrace it, read its memory through ``/proc/PID/mem`` or its descriptors
  through ``/proc/PID/fd``), subreaper of what its children leave;
* :func:`own_namespaces` — outside bubblewrap, the network, pid and IPC
  namespaces this user may make, and a private ``/dev/shm``;
* :func:`warm_up` — imports, a compiled-and-run program, ``gc.freeze()``, done
  before any job is seen, so that every fork starts warm;
* :func:`enter_child` — in a freshly forked child: own session, standard
  streams, no other descriptors, rlimits, and no capabilities and no way to
  gain any (``PR_SET_NO_NEW_PRIVS``), so that even a worker running as root
  leaves a sample no privilege over the trusted processes.
"""

import ctypes
import gc
import math
import os
import resource
import signal
import sys

__all__ = ["enter_child", "harden", "own_namespaces", "prctl", "private_dir", "warm_up"]

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x8, 0x4000, 0x40000
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

# Without ``use_errno`` (nothing here reads errno), and with the functions looked up once here:
# in a forked child, ctypes' errno swapping and a first lookup each cost page faults (about 15
# of the 400 or so a sample's process takes here, each a few microseconds in a virtual machine).
_LIBC = ctypes.CDLL(None)
_prctl, _capset, _unshare, _mount = _LIBC.prctl, _LIBC.capset, _LIBC.unshare, _LIBC.mount
# Imported once, not in every child: what HumanEval/MBPP-style programs typically import.  Not
# ``random`` (nor ``statistics`` or ``tempfile``, which import it): it reseeds itself in every
# forked child (an at-fork hook), which cost every run about 0.3 ms and 45 page faults here,
# for the few programs that use it.
_PRELOAD = (
    "typing",
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "string",
    "hashlib",
    "bisect",
    "fractions",
    "decimal",
    "datetime",
    "copy",
    "operator",
    "base64",
)
# Compiled and run once so that every child starts with the compiler and the interpreter's
# lazily built state already made (a child's first compile() otherwise costs about 1 ms of CPU).
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
STDIO = []  # sys.stdin, sys.stdout, sys.stderr for every child (made by warm_up, never used by the parent)


def prctl(option, value):
    return _prctl(option, value, 0, 0, 0) == 0  # small ints: libffi widens them to the unsigned longs prctl takes


def harden(cpus=()):
    """Die with the parent, become non-dumpable and a subreaper, run on ``cpus`` if given; return what worked.

    The CPUs are inherited by every process forked after (judges, samples).
    """
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if cpus:
        os.sched_setaffinity(0, cpus)
    return {
        "non_dumpable": prctl(PR_SET_DUMPABLE, 0),
        "subreaper": prctl(PR_SET_CHILD_SUBREAPER, 1),
        "cpus": sorted(os.sched_getaffinity(0)),
    }


# --------------------------------------------------------------------------- #
# namespaces, outside bubblewrap
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
    if _unshare(flags) != 0:
        return None
    if flags & CLONE_NEWUSER:
        _write_id_maps(uid, gid)
    # our mounts must not propagate to the host
    if _mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
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
                ok = _mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) == 0
                os._exit(0 if ok and os.readlink("/proc/self") == "1" else 1)
            if pid is not None:
                code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(probe, 0)[1]) == 0


def own_namespaces():
    """Take whatever network, pid and IPC namespaces this user may make; return (network, pid, ipc, shm).

    With a pid namespace (tried first in a throwaway process) the process forks
    once more and the child, as init with its own /proc, carries on: samples
    then cannot see or signal anything outside, every orphan comes back to it,
    and all of them die with it.  The parent stays behind, waits, and exits
    with the child's status.  With it come an IPC namespace of its own (where
    it can be had: System V objects and POSIX message queues are then the
    samples' alone) and, in its own mount namespace, a tmpfs of its own on
    ``/dev/shm`` (``shm``: whether it was mounted).
    """
    uid, gid = os.geteuid(), os.getegid()
    wanted = CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID
    for flags in (wanted | CLONE_NEWIPC, CLONE_NEWUSER | wanted | CLONE_NEWIPC, wanted, CLONE_NEWUSER | wanted):
        if _pid_namespace_works(flags, uid, gid):
            pid = _enter_namespaces(flags, uid, gid)
            if pid is None:
                break
            if pid:  # stay behind as the process the controller knows, and end as the child ends
                _, status = os.waitpid(pid, 0)
                os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            if _mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
                os._exit(97)  # never run with a /proc of another pid namespace
            shm = _mount(b"tmpfs", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=1777,size=64m") == 0
            return True, True, bool(flags & CLONE_NEWIPC), shm
    return _unshare(CLONE_NEWNET) == 0, False, False, False


def private_dir(prefix, parent=None):
    """A new directory only we may enter, ``<parent>/<prefix><random>`` (``tempfile.mkdtemp`` without ``random``)."""
    parent = parent or os.environ.get("TMPDIR") or "/tmp"
    while True:
        path = os.path.join(parent, prefix + os.urandom(6).hex())
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            continue


# --------------------------------------------------------------------------- #
# warm start
# --------------------------------------------------------------------------- #
def warm_up(import_paths=(), preload=()):
    """Imports, one compiled program, the children's standard streams, ``gc.freeze()``.

    ``preload`` are the environment's own modules imported once here (pandas,
    matplotlib with the Agg backend, ...), so that no program pays for them; one
    that does not import is left out (the programs that need it then fail
    importing it themselves).
    """
    import builtins

    for name in ("exit", "quit"):  # what ``site`` would add; programs call them
        if not hasattr(builtins, name):
            setattr(builtins, name, sys.exit)
    sys.path.extend(import_paths)
    for module in (*_PRELOAD, *preload):
        try:
            __import__(module)
        except Exception:
            pass
    exec(compile(_WARM_UP, "<warm-up>", "exec"), {"__name__": "__warm_up__"})
    STDIO[:] = [
        open(0, encoding="utf-8", errors="replace", closefd=False),
        open(1, "w", encoding="utf-8", closefd=False),
        open(2, "w", encoding="utf-8", closefd=False),
    ]
    # The dispositions a child starts with, set once here rather than in every child.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_DFL)
    gc.freeze()  # children's collections skip (and so do not copy) the parent's own objects


# --------------------------------------------------------------------------- #
# a child, before the code it exists for
# --------------------------------------------------------------------------- #
def _limit(which, value):
    try:
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass


_CAP_HEADER = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
_CAP_NONE = (ctypes.c_uint32 * 6)()


def _drop_capabilities():
    """Empty the effective, permitted and inheritable capability sets, and forbid gaining any.

    With ``PR_SET_NO_NEW_PRIVS`` an ``execve`` grants nothing (setuid bits and file
    capabilities are ignored), so the bounding set no longer matters.
    """
    _capset(_CAP_HEADER, _CAP_NONE)
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def enter_child(cfg, cpu_seconds, stdin_fd, stdout_fd, stderr_fd, keep=()):
    """In a forked child, before its code runs: session, descriptors, rlimits, no privileges.

    ``keep`` are descriptors left open beside 0, 1 and 2 (all others are closed).
    """
    os.setsid()
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    os.dup2(stdin_fd, 0)
    os.dup2(stdout_fd, 1)
    os.dup2(stderr_fd, 2)
    # Not the parent's own file objects: its sys.stdin may have read ahead into the controller's stream.
    sys.stdin, sys.stdout, sys.stderr = STDIO
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    if cpu_seconds is not None:  # None: a process that lives for many runs, budgeted by its parent
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
    _limit(resource.RLIMIT_MSGQUEUE, 0)  # no POSIX message queue, which would outlive the run (see .ipc)
    if cfg.get("nproc"):
        _limit(resource.RLIMIT_NPROC, cfg["nproc"])
    _drop_capabilities()
