"""Turning estimates into what people read: rich tables and the ``--json`` shape."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from passatk._summary import summarize
from passatk.results import Results

__all__ = ["score_dict", "score_table"]


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
