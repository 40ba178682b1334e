"""Supervision and kill: wait for a process within its CPU budget, then leave nothing behind.

:func:`supervise` waits for one child, reading its pipes and any other
descriptors the caller watches, and kills it at its CPU budget (a wall-clock
backstop stops sleepers); :func:`kill_all` kills and reaps every process a run
left, including ones that called ``setsid``; :func:`wipe` empties the run's
directory (and, inside the sandbox, ``/tmp``), and a :class:`Scratch` does so
only when a run changed something there.
"""

import os
import select
import shutil
import signal
import stat
import time

__all__ = ["Outcome", "Scratch", "abnormal", "cpu_time", "kill_all", "supervise", "wipe"]

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_DETAIL_LIMIT = 300  # characters of an error message kept in a verdict


class Outcome:
    """How a supervised process ended.

    ``how`` is "exited", "timeout" (its CPU budget or the wall-clock backstop
    ran out) or "stopped" (a watcher asked to end it); ``status`` the wait
    status; ``cpu`` and ``wall`` in seconds; ``buffers`` the bytes read from
    each reader, in order; ``rss`` the peak resident memory of the process
    and its reaped children, in KiB (0 when not waited for here).
    """

    __slots__ = ("how", "status", "cpu", "wall", "buffers", "rss")

    def __init__(self, how, status, cpu, wall, buffers, rss=0):
        self.how, self.status, self.cpu, self.wall, self.buffers, self.rss = how, status, cpu, wall, buffers, rss


def cpu_time(pid):
    """CPU seconds of ``pid`` and its reaped children, from /proc (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(x) for x in fields[11:15]) / _CLK_TCK


def supervise(pid, cpu_limit, wall_limit, readers=(), watch=None):
    """Wait for child ``pid`` within ``cpu_limit`` CPU seconds and ``wall_limit`` wall seconds.

    ``readers`` are ``(fd, limit, keep)`` triples: pipes drained while the
    child runs, keeping the first (``keep="head"``) or the last (``"tail"``)
    ``limit`` bytes; a head reader past its limit stops the run.  ``watch``
    maps other descriptors to callables, called when readable, that return
    None to go on or how the wait ends ("stopped", or "exited" when the
    process is watched only through that descriptor: ``pid`` None, whose
    wait ends by ``watch`` or at ``wall_limit``).  Returns an :class:`Outcome`.
    """
    start = time.monotonic()
    pidfd = os.pidfd_open(pid) if pid is not None else None
    poller = select.poll()
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    watch = watch or {}
    bufs = [bytearray() for _ in readers]
    index = {}
    for i, (fd, _, _) in enumerate(readers):
        index[fd] = i
        os.set_blocking(fd, False)
        poller.register(fd, select.POLLIN)
    for fd in watch:
        poller.register(fd, select.POLLIN)

    def take(fd):
        """Read what is there; False at end of input, None past a head reader's limit, "" if nothing yet."""
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return ""
        if not chunk:
            return False
        i = index[fd]
        _, limit, keep = readers[i]
        bufs[i] += chunk
        if keep == "tail":
            del bufs[i][:-limit]
        elif len(bufs[i]) > limit:
            return None
        return True

    how = None
    cpu = checked = 0.0  # the CPU time read from /proc, and when
    if pid is None:
        cpu_limit = float("inf")
    while how is None:
        wall = time.monotonic() - start
        # CPU time cannot outrun wall time (but for threads, which the CPU rlimit backs up),
        # so /proc is read only once the budget could be spent.
        if cpu + (wall - checked) >= cpu_limit:
            cpu, checked = cpu_time(pid), wall
        if cpu >= cpu_limit or wall >= wall_limit:
            how = "timeout"
            break
        ready = poller.poll(max(0.005, min(cpu_limit - cpu - (wall - checked), wall_limit - wall)) * 1000)
        for fd, _ in sorted(ready, key=lambda event: event[0] != pidfd):  # an exit first: it is how the run ended
            if fd == pidfd:
                how = how or "exited"
            elif fd in watch:
                how = how or watch[fd]()
            else:
                more = take(fd)
                if more is None:
                    how = how or "stopped"
                elif more is False:
                    poller.unregister(fd)
    status = rss = 0
    if pid is not None:
        if how != "exited":
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        _, status, usage = os.wait4(pid, 0)
        os.close(pidfd)
        cpu, rss = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
    for fd, _, _ in readers:  # what is already there; descendants may hold the pipe open
        for _ in range(64):
            if take(fd) is not True:
                break
    if how == "stopped" and pid is not None and not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
        how = "exited"  # it ended on its own (exit, or a signal of its own) before our kill could
    if how == "exited" and os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
        if cpu >= cpu_limit * 0.99:
            how = "timeout"  # the CPU rlimit fired before we looked
    return Outcome(how, status, cpu, time.monotonic() - start, [bytes(b) for b in bufs], rss)


def tail(raw):
    return raw.decode("utf-8", "replace").strip()[-_DETAIL_LIMIT:]


def abnormal(how, status, cpu, stderr=b""):
    """The (status, detail) of a run that did not end on its own, or None if it did."""
    if how == "timeout":
        return "timeout", f"timed out (CPU {cpu:.2f} s)"
    if how == "stopped":
        return "failed", "output limit exceeded"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXFSZ:
            return "error", "file size limit exceeded"
        name = signal.Signals(sig).name if sig in set(signal.Signals) else str(sig)
        return "error", f"killed by {name}" + (f": {tail(stderr)}" if stderr.strip() else "")
    return None


# --------------------------------------------------------------------------- #
# killing and reaping everything a run left behind
# --------------------------------------------------------------------------- #
def _children():
    """Our direct children; as a subreaper we inherit every orphan a run leaves."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:  # kernels without CONFIG_PROC_CHILDREN: scan /proc
        found = []
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    if int(fh.read().rsplit(b")", 1)[1].split()[1]) == me:
                        found.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
        return found


def kill_all(everyone):
    """SIGKILL every process a run left and reap them all.

    ``everyone``: we are init of a pid namespace holding nothing but runs, so
    ``kill(-1)`` reaches them all; otherwise children are killed layer by layer
    (when a parent dies its children come to us, the subreaper).
    """
    try:  # the usual case, in one system call: no process left at all (every orphan is our child)
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return
    if not everyone and not _children():
        return
    while True:
        if everyone:
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:
            for pid in _children():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            while True:
                os.waitpid(-1, 0)
        except ChildProcessError:
            pass
        if everyone or not _children():  # after kill(-1), no children left means nothing left
            return


# --------------------------------------------------------------------------- #
# leaving nothing a later run could see
# --------------------------------------------------------------------------- #
def mounts_below(top):
    """Mount points strictly below ``top`` (e.g. a read-only bind of a virtual environment in /tmp)."""
    found = set()
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                point = line.split()[4].replace("\\040", " ")
                if point.startswith(top.rstrip("/") + "/"):
                    found.add(point)
    except (OSError, IndexError):
        pass
    return found


def paths_to(mounts, top):
    """The mount points and every directory between ``top`` and one of them."""
    keep = set()
    for point in mounts:
        while point != top and point not in keep:
            keep.add(point)
            point = os.path.dirname(point)
    return keep


def _unlock(top):
    """Give back to the owner every directory below ``top`` that a run made unreadable (mode 0)."""
    try:
        os.chmod(top, 0o700)
        entries = os.listdir(top)
    except OSError:
        return
    for entry in entries:
        full = os.path.join(top, entry)
        if os.path.isdir(full) and not os.path.islink(full):
            _unlock(full)


def _remove_tree(path):
    """``shutil.rmtree``, also of directories a run left without permissions.

    Inside the sandbox the zygote has no capabilities: a directory of mode 0
    is closed to it as to anyone, and would survive the wipe for the next run
    to open again (it is the same user, and may chmod it back).
    """
    shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):
        _unlock(path)
        shutil.rmtree(path, ignore_errors=True)


def _clear(directory, keep):
    """Remove everything in ``directory``, around the paths in ``keep`` (binds and their parents)."""
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        full = os.path.join(directory, entry)
        if full in keep:
            if not os.path.ismount(full):  # a parent of a bind, on the tmpfs: a run may write here
                _clear(full, keep)
        elif os.path.isdir(full) and not os.path.islink(full):
            _remove_tree(full)
        else:
            try:
                os.unlink(full)
            except OSError:
                pass


def wipe(cwd, tmp=None, keep=frozenset()):
    """Empty the run's directory ``cwd`` (kept, for the next run) and, inside the sandbox, ``tmp`` but ``keep``.

    Binds below /tmp (a virtual environment there, ``--bind``) and the
    directories that lead to them are kept and never walked: removing them
    would fail anyway, file by file.  Whatever a run did to ``cwd`` itself
    (removed it, made it unreadable, put a link in its place), it is an
    empty directory of mode 0700 again afterwards.
    """
    if tmp:
        _clear(tmp, keep)
    try:
        if os.path.islink(cwd) or not os.path.isdir(cwd):
            if os.path.lexists(cwd):
                os.unlink(cwd)
            os.mkdir(cwd, 0o700)
        else:
            os.chmod(cwd, 0o700)
            if os.listdir(cwd):
                _clear(cwd, frozenset())
    except OSError:
        shutil.rmtree(cwd, ignore_errors=True)
        os.makedirs(cwd, 0o700, exist_ok=True)


def _filesystem(path):
    """The type of the file system ``path`` is on (the last mount over the longest prefix), from mountinfo."""
    best, kind = "", None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                fields = line.split()
                point = fields[4].replace("\\040", " ")
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if inside and len(point) >= len(best):
                    best, kind = point, fields[fields.index("-") + 1]
    except (OSError, IndexError, ValueError):
        return None
    return kind


def restore_mode(path, mode):
    """Give directory ``path`` its ``mode`` back (never through a link: every process of the run is dead, nothing races)."""
    try:
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) != mode:
            os.chmod(path, mode)
    except OSError:
        pass


class Scratch:
    """The directories a run may write in, emptied after each run that changed them.

    :func:`wipe` costs some thirty system calls; most runs write nothing, and
    on a tmpfs one ``lstat`` of each directory that stays (``tmp``, the
    directories in ``keep`` that are not mount points, ``cwd``) shows whether
    anything changed.  A tmpfs directory's size grows by 20 bytes with every
    entry and shrinks with every removal, so an unchanged size means an
    unchanged number of entries; the only way to add one without changing it
    is to remove one of the entries that stay, and those are either mount
    points (which a process without privileges cannot remove) or watched
    directories themselves (whose inode number would then change, or which
    would be gone).  Inode, mode, owner, link count and change times are
    compared too.  Off a tmpfs (where a directory's size is in blocks) every
    run is wiped.

    ``tmp`` (inside the sandbox, its own ``/tmp``) is wiped around ``cwd``,
    the directories in ``keep`` and the mounts below it with the directories
    that lead to them.  Those that stay get their modes back first: a run
    may close them (mode 0) even to the zygote, which has no capabilities.
    """

    def __init__(self, cwd, tmp=None, keep=()):
        mounts = mounts_below(tmp) if tmp else set()
        kept = (paths_to(mounts, tmp) | set(keep) | {cwd}) if tmp else set()
        self.cwd, self.tmp, self.keep = cwd, tmp, frozenset(kept)
        watched = ([tmp] if tmp else []) + sorted(kept - mounts - {cwd}) + [cwd]
        self._watched = watched if all(_filesystem(p) == "tmpfs" for p in watched) else None
        stays = ([tmp] if tmp else []) + sorted((kept | set(keep)) - mounts - {cwd}) + [cwd]  # parents first
        self._modes = [(p, stat.S_IMODE(os.lstat(p).st_mode)) for p in stays if os.path.isdir(p)]
        self._clean = None
        self.wipe()

    def _state(self):
        if self._watched is None:
            return None
        state = []
        for path in self._watched:
            try:
                st = os.lstat(path)
            except OSError:
                return None
            state.append((st.st_ino, st.st_dev, st.st_mode, st.st_uid, st.st_nlink, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        return state

    def wipe(self):
        """Empty the run's directories unless they are exactly as the last wipe left them."""
        if self._clean is not None and self._state() == self._clean:
            return
        for path, mode in self._modes:
            restore_mode(path, mode)
        wipe(self.cwd, self.tmp, self.keep)
        self._clean = self._state()
