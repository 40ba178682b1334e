"""The ``passatk`` script: a clear message when the ``cli`` extra is missing, else the typer app."""

from __future__ import annotations

import sys


def main() -> None:
    """Run :func:`passatk.cli.main`, or say how to install the command's dependencies."""
    try:
        from passatk.cli import main as cli_main
    except ModuleNotFoundError as exc:
        if exc.name not in ("typer", "rich", "click"):
            raise
        from passatk._install import install_hint

        sys.exit(f"passatk: error: the command needs {exc.name!r}; install it with: {install_hint('cli')}")
    cli_main()
