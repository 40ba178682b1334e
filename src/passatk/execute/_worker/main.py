"""Entry point of both processes of a sandboxed worker: ``main([role, socket_fd])``.

Started by the controller as ``python -I -S -B -c BOOT <package dir> <role> <fd>``
(see ``passatk.execute.sandbox``), where ``role`` is ``worker`` (the trusted
side: jobs, judges, verdicts) or ``zygote`` (the side samples run on), and
``fd`` is this process's end of the socket that links the two.
"""

import socket

__all__ = ["BOOT", "main"]

# Loads this package from its directory without putting anything on sys.path.
BOOT = (
    "import importlib.util as u, sys; s = u.spec_from_file_location('_worker', sys.argv[1] + '/__init__.py', "
    "submodule_search_locations=[sys.argv[1]]); m = u.module_from_spec(s); sys.modules['_worker'] = m; "
    "s.loader.exec_module(m); from _worker.main import main; main(sys.argv[2:])"
)


def main(argv):
    role, fd = argv[0], int(argv[1])
    sock = socket.socket(fileno=fd)
    if role == "zygote":
        from .zygote import serve
    elif role == "worker":
        from .worker import serve
    else:
        raise SystemExit(f"unknown role {role!r}")
    serve(sock)
