"""The judge: runs the trusted tests in a process of its own and decides the verdict.

The judge is forked from the worker for one job.  It holds the tests, the
expected values and the verdict pipe; the sample's process holds none of
them and reaches the judge only through the call channel, over which the
judge asks for the sample's names and calls its functions.  Every answer is
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

from . import encoding
from .channel import Frames
from .outputs import call_matches

__all__ = ["SampleGone", "SampleProxy", "judge"]

REPLY_LIMIT = 16 << 20  # bytes of one answer from the sample
_DETAIL_LIMIT = 300


class SampleGone(BaseException):
    """The sample's process can no longer be asked (it died, or broke the protocol)."""


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
        if type(tree) is not list or not tree or tree[0] not in ("ok", "raised", "ready") or len(tree) != (1 if tree[0] == "ready" else 2):
            self._fail("protocol violation: a reply of unknown shape")
        return tree

    def _ask(self, request):
        if self.broken:
            raise SampleGone(self.broken)
        try:
            self._frames.send(json.dumps(request, separators=(",", ":")).encode("utf-8", "surrogatepass"))
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
        """Wait until the program has run; raise what it raised."""
        tree = self._reply()
        if tree[0] == "raised":
            try:
                error = encoding.rebuild_exception(tree[1])
            except encoding.ProtocolError as exc:
                self._fail(f"protocol violation: {exc}")
            raise error
        if tree[0] != "ready":
            self._fail("protocol violation: an answer before 'ready'")

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
            payload = ["call", remote._id, encoding.encode(list(args)), encoding.encode(dict(kwargs))]
        except TypeError as exc:  # the tests passed something that has no encoding
            raise TypeError(f"cannot pass this to the sample's process: {exc}") from None
        return self._ask(payload)


class _Namespace(dict):
    """The tests' globals: the judge's names, then builtins, then the sample's names (looked up on demand).

    Names in ``remote`` are the sample's even where a built-in has the name
    (an MBPP function called ``sum``).
    """

    def __init__(self, proxy, remote=()):
        super().__init__(__name__="__main__", __builtins__=builtins)
        self._proxy, self._remote = proxy, frozenset(remote)

    def __missing__(self, name):
        if name not in self._remote and (hasattr(builtins, name) or name.startswith("__")):
            raise KeyError(name)  # Python then looks in builtins, the judge's own
        value = self._proxy.lookup(name)
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


def _tests(job, proxy):
    """HumanEval/MBPP: the trusted ``head`` and ``tests`` run here against the sample's names."""
    try:
        proxy.hello()
        ns = _Namespace(proxy, job.get("remote", ()))
        if job.get("head"):
            exec(compile(job["head"], "<prompt>", "exec"), ns)
        for name in job.get("remote", ()):
            dict.pop(ns, name, None)
        exec(compile(job.get("tests", ""), "<tests>", "exec"), ns)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the tests did not return
        return _status(exc)
    return "passed", ""


def _entry(proxy, name):
    """``Solution().<name>`` when the program defines such a class (LeetCode style), else ``<name>``."""
    try:
        owner = proxy.lookup("Solution")
    except NameError:
        owner = None
    if isinstance(owner, encoding.Remote):
        try:
            return getattr(owner(), name)
        except AttributeError:
            pass
    return proxy.lookup(name)


def _calls(job, proxy):
    """Call-based tasks: each case's arguments go out, the result comes back and is compared here."""
    try:
        proxy.hello()
        fn = _entry(proxy, job["func_name"])
    except BaseException as exc:
        return _status(exc)
    for i, (args, expected) in enumerate(job["cases"]):
        try:
            result = fn(*args)
        except BaseException as exc:
            status, detail = _status(exc)
            return status, f"case {i}: {detail}"
        if not call_matches(job.get("rule", "livecodebench"), result, expected):
            return "failed", f"case {i}: wrong answer {str(result)[:80]}"
    return "passed", ""


def judge(job, channel_fd, verdict_fd):
    """Decide ``job`` against the sample on ``channel_fd``; write ``[status, detail]`` to ``verdict_fd``."""
    proxy = SampleProxy(channel_fd)
    status, detail = (_calls if job["kind"] == "call" else _tests)(job, proxy)
    if proxy.broken:  # whatever the tests did with the exception
        status, detail = "error", proxy.broken
    try:
        os.write(verdict_fd, (json.dumps([status, detail]) + "\n").encode("utf-8", "replace"))
    finally:
        os._exit(0)
