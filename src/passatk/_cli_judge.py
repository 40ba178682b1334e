"""``passatk judge``: a contest problem's submissions judged as DOMjudge and Kattis judge them.

Registered on the ``passatk`` app by :mod:`passatk.cli`; the work is
:func:`passatk.execute.contest.judge`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["judge_cmd", "parse_time_multipliers"]


def parse_time_multipliers(values: list[str]) -> dict[str, float]:
    """``--time-multiplier`` values (``LANGUAGE=FACTOR``) as a dict; one that is not is a one-line error (exit 1).

    >>> parse_time_multipliers(["java=2", "python=3.5"])
    {'java': 2.0, 'python': 3.5}
    """
    from passatk._cli_common import fail

    out = {}
    for item in values:
        lang, _, factor = item.partition("=")
        try:
            out[lang.strip()] = float(factor)
        except ValueError:
            fail(f"--time-multiplier must be LANGUAGE=FACTOR (java=2); got {item!r}.")
    return out


def judge_cmd(
    problem: Annotated[Path, typer.Argument(help="A problem package folder (problem.yaml, data/, output_validators/).")],
    submissions: Annotated[
        list[Path] | None,
        typer.Argument(help="Source files or folders to judge; default every one under the package's submissions/."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON record per submission, one per line.")] = False,
    fmt: Annotated[str | None, typer.Option("--format", help="table (default) or json (the same as --json).")] = None,
    workers: Annotated[int | None, typer.Option(help="Warm sandboxed workers; default the number of CPUs.")] = None,
    time_limit: Annotated[float | None, typer.Option(help="CPU seconds a case, instead of the problem's.")] = None,
    time_multiplier: Annotated[
        list[str] | None, typer.Option(help="LANGUAGE=FACTOR: that language's time limit times FACTOR (repeatable).")
    ] = None,
    all_cases: Annotated[bool, typer.Option(help="Run every case, not only up to the first failure.")] = False,
    sandbox: Annotated[str, typer.Option(help="auto, bwrap or process.")] = "auto",
) -> None:
    """Judge submissions of a contest problem: each one's verdict, the verdict its folder expects, and each case's result."""
    from rich.console import Console
    from rich.table import Table

    from passatk._cli_common import fail, output_format
    from passatk.execute import contest

    as_json = output_format(fmt, as_json, ("table", "json")) == "json"
    try:
        prob = contest.load_package(problem, time_limit=time_limit)
        records = contest.judge(
            prob,
            submissions or None,
            workers=workers,
            sandbox=sandbox,
            all_cases=all_cases,
            time_multipliers=parse_time_multipliers(time_multiplier or []),
        )
    except (ValueError, OSError) as exc:
        fail(str(exc))
    if as_json:
        for rec in records:
            typer.echo(json.dumps(rec))
        return
    limit = next((rec["time_limit"] for rec in records if "time_limit" in rec), prob.time_limit)
    how = "" if prob.time_limit_stated else f" ({prob.time_multiplier:g} × the slowest accepted case)"
    table = Table(title=f"{prob.name}: {len(prob.cases)} cases, {limit:g} s{how}, {prob.memory_mb} MiB")
    for col in ("submission", "language", "verdict", "expected", "cpu s", "detail"):
        table.add_column(col)
    agree = judged = 0
    for rec in records:
        expected = ", ".join(rec.get("expected", [])) or "-"
        mark = {True: "[green]✓[/]", False: "[red]✗[/]"}.get(rec.get("agrees"), "")
        if rec.get("agrees") is not None:
            judged += 1
            agree += bool(rec["agrees"])
        name = rec["submission"].split("/submissions/")[-1]
        detail = rec.get("detail") or rec.get("reason") or ""
        table.add_row(name, rec["language"] or "-", f"{rec['verdict']} {mark}", expected, f"{rec.get('cpu', 0):.2f}", detail[:70])
    console = Console()
    console.print(table)
    if judged:
        console.print(f"{agree} of {judged} submissions with an expected verdict got one of theirs.")
