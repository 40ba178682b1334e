"""The zygote: a warm interpreter that never sees a job, from which every sample's process is forked.

It runs in a sandbox of its own (its own pid namespace under bubblewrap, where
it is init: samples cannot signal it, see the worker or a judge, and die
with their run through ``kill(-1)``).  The worker sends it one run at a time
on a ``SOCK_SEQPACKET`` socket: the mode, the limits and the run's
descriptors (the program in a memfd, the standard streams, the sample's end
of the call channel).  It holds no test, no expected output and no report
channel, and neither do the processes it forks.  For each run it forks,
supervises (CPU budget, wall-clock backstop, whole-tree kill), wipes what the
run left in ``/tmp``, ``/dev/shm`` and the IPC namespace (:mod:`.ipc`), and
answers ``["ended", {how, status, cpu, wall}]``.

:class:`Zygote` is the worker's handle on it.
"""

import os
import select
import shutil

from . import hardening, ipc, rawrun, sample, supervise
from .channel import memfd, receive, send

__all__ = ["Zygote", "serve"]


def _setup(cfg):
    info = hardening.harden(cfg.get("cpus"))
    # under bubblewrap: its own IPC namespace (--unshare-all) and a tmpfs of its own on /dev/shm
    network, own_init, own_ipc, own_shm = (True, False, True, True) if cfg["pidns"] else hardening.own_namespaces()
    hardening.warm_up(cfg.get("import_paths") or (), cfg.get("preload") or ())
    cfg["base"] = hardening.private_dir("passatk-run-", cfg.get("tmp"))
    cfg["cwd"] = os.path.join(cfg["base"], "run")  # every run's working directory, emptied after each
    os.mkdir(cfg["cwd"], 0o700)
    # inside the sandbox its own /tmp is wiped too, around the run's directories and the binds below it
    cfg["scratch"] = supervise.Scratch(cfg["cwd"], cfg["tmp"] if cfg["pidns"] else None, keep=(cfg["base"],))
    cfg["leftovers"] = ipc.Leftovers("/dev/shm" if own_shm else None, sysv=own_ipc)
    # kill(-1) is only safe when we are alone in a pid namespace with our samples.
    cfg["kill_all"] = own_init or (bool(cfg["pidns"]) and os.getpid() < 16)
    return {
        **info,
        "pid": os.getpid(),
        "uid": os.geteuid(),
        "private_network": network,
        "own_pid_namespace": own_init or bool(cfg["pidns"]),
        "private_ipc": own_ipc,
        "private_shm": own_shm,
        "kill_all": cfg["kill_all"],
    }


def _run(sock, spec, fds, cfg):
    source, stdin, stdout, stderr, *rest = fds
    channel = rest[0] if rest else -1
    cwd = cfg["cwd"]
    files_fd = channel if spec.get("files") else None  # a ``run`` job's files, in and fetched out
    if files_fd is not None:
        rawrun.put_files(cwd, files_fd)
    pid = os.fork()
    if pid == 0:
        try:
            os.chdir(cwd)
            limits = {**cfg, "memory_bytes": spec["memory_bytes"]} if "memory_bytes" in spec else cfg  # a recipe's own
            hardening.enter_child(limits, spec["cpu"], stdin, stdout, stderr, keep=(source, *rest))
            # a judged program's run: the report descriptor, then the sample's end of the call channel
            sample.run(spec["mode"], source, channel, {**spec, "call_fd": rest[1]} if len(rest) > 1 else spec)
        finally:
            os._exit(70)
    for fd in fds:
        if fd != files_fd:
            os.close(fd)
    gone = []

    def on_message():
        try:
            name, data, extra = receive(sock)
        except EOFError:
            gone.append(True)
            return "stopped"
        for fd in extra:
            os.close(fd)
        return "stopped" if name == "stop" and data.get("id") == spec["id"] else None

    try:
        outcome = supervise.supervise(pid, spec["cpu"], spec["wall"], watch={sock.fileno(): on_message})
    finally:
        supervise.kill_all(cfg["kill_all"])
        if files_fd is not None:  # every process of the run is dead: nothing can race the reads
            try:
                rawrun.fetch_files(cwd, spec.get("fetch") or (), files_fd)
            finally:
                os.close(files_fd)
        cfg["scratch"].wipe()
        cfg["leftovers"].wipe()
    if gone:
        raise EOFError("the worker went away")
    return {"id": spec["id"], "how": outcome.how, "status": outcome.status, "cpu": outcome.cpu, "wall": outcome.wall}


def serve(sock):
    """The zygote's life: a config, then runs until the worker goes away."""
    name, cfg, _ = receive(sock)
    send(sock, "ready", _setup(cfg))
    try:
        while True:
            name, data, fds = receive(sock)
            if name == "run":
                send(sock, "ended", _run(sock, data, fds, cfg))
            else:  # a "stop" for a run that has ended already
                for fd in fds:
                    os.close(fd)
    except (EOFError, ConnectionError):
        pass
    finally:
        shutil.rmtree(cfg["base"], ignore_errors=True)


# --------------------------------------------------------------------------- #
# the worker's side
# --------------------------------------------------------------------------- #
class ZygoteGone(Exception):
    """The zygote stopped answering: the worker must not fork another one from its own memory."""


class Zygote:
    """The worker's handle on its zygote (one run at a time)."""

    def __init__(self, sock):
        self.sock, self._id, self.ended = sock, 0, None
        self.resident = None  # a run kept going between jobs (a warm checker, see .coqwarm): its close() ends it

    def configure(self, cfg):
        """Send the config; the zygote sets itself up meanwhile (see :meth:`wait_ready`)."""
        send(self.sock, "config", cfg)

    def wait_ready(self, timeout=60.0):
        """What isolation the zygote obtained, once it is ready."""
        return self._next("ready", timeout)

    def _take(self):
        """The zygote's next message (it never sends descriptors; any are closed)."""
        try:
            name, data, fds = receive(self.sock)
        except (EOFError, ConnectionError) as exc:
            raise ZygoteGone(f"the zygote ended ({exc})") from None
        for fd in fds:
            os.close(fd)
        return name, data

    def _next(self, wanted, timeout):
        while True:
            if not select.select([self.sock], [], [], timeout)[0]:
                raise ZygoteGone(f"no {wanted!r} from the zygote within {timeout:.0f} s")
            name, data = self._take()
            if name == wanted:
                return data

    def start(self, mode, source, cpu, wall, stdin, stdout, stderr, channel=None, call=None, **extra):
        """Ask for a run of ``source``; the descriptors given are passed over and may be closed after.

        ``call`` (``steps`` runs, with a ``channel``): the sample's end of a judged program's call channel.
        A resident run is ended first.
        """
        if self.resident is not None:
            self.resident.close()
        self._id += 1
        self.ended = None
        program = memfd(source.encode("utf-8", "surrogatepass"), "program")
        try:
            fds = [program, stdin, stdout, stderr] + ([channel] if channel is not None else [])
            fds += [call] if call is not None and channel is not None else []
            send(self.sock, "run", {"id": self._id, "mode": mode, "cpu": cpu, "wall": wall, **extra}, fds)
        except OSError as exc:
            raise ZygoteGone(f"the zygote ended ({exc})") from None
        finally:
            os.close(program)
        return self._id

    def on_readable(self, ends=False):
        """Take the zygote's message about the current run (for a worker's watch loop).

        Returns "exited" when the run has ended and ``ends``, else None (go on waiting).
        """
        name, data = self._take()
        if name == "ended" and data.get("id") == self._id:
            self.ended = data
            return "exited" if ends else None
        return None

    def collect(self, readers, wall, grace):
        """Read the current run's pipes until it ends, then close them: (what was read, how it ended).

        ``readers`` are ``(fd, limit, keep)`` as :func:`.supervise.supervise` takes them; a
        zygote that has not ended the run ``grace`` seconds past ``wall`` counts as gone.
        """
        try:
            waited = supervise.supervise(
                None, None, wall + grace, readers, watch={self.sock.fileno(): lambda: self.on_readable(ends=True)}
            )
            if waited.how == "timeout":
                raise ZygoteGone("the zygote did not end a run within its limits")
            return waited, self.finish(grace)
        finally:
            for fd, _, _ in readers:
                os.close(fd)

    def finish(self, grace, linger=0.0):
        """Stop the current run (if it is still going) and return how it ended.

        With ``linger``, the run is first given that many seconds to end by
        itself (a sample's process ends when the judge closes its channel):
        the zygote then learns of the end from the process itself, and no
        stop message has to cross.
        """
        if self.ended is None and linger and select.select([self.sock], [], [], linger)[0]:
            self.on_readable()
        if self.ended is None:
            try:
                send(self.sock, "stop", {"id": self._id})
            except OSError as exc:
                raise ZygoteGone(f"the zygote ended ({exc})") from None
            while self.ended is None:
                data = self._next("ended", grace)
                if data.get("id") == self._id:
                    self.ended = data
        return self.ended
