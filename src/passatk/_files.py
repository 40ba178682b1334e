"""Files passatk writes for people: the mode a plain ``open(path, "w")`` would give them.

Results and reports are written to a temporary file (``tempfile.mkstemp``,
mode 0600) and renamed into place, so that a crash never leaves half a file;
before the rename they get ``0666 & ~umask``, as any file the user makes.
"""

from __future__ import annotations

import os


def user_file_mode() -> int:
    """``0o666`` less the process's umask: the mode ``open(path, "w")`` creates a file with.

    Read from ``/proc/self/status`` where Linux gives it (no change of
    process-wide state), else by setting and restoring the umask.

    >>> user_file_mode() & 0o600
    384
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask
