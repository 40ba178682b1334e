"""The judge: runs the trusted tests in a process of its own and decides the verdict.

The judge is forked from the worker (for its first judged job) and decides job
after job: for each it receives the job and its end of that run's call
channel, runs the tests in a fresh namespace, and sends the verdict back on
its socket to the worker.  It holds the tests, the expected values and that
socket; the sample's process holds none of them and reaches the judge only
through the call channel, over which the judge asks for the sample's names
and calls its functions.  A judge that runs over its budget, runs out of
memory or dies is replaced by a fresh fork of the worker (:class:`Judge`).  Every answer is
decoded by :func:`.encoding.decode` into values the judge builds itself, so
the tests compare plain built-in values (or references equal only to
themselves), with the judge's own builtins, modules and interpreter.

Names the tests use resolve in this order: the judge's own namespace (the
trusted prompt or set-up code, and what the tests define), the judge's
builtins, then the sample's namespace.  A module the sample imported is
imported again by the judge (its own copy), so a patched ``math.isclose`` in
the sample changes nothing here.

Should the sample's process die, break the protocol or send an oversize
reply, the verdict is an error whatever the tests do with the exception.
"""

import builtins
import json
import os
import socket
import sys
import time

from . import encoding, hardening, supervise
from .channel import Frames, compact, memfd, read_fd, receive, send, send_encoded
from .outputs import call_matches

__all__ = ["Judge", "SampleGone", "SampleProxy", "decide"]

REPLY_LIMIT = 16 << 20  # bytes of one answer from the sample
_DETAIL_LIMIT = 300


class SampleGone(BaseException):
    """The sample's process can no longer be asked (it died, or broke the protocol)."""


_NO_KWARGS = encoding.encode({})  # what most calls pass as keyword arguments, encoded once


class SampleProxy:
    """The judge's end of the call channel."""

    def __init__(self, fd):
        self._frames = Frames(fd, REPLY_LIMIT)
        self.broken = None

    def _fail(self, reason):
        self.broken = self.broken or reason
        raise SampleGone(self.broken)

    def _reply(self):
        try:
            data = self._frames.receive()
        except (EOFError, OSError):
            self._fail("the sample's process ended while the tests were waiting for it")
        except OverflowError as exc:
            self._fail(f"oversize reply from the sample's process: {exc}")
        try:
            tree = json.loads(data.decode("utf-8", "surrogatepass"))
        except (ValueError, RecursionError, UnicodeDecodeError):
            self._fail("protocol violation: a reply that is not JSON")
        if type(tree) is not list or not tree or tree[0] not in ("ok", "raised", "ready") or len(tree) != 2:
            self._fail("protocol violation: a reply of unknown shape")
        return tree

    def _ask(self, request):
        if self.broken:
            raise SampleGone(self.broken)
        try:
            self._frames.send(compact(request).encode("utf-8", "surrogatepass"))
        except OSError:
            self._fail("the sample's process ended while the tests were calling it")
        tree = self._reply()
        if tree[0] == "ready":
            self._fail("protocol violation: 'ready' twice")
        try:
            if tree[0] == "raised":
                error = encoding.rebuild_exception(tree[1])
            else:
                return encoding.decode(tree[1], self._remote)
        except encoding.ProtocolError as exc:
            self._fail(f"protocol violation: {exc}")
        raise error

    def _remote(self, ref_id, type_name):
        return encoding.Remote(ref_id, type_name, self)

    def hello(self):
        """Wait until the program has run; raise what it raised, else return its functions and classes."""
        tree = self._reply()
        if tree[0] == "ok":
            self._fail("protocol violation: an answer before 'ready'")
        try:
            if tree[0] == "raised":
                error = encoding.rebuild_exception(tree[1])
            else:
                names = encoding.decode(tree[1], self._remote)
                if type(names) is not dict or not all(type(k) is str and type(v) is encoding.Remote for k, v in names.items()):
                    raise encoding.ProtocolError("'ready' must name references")
                return names
        except encoding.ProtocolError as exc:
            self._fail(f"protocol violation: {exc}")
        raise error

    def lookup(self, name):
        return self._ask(["global", name])

    def attribute(self, remote, name):
        return self._ask(["attr", remote._id, name])

    def iterate(self, remote):
        return self._ask(["iter", remote._id])

    def next(self, remote):
        return self._ask(["next", remote._id])

    def set_attribute(self, remote, name, value):
        try:
            payload = ["setattr", remote._id, name, encoding.encode(value)]
        except TypeError as exc:
            raise TypeError(f"cannot pass this to the sample's process: {exc}") from None
        self._ask(payload)

    def call(self, remote, args, kwargs):
        try:
            payload = ["call", remote._id, encoding.encode(list(args)), encoding.encode(dict(kwargs)) if kwargs else _NO_KWARGS]
        except TypeError as exc:  # the tests passed something that has no encoding
            raise TypeError(f"cannot pass this to the sample's process: {exc}") from None
        return self._ask(payload)


_BUILTINS = {k: v for k, v in vars(builtins).items() if not k.startswith("__")}


class _Namespace(dict):
    """The tests' globals: the judge's names, then builtins, then the sample's names (looked up on demand).

    Names in ``remote`` are the sample's even where a built-in has the name
    (an MBPP function called ``sum``).
    """

    def __init__(self, proxy, known, remote=()):
        super().__init__(_BUILTINS)  # found here, without a __missing__ (and an exception) per lookup
        for name in remote:
            self.pop(name, None)
        self["__name__"], self["__builtins__"] = "__main__", builtins
        self._proxy, self._known, self._remote = proxy, known, frozenset(remote)

    def __missing__(self, name):
        if name not in self._remote and (hasattr(builtins, name) or name.startswith("__")):
            raise KeyError(name)  # Python then looks in builtins, the judge's own
        value = self._known[name] if name in self._known else self._proxy.lookup(name)
        if isinstance(value, encoding.Remote) or type(value) is type(builtins):
            dict.__setitem__(self, name, value)
        return value


def _detail(exc):
    try:
        text = f"{type(exc).__name__}: {exc}"
    except BaseException:
        text = type(exc).__name__
    return text[:_DETAIL_LIMIT].replace("\n", " ")


def _status(exc):
    if isinstance(exc, MemoryError):
        return "oom", "MemoryError"
    return ("failed" if isinstance(exc, AssertionError) else "error"), _detail(exc)


_COMPILED = {}  # the trusted code of recent jobs, compiled once: a problem's samples share their tests


def _compiled(source, filename):
    key = (source, filename)
    code = _COMPILED.get(key)
    if code is None:
        if len(_COMPILED) >= 512:
            _COMPILED.clear()
        code = _COMPILED[key] = compile(source, filename, "exec")
    return code


def _tests(job, proxy):
    """HumanEval/MBPP: the trusted ``head`` and ``tests`` run here against the sample's names.

    ``tests`` is one piece of code (one case) or a list of pieces run one after
    the other in the same namespace, each a separate case ("case i: ..." names
    the first that fails).  Returns ``(status, detail, cases passed)``.
    """
    tests = job.get("tests", "")
    try:
        ns = _Namespace(proxy, proxy.hello(), job.get("remote", ()))
        if job.get("head"):
            exec(_compiled(job["head"], "<prompt>"), ns)
        for name in job.get("remote", ()):
            dict.pop(ns, name, None)
        if not isinstance(tests, list):
            exec(_compiled(tests, "<tests>"), ns)
            return "passed", "", 1
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the tests did not return
        return (*_status(exc), 0)
    first, passed = None, 0
    for i, case in enumerate(tests):
        try:
            exec(_compiled(case, f"<tests {i}>"), ns)
        except BaseException as exc:
            status, detail = _status(exc)
            first = first or (status, f"case {i}: {detail}")
            if _stop(job, proxy, status):
                break
        else:
            passed += 1
    return (*(first or ("passed", "")), passed)


def _stop(job, proxy, status):
    """After a failing case: stop at the first failure, unless every case is wanted and the sample still answers."""
    return not job.get("all_cases") or status == "oom" or proxy.broken is not None


def _entry(proxy, known, name):
    """``Solution().<name>`` when the program defines such a class (LeetCode style), else ``<name>``."""
    owner = known.get("Solution")
    if isinstance(owner, encoding.Remote):
        try:
            return getattr(owner(), name)
        except AttributeError:
            pass
    return known[name] if name in known else proxy.lookup(name)


def _calls(job, proxy):
    """Call-based tasks: each case's arguments go out, the result comes back and is compared here.

    Stops at the first failing case, or with ``all_cases`` goes on through wrong
    answers and exceptions until the sample's process is gone.  Returns
    ``(status, detail, cases passed)``; the status and detail are the first failure's.
    """
    try:
        fn = _entry(proxy, proxy.hello(), job["func_name"])
    except BaseException as exc:
        return (*_status(exc), 0)
    first, passed = None, 0
    for i, (args, expected) in enumerate(job["cases"]):
        try:
            result = fn(*args)
        except BaseException as exc:
            status, detail = _status(exc)
        else:
            if call_matches(job.get("rule", "livecodebench"), result, expected):
                passed += 1
                continue
            status, detail = "failed", f"wrong answer {str(result)[:80]}"
        first = first or (status, f"case {i}: {detail}")
        if _stop(job, proxy, status):
            break
    return (*(first or ("passed", "")), passed)


def decide(job, channel_fd):
    """The ``[status, detail, cases passed]`` of ``job`` against the sample on ``channel_fd`` (closed after)."""
    proxy = SampleProxy(channel_fd)
    try:
        status, detail, passed = (_calls if job["kind"] == "call" else _tests)(job, proxy)
    finally:
        os.close(channel_fd)
    if proxy.broken:  # whatever the tests did with the exception
        status, detail = "error", proxy.broken
    return [status, detail, passed]


def _serve(sock, cwd):
    """The judge's life: jobs in, verdicts out, the interpreter put back in order between them.

    A job comes in its packet, or (when it is too large for one) in a memfd
    before the call channel.  The verdict ends with the CPU seconds the job
    took and those the judge has used in all, exactly (``/proc`` counts ticks).
    """
    limit = sys.getrecursionlimit()
    while True:
        try:
            _, job, fds = receive(sock)
        except (EOFError, OSError):
            os._exit(0)
        if job is None:
            job = json.loads(read_fd(fds.pop(0)).decode("utf-8", "surrogatepass"))
        start = time.process_time()
        verdict = decide(job, fds[0])
        now = time.process_time()
        verdict += [now - start, now]
        sys.settrace(None)
        sys.setprofile(None)
        sys.setrecursionlimit(limit)
        sys.stdin, sys.stdout, sys.stderr = hardening.STDIO
        os.chdir(cwd)
        send(sock, "verdict", verdict)


class Judge:
    """The worker's handle on its judge process (started on first use, replaced when it fails)."""

    RECYCLE = 1000  # jobs a judge decides before a fresh one replaces it (bounds what tests leave behind)

    INLINE = 60000  # bytes of a job sent in its packet (the packet limit is 64 KiB); larger ones go in a memfd

    def __init__(self, cfg):
        self.cfg, self.pid, self.pidfd, self.sock, self.jobs, self.cpu = cfg, None, None, None, 0, 0.0

    def _start(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        devnull = os.open(os.devnull, os.O_RDWR)
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                os.chdir(self.cfg["cwd"])
                hardening.enter_child(self.cfg, None, devnull, devnull, devnull, keep=(theirs.fileno(),))
                _serve(theirs, self.cfg["cwd"])
            finally:
                os._exit(70)
        theirs.close()
        os.close(devnull)
        self.pid, self.pidfd, self.sock, self.jobs, self.cpu = pid, os.pidfd_open(pid), ours, 0, 0.0

    def stop(self, reaped=False):
        """Kill the judge and what it left in its process group, reap it unless ``reaped``; the next job starts a fresh one."""
        if self.pid is not None:
            try:
                os.killpg(self.pid, 9)
            except OSError:
                pass
            if not reaped:
                os.waitpid(self.pid, 0)
            self.sock.close()
            os.close(self.pidfd)
            self.pid = self.pidfd = self.sock = None

    def decide(self, job, channel, cpu, wall, readers, watch):
        """Have the judge decide ``job`` within ``cpu`` CPU and ``wall`` wall seconds.

        ``channel`` is the judge's end of the run's call channel (passed over and
        closed here); ``readers`` and ``watch`` are other descriptors to serve
        meanwhile (see :func:`.supervise.supervise`).  Returns (verdict or None,
        outcome or None when the judge could not even be given the job).
        """
        if self.pid is None or self.jobs >= self.RECYCLE:
            self.stop()
            self._start()
        self.jobs += 1
        trusted = {k: v for k, v in job.items() if k != "source"}  # the judge has no use for the program
        body = compact(trusted).encode("utf-8", "surrogatepass")
        job_fd = memfd(body, "job") if len(body) > self.INLINE else None
        try:
            if job_fd is None:
                send_encoded(self.sock, "job", body, [channel.fileno()])
            else:
                send(self.sock, "job", None, [job_fd, channel.fileno()])
        except OSError:
            self.stop()
            return None, None
        finally:
            if job_fd is not None:
                os.close(job_fd)
            channel.close()
        said = []

        def on_verdict():
            try:
                _, verdict, fds = receive(self.sock)
            except (EOFError, OSError):
                return None  # its death shows on its pidfd
            for fd in fds:
                os.close(fd)
            said.append(verdict)
            return "decided"

        outcome = supervise.supervise(
            self.pid, cpu, wall, readers, {self.sock.fileno(): on_verdict, **watch}, persistent=(self.pidfd, self.cpu)
        )
        if outcome.how != "decided":  # it died, or ran over its budget and was killed: either way it is reaped
            self.stop(reaped=True)
            return None, outcome
        status, detail, passed, outcome.cpu, self.cpu = said[0]
        if status == "oom":
            self.stop()  # a judge that ran out of memory is not trusted with the next job
        return [status, detail, passed], outcome
