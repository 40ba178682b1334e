"""The audit's tables and sentences for people (rich), and the ``score --audit`` hook."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from passatk.audit._audit import AuditResult, load_audit
from passatk.audit._inflation import HoleInflationResult, hole_inflation

__all__ = ["attach_holes", "audit_lines", "print_audit", "print_holes"]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def audit_lines(result: AuditResult) -> list[str]:
    """The audit's summary in a few sentences."""
    s = result.summary()
    lines = [
        f"{s['problems']} problems: {s['audited']} audited ({s['judged']} with a broken mutant, the denominator below), "
        f"{s['skipped']} skipped."
    ]
    for reason, count in s["skipped_because"].items():
        lines.append(f"  skipped, {count}: {reason}")
    if s["judged"]:
        lo, hi = s["ci"]
        lines.append(
            f"{_pct(s['share_weak'])} of the problems ({s['weak']} of {s['judged']}) accept a broken solution "
            f"[{_pct(lo)}, {_pct(hi)}] ({100 * s['level']:.0f}% Wilson interval)."
        )
        lines.append(
            f"{s['mutants']} mutants tried, {s['broken']} broken, {s['surviving']} survived"
            + (
                f"; mean hole rate h {s['mean_hole_rate']:.3f} over {s['problems_with_broken']} problems."
                if s["mean_hole_rate"] is not None
                else "."
            )
        )
    if result.problems:
        lines.append(f"{result.seconds:.1f} s, {result.seconds / len(result.problems):.2f} s per problem.")
    return lines


def print_audit(console: Console, result: AuditResult, show: int = 5) -> None:
    """The summary, the weak problems as a table, and the first ``show`` survivors' diffs."""
    for line in audit_lines(result):
        console.print(line, highlight=False)
    from passatk._order import natural_key

    weak = sorted((p for p in result.audited if p["surviving"]), key=lambda p: natural_key(p["task_id"]))
    if not weak:
        return
    table = Table(title="Problems that accept a broken solution")
    for col in ("task", "broken", "surviving", "change", "a test that catches it"):
        table.add_column(col, overflow="fold")
    for p in weak:
        sv = p["survivor"]
        table.add_row(str(p["task_id"]), str(p["broken"]), str(p["surviving"]), sv["description"], sv["test"])
    console.print(table)
    for p in weak[:show]:
        sv = p["survivor"]
        console.print(
            f"\n{p['task_id']}: {sv['description']} ({sv['operator']}); the mutant gives {sv['mutant']}", highlight=False
        )
        console.print(Syntax(sv["diff"], "diff", theme="ansi_dark", background_color="default"))
        console.print(f"  {sv['test']}", highlight=False)


def attach_holes(records: dict, models: dict, ks: list[int], path, fail: Callable[[str], None]) -> dict[str, HoleInflationResult]:
    """For ``score --audit``: each model's :class:`HoleInflationResult`, also put in its record as ``verifier_holes``."""
    try:
        audit = load_audit(path)
    except (ValueError, FileNotFoundError) as exc:
        fail(str(exc))
    out = {}
    for name, res in models.items():
        try:
            out[name] = hole_inflation(res, audit, ks)
        except ValueError as exc:
            fail(f"--audit {path}: {exc}")
        records[name]["verifier_holes"] = out[name].to_dict()
    return out


def print_holes(console: Console, holes: dict[str, HoleInflationResult], count: int = 10) -> None:
    """How far each model's pass@k could be inflated by the measured holes, and the problems that contribute most."""
    for name, res in holes.items():
        table = Table(title=f"{name}: pass@k inflation by the audited verifier holes")
        for col in ("k", "pass@k", "inflation", "bound k·h·(1-p)^k", "pass@k without it"):
            table.add_column(col, justify="right")
        for k, e, d, b in zip(res.ks, res.estimate, res.inflation, res.bound):
            table.add_row(str(k), f"{e:.4f}", f"{d:.4f}", f"{b:.4f}", f"{e - d:.4f}")
        console.print(table)
        console.print(
            f"h measured on {res.measured} of {res.measured + res.unmeasured} problems (the others count as h = 0); "
            "h is the share of broken mutants that pass the tests, taken as the chance that a wrong sample passes "
            "(at most the problem's pass rate c/n), and p = (c/n - h)/(1 - h).",
            highlight=False,
        )
        top = res.top(count)
        if top:
            t = Table(title="Problems that contribute most")
            for col in ("task", "h (used: at most c/n)", "surviving/broken", "p", f"inflation at k={res.ks[-1]}"):
                t.add_column(col, justify="right")
            for row in top:
                t.add_row(
                    row["task_id"],
                    f"{row['hole_rate']:.3f}" + (f" ({row['h_used']:.3f})" if row["h_used"] < row["hole_rate"] else ""),
                    f"{row.get('surviving', 0)}/{row.get('broken', 0)}",
                    f"{row['p']:.3f}",
                    f"{row['inflation'][str(res.ks[-1])]:.4f}",
                )
            console.print(t)
