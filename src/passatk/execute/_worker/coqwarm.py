"""Warm Coq toplevels: one run of the zygote per worker that keeps ``coqtop`` loaded, forking one child per attempt.

What a cold check pays for a small proof is loading the statement's
libraries (``Arith`` and ``Lia``: 0.2 s), three times over when it takes
three processes.  Here a worker keeps one run of its zygote going between
jobs (its *resident* run, ended before any other run starts): ``gcc`` builds
:mod:`.coqfork`'s library in it, then a bare ``coqtop`` (Coq's prelude loaded)
starts with it preloaded and serves.  For each statement preamble (its
``Require``/``Import``/``Open Scope`` lines, as the problem gives them) the
bare toplevel forks a *preamble server* that executes that text and serves in
turn; for each attempt the preamble server forks a child that checks it
(:func:`.coq.check_script`) and ends.  So the libraries are loaded once per
worker and preamble, and every attempt starts from a copy of a process that
has executed only trusted text: nothing an attempt does (an axiom, a
notation, an instance, a hint, an option, a proof left open) is in the
process that forks the next attempt's child.  Everything runs in the
zygote's sandbox, as every sample does.

The worker holds the control sockets and the pipes of each child: it writes
the check's commands, reads the answers, writes the last commands, which ask
about what the answers named (:func:`.coq.follow_up`), and decides
(:func:`.coq.judge`).
"""

import json
import math
import os
import select
import socket
import time
from collections import OrderedDict

from . import coq, coqfork
from .channel import memfd
from .direct import GRACE, wall_limit

__all__ = ["OUTPUT_LIMIT", "WarmCoq", "WarmCoqError"]

OUTPUT_LIMIT = 4 << 20  # bytes of a check's answers read; past it the check is stopped
_SERVE = f'Cd "{coqfork.SERVE}".'
_LIFETIME = 24 * 3600.0  # wall seconds of the resident run; the bare toplevel itself uses almost no CPU
_BUILD_CPU = 60.0
_PREAMBLE_CPU = 120.0  # CPU seconds a preamble server may take to load its libraries
_SERVERS = 4  # preamble servers kept per worker (the least recently used one ends first)


class WarmCoqError(Exception):
    """The warm toplevel could not be built or started, or stopped answering."""


def _read_until(fd, marker, deadline, limit=OUTPUT_LIMIT):
    """Bytes read from ``fd`` until ``marker`` was read, the end of the pipe, ``deadline`` or ``limit``: (bytes, how).

    ``how``: "marker", "eof", "timeout" or "limit".
    """
    buf = bytearray()
    while True:
        if marker is not None and marker in buf:
            return bytes(buf), "marker"
        if len(buf) > limit:
            return bytes(buf), "limit"
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return bytes(buf), "timeout"
        chunk = os.read(fd, 65536)
        if not chunk:
            return bytes(buf), "eof"
        buf += chunk


def _send(sock, text, last=False):
    """Send commands to a check's child (``last``: then the end of its input); a child that ended already is not an error."""
    try:
        sock.sendall(text.encode("utf-8", "surrogatepass"))
        if last:
            sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the child ended already: its answers say why


class WarmCoq:
    """A worker's warm Coq: its resident run, the bare toplevel and the preamble servers.

    ``zyg`` is the worker's :class:`.zygote.Zygote` (the resident run is its
    ``resident``, closed before any other run starts); ``cfg`` the worker's
    config (limits).
    """

    def __init__(self, zyg, cfg):
        self.zyg, self.cfg = zyg, cfg
        self.base = None
        self.servers = OrderedDict()  # preamble -> ForkServer, or the preamble's error
        self._held = []  # descriptors of the resident run, closed with it

    # ------------------------------------------------------------------ #
    def _start(self):
        """Build the fork library and start the bare toplevel in a resident run of the zygote."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        out_r, out_w = os.pipe()
        rep_r, rep_w = os.pipe()
        stdin = memfd((_SERVE + "\n").encode(), "stdin")
        env = {**coq.ENV, "LD_PRELOAD": "{dir}/coqfork.so", "PASSATK_COQFORK_FD": "3"}
        steps = [
            {
                "argv": ["gcc", "-O2", "-shared", "-fPIC", "-o", "coqfork.so", "coqfork.c", "-ldl"],
                "env": coq.ENV,
                "phase": "build",
                "cpu": _BUILD_CPU,
                "wall": wall_limit(self.cfg, _BUILD_CPU),
                "memory_bytes": None,
            },
            {
                "argv": ["coqtop", "-q", "-native-compiler", "no"],
                "env": env,
                "phase": "run",
                "cpu": _LIFETIME,
                "wall": _LIFETIME,
                "memory_bytes": None,
                "call": True,
            },
        ]
        try:
            self.zyg.start(
                "steps",
                coqfork.SOURCE,
                _LIFETIME,
                _LIFETIME,
                stdin,
                out_w,
                out_w,
                channel=rep_w,
                call=theirs.fileno(),
                file="coqfork.c",
                steps=steps,
                links={"Attempt.v": "/proc/self/fd/3"},  # each child's own descriptor 3: the attempt
            )
        finally:
            for fd in (stdin, out_w, rep_w):
                os.close(fd)
            theirs.close()
        self.zyg.resident = self
        self._held = [rep_r]
        said, how = _read_until(rep_r, b"\n", time.monotonic() + wall_limit(self.cfg, _BUILD_CPU) + GRACE)
        try:
            report = json.loads(said.split(b"\n", 1)[0]) if how == "marker" else None
        except ValueError:
            report = None
        if report is None or report.get("how") != "exited" or report.get("code") != 0:
            ours.close()
            os.close(out_r)
            self.close()
            raise WarmCoqError(f"cannot build the fork library with gcc: {(report or {}).get('output', '')[:300]}")
        self.base = coqfork.ForkServer(ours, out_r)

    def close(self):
        """End the preamble servers, the bare toplevel and the resident run."""
        for server in self.servers.values():
            if isinstance(server, coqfork.ForkServer):
                server.close()
        self.servers.clear()
        if self.base is not None:
            self.base.close()
            self.base = None
        for fd in self._held:
            os.close(fd)
        self._held = []
        if self.zyg.resident is self:
            self.zyg.resident = None
            self.zyg.finish(GRACE)

    # ------------------------------------------------------------------ #
    def _server(self, preamble):
        """The preamble's server (started on first use), or the preamble's error as text."""
        key = tuple(preamble)
        if key in self.servers:
            self.servers.move_to_end(key)
            return self.servers[key]
        if self.base is None:
            self._start()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        nonce = os.urandom(8).hex()
        stdin = memfd("\n".join([*preamble, f"Locate passatk_{nonce}_ready.", _SERVE, ""]).encode(), "stdin")
        out_r, out_w = os.pipe()
        try:
            self.base.fork("S", stdin, out_w, theirs.fileno())
        finally:
            for fd in (stdin, out_w):
                os.close(fd)
            theirs.close()
        ready = f"No object of basename passatk_{nonce}_ready".encode()
        server = coqfork.ForkServer(ours, out_r)
        said, how = _read_until(out_r, ready, time.monotonic() + wall_limit(self.cfg, _PREAMBLE_CPU))
        text = said.decode("utf-8", "replace")
        if how != "marker" or "\nError" in "\n" + text:
            server.close()
            server = coq.first_error(text) if how == "marker" else f"the preamble did not load ({how}): {text[-300:]}"
        self.servers[key] = server
        while len(self.servers) > _SERVERS:
            _, old = self.servers.popitem(last=False)
            if isinstance(old, coqfork.ForkServer):
                old.close()
        return server

    def check(self, statement, proof, cpu, nonce, audit=True):
        """Check ``proof`` against ``statement`` in a fresh child; ``(how, answers, cpu seconds, wall seconds)``.

        ``audit``: whether the check prints the proof's assumptions (see :func:`.coq.check_script`).

        ``how``: "exited" (the answers are all there is), "timeout", "limit"
        (too much output) or "statement" (the preamble failed: ``answers``
        is its error).
        """
        try:
            server = self._server(statement["preamble"])
        except (OSError, ConnectionError) as exc:
            self.close()
            raise WarmCoqError(f"the warm Coq toplevel stopped: {exc}") from None
        if not isinstance(server, coqfork.ForkServer):
            return "statement", server, 0.0, 0.0
        start = time.monotonic()
        attempt = memfd(coq.attempt_file(statement, proof).encode("utf-8", "surrogatepass"), "attempt")
        # the commands come on a socket: a pipe could be opened again as /dev/stdin, and the attempt's Load of it
        # would run the check's commands not yet read, inside the attempt's module and in its order
        commands, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        try:
            pid = server.fork("A", theirs.fileno(), out_w, attempt, cpu=math.ceil(cpu))
        except (OSError, ConnectionError) as exc:
            commands.close()
            os.close(out_r)
            self.close()
            raise WarmCoqError(f"the warm Coq toplevel stopped: {exc}") from None
        finally:
            for fd in (attempt, out_w):
                os.close(fd)
            theirs.close()
        deadline = start + wall_limit(self.cfg, cpu) + 1.0
        try:
            _send(commands, coq.check_script(statement, nonce, audit))
            said, how = _read_until(out_r, coq.asked(nonce), deadline)
            if how == "marker":  # the last commands ask about what the answers named
                _send(commands, coq.follow_up(said.decode("utf-8", "replace"), nonce), last=True)
                more, how = _read_until(out_r, None, deadline, OUTPUT_LIMIT - len(said))
                said += more
        finally:
            commands.close()
            os.close(out_r)
        try:
            status, used = server.done(pid)
        except (OSError, ConnectionError) as exc:
            self.close()
            raise WarmCoqError(f"the warm Coq toplevel stopped: {exc}") from None
        if how == "eof" and os.WIFSIGNALED(status) and os.WTERMSIG(status) in (9, 24):  # SIGKILL, SIGXCPU: RLIMIT_CPU
            how = "timeout"
        return ("exited" if how == "eof" else how), said.decode("utf-8", "replace"), used, time.monotonic() - start
