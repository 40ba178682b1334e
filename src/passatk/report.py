"""Turning estimates into what people read: rich tables and the ``--json`` shape."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from passatk._summary import summarize
from passatk.results import Results

__all__ = ["compare_table", "score_dict", "score_table"]


def score_dict(
    results: Results,
    ks: Sequence[int],
    *,
    level: float = 0.95,
    method: str = "t",
    target: str = "population",
    seed: int | None = None,
) -> dict:
    """The ``--json`` record of ``passatk score`` for one model (DESIGN.md's shape).

    A thin wrapper: ``summarize(results, ks, ...).to_dict()``, so every
    estimate carries its standard error and confidence interval.

    Examples
    --------
    >>> from passatk import Results
    >>> rec = score_dict(Results.from_counts(["a", "b", "c"], [10, 10, 10], [3, 0, 6]), [1])
    >>> rec["problems"], rec["samples"], rec["pass_at_k"]["1"]["estimate"], round(rec["pass_at_k"]["1"]["se"], 4)
    (3, 30, 0.3, 0.1732)
    """
    return summarize(results, list(ks), level, method=method, target=target, seed=seed).to_dict()


def score_table(records: Mapping[str, dict]):
    """A rich table: one section per model, one row per k (readable at any terminal width)."""
    from rich.table import Table

    first = next(iter(records.values()))
    title = "pass@k (unbiased estimator)"
    if "level" in first:
        title += f", standard error and {first['level']:.0%} CI ({first['method']}, {first['target']})"
    table = Table(title=title, title_justify="left")
    table.add_column("model", overflow="fold")
    table.add_column("k", no_wrap=True)
    table.add_column("estimate", justify="right", no_wrap=True)
    table.add_column("± SE", justify="right", no_wrap=True)
    table.add_column("CI" if "level" not in first else f"{first['level']:.0%} CI", justify="right", no_wrap=True)
    for name, rec in records.items():
        counts = f"{rec['problems']} problems, {rec['samples']} samples"
        items = list(rec["pass_at_k"].items())
        labels = [name, counts] if len(items) > 1 else [f"{name}\n{counts}"]
        for i, (k, e) in enumerate(items):
            se = "-" if e["se"] is None else f"{e['se']:.4f}"
            ci = "-" if e["ci"] is None else f"[{e['ci'][0]:.4f}, {e['ci'][1]:.4f}]"
            table.add_row(labels[i] if i < len(labels) else "", f"pass@{k}", f"{e['estimate']:.4f}", se, ci, end_section=i == len(items) - 1)
    return table


def _p_text(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def compare_table(records: Sequence[dict]):
    """A rich table of :meth:`passatk.Comparison.to_dict` records: one row per pair and k."""
    from rich.table import Table

    holm = any("p_value_holm" in e for rec in records for e in rec["pass_at_k"].values())
    level = records[0]["level"]
    table = Table(
        title=f"A - B on shared problems ± paired SE, {level:.0%} CI (t); * = McNemar exact",
        title_justify="left",
    )
    table.add_column("A - B")
    for col in ("k", "difference", f"{level:.0%} CI", "p") + (("p Holm",) if holm else ()) + ("unpaired SE", "corr"):
        table.add_column(col, justify="right")
    for rec in records:
        for i, (k, e) in enumerate(rec["pass_at_k"].items()):
            pair = f"{rec['a']}\n- {rec['b']}\n({rec['problems']} shared)" if i == 0 else ""
            mark = "*" if e["test"] == "McNemar exact" else ""
            row = [
                pair,
                k,
                f"{e['difference']:+.4f} ± {e['se']:.4f}",
                f"[{e['ci'][0]:+.4f}, {e['ci'][1]:+.4f}]",
                _p_text(e["p_value"]) + mark,
            ]
            if holm:
                row.append(_p_text(e.get("p_value_holm")) + mark)
            row += [f"{e['se_unpaired']:.4f}", "-" if e["correlation"] is None else f"{e['correlation']:.2f}"]
            table.add_row(*row, end_section=i == len(rec["pass_at_k"]) - 1)
    return table
