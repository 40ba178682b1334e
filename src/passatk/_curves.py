"""pass@k curves of one or more models: bands, crossings, and opt-in model-based points beyond n.

This module gathers what ``passatk curve`` shows: for each model the
unbiased pass@k over a log2 grid of k with its confidence band
(:func:`passatk.summarize`), for each pair of models the crossing k
(:func:`passatk.crossover`), and -- only when asked -- model-based
pass@k beyond n (:func:`passatk.extrapolate.pass_at_k_beyond`), kept apart
and labelled as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from passatk._summary import Summary, summarize
from passatk._crossover import CrossoverResult, crossover
from passatk.extrapolate import ExtrapolationResult, pass_at_k_beyond
from passatk.results import Results

__all__ = ["CurvesResult", "curves", "log2_ks"]


def log2_ks(k_max: int, k_min: int = 1) -> list[int]:
    """Powers of two in ``[k_min, k_max]``, plus ``k_max`` itself.

    Examples
    --------
    >>> log2_ks(100)
    [1, 2, 4, 8, 16, 32, 64, 100]
    >>> log2_ks(1000, k_min=101)
    [128, 256, 512, 1000]
    """
    if isinstance(k_max, bool) or not isinstance(k_max, (int, np.integer)) or k_max < max(k_min, 1):
        raise ValueError(f"`k_max` must be an integer >= {max(k_min, 1)}; got k_max={k_max!r}.")
    ks = [2**j for j in range(int(np.log2(k_max)) + 1) if k_min <= 2**j < k_max]
    return ks + [int(k_max)]


@dataclass(frozen=True)
class CurvesResult:
    """Curves of several models.

    Attributes
    ----------
    summaries : dict of str to Summary
        Unbiased pass@k with SE and interval over the k grid, per model.
    extrapolations : dict of str to ExtrapolationResult
        Model-based pass@k beyond each model's smallest n (empty unless asked).
    crossovers : list of CrossoverResult
        One per pair of models that share problems.

    Methods
    -------
    to_dict()
        The ``passatk curve --json`` document.
    table()
        A rich table: one row per k, one column per model; model-based rows marked.
    plot()
        The figure of :func:`passatk.plot.plot_curves`.
    """

    summaries: dict[str, Summary]
    extrapolations: dict[str, ExtrapolationResult]
    crossovers: list[CrossoverResult]

    def to_dict(self) -> dict:
        """``{"models": {name: summary + "beyond_n"}, "crossovers": [...]}``, ready for JSON."""
        models = {}
        for name, s in self.summaries.items():
            models[name] = s.to_dict()
            if name in self.extrapolations:
                models[name]["beyond_n"] = self.extrapolations[name].to_dict(s.level)
        return {"models": models, "crossovers": [x.to_dict() for x in self.crossovers]}

    def table(self):
        """A rich table of estimate [interval] per k and model; model-based values are marked with ``*``."""
        from rich.table import Table

        level = int(round(100 * next(iter(self.summaries.values())).level))
        table = Table(title=f"pass@k curve (estimate [{level}% CI])", title_justify="left",
                      caption="* model-based beyond n (fitted law of p across problems; not an unbiased estimate)"
                      if self.extrapolations else None, caption_justify="left")
        table.add_column("k", justify="right")
        for name in self.summaries:
            table.add_column(name, justify="right")
        cells: dict[int, dict[str, str]] = {}
        for name, s in self.summaries.items():
            for k, e, lo, hi in zip(s.ks, s.estimate, s.ci.low, s.ci.high):
                cells.setdefault(int(k), {})[name] = f"{e:.4f} [{lo:.4f}, {hi:.4f}]"
        for name, ext in self.extrapolations.items():
            ci = ext.confidence_interval(self.summaries[name].level)
            for k, e, lo, hi in zip(ext.k, ext.estimate, ci.low, ci.high):
                cells.setdefault(int(k), {})[name] = f"*{e:.4f} [{lo:.4f}, {hi:.4f}]"
        for k in sorted(cells):
            table.add_row(str(k), *(cells[k].get(name, "") for name in self.summaries))
        return table

    def crossover_lines(self) -> list[str]:
        """One sentence per pair of models about where (and whether) their curves cross."""
        lines = []
        for x in self.crossovers:
            a, b = x.names
            level = int(round(100 * x.level))
            if x.leader is None:
                lines.append(f"{a} vs {b}: identical curves for k <= {x.k.max()}.")
                continue
            other = b if x.leader == a else a
            hi = "beyond the largest k" if not np.isfinite(x.ci.high) else f"{x.ci.high:g}"
            lo = "beyond the largest k" if not np.isfinite(x.ci.low) else f"{x.ci.low:g}"
            if x.k_cross is None:
                lines.append(
                    f"{x.leader} leads {other} at k = {x.k.min()} and stays ahead for every k <= {x.k.max()} "
                    f"(a crossing in {100 * x.share_crossing:.0f}% of bootstrap replicates; {x.problems} shared problems)."
                )
            else:
                lines.append(
                    f"{x.leader} leads {other} at k = {x.k.min()}; {other} overtakes it at k = {x.k_cross} "
                    f"({level}% CI: {lo} to {hi}; a crossing in {100 * x.share_crossing:.0f}% of bootstrap "
                    f"replicates; {x.problems} shared problems)."
                )
        return lines

    def plot(self):
        """pass@k against k for every model (see :func:`passatk.plot.plot_curves`).

        The crossover is marked when there are exactly two models; with more,
        the pairs are in :meth:`crossover_lines` and ``to_dict()``.
        """
        from passatk.plot import plot_curves

        return plot_curves(
            list(self.summaries.values()),
            extrapolations=self.extrapolations,
            crossover=self.crossovers[0] if len(self.crossovers) == 1 else None,
        )


def curves(
    models: Results | Mapping[str, Results],
    ks=None,
    *,
    level: float = 0.95,
    extrapolate_to: int | None = None,
    method: str = "beta_binomial",
    seed: int = 0,
) -> CurvesResult:
    """pass@k curves with bands for each model, crossings for each pair, and optional points beyond n.

    Parameters
    ----------
    models : Results or mapping of str to Results
    ks : sequence of int, optional
        The grid; default :func:`log2_ks` up to each model's smallest n.
        Every k must be ``<= n`` for every problem (the unbiased range).
    level : float, default 0.95
        Confidence level of every band and interval.
    extrapolate_to : int, optional
        Also give model-based pass@k on :func:`log2_ks` from above each
        model's smallest n up to this k (see
        :func:`passatk.extrapolate.pass_at_k_beyond`).
    method : str, default "beta_binomial"
        Law fitted for the extrapolation.
    seed : int, default 0
        Seeds every bootstrap.

    Returns
    -------
    CurvesResult

    Examples
    --------
    >>> from passatk import Results
    >>> r = Results.from_counts(["a", "b", "c"], [8, 8, 8], [8, 2, 0], name="m")
    >>> out = curves(r)
    >>> out.summaries["m"].ks, out.summaries["m"].estimate.round(3).tolist()
    ((1, 2, 4, 8), [0.417, 0.488, 0.595, 0.667])
    """
    models = {models.name or "model": models} if isinstance(models, Results) else dict(models)
    if not models:
        raise ValueError("`models` is empty; pass at least one Results.")
    summaries = {
        name: _named(summarize(r, log2_ks(int(r.n.min())) if ks is None else ks, level, seed=seed), name)
        for name, r in models.items()
    }
    extrapolations = {}
    if extrapolate_to is not None:
        for name, r in models.items():
            own_n = int(r.n.min())
            if isinstance(extrapolate_to, bool) or not isinstance(extrapolate_to, (int, np.integer)) or extrapolate_to <= own_n:
                raise ValueError(
                    f"`extrapolate_to` must be an integer above the samples per problem ({own_n} for {name!r}); "
                    f"got extrapolate_to={extrapolate_to!r}."
                )
            extrapolations[name] = pass_at_k_beyond(r, log2_ks(int(extrapolate_to), own_n + 1), method, rng=seed)
    pairs = [
        crossover(models[a], models[b], level=level, rng=seed)
        for a, b in combinations(models, 2)
        if set(models[a].task_ids.tolist()) & set(models[b].task_ids.tolist())  # different benchmarks: no pair
    ]
    return CurvesResult(summaries, extrapolations, pairs)


def _named(summary: Summary, name: str) -> Summary:
    """The summary under the name the user sees (a file may hold several models)."""
    return summary if summary.name == name else replace(summary, name=name)
