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
    """A rich table with one row per model and one column per k."""
    from rich.table import Table

    first = next(iter(records.values()))
    ks = list(first["pass_at_k"])
    title = "pass@k (unbiased estimator)"
    if "level" in first:
        title += f" ± SE, [{first['level']:.0%} CI: {first['method']}, {first['target']}]"
    table = Table(title=title, title_justify="left")
    table.add_column("model")
    table.add_column("problems", justify="right")
    table.add_column("samples", justify="right")
    for k in ks:
        table.add_column(f"pass@{k}", justify="right")
    for name, rec in records.items():
        cells = []
        for k in ks:
            e = rec["pass_at_k"][k]
            cell = f"{e['estimate']:.4f}"
            if e["se"] is not None:
                cell += f" ± {e['se']:.4f}"
            if e["ci"] is not None:
                cell += f"\n[{e['ci'][0]:.4f}, {e['ci'][1]:.4f}]"
            cells.append(cell)
        table.add_row(name, str(rec["problems"]), str(rec["samples"]), *cells)
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
