"""Figures for people: pass@k curves on a log2 axis, and each problem's success rate.

matplotlib is imported only when a figure is drawn (install the ``plot``
extra), so the numerical core needs nothing but numpy.  Colours are the
Okabe-Ito palette, which stays distinguishable under the common forms of
colour blindness; each model also gets its own marker, so the figures read
in greyscale too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from passatk.curves import CrossoverResult, CurvesResult
from passatk.extrapolate import ExtrapolationResult
from passatk.results import Results
from passatk.uncertainty import BandResult, Summary

__all__ = ["OKABE_ITO", "plot_curves", "plot_problem_rates"]

#: Okabe & Ito (2008), "Color Universal Design", without yellow (too pale on white).
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _figure(**kwargs):
    """A new matplotlib Figure, not registered with pyplot (no GUI backend, no global state)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - only without the extra
        from passatk._install import install_hint

        raise ImportError(f"plots need matplotlib: {install_hint('plot')}") from exc
    return Figure(**kwargs)


def _style(i: int) -> dict:
    return {"color": OKABE_ITO[i % len(OKABE_ITO)], "marker": _MARKERS[i % len(_MARKERS)]}


def _log2_axis(ax, k_max: float) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ax.set_xscale("log", base=2)
    ticks = 2.0 ** np.arange(0, int(np.floor(np.log2(k_max))) + 1)
    if k_max / ticks[-1] >= 1.4:  # label the last k too when it is not next to a power of two
        ticks = np.append(ticks, k_max)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlim(0.85, k_max * 1.18)


def plot_curves(
    summaries: CurvesResult | Sequence[Summary],
    *,
    extrapolations: Mapping[str, ExtrapolationResult] | None = None,
    crossover: CrossoverResult | None = None,
    bands: Mapping[str, BandResult] | None = None,
    title: str | None = None,
    ax=None,
):
    """pass@k against k on a log2 axis, one line and shaded confidence band per model.

    Parameters
    ----------
    summaries : CurvesResult or sequence of Summary
        A :func:`passatk.curves` result, drawn with its extrapolations, its
        bands and, when it has exactly two models, their crossover (with more,
        the pairs are in :func:`passatk.report.crossover_lines`); or one
        :class:`~passatk.Summary` per model, from :func:`passatk.summarize`
        over a grid of k, whose ``ci`` is the shaded band and ``name`` the
        label.  The options below are for summaries only: a CurvesResult
        carries its own.
    extrapolations : mapping of str to ExtrapolationResult, optional
        Model-based values keyed by the summary's name; only k beyond that
        model's largest measured k are drawn, dashed, with a hatched band
        and "model-based" in the legend.
    crossover : CrossoverResult, optional
        Marks the crossing k (dotted line) and its interval (shaded span).
    bands : mapping of str to BandResult, optional
        Simultaneous bands (:func:`passatk.uncertainty.simultaneous_band`) keyed
        by the summary's name, drawn as a dotted outline around the shaded
        pointwise intervals: the whole curve lies inside it at its level.
    title : str, optional
    ax : matplotlib Axes, optional
        Draw into it; by default a new figure 7 inches wide, legend below the axes.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from passatk import Results, curves
    >>> from passatk.plot import plot_curves
    >>> a = Results.from_counts(["p", "q"], [8, 8], [2, 7], name="a")
    >>> fig = plot_curves(curves({"a": a}, ks=[1, 2, 4], band=False))
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['a (unbiased; 95% CI)']
    """
    if isinstance(summaries, CurvesResult):
        if extrapolations is not None or crossover is not None or bands is not None:
            raise ValueError(
                "`extrapolations`, `crossover` and `bands` are for a sequence of summaries; a CurvesResult carries its own."
            )
        result = summaries
        summaries = list(result.summaries.values())
        extrapolations, bands = result.extrapolations, result.bands
        crossover = result.crossovers[0] if len(result.crossovers) == 1 else None
    if not summaries:
        raise ValueError("`summaries` is empty; pass at least one Summary.")
    extrapolations, bands = dict(extrapolations or {}), dict(bands or {})
    for what, keyed in (("extrapolations", extrapolations), ("bands", bands)):
        unknown = set(keyed) - {s.name for s in summaries}
        if unknown:
            raise ValueError(f"`{what}` has no summary to extend for {sorted(unknown)!r}.")
    rows = len(summaries) + len(extrapolations) + len(bands) + (crossover is not None)
    fig = ax.figure if ax is not None else _figure(figsize=(7, 3.9 + 0.2 * rows), dpi=120)
    ax = ax if ax is not None else fig.add_subplot()
    k_max, measured = 1.0, set()
    for i, s in enumerate(summaries):
        st = _style(i)
        ks = np.asarray(s.ks, dtype=float)
        level = int(round(100 * s.level))
        ax.fill_between(ks, 100 * s.ci.low, 100 * s.ci.high, color=st["color"], alpha=0.18, linewidth=0)
        ax.plot(
            ks, 100 * s.estimate, color=st["color"], marker=st["marker"], markersize=4, label=f"{s.name} (unbiased; {level}% CI)"
        )
        band = bands.get(s.name)
        if band is not None:
            ax.fill_between(
                np.asarray(band.ks, dtype=float),
                100 * band.band.low,
                100 * band.band.high,
                facecolor="none",
                edgecolor=st["color"],
                linestyle=":",
                linewidth=1.1,
                label=f"{s.name}: {int(round(100 * band.level))}% band for all k at once",
            )
        k_max = max(k_max, ks.max())
        ext = extrapolations.get(s.name)
        if ext is not None:
            beyond = ext.ks > ks.max()
            if beyond.any():
                ek = np.concatenate([[ks.max()], ext.ks[beyond]]).astype(float)
                ci = ext.confidence_interval(s.level)
                est = np.concatenate([[s.estimate[-1]], ext.estimate[beyond]])
                lo = np.concatenate([[s.ci.low[-1]], ci.low[beyond]])
                hi = np.concatenate([[s.ci.high[-1]], ci.high[beyond]])
                ax.fill_between(
                    ek, 100 * lo, 100 * hi, facecolor="none", edgecolor=st["color"], hatch="///", alpha=0.45, linewidth=0
                )
                ax.plot(
                    ek,
                    100 * est,
                    color=st["color"],
                    linestyle="--",
                    marker=st["marker"],
                    markersize=4,
                    markerfacecolor="white",
                    label=f"{s.name}: model-based beyond n ({ext.law.replace('_', '-')} fit)",
                )
                k_max = max(k_max, ek.max())
                measured.add(float(ks.max()))
    for n in sorted(measured):
        ax.axvline(n, color="0.55", linestyle=":", linewidth=1)
        ax.text(n, 97, f" k > n = {n:g}: model-based", fontsize=8, color="0.35", va="top")
    if crossover is not None and crossover.k_cross is not None:
        if np.isfinite(crossover.ci.low):  # an open upper end runs to the edge of the axes
            hi = crossover.ci.high if np.isfinite(crossover.ci.high) else k_max * 1.18
            ax.axvspan(max(crossover.ci.low, 0.85), hi, color="0.92", zorder=0)
        ax.axvline(
            crossover.k_cross,
            color="black",
            linestyle=":",
            linewidth=1.2,
            label=f"crossover k = {crossover.k_cross} ({int(round(100 * crossover.level))}% CI shaded)",
        )
    _log2_axis(ax, k_max)
    ax.set_ylim(0, 100)
    ax.set_xlabel("k (attempts per problem, log\u2082 scale)")
    metric = summaries[0].metric
    ax.set_ylabel(f"{metric} (% of problems solved)")
    ax.set_title(title or f"{metric} against k")
    ax.grid(True, which="major", color="0.9", linewidth=0.8)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=8, frameon=False, ncol=1)
    fig.tight_layout()
    return fig


def plot_problem_rates(results: Results | Mapping[str, Results], *, title: str | None = None):
    """Each problem's fraction of correct samples, sorted, one panel per model.

    The mean height of the bars is pass@1.  Problems with a small but
    nonzero rate are the ones that carry pass@k upward as k grows; problems
    never solved (``c = 0``) are what pass@k can never reach from these
    samples.  Both counts are written on each panel.

    Parameters
    ----------
    results : Results or mapping of str to Results
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    models = {results.name or "model": results} if isinstance(results, Results) else dict(results)
    if not models:
        raise ValueError("`results` is empty; pass at least one Results.")
    fig = _figure(figsize=(7, 1.2 + 2.1 * len(models)), dpi=120)
    axes = fig.subplots(len(models), 1, sharey=True, squeeze=False)
    for i, ((name, res), ax) in enumerate(zip(models.items(), axes[:, 0])):
        rate = np.sort(res.c / res.n)[::-1]
        color = _style(i)["color"]
        ax.bar(np.arange(1, rate.size + 1), 100 * rate, width=1.0, color=color, edgecolor="none")
        never = int((res.c == 0).sum())
        rare = int(((res.c > 0) & (res.c < 0.1 * res.n)).sum())
        ax.text(
            0.99,
            0.95,
            f"{name}\npass@1 = {100 * rate.mean():.1f}%\n"
            f"never solved: {never} of {rate.size}\nsolved in < 10% of samples: {rare}",
            transform=ax.transAxes,
            ha="right",
            va="top",
            fontsize=8,
            bbox={"facecolor": "white", "edgecolor": "0.8", "alpha": 0.9},
        )
        ax.set_xlim(0.5, rate.size + 0.5)
        ax.set_ylim(0, 100)
        ax.set_ylabel("correct samples (%)")
        ax.grid(True, axis="y", color="0.9", linewidth=0.8)
        ax.set_axisbelow(True)
    axes[-1, 0].set_xlabel("problems, sorted from most to least often solved")
    axes[0, 0].set_title(title or "Fraction of correct samples per problem")
    fig.tight_layout()
    return fig
