"""What every ``passatk`` command shares: the exit statuses, the one-line error, the output format.

:mod:`passatk.cli` and the commands kept in modules of their own
(:mod:`passatk._cli_judge`) import these; this module imports nothing of the
package, so no command module needs to import the CLI back.
"""

from __future__ import annotations

from collections.abc import Sequence

import typer

__all__ = ["CLI_SPELLING", "ERROR", "GATE_FAILED", "fail", "output_format"]

#: Exit statuses: 1 is a CI gate that failed (--fail-under, --fail-if-worse), 2 an error.
GATE_FAILED, ERROR = 1, 2


#: The library's messages name its arguments (``target='fixed'``); on the command line they are options.
CLI_SPELLING = {
    "target='fixed'": "--target fixed",
    "method='normal'": "--ci normal",
    "law='beta_binomial_mixture'": "--law beta_binomial_mixture",
    "law='beta_binomial'": "--law beta_binomial",
}


def fail(message: str) -> None:
    """Print a one-line user error to stderr and exit with status 2 (status 1 is a failed CI gate)."""
    for python, option in CLI_SPELLING.items():
        message = message.replace(python, option)
    typer.echo(f"passatk: error: {message}", err=True)
    raise typer.Exit(ERROR)


def output_format(fmt: str | None, as_json: bool, allowed: Sequence[str] = ("table", "json", "markdown")) -> str:
    """The output format asked for by ``--format`` and ``--json`` (which must not disagree)."""
    fmt = fmt or ("json" if as_json else "table")
    if fmt not in allowed:
        fail(f"--format must be {', '.join(allowed[:-1])} or {allowed[-1]}; got {fmt!r}.")
    if as_json and fmt != "json":
        fail(f"--json and --format {fmt} ask for two formats; give one.")
    return fmt
