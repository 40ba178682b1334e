"""Task kind ``cases``: a program built once, then run afresh for each case; the worker judges every run.

This is how contest judges (DOMjudge, Kattis) run a submission, in every
language: the build once per program, then each test case a fresh process of
the built program under the problem's per-case CPU time and memory limits,
its output compared outside the program.  The job (made by
:mod:`passatk.execute.contest`)::

    {"kind": "cases", "language": "cpp", "source": main file's text, "file": "main.cpp",
     "files": {name: text},                  # the submission's other files
     "steps": [build steps..., run step],    # as for ``program`` jobs (:mod:`.compiled`)
     "cases": [[input, answer], ...], "names": [case names],
     "time_limit": CPU seconds a case, "memory_mb": a case's memory, "output_mb": output limit,
     "compare": {"case_sensitive": False, "space_change_sensitive": False,
                 "float_absolute_tolerance": None, "float_relative_tolerance": None}
                 or {"rule": "lines" | "apps" | "livecodebench"},
     "checker": None or {"type": "kattis" | "testlib", "argv": [...], "args": [...],
                         "interactive": bool, "cpu": seconds, "memory_mb": MiB,
                         "passes": most runs of a case (multi-pass validation)},
     "all_cases": bool}

Who holds what.  The sample's process (forked from the zygote, :func:`serve`)
receives the program and its files, runs the build steps and then, for each
case the worker asks for, runs the built program once on descriptors the
worker made and sent it (the case's input in a memfd, pipes for its output),
and reports how that run ended (CPU, wall, peak memory, exit status or
signal).  It never receives an answer, a checker or a verdict.  The worker
reads each run's output on its own pipe, compares it (:func:`compare`) or
hands it to the problem's checker, a trusted program the worker starts in a
process of its own (never the submission's), with the input and the answer
in memfds of its own.  For an interactive problem the worker starts the
validator and relays bytes between it and the program both ways, counting
them; the validator decides.  A multi-pass problem's case is run again
while its validator writes ``nextpass.in`` in a feedback directory of the
worker's (:func:`_judge_case`).  Every run starts from what the build left
(:func:`_fresh`, :func:`_files`): nothing a run writes reaches the next.

Verdicts as judges give them (each case's, and the job's: its first failing
case's, in case order): ``accepted``, ``wrong_answer``, ``time_limit_exceeded``,
``memory_limit_exceeded``, ``run_time_error``, ``output_limit_exceeded``,
``no_output`` (DOMjudge's: exit 0 and nothing written where an answer was
expected), ``compile_error`` and ``judge_error`` (a checker that crashed, ran
out of time or answered neither accepted nor wrong: never a pass, never a
wrong answer).  They map onto passatk's statuses by :data:`STATUS`; the
verdict's ``output`` is ``{"verdict", "cases": [{"case", "verdict", "cpu",
"wall", "memory_kb", "detail"}], "build": [...]}``.
"""

import json
import math
import os
import re
import resource
import select
import shutil
import signal
import socket
import stat
import time

from . import hardening, supervise
from . import steps as _steps_mod
from .channel import memfd, receive, send
from .compiled import _steps as _decide_steps
from .compiled import first_error
from .outputs import stdio_matches

__all__ = ["STATUS", "VERDICTS", "compare", "run_cases", "serve"]

VERDICTS = (
    "accepted",
    "wrong_answer",
    "time_limit_exceeded",
    "memory_limit_exceeded",
    "run_time_error",
    "output_limit_exceeded",
    "no_output",
    "compile_error",
    "judge_error",
)
STATUS = {
    "accepted": "passed",
    "wrong_answer": "failed",
    "time_limit_exceeded": "timeout",
    "memory_limit_exceeded": "oom",
    "run_time_error": "error",
    "output_limit_exceeded": "failed",
    "no_output": "failed",
    "compile_error": "compile_error",
    "judge_error": "sandbox_error",
}
_GRACE = 10.0
_STUCK = 2.0  # seconds past a run's wall-clock limit before the worker stops waiting for its report
_WALL_FACTOR = 3.0  # a case's wall-clock limit: this many times its CPU limit, plus a second (a loaded machine slows a run)
_TAIL = 4096
_RELAY = 1 << 16  # bytes an interactive case's relay holds for a reader before it stops reading the writer
_OOM_MARKS = ("bad_alloc", "OutOfMemoryError", "MemoryError", "out of memory", "Cannot allocate memory", "memory allocation of")
_KATTIS_AC, _KATTIS_WA = 42, 43


# --------------------------------------------------------------------------- #
# in the sample's process
# --------------------------------------------------------------------------- #
def _inside(cwd, name):
    parts = [p for p in str(name).split("/") if p not in ("", ".")]
    if not parts or ".." in parts or str(name).startswith("/"):
        raise ValueError(f"a file name that leaves the run's directory: {name!r}")
    return os.path.join(cwd, *parts)


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        data = text.encode("utf-8", "surrogateescape")  # a file's bytes, as read
    except UnicodeEncodeError:
        data = text.encode("utf-8", "surrogatepass")
    with open(path, "wb") as fh:
        fh.write(data)


def _spawn_run(step, path, fds):
    """Start one run of the built program with ``posix_spawn`` (no copy of this process): its own process
    group, SIGPIPE at its default, its streams, and its address-space limit from its first instruction
    (this process's soft limit is lowered to it around the spawn, which the program inherits; set on the
    program after the spawn, a program that allocated at once, before the parent's ``prlimit``, kept
    more than its limit: Kattis's ``memory_limit.cc`` was accepted so under load); then its CPU limit
    (``prlimit``: until then it has this process's, and supervise() holds it to its CPU time anyway).
    A program that cannot be spawned so is run by a fork that says why and exits 127, as a build step's
    would."""
    here = os.getcwd()
    argv = [a.replace("{file}", path).replace("{dir}", here) for a in step["argv"]]
    env = {k: v.replace("{dir}", here) for k, v in step["env"].items()}
    soft = int(math.ceil(step["cpu"])) + 1
    memory = step.get("memory_bytes")
    if memory:
        hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        memory = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
    program = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH"))
    for fd in fds:  # received over the socket, they are inheritable: the program gets them as 0, 1, 2 only
        os.set_inheritable(fd, False)
    own = resource.getrlimit(resource.RLIMIT_AS)
    try:
        if program is None:
            raise FileNotFoundError(argv[0])
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, own[1]))
        try:
            pid = os.posix_spawn(
                program,
                argv,
                env,
                file_actions=[(os.POSIX_SPAWN_DUP2, fd, target) for fd, target in zip(fds, (0, 1, 2))],
                setpgroup=0,
                setsigdef=(signal.SIGPIPE,),
            )
        finally:
            resource.setrlimit(resource.RLIMIT_AS, own)
    except (OSError, MemoryError):  # no such program, or this process's own mappings past the limit
        pid = os.fork()
        if pid == 0:
            _steps_mod._exec(step, path, *fds)
        return pid
    try:
        resource.prlimit(pid, resource.RLIMIT_CPU, (soft, soft + 1))
        if memory:
            resource.prlimit(pid, resource.RLIMIT_AS, (memory, memory))  # its hard limit too
    except (ProcessLookupError, PermissionError):
        pass  # it ended already (or exec'd something set-uid): supervise() still holds it to its CPU limit
    return pid


def _run_one(step, path, fds, sock):
    """One run of the built program on ``fds`` (stdin, stdout, stderr); a message on ``sock`` stops it."""
    pid = _spawn_run(step, path, fds)
    for fd in fds:
        os.close(fd)

    def on_message():
        try:
            name, _, extra = receive(sock)
        except (EOFError, OSError):
            return "stopped"
        for fd in extra:
            os.close(fd)
        return "stopped" if name == "stop" else None

    try:
        outcome = supervise.supervise(pid, step["cpu"], step["wall"], watch={sock.fileno(): on_message})
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    status = outcome.status
    return {
        "how": outcome.how,
        "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "cpu": round(outcome.cpu, 4),
        "wall": round(outcome.wall, 4),
        "rss": outcome.rss,
    }


def _files(cwd):
    """What a run must leave as the build made it: each entry below ``cwd`` (its ``.tmp`` aside) and its inode's state.

    A run cannot create entries in its read-only directory, but it owns the
    files there (and may chmod the directory back): any write, chmod or
    rename changes an entry's change time, which no process can set.
    """
    found = {}
    for top, dirs, names in os.walk(cwd):
        if top == cwd:
            dirs[:] = [d for d in dirs if d != ".tmp"]
        for name in (top, *[os.path.join(top, n) for n in dirs + names]):
            try:
                st = os.lstat(name)
            except OSError:
                found[name] = None
                continue
            found[name] = (st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return found


def _scratch(cwd, tmp):
    """Where :func:`_fresh` clears: the directories to leave alone (``cwd``, binds), those walked to reach them, and modes."""
    stay = (supervise.mounts_below(tmp) | {cwd}) if tmp else set()
    walk = supervise.paths_to(stay, tmp) - stay if tmp else set()
    tops = [os.path.join(cwd, ".tmp")] + ([tmp, *sorted(walk)] if tmp else [])
    return {"tmp": tmp, "stay": stay, "walk": walk, "modes": [(t, stat.S_IMODE(os.lstat(t).st_mode)) for t in tops]}


def _fresh(cwd, plan):
    """Empty what a run may write and the next one could read (DOMjudge gives every run a fresh TMPDIR).

    The run's ``.tmp`` (its TMPDIR); inside the sandbox (``plan["tmp"]`` is
    its own ``/tmp``) first every process a run left (in the sandbox's pid
    namespace, whose init is the zygote, our parent: ``kill(-1)``), then
    ``/tmp`` around the run's directory and the binds below it, and
    ``/dev/shm``.
    """
    if plan["tmp"] and os.getppid() == 1:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    for top, mode in plan["modes"]:
        supervise.restore_mode(top, mode)
    supervise._clear(os.path.join(cwd, ".tmp"), frozenset())
    if not plan["tmp"]:
        return
    for top in [plan["tmp"], *sorted(plan["walk"])]:
        for entry in os.listdir(top):
            full = os.path.join(top, entry)
            if full in plan["stay"] or full in plan["walk"]:
                continue
            if os.path.isdir(full) and not os.path.islink(full):
                supervise._remove_tree(full)
            else:
                try:
                    os.unlink(full)
                except OSError:
                    pass
    supervise._clear("/dev/shm", frozenset())


def serve(source, channel_fd, spec):
    """Write the program, build it, then run it once per ``case`` message; never returns.

    Every run starts from what the build left: :func:`_fresh` empties the
    places a run may write, and a run that changed its program's files
    (:func:`_files`) is reported as such (``"tampered"``), and the worker ends the job there.
    """
    sock = socket.socket(fileno=channel_fd)
    cwd = os.getcwd()
    os.makedirs(os.path.join(cwd, ".tmp"), exist_ok=True)
    path = _inside(cwd, spec["file"])
    files = {}
    if spec.get("bundle"):
        bundle = json.loads(source)
        source, files = bundle["main"], bundle["files"]
    _write(path, source)
    for name, text in files.items():
        _write(_inside(cwd, name), text)
    for name, target in spec.get("links", {}).items():
        os.symlink(target, os.path.join(cwd, name))
    for name in spec.get("dirs", ()):
        os.makedirs(os.path.join(cwd, name), exist_ok=True)
    os.set_inheritable(sock.fileno(), False)  # runs are spawned without closing descriptors: none may leak
    os.closerange(3, sock.fileno())
    os.closerange(sock.fileno() + 1, 65536)
    every = spec["steps"]
    for i, step in enumerate(every[:-1]):
        report = _steps_mod._step(step, path, None)
        send(sock, "built", {"step": i, **report})
        if report["how"] != "exited" or report["code"] != 0:
            os._exit(0)
    os.chmod(cwd, 0o555)  # as DOMjudge: the program may not write its directory (.tmp stays writable)
    built, plan = _files(cwd), _scratch(cwd, spec.get("scratch"))
    _fresh(cwd, plan)
    send(sock, "built", {"step": len(every) - 1, "how": "ready"})
    run = every[-1]
    while True:
        try:
            name, _, fds = receive(sock)
        except (EOFError, OSError):
            break
        if name != "case" or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            if name == "stop":
                continue
            break
        report = _run_one(run, path, fds, sock)
        _fresh(cwd, plan)
        now = _files(cwd)
        if now != built:
            report["tampered"] = next(
                os.path.relpath(p, cwd) for p in sorted(set(now) | set(built)) if now.get(p) != built.get(p)
            )
        send(sock, "ran", report)  # (after a tampered run the worker asks for no more)
    os._exit(0)


# --------------------------------------------------------------------------- #
# the default output validator (Kattis's and DOMjudge's): tokens, case, space, floats
# --------------------------------------------------------------------------- #
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z|[+-]?(?:inf|infinity|nan)\Z", re.I)


def _tokens(text, space_sensitive):
    if space_sensitive:
        return [t for t in re.split(r"(\s+)", text) if t]
    return text.split()


def compare(output, answer, flags=None):
    """``(accepted, why)``: Kattis's default output validator on ``output`` against ``answer`` (both bytes).

    Tokens are separated by whitespace (any run of it is one separator unless
    ``space_change_sensitive``); letters compare case-insensitively unless
    ``case_sensitive``; with a float tolerance, a token of the answer that is
    a number accepts any number within ``float_absolute_tolerance`` or
    ``float_relative_tolerance`` of it (``float_tolerance`` sets both).  With
    ``{"rule": name}`` one of passatk's stdio rules (``lines``, ``apps``,
    ``livecodebench``) decides instead.

    >>> compare(b"Hello  World\\n", b"hello world")
    (True, '')
    >>> compare(b"1.0000001\\n", b"1", {"float_tolerance": 1e-6})
    (True, '')
    >>> compare(b"1 2 3", b"1 2")[0]
    False
    """
    flags = flags or {}
    rule = flags.get("rule")
    if rule is not None:
        text = output.decode("utf-8", "replace")
        ok = stdio_matches(rule, text, answer.decode("utf-8", "replace") if isinstance(answer, bytes) else answer)
        return ok, "" if ok else f"wrong answer {text.strip()[:60]!r}"
    out = output.decode("utf-8", "replace")
    ans = answer.decode("utf-8", "replace")
    space = bool(flags.get("space_change_sensitive"))
    case = bool(flags.get("case_sensitive"))
    tol = flags.get("float_tolerance")
    abs_tol = flags.get("float_absolute_tolerance", tol)
    rel_tol = flags.get("float_relative_tolerance", tol)
    got, want = _tokens(out, space), _tokens(ans, space)
    for i, judge in enumerate(want):
        if i >= len(got):
            return False, f"output ended after {i} tokens; the answer has {len(want)}"
        team = got[i]
        if (abs_tol is not None or rel_tol is not None) and _FLOAT.match(judge):
            if not _FLOAT.match(team):
                return False, f"token {i + 1}: expected a number near {judge!r}, got {team[:40]!r}"
            a, b = float(judge), float(team)
            if a == b or (math.isnan(a) and math.isnan(b)):
                continue
            diff = abs(a - b)
            if (abs_tol is not None and diff <= abs_tol) or (rel_tol is not None and diff <= rel_tol * abs(a)):
                continue
            return False, f"token {i + 1}: {team[:40]!r} is not within the tolerance of {judge!r}"
        if team == judge or (not case and team.lower() == judge.lower()):
            continue
        return False, f"token {i + 1}: expected {judge[:40]!r}, got {team[:40]!r}"
    if len(got) > len(want):
        return False, f"{len(got) - len(want)} token(s) more than the answer, from {got[len(want)][:40]!r}"
    return True, ""


# --------------------------------------------------------------------------- #
# trusted programs (checkers, validators) in processes of their own, in the worker's sandbox
# --------------------------------------------------------------------------- #
def _spawn(argv, env, cwd, stdin, stdout, stderr, passed, cpu, memory_bytes):
    """Fork and exec ``argv`` with its streams, ``passed`` descriptors at 3, 4, ... and its limits; the pid."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            os.chdir(cwd)
            moved = [os.dup(fd) for fd in passed]  # out of the way of the targets below
            os.dup2(stdin, 0)
            os.dup2(stdout, 1)
            os.dup2(stderr, 2)
            for i, fd in enumerate(moved):
                os.dup2(fd, 3 + i)
            os.closerange(3 + len(moved), 65536)
            soft = int(math.ceil(cpu)) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
            if memory_bytes:
                hard = resource.getrlimit(resource.RLIMIT_AS)[1]
                limit = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            os.execvpe(argv[0], argv, env)
        except BaseException as exc:
            try:
                os.write(2, f"passatk: cannot run the checker {argv[0]!r}: {exc}\n".encode())
            except OSError:
                pass
        finally:
            os._exit(127)
    return pid


def _checker_env(home):
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "TMPDIR": home}


def _feedback(directory):
    """What a Kattis validator wrote in its feedback directory (judgemessage.txt first)."""
    for name in ("judgemessage.txt", "teammessage.txt"):
        try:
            with open(os.path.join(directory, name), "rb") as fh:
                text = fh.read(2000).decode("utf-8", "replace").strip()
        except OSError:
            continue
        if text:
            return text[:200]
    return ""


def _checker_argv(checker, inp, out, ans, feedback):
    """The checker's command line: ``{input}``, ``{answer}``, ``{output}``, ``{feedback}`` are the files' paths."""
    if checker["type"] == "testlib":
        tail = [inp, out, ans]
    else:
        tail = [inp, ans, feedback + "/"]
    return [*checker["argv"], *tail, *checker.get("args", ())]


def _judge_error(what, checker, detail):
    return "judge_error", f"the {what} {checker.get('name') or checker['argv'][-1]} {detail}"


def _check(checker, case_input, answer, output, base):
    """``(verdict, detail)`` from the problem's checker on one run's output (never the submission's process).

    ``base`` is the case's own directory (the checker's working directory, its
    ``feedback`` folder inside), made by the worker where the program cannot reach it.
    """
    feedback = os.path.join(base, "feedback")
    fds = [memfd(case_input, "input"), memfd(answer, "answer"), memfd(output, "output")]
    err_r, err_w = os.pipe()
    out_r, out_w = os.pipe()
    try:
        paths = [f"/proc/self/fd/{3 + i}" for i in range(3)]
        argv = _checker_argv(checker, paths[0], paths[2], paths[1], feedback)
        stdin = fds[2] if checker["type"] != "testlib" else os.open(os.devnull, os.O_RDONLY)
        cpu = float(checker.get("cpu") or 30.0)
        memory = int(checker.get("memory_mb") or 2048) << 20
        pid = _spawn(argv, _checker_env(base), base, stdin, out_w, err_w, fds, cpu, memory)
        if stdin not in fds:
            os.close(stdin)
        os.close(err_w)
        os.close(out_w)
        err_w = out_w = None
        outcome = supervise.supervise(pid, cpu, cpu * 3 + 5, [(out_r, _TAIL, "tail"), (err_r, _TAIL, "tail")])
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        said = (outcome.buffers[1] or outcome.buffers[0]).decode("utf-8", "replace").strip()[-200:]
        message = _feedback(feedback) or said
        if outcome.how == "timeout":
            return _judge_error("checker", checker, f"ran out of time (CPU {outcome.cpu:.2f} s)")
        if not os.WIFEXITED(outcome.status):
            return _judge_error("checker", checker, f"was killed by signal {os.WTERMSIG(outcome.status)}: {said}")
        code = os.WEXITSTATUS(outcome.status)
        if checker["type"] == "testlib":
            if code == 0:
                return "accepted", ""
            if code in (1, 2):  # wrong answer, presentation error
                return "wrong_answer", message
            return _judge_error("checker", checker, f"failed (exit status {code}): {message}")
        if code == _KATTIS_AC:
            return "accepted", ""
        if code == _KATTIS_WA:
            return "wrong_answer", message
        return _judge_error("output validator", checker, f"exited {code}, neither 42 nor 43: {message}")
    finally:
        for fd in (*fds, err_r, out_r, err_w, out_w):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass


# --------------------------------------------------------------------------- #
# in the worker
# --------------------------------------------------------------------------- #
class _Gone(Exception):
    """The sample's process ended (or stopped answering) before it should have."""


def _await(ctrl, zyg, wall):
    """The sample's process's next message, or :class:`_Gone`."""
    poller = select.poll()
    poller.register(ctrl, select.POLLIN)
    poller.register(zyg.sock, select.POLLIN)
    deadline = time.monotonic() + wall
    while (left := deadline - time.monotonic()) > 0:
        for fd, _ in poller.poll(left * 1000):
            if fd == ctrl.fileno():
                try:
                    name, data, extra = receive(ctrl)
                except (EOFError, OSError):
                    raise _Gone("the program's process ended") from None
                for x in extra:
                    os.close(x)
                return name, data
            if zyg.on_readable(ends=True) == "exited":
                raise _Gone("the program's process ended")
    raise _Gone("the program's process did not answer in time")


def _oom(report, stderr, memory_bytes):
    text = stderr.decode("utf-8", "replace")
    if any(m in text for m in _OOM_MARKS):
        return True
    return bool(memory_bytes) and report.get("rss", 0) * 1024 >= 0.9 * memory_bytes


def _ended(report, stderr, memory_bytes):
    """The verdict of a run that did not end well (time, memory, crash, its program's files changed), or None."""
    if report.get("tampered"):
        return "run_time_error", f"the run changed its program's files ({report['tampered'][:80]}), which are read-only to it"
    if report["how"] == "timeout" or report.get("signal") == signal.SIGXCPU:  # (the CPU limit's signal, when it came first)
        return "time_limit_exceeded", f"CPU {report['cpu']:.2f} s"
    if report.get("signal") is not None or report.get("code") not in (0, None):
        what = f"killed by signal {report['signal']}" if report.get("signal") is not None else f"exit status {report['code']}"
        tail = supervise.tail(stderr)
        if _oom(report, stderr, memory_bytes):
            return "memory_limit_exceeded", what + (f": {tail}" if tail else "")
        return "run_time_error", what + (f": {tail}" if tail else "")
    return None


def _collect(ctrl, zyg, out_r, err_r, limit, wall):
    """Read a run's output until its report comes: (report or None, stdout, stderr's tail, past the limit?).

    Output past ``limit`` is read and dropped, so the run goes on to its own end
    (DOMjudge's behaviour: a program that writes forever is then out of time).
    None: no report within ``wall`` seconds; the pipes are closed either way.
    """
    poller = select.poll()
    for fd in (out_r, err_r, ctrl.fileno(), zyg.sock.fileno()):
        poller.register(fd, select.POLLIN)
    out, err = bytearray(), bytearray()
    exceeded, report = False, None
    deadline = time.monotonic() + wall

    def take(fd, chunk):  # stderr's tail kept; stdout kept up to the limit, then dropped
        nonlocal exceeded
        if fd == err_r:
            err.extend(chunk)
            del err[:-_TAIL]
        elif not exceeded:
            out.extend(chunk)
            if len(out) > limit:
                exceeded = True
                out.clear()

    try:
        while report is None and (left := deadline - time.monotonic()) > 0:
            for fd, _ in poller.poll(left * 1000):
                if fd in (out_r, err_r):
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        poller.unregister(fd)
                    else:
                        take(fd, chunk)
                elif fd == ctrl.fileno():
                    try:
                        name, data, extra = receive(ctrl)
                    except (EOFError, OSError):
                        raise _Gone("the program's process ended during a case") from None
                    for x in extra:
                        os.close(x)
                    if name == "ran":
                        report = data
                elif zyg.on_readable(ends=True) == "exited":
                    raise _Gone("the program's process ended during a case")
        if report is not None:  # what is left in the pipes (a descendant may still hold them: no waiting)
            for fd in (out_r, err_r):
                os.set_blocking(fd, False)
                for _ in range(64):
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        break
                    if not chunk:
                        break
                    take(fd, chunk)
    finally:
        os.close(out_r)
        os.close(err_r)
    return report, bytes(out), bytes(err), exceeded


def _plain_case(job, run, ctrl, zyg, case_input, answer, base):
    """One run on one case's input, judged in the case's directory ``base``; (verdict, detail, report)."""
    in_fd = memfd(case_input, "stdin")
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        send(ctrl, "case", {}, [in_fd, out_w, err_w])
    finally:
        for fd in (in_fd, out_w, err_w):
            os.close(fd)
    limit = int(job.get("output_mb") or 8) << 20
    report, out, err, exceeded = _collect(ctrl, zyg, out_r, err_r, limit, run["wall"] + _STUCK)
    if report is None:  # no report in time: the program stopped its supervisor (SIGSTOP to its parent) or worse
        return "time_limit_exceeded", "the run did not end within its wall-clock limit", {}
    bad = _ended(report, err, run.get("memory_bytes"))
    if bad is not None:
        return (*bad, report)
    if exceeded:  # as DOMjudge: output past the limit is dropped and the run goes on; within its limits, OLE
        return "output_limit_exceeded", f"more than {limit >> 20} MiB of output", report
    if job.get("checker"):
        verdict, detail = _check(job["checker"], case_input, answer, out, base)
    else:
        ok, detail = compare(out, answer, job.get("compare"))
        verdict = "accepted" if ok else "wrong_answer"
    if verdict == "wrong_answer" and not out and answer.strip():
        return "no_output", "the program wrote nothing", report
    return verdict, detail, report


def _interactive_case(job, run, ctrl, zyg, case_input, answer, base):
    """One run against the problem's interactive validator, bytes relayed through this process; (verdict, detail, report).

    The verdict is DOMjudge's (``determineVerdict`` of its judgedaemon): a
    validator that failed (ran out of time, was killed, exited neither 42 nor
    43) is a judge error whatever the program did; a wrong answer from a
    validator that ended before the program decides; else how the program
    ended (out of time, crashed, too much output); else the validator's word.
    The validator ended first when the worker saw its end (the end of its
    output, or its exit) before the program's (the end of the program's
    output, or its report), or when the worker stopped the program for its
    wrong answer (a program that closed its output and ran on).  A program
    that dies of the end of its input so ends second; and a program's death
    ends its output before the validator can see its own input end (the
    worker closes that on the output's end), so a validator that answered a
    dead program, out of time or crashed, ends second, as DOMjudge's
    runguard reports a time limit before any exit.
    """
    checker = job["checker"]
    sub_in_r, sub_in_w = os.pipe()
    sub_out_r, sub_out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        send(ctrl, "case", {}, [sub_in_r, sub_out_w, err_w])
    finally:
        for fd in (sub_in_r, sub_out_w, err_w):
            os.close(fd)
    feedback = os.path.join(base, "feedback")
    files = [memfd(case_input, "input"), memfd(answer, "answer")]
    val_in_r, val_in_w = os.pipe()
    val_out_r, val_out_w = os.pipe()
    val_err_r, val_err_w = os.pipe()
    cpu = float(checker.get("cpu") or 30.0)
    argv = [*checker["argv"], "/proc/self/fd/3", "/proc/self/fd/4", feedback + "/", *checker.get("args", ())]
    pid = _spawn(
        argv, _checker_env(base), base, val_in_r, val_out_w, val_err_w, files, cpu, int(checker.get("memory_mb") or 2048) << 20
    )
    for fd in (val_in_r, val_out_w, val_err_w):
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    for fd in (sub_out_r, val_out_r, sub_in_w, val_in_w, err_r, val_err_r):
        os.set_blocking(fd, False)
    pending = {sub_in_w: bytearray(), val_in_w: bytearray()}  # bytes on their way to each reader
    route = {sub_out_r: val_in_w, val_out_r: sub_in_w}
    source = {target: fd for fd, target in route.items()}
    paused = set()  # sources not read while their reader is behind (a pipe's back-pressure, not a growing buffer)
    open_w = {sub_in_w, val_in_w}
    closing = set()  # writers to close once what is pending is written (their source has ended)
    tails = {err_r: bytearray(), val_err_r: bytearray()}
    limit = int(job.get("output_mb") or 8) << 20
    sent = {sub_out_r: 0, val_out_r: 0}
    report = val_status = None
    # the order in which the worker saw each side end (its output's end or its exit, whichever came first)
    seen = iter(range(1 << 62))
    ended = {}
    stopped_for_validator = False
    wall = run["wall"] + _GRACE
    poller = select.poll()
    for fd in (sub_out_r, val_out_r, err_r, val_err_r, ctrl.fileno(), zyg.sock.fileno(), pidfd):
        poller.register(fd, select.POLLIN)
    start = time.monotonic()
    stopped = gone = False

    def resume(fd):
        if fd in paused:
            paused.discard(fd)
            poller.modify(fd, select.POLLIN)

    def close_w(fd):
        if fd in open_w:
            open_w.discard(fd)
            pending[fd].clear()
            try:
                poller.unregister(fd)
            except KeyError:
                pass
            os.close(fd)
            resume(source[fd])  # what it sends now is dropped

    try:
        while report is None or val_status is None:
            left = wall - (time.monotonic() - start)
            if left <= 0:
                break
            for fd, ev in poller.poll(left * 1000):
                if fd in route:
                    try:
                        chunk = os.read(fd, 65536)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        poller.unregister(fd)
                        paused.discard(fd)
                        ended.setdefault("program" if fd == sub_out_r else "validator", next(seen))
                        target = route[fd]
                        closing.add(target)
                        if target in open_w and not pending[target]:
                            close_w(target)
                        continue
                    sent[fd] += len(chunk)
                    target = route[fd]
                    if fd == sub_out_r and sent[fd] > limit:
                        stopped = True  # as DOMjudge: what is past the limit is dropped, the run goes on
                        continue
                    if target in open_w:
                        pending[target] += chunk
                        poller.register(target, select.POLLOUT)
                        if len(pending[target]) >= _RELAY and fd not in paused:
                            poller.modify(fd, 0)
                            paused.add(fd)
                elif fd in pending:
                    if ev & (select.POLLERR | select.POLLHUP):
                        close_w(fd)
                        continue
                    try:
                        n = os.write(fd, pending[fd])
                    except BlockingIOError:
                        continue
                    except OSError:
                        close_w(fd)
                        continue
                    del pending[fd][:n]
                    if len(pending[fd]) < _RELAY:
                        resume(source[fd])
                    if not pending[fd]:
                        if fd in closing:
                            close_w(fd)
                        else:
                            poller.modify(fd, 0)
                elif fd in tails:
                    try:
                        chunk = os.read(fd, 65536)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        poller.unregister(fd)
                        continue
                    tails[fd] += chunk
                    del tails[fd][:-_TAIL]
                elif fd == pidfd:
                    _, val_status, _ = os.wait4(pid, 0)
                    ended.setdefault("validator", next(seen))
                    poller.unregister(pidfd)
                    # (its output still on its way to the program is relayed; its end closes the program's input)
                    if os.WIFEXITED(val_status) and os.WEXITSTATUS(val_status) == _KATTIS_WA and report is None:
                        send(ctrl, "stop", {})  # a wrong answer while the program runs decides: stop it
                        stopped_for_validator = True
                elif fd == ctrl.fileno():
                    try:
                        name, data, extra = receive(ctrl)
                    except (EOFError, OSError):
                        gone = True
                        break
                    for x in extra:
                        os.close(x)
                    if name == "ran":
                        report = data
                        ended.setdefault("program", next(seen))
                        poller.unregister(ctrl.fileno())
                        # the validator's last moments: what the program sent is still its to read (DOMjudge
                        # gives the validator its own time limit, not the program's)
                        wall = time.monotonic() - start + cpu
                        closing.add(val_in_w)
                        if not pending[val_in_w]:
                            close_w(val_in_w)
                else:
                    if zyg.on_readable(ends=True) == "exited":
                        gone = True
                        break
            if gone:
                break
    finally:
        if val_status is None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            _, val_status, _ = os.wait4(pid, 0)
            val_status = ("killed", val_status)
        os.close(pidfd)
        for fd in (sub_out_r, val_out_r, err_r, val_err_r, *files):
            os.close(fd)
        for fd in list(open_w):
            close_w(fd)
        message = _feedback(feedback)
    if gone:
        raise _Gone("the program's process ended during a case")
    if report is None:
        send(ctrl, "stop", {})
        report = _await(ctrl, zyg, run["wall"] + _GRACE)[1]
    said = message or bytes(tails[val_err_r]).decode("utf-8", "replace").strip()[-200:]
    if isinstance(val_status, tuple):
        return (*_judge_error("interactive validator", checker, f"did not end within {cpu:g} s of the program's end"), report)
    if not os.WIFEXITED(val_status):
        return (*_judge_error("interactive validator", checker, f"was killed by signal {os.WTERMSIG(val_status)}"), report)
    code = os.WEXITSTATUS(val_status)
    if code not in (_KATTIS_AC, _KATTIS_WA):
        return (*_judge_error("interactive validator", checker, f"exited {code}, neither 42 nor 43: {said}"), report)
    validator_first = ended.get("validator", math.inf) < ended.get("program", math.inf)
    if code == _KATTIS_WA and (validator_first or (stopped_for_validator and report.get("how") == "stopped")):
        return "wrong_answer", said, report
    bad = _ended(report, bytes(tails[err_r]), run.get("memory_bytes"))
    if bad is not None:
        return (*bad, report)
    if stopped:
        return "output_limit_exceeded", f"more than {limit >> 20} MiB of output", report
    if code == _KATTIS_AC:
        return "accepted", "", report
    return "wrong_answer", said, report


def _bytes(text):
    if isinstance(text, bytes):
        return text
    try:
        return text.encode("utf-8", "surrogateescape")  # a data file's bytes, as read
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def _build_failed(report):
    why = {"timeout": f"the build timed out (CPU {report['cpu']:.2f} s)", "stopped": "the build wrote too much"}
    detail = why.get(report["how"]) or first_error(report.get("output", ""))
    if report["how"] == "exited" and any(m in report.get("output", "") for m in _OOM_MARKS):
        detail = "the build ran out of memory: " + detail
    return detail


def _judge_case(one, job, run, ctrl, zyg, case_input, answer):
    """One case, in as many passes as its validator asks for; ``(verdict, detail, report, passes)``.

    A multi-pass problem (``checker["passes"]`` above 1, ICPC's ``validation:
    custom multi-pass``): after an accepted pass the validator may write
    ``nextpass.in`` into its feedback directory; the program then runs afresh
    with that as its input, and the validator judges the pass with it as the
    case's input (the answer stays), until a pass is not accepted or writes no
    ``nextpass.in``.  The feedback directory lasts the whole case, less
    ``nextpass.in`` (DOMjudge's behaviour); asking for more than ``passes``
    passes is a judge error.  The directory is the worker's, out of the
    program's reach, so only the validator can ask for a pass.
    """
    if not job.get("checker"):  # the default validator: no directory to make
        return (*one(job, run, ctrl, zyg, case_input, answer, None), 1)
    passes = int(job["checker"].get("passes") or 1)
    base = hardening.private_dir("passatk-case-")  # not tempfile: it imports random (see .hardening)
    feedback = os.path.join(base, "feedback")
    os.mkdir(feedback)
    nextpass = os.path.join(feedback, "nextpass.in")
    total = {}
    try:
        for n in range(1, passes + 1):
            verdict, detail, report = one(job, run, ctrl, zyg, case_input, answer, base)
            if report:
                total = {
                    **report,
                    "cpu": total.get("cpu", 0.0) + report.get("cpu", 0.0),
                    "wall": total.get("wall", 0.0) + report.get("wall", 0.0),
                    "rss": max(total.get("rss", 0), report.get("rss", 0)),
                }
            if passes == 1 or verdict != "accepted" or not os.path.exists(nextpass):
                return verdict, (f"pass {n}: {detail}" if passes > 1 and detail else detail), total, n
            if n == passes:
                detail = f"asked for pass {n + 1} (nextpass.in) of a problem with at most {passes}"
                return (*_judge_error("output validator", job["checker"], detail), total, n)
            with open(nextpass, "rb") as fh:
                case_input = fh.read()
            os.unlink(nextpass)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run_cases(job, cfg, zyg):
    """Build once, run each case afresh; ``((status, detail), cpu, wall, passed, output)`` for :func:`.kinds.run_job`."""
    time_limit = float(job.get("time_limit") or cfg["timeout"])
    raw = [dict(s) for s in job["steps"]]
    if job.get("memory_mb"):
        raw[-1]["memory_mb"] = int(job["memory_mb"])
    every = _decide_steps({"steps": raw, "timeout": time_limit}, cfg)
    run = every[-1]
    run["wall"] = min(run["wall"], run["cpu"] * _WALL_FACTOR + 1.0)
    cases = job["cases"]
    names = job.get("names") or [str(i + 1) for i in range(len(cases))]
    builds = every[:-1]
    rounds = int((job.get("checker") or {}).get("passes") or 1)  # a case's runs at most (multi-pass problems)
    cpu_budget = sum(s["cpu"] for s in builds) + len(cases) * rounds * (run["cpu"] + 0.5) + 5.0
    wall_budget = sum(s["wall"] for s in builds) + len(cases) * rounds * (run["wall"] + 1.0) + 5.0
    memories = [s["memory_bytes"] for s in every]
    memory = None if any(m is None for m in memories) else max(memories)
    ctrl, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    spec = {"file": job["file"], "steps": every, "scratch": cfg.get("tmp"), **{k: job[k] for k in ("links", "dirs") if k in job}}
    source = job["source"]
    if job.get("files"):  # the other files travel with the program in its memfd (a packet to the zygote is small)
        source, spec["bundle"] = json.dumps({"main": source, "files": job["files"]}), True
    devnull = cfg["devnull"]
    try:
        zyg.start(
            "cases",
            source,
            cpu_budget,
            wall_budget,
            devnull,
            devnull,
            devnull,
            channel=theirs.fileno(),
            memory_bytes=memory,
            **spec,
        )
    finally:
        theirs.close()
    results, build, first, passed = [], [], None, 0
    cpu_used = wall_used = 0.0
    try:
        try:
            while True:
                _, report = _await(ctrl, zyg, sum(s["wall"] for s in builds) + _GRACE)
                if report.get("how") == "ready":
                    break
                build.append({k: report.get(k) for k in ("how", "code", "cpu", "wall", "output")})
                cpu_used, wall_used = cpu_used + report["cpu"], wall_used + report["wall"]
                if report["how"] != "exited" or report["code"] != 0:
                    first = ("compile_error", _build_failed(report))
                    break
        except _Gone as exc:
            first = ("judge_error", f"the build's process ended without a report ({exc})")
        if first is None:
            one = _interactive_case if (job.get("checker") or {}).get("interactive") else _plain_case
            for name, (case_input, answer) in zip(names, cases):
                data_in, data_ans = _bytes(case_input), _bytes(answer)
                passes = None
                try:
                    verdict, detail, report, passes = _judge_case(one, job, run, ctrl, zyg, data_in, data_ans)
                except _Gone as exc:
                    verdict, detail, report = "run_time_error", f"the program's process ended ({exc})", {}
                cpu_used += report.get("cpu", 0.0)
                wall_used += report.get("wall", 0.0)
                results.append(
                    {
                        "case": name,
                        "verdict": verdict,
                        "cpu": report.get("cpu", 0.0),
                        "wall": report.get("wall", 0.0),
                        "memory_kb": report.get("rss", 0),
                        **({"passes": passes} if passes and rounds > 1 else {}),
                        **({"detail": detail[:300]} if detail else {}),
                    }
                )
                if verdict == "accepted":
                    passed += 1
                    continue
                first = first or (verdict, f"case {name}: {detail}" if detail else f"case {name}")
                if (
                    not job.get("all_cases")
                    or verdict in ("judge_error", "time_limit_exceeded")
                    or not report
                    or report.get("tampered")
                ):
                    break  # (out of time: it would be on every case, as stdio jobs stop; no report: no process to run more)
    finally:
        ctrl.close()
        zyg.finish(_GRACE, linger=0.5)
    verdict, detail = first or ("accepted", "")
    output = {"verdict": verdict, "cases": results, "build": build}
    return (STATUS[verdict], detail[:300]), cpu_used, wall_used, passed, output
