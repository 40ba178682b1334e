"""Turning estimates into what people read: rich tables and the ``--json`` shape."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from passatk.results import Results

__all__ = ["score_dict", "score_table"]


def score_dict(results: Results, ks: Sequence[int]) -> dict:
    """The ``--json`` record of ``passatk score`` for one model (DESIGN.md's shape).

    Examples
    --------
    >>> from passatk import Results
    >>> score_dict(Results.from_counts(["a", "b"], [10, 10], [3, 0]), [1])
    {'problems': 2, 'samples': 20, 'pass_at_k': {'1': {'estimate': 0.15, 'se': None, 'ci': None}}}
    """
    means = np.atleast_2d(results.pass_at_k(list(ks))).mean(axis=0)
    return {
        "problems": len(results),
        "samples": results.samples,
        "pass_at_k": {str(k): {"estimate": float(m), "se": None, "ci": None} for k, m in zip(ks, means)},
    }


def score_table(records: Mapping[str, dict]):
    """A rich table with one row per model and one column per k."""
    from rich.table import Table

    ks = list(next(iter(records.values()))["pass_at_k"])
    table = Table(title="pass@k (unbiased estimator)", title_justify="left")
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
