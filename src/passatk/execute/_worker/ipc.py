"""What a run could leave for the next one outside its directories: files in ``/dev/shm`` and IPC objects.

Every run of a zygote shares the zygote's ``/dev/shm`` and IPC namespace (a
namespace per run would cost more than the run's fork: see docs/explanations/sandbox.md).  So
after each run, as :class:`~.supervise.Scratch` does for ``/tmp``,
:class:`Leftovers` empties ``/dev/shm`` (POSIX shared memory and named
semaphores live there) when it changed, and removes every System V shared
memory segment, semaphore set and message queue when any exists.  POSIX
message queues cannot be listed without mounting their file system, so a run
may make none: its ``RLIMIT_MSGQUEUE`` is 0 (see :func:`.hardening.enter_child`).

Only what is the sandbox's own is touched: ``/dev/shm`` when it is a tmpfs of
the sandbox's (bubblewrap's ``--tmpfs /dev/shm``, or the one the zygote mounts
in a mount namespace of its own), System V objects when the IPC namespace is
private (bubblewrap's ``--unshare-all``, or ``CLONE_NEWIPC`` taken by
:func:`.hardening.own_namespaces`); never the machine's.
"""

import ctypes
import os
import stat

from . import supervise

__all__ = ["Leftovers", "sysv_in_use"]

IPC_RMID, MSG_INFO, SHM_INFO, SEM_INFO = 0, 12, 14, 19
_LIBC = ctypes.CDLL(None)
_shmctl, _semctl, _msgctl = _LIBC.shmctl, _LIBC.semctl, _LIBC.msgctl
_INFO = (ctypes.c_int * 32)()  # large enough for struct shm_info, seminfo and msginfo; made once, not per run


def sysv_in_use():
    """How many System V objects this IPC namespace holds (three system calls); -1 when it cannot be told."""
    # struct shm_info's first field is used_ids; struct seminfo's eighth, semusz, the sets in use
    # with SEM_INFO; struct msginfo's first, msgpool, the queues in use with MSG_INFO.
    if _shmctl(0, SHM_INFO, _INFO) < 0:
        return -1
    total = _INFO[0]
    if _semctl(0, 0, SEM_INFO, _INFO) < 0:
        return -1
    total += _INFO[7]
    if _msgctl(0, MSG_INFO, _INFO) < 0:
        return -1
    return total + _INFO[0]


def _ids(kind):
    """The ids listed in ``/proc/sysvipc/<kind>`` (the reader's IPC namespace: every object, whatever its mode)."""
    try:
        with open(f"/proc/sysvipc/{kind}") as fh:
            next(fh, None)
            return [int(line.split()[1]) for line in fh if line.strip()]
    except (OSError, ValueError, IndexError):
        return []


def remove_sysv():
    """Remove every System V object of this IPC namespace (we made the processes that made them: we may)."""
    for ident in _ids("shm"):
        _shmctl(ident, IPC_RMID, None)
    for ident in _ids("sem"):
        _semctl(ident, 0, IPC_RMID)
    for ident in _ids("msg"):
        _msgctl(ident, IPC_RMID, None)


class Leftovers:
    """``/dev/shm`` and the System V objects of a sandbox, emptied after each run that left something.

    ``shm`` is the path of a private tmpfs (``/dev/shm``) or None; ``sysv``
    whether the IPC namespace is private.  When nothing was left, :meth:`wipe`
    costs one ``lstat`` (the tmpfs root's size, times, mode and link count
    show any entry made or removed, as :class:`~.supervise.Scratch` explains)
    and three system calls.
    """

    def __init__(self, shm=None, sysv=False):
        self.shm, self.sysv = shm, sysv
        self._mode = stat.S_IMODE(os.lstat(shm).st_mode) if shm else None
        self._watched = shm is not None and supervise._filesystem(shm) == "tmpfs"
        self._clean = None
        self.wipe()

    def _state(self):
        if not self._watched:
            return None
        try:
            st = os.lstat(self.shm)
        except OSError:
            return None
        return (st.st_ino, st.st_mode, st.st_uid, st.st_nlink, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    def wipe(self):
        """Remove what the last run left; raise RuntimeError when System V objects cannot be removed.

        A zygote that raises ends, and its worker with it: the next run then
        starts in a fresh sandbox rather than beside what was left.
        """
        if self.shm and (self._clean is None or self._state() != self._clean):
            supervise.restore_mode(self.shm, self._mode)  # a run may have closed it, even to us (we have no capabilities)
            supervise._clear(self.shm, frozenset())
            self._clean = self._state()
        if self.sysv and sysv_in_use():
            remove_sysv()
            if sysv_in_use():
                raise RuntimeError("a run left System V IPC objects that could not be removed")
