"""Every table and sentence for people: rich tables, one-line notes, and the ``--json`` shape.

The numerics return result objects and ``to_dict()`` records; this module is the
only place that turns them into text.  Tables are :class:`rich.table.Table`
objects (rich is imported only when one is built: the ``cli`` extra); the
sentences are plain strings.  The ``passatk`` command prints what these return.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from passatk.results import Results
from passatk.uncertainty import summarize

__all__ = [
    "MCNEMAR_MARK",
    "FEW_PROBLEMS",
    "band_lines",
    "compare_rows",
    "compare_warnings",
    "compare_table",
    "crossover_lines",
    "crossover_warnings",
    "curve_cells",
    "curve_table",
    "evaluation_lines",
    "excluded_lines",
    "legend_lines",
    "model_labels",
    "plan_lines",
    "plan_rows",
    "plan_table",
    "score_dict",
    "score_rows",
    "score_table",
    "score_warnings",
]

#: Fewer problems than this and intervals over problems are rough: in the coverage study (docs, "How sure") a
#: 95% t interval over 20 problems covers a median of 90%, over 50 problems 94%.
FEW_PROBLEMS = 30
#: pass@k within this of 0 or 1 is pinned there: the spread over problems is (nearly) zero and spread-based intervals collapse.
PINNED = 1e-3
#: Model names longer than this are shown as letters (A, B, ...) in tables with a row or column per model, with a legend.
SHORT_NAME = 14


def score_dict(
    results: Results,
    ks: Sequence[int],
    *,
    level: float = 0.95,
    method: str = "t",
    target: str = "population",
    rng: int | None = None,
    metric: str = "pass@k",
) -> dict:
    """The ``--json`` record of ``passatk score`` for one model (DESIGN.md's shape).

    A thin wrapper: ``summarize(results, ks, ...).to_dict()``, so every
    estimate carries its standard error and confidence interval
    (``metric`` is ``"pass@k"`` or ``"pass^k"``).

    Examples
    --------
    >>> from passatk import Results
    >>> rec = score_dict(Results.from_counts(["a", "b", "c"], [10, 10, 10], [3, 0, 6]), [1])
    >>> rec["problems"], rec["samples"], rec["pass_at_k"]["1"]["estimate"], round(rec["pass_at_k"]["1"]["se"], 4)
    (3, 30, 0.3, 0.1732)
    """
    return summarize(results, list(ks), level=level, method=method, target=target, rng=rng, metric=metric).to_dict()


def score_record(
    results: Results,
    ks: Sequence[int],
    *,
    level: float = 0.95,
    method: str = "t",
    target: str = "population",
    rng: int = 0,
    metric: str = "pass@k",
) -> dict:
    """What ``passatk score --json`` prints for one model: its provenance, then :func:`score_dict`.

    The provenance (DESIGN.md): ``format_version``, the ``passatk`` version, the
    ``inputs`` (path, sha256, bytes and lines of the file the results came from)
    and the ``options`` that shaped the numbers.
    """
    from passatk._provenance import provenance

    options = {"k": [int(k) for k in ks], "metric": metric, "ci": method, "level": level, "target": target, "seed": rng}
    return {
        **provenance([results.source], options),
        **score_dict(results, ks, level=level, method=method, target=target, rng=rng, metric=metric),
    }


def _metric_label(rec: Mapping, k) -> str:
    """``pass@10`` or ``pass^10``: the record's metric (pass@k when it names none) at one k."""
    return f"{rec.get('metric', 'pass@k')[:-1]}{k}"


def _metric_name(records) -> str:
    """The metric of a set of records (pass@k when they name none)."""
    first = next(iter(records.values())) if isinstance(records, Mapping) else records[0]
    return first.get("metric", "pass@k")


def score_rows(records: Mapping[str, dict]) -> list[tuple[str, str, str, str, str, bool]]:
    r"""The rows of :func:`score_table`: (model label, ``pass@k``, estimate, SE, CI, last row of the model).

    Examples
    --------
    >>> from passatk import Results
    >>> rec = score_dict(Results.from_counts(["a", "b", "c"], [10, 10, 10], [3, 0, 6]), [1])
    >>> score_rows({"m": rec})
    [('m\n3 problems, 30 samples', 'pass@1', '0.3000', '0.1732', '[0.0000, 1.0000]', True)]
    """
    rows = []
    for name, rec in records.items():
        counts = f"{rec['problems']} problem{'s' if rec['problems'] != 1 else ''}, {rec['samples']} samples"
        items = list(rec["pass_at_k"].items())
        labels = [name, counts] if len(items) > 1 else [f"{name}\n{counts}"]
        for i, (k, e) in enumerate(items):
            se = "-" if e["se"] is None else f"{e['se']:.4f}"
            ci = "-" if e["ci"] is None else f"[{e['ci'][0]:.4f}, {e['ci'][1]:.4f}]"
            label = _metric_label(rec, k)
            rows.append((labels[i] if i < len(labels) else "", label, f"{e['estimate']:.4f}", se, ci, i == len(items) - 1))
    return rows


def score_table(records: Mapping[str, dict]):
    """A rich table: one section per model, one row per k (readable at any terminal width)."""
    from rich.table import Table

    first = next(iter(records.values()))
    title = f"{_metric_name(records)} (unbiased estimator)"
    if "level" in first:
        title += f", standard error and {first['level']:.0%} CI ({first['method']}, {first['target']})"
    table = Table(title=title, title_justify="left")
    table.add_column("model", overflow="fold")
    table.add_column("k", no_wrap=True)
    table.add_column("estimate", justify="right", no_wrap=True)
    table.add_column("± SE", justify="right", no_wrap=True)
    table.add_column("CI" if "level" not in first else f"{first['level']:.0%} CI", justify="right", no_wrap=True)
    for *cells, last in score_rows(records):
        table.add_row(*cells, end_section=last)
    return table


def _p_text(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


#: Marks a p-value from McNemar's exact test in :func:`compare_table`.
MCNEMAR_MARK = "*"


def _has_holm(records: Sequence[dict]) -> bool:
    return any("p_value_holm" in e for rec in records for e in rec["pass_at_k"].values())


def compare_rows(records: Sequence[dict], labels: Mapping[str, str] | None = None) -> list[tuple[list[str], bool]]:
    """The rows of :func:`compare_table`, each with whether it ends a pair's section.

    Columns: the pair (first row of a pair only; each model by its label in
    ``labels`` when given, see :func:`model_labels`), k, difference ± SE, CI, p
    (marked :data:`MCNEMAR_MARK` when McNemar's exact test gave it), Holm's p
    when any record has it, the unpaired SE and the correlation.
    """
    holm = _has_holm(records)
    labels = labels or {}
    rows = []
    for rec in records:
        for i, (k, e) in enumerate(rec["pass_at_k"].items()):
            a, b = labels.get(rec["a"], rec["a"]), labels.get(rec["b"], rec["b"])
            pair = f"{a}\n- {b}\n({rec['problems']} shared)" if i == 0 else ""
            mark = MCNEMAR_MARK if e["test"] == "McNemar exact" else ""
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
            rows.append((row, i == len(rec["pass_at_k"]) - 1))
    return rows


def compare_table(records: Sequence[dict], labels: Mapping[str, str] | None = None):
    """A rich table of :meth:`passatk.Comparison.to_dict` records: one row per pair and k (models by ``labels``)."""
    from rich.table import Table

    level = records[0]["level"]
    table = Table(
        title=("" if _metric_name(records) == "pass@k" else f"{_metric_name(records)}: ")
        + f"A - B on shared problems ± paired SE, {level:.0%} CI (t); {MCNEMAR_MARK} = McNemar exact",
        title_justify="left",
    )
    table.add_column("A - B")
    holm = ("p Holm",) if _has_holm(records) else ()
    for col in ("k", "diff ± SE", f"{level:.0%} CI", "p") + holm + ("unpaired SE", "corr"):  # fits 80 columns
        table.add_column(col, justify="right")
    for row, last in compare_rows(records, labels):
        table.add_row(*row, end_section=last)
    return table


def excluded_lines(records: Sequence[dict], shown: int = 5) -> list[str]:
    """One note per model of a comparison with problems the other lacks (they were left out).

    Examples
    --------
    >>> excluded_lines([{"a": "A", "b": "B", "only_in_a": ["p4"], "only_in_b": []}])
    ['note: 1 problem(s) only in A (p4): excluded from A - B.']
    """
    lines = []
    from passatk._order import natural_sorted

    for rec in records:
        for side in ("a", "b"):
            ids = natural_sorted(rec[f"only_in_{side}"])
            if ids:
                listed = ", ".join(ids[:shown]) + (", ..." if len(ids) > shown else "")
                lines.append(
                    f"note: {len(ids)} problem(s) only in {rec[side]} ({listed}): excluded from {rec['a']} - {rec['b']}."
                )
    return lines


def curve_table(result, labels: Mapping[str, str] | None = None):
    """A rich table of a :class:`~passatk.curves.CurvesResult`: one row per k, one column per model.

    Cells are ``estimate [low, high]``; model-based values beyond n are
    marked with ``*`` and explained in the caption.  Columns are headed by
    each model's label in ``labels`` when given (see :func:`model_labels`).
    """
    from rich.table import Table

    first = next(iter(result.summaries.values()))
    level = int(round(100 * first.level))
    table = Table(
        title=f"{first.metric} curve (estimate [{level}% CI])",
        title_justify="left",
        caption="* model-based beyond n (fitted law of p across problems; not an unbiased estimate)"
        if result.extrapolations
        else None,
        caption_justify="left",
    )
    table.add_column("k", justify="right")
    for name in result.summaries:
        table.add_column((labels or {}).get(name, name), justify="right")
    for k, row in curve_cells(result).items():
        table.add_row(str(k), *(row.get(name, "") for name in result.summaries))
    return table


def curve_cells(result) -> dict[int, dict[str, str]]:
    """The cells of :func:`curve_table`: ``{k: {model: "estimate [low, high]"}}``, k increasing.

    Examples
    --------
    >>> from passatk import Results, curves
    >>> r = Results.from_counts(["a", "b", "c"], [4, 4, 4], [4, 2, 0], name="m")
    >>> curve_cells(curves(r))[1]
    {'m': '0.5000 [0.0000, 1.0000]'}
    """
    cells: dict[int, dict[str, str]] = {}
    for name, s in result.summaries.items():
        for k, e, lo, hi in zip(s.ks, s.estimate, s.ci.low, s.ci.high):
            cells.setdefault(int(k), {})[name] = f"{e:.4f} [{lo:.4f}, {hi:.4f}]"
    for name, ext in result.extrapolations.items():
        ci = ext.confidence_interval(result.summaries[name].level)
        for k, e, lo, hi in zip(ext.ks, ext.estimate, ci.low, ci.high):
            cells.setdefault(int(k), {})[name] = f"*{e:.4f} [{lo:.4f}, {hi:.4f}]"
    return {k: cells[k] for k in sorted(cells)}


def crossover_lines(crossovers: Iterable) -> list[str]:
    """One sentence per :class:`~passatk.curves.CrossoverResult` about where (and whether) the curves cross."""
    lines = []
    for x in crossovers:
        a, b = x.models
        level = int(round(100 * x.level))
        if x.leader_at_small_k is None:
            lines.append(f"{a} vs {b}: identical curves for k <= {x.ks.max()}.")
            continue
        other = b if x.leader_at_small_k == a else a
        hi = "beyond the largest k" if not np.isfinite(x.ci.high) else f"{x.ci.high:g}"
        lo = "beyond the largest k" if not np.isfinite(x.ci.low) else f"{x.ci.low:g}"
        if x.k_cross is None:
            lines.append(
                f"{x.leader_at_small_k} leads {other} at k = {x.ks.min()} and stays ahead for every k <= {x.ks.max()} "
                f"(a crossing in {100 * x.share_crossing:.0f}% of bootstrap replicates; {x.problems} shared problems)."
            )
        else:
            lines.append(
                f"{x.leader_at_small_k} leads {other} at k = {x.ks.min()}; {other} overtakes it at k = {x.k_cross} "
                f"({level}% CI: {lo} to {hi}; a crossing in {100 * x.share_crossing:.0f}% of bootstrap "
                f"replicates; {x.problems} shared problems)."
            )
    return lines


def band_lines(result) -> list[str]:
    """One sentence per simultaneous band of a :class:`~passatk.curves.CurvesResult`: its width, and where a difference is supported.

    Examples
    --------
    >>> from passatk import Results, curves
    >>> ids = [f"p{i}" for i in range(12)]
    >>> a = Results.from_counts(ids, [4] * 12, [4, 4, 4, 3, 4, 3, 2, 4, 3, 1, 2, 0], name="A")
    >>> b = Results.from_counts(ids, [4] * 12, [1, 0, 2, 0, 1, 0, 0, 2, 1, 0, 1, 0], name="B")
    >>> band_lines(curves({"A": a, "B": b}))[-1]
    'A - B: the 95% band over k = 1..4 excludes 0 at every k (supported jointly at k = 1, 2, 4; 12 shared problems).'
    """
    lines = []
    for name, b in result.bands.items():
        lines.append(
            f"{name}: the {b.level:.0%} band holds for all k = {b.ks[0]}..{b.ks[-1]} at once "
            f"(estimate ± {b.critical_value:.2f} SE; the pointwise intervals use ± {_pointwise_crit(b):.2f} SE)."
        )
    for b in result.difference_bands:
        a_name, b_name = b.models
        head = f"{a_name} - {b_name}: the {b.level:.0%} band over k = {b.ks[0]}..{b.ks[-1]}"
        tail = f"{b.problems} shared problems"
        if not b.supported_ks:
            lines.append(f"{head} contains 0 at every k (no k at which they differ jointly; {tail}).")
        else:
            which = ", ".join(map(str, b.supported_ks))
            where = "every k" if len(b.supported_ks) == len(b.ks) else f"k = {which}"
            lines.append(f"{head} excludes 0 at {where} (supported jointly at k = {which}; {tail}).")
    return lines


def _pointwise_crit(band) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.5 + band.level / 2, (band.clusters or band.problems) - 1))


def plan_rows(plan) -> list[tuple[str, str, str]]:
    """The rows of :func:`plan_table`: samples per problem, problems, samples per model.

    Examples
    --------
    >>> from passatk import plan_comparison
    >>> plan_rows(plan_comparison(0.03, k=1, samples_per_problem=[1, 10]))
    [('1', '4906', '4,906'), ('10', '982', '9,820')]
    """
    return [(str(n), str(m), f"{n * m:,}") for n, m in zip(plan.samples_per_problem, plan.problems.tolist())]


def plan_table(plan):
    """A rich table of a :class:`~passatk.PlanResult`: problems needed for each number of samples per problem."""
    from rich.table import Table

    label = f"{plan.metric[:-1]}{plan.k}"
    title = f"detect a {label} difference of {plan.delta:g} (paired, alpha {plan.alpha:g}, power {plan.power:.0%})"
    table = Table(title=title, title_justify="left")
    for col in ("samples per problem", "problems", "samples per model"):
        table.add_column(col, justify="right")
    for row in plan_rows(plan):
        table.add_row(*row)
    return table


def plan_lines(plan) -> list[str]:
    """Where the plan's variance components came from, and the floor no number of samples gets below."""
    return [
        f"variance components: {plan.source}; omega^2={plan.omega2:.4g}, sigma^2 A/B={plan.sigma2_a:.4g}/{plan.sigma2_b:.4g}.",
        f"no n gets below {plan.problems_floor} problems (the between-problem part alone).",
    ]


def evaluation_lines(result) -> list[str]:
    """What ``passatk evaluate`` says on stderr after a run: the sandbox, then the counts and where the results are."""
    counts = ", ".join(f"{n} {s}" for s, n in sorted(result.status_counts.items()))
    env = getattr(result, "environment", None)
    where = []
    if env is not None:
        shown = ", ".join(env.distributions[:4]) + (
            f" and {len(env.distributions) - 4} more" if len(env.distributions) > 4 else ""
        )
        where = [
            f"environment: {env.name} (Python {env.version.split()[0]} at {env.python}; "
            f"{shown or 'standard library only'}; sha256 {env.digest[:12]})"
        ]
    return [
        result.sandbox.describe(),
        *where,
        f"{result.samples} samples ({result.programs} distinct programs; {result.executed} run now, "
        f"{result.reused} from the journal) in {result.seconds:.1f} s: {counts}. Results: {result.path}",
    ]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table (cells escaped, line breaks as ``<br>``).

    >>> print(markdown_table(["k", "estimate"], [["pass@1", "0.3000"]]))
    | k | estimate |
    |---|---|
    | pass@1 | 0.3000 |
    """
    lines = ["| " + " | ".join(map(_md_cell, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_md_cell(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def score_markdown(records: Mapping[str, dict]) -> str:
    """``passatk score --format markdown``: the rows of :func:`score_table`, as Markdown."""
    first = next(iter(records.values()))
    title = f"**{_metric_name(records)}** (unbiased), ± SE and {first['level']:.0%} CI ({first['method']}, {first['target']})"
    table = markdown_table(["model", "k", "estimate", "± SE", f"{first['level']:.0%} CI"], (r[:5] for r in score_rows(records)))
    return f"{title}\n\n{table}\n"


def compare_markdown(records: Sequence[dict]) -> str:
    """``passatk compare --format markdown``: the rows of :func:`compare_table`, as Markdown."""
    level = records[0]["level"]
    holm = ["p Holm"] if _has_holm(records) else []
    header = ["A - B", "k", "difference", f"{level:.0%} CI", "p", *holm, "unpaired SE", "corr"]
    metric = _metric_name(records)
    title = f"**A - B** on shared problems ± paired SE, {level:.0%} CI (t); {MCNEMAR_MARK} = McNemar exact"
    if metric != "pass@k":
        title = f"**{metric}**: {title}"
    notes = "".join(f"\n{line}\n" for line in excluded_lines(records))
    return f"{title}\n\n{markdown_table(header, (row for row, _ in compare_rows(records)))}\n{notes}"


def model_labels(names: Iterable[str], width: int = SHORT_NAME) -> dict[str, str]:
    """Short labels for tables with a row or column per model: the names when all are short, else A, B, C, ...

    Long names (a Hugging Face id is often 30 characters or more) would be cut
    or folded at 80 columns; letters with a :func:`legend_lines` legend keep
    the table readable.

    Examples
    --------
    >>> model_labels(["base", "rl"])
    {'base': 'base', 'rl': 'rl'}
    >>> model_labels(["deepseek-ai_DeepSeek-Prover-V2-7B", "rl"])
    {'deepseek-ai_DeepSeek-Prover-V2-7B': 'A', 'rl': 'B'}
    """
    names = list(dict.fromkeys(names))
    if all(len(name) <= width for name in names):
        return {name: name for name in names}
    letters = [chr(ord("A") + i % 26) + ("" if i < 26 else str(i // 26)) for i in range(len(names))]
    return dict(zip(names, letters))


def legend_lines(labels: Mapping[str, str]) -> list[str]:
    """``A = full name`` for each model shown by a label other than its name (nothing when none is).

    >>> legend_lines({"deepseek-ai_DeepSeek-Prover-V2-7B": "A", "rl": "B"})
    ['A = deepseek-ai_DeepSeek-Prover-V2-7B', 'B = rl']
    """
    if all(label == name for name, label in labels.items()):
        return []
    return [f"{label} = {name}" for name, label in labels.items()]


def score_warnings(records: Mapping[str, dict]) -> list[str]:
    """Where the intervals of ``passatk score`` records deserve a warning, one sentence each.

    Fewer than :data:`FEW_PROBLEMS` problems (population target), pass@k
    pinned at 0 or 1, and a standard error of 0 or an interval of zero width.

    Examples
    --------
    >>> from passatk import Results
    >>> score_warnings({"m": score_dict(Results.from_counts(["a", "b"], [4, 4], [4, 4]), [1])})  # doctest: +NORMALIZE_WHITESPACE
    ['warning: m: only 2 problems; an interval over fewer than 30 problems is rough (in the coverage study a 95% t
      interval over 20 problems covers a median of 90%): read it as a guide, or use --ci auto.',
     'warning: m: pass@1 = 1.0000 is pinned at 1 and its SE is 0 (every problem gives the same value): the interval
      [1.0000, 1.0000] has zero width and claims a certainty the data do not give. Use --ci wilson, which keeps its
      width at the edge.']
    """
    out = []
    for name, rec in records.items():
        label = rec.get("metric", "pass@k")
        problems = rec.get("problems", 0)
        if rec.get("target", "population") == "population" and problems < FEW_PROBLEMS:
            out.append(
                f"warning: {name}: only {problems} problem{'s' if problems != 1 else ''}; an interval over fewer than "
                f"{FEW_PROBLEMS} problems is rough (in the coverage study a 95% t interval over 20 problems covers a "
                "median of 90%): read it as a guide, or use --ci auto."
            )
        for k, e in rec["pass_at_k"].items():
            metric = f"{label[:-1]}{k}"
            est, se, ci = e["estimate"], e.get("se"), e.get("ci")
            zero = se == 0 or (ci is not None and ci[0] == ci[1])
            pinned = est <= PINNED or est >= 1 - PINNED
            advice = (
                "" if e.get("method", rec.get("method")) == "wilson" else " Use --ci wilson, which keeps its width at the edge."
            )
            if zero:
                why = "every problem gives the same value" if se == 0 else "the interval method gave a point"
                where = f" is pinned at {'0' if est <= 0.5 else '1'} and" if pinned else ""
                shown = f"[{ci[0]:.4f}, {ci[1]:.4f}]" if ci is not None else "-"
                out.append(
                    f"warning: {name}: {metric} = {est:.4f}{where} its SE is {0 if se == 0 else f'{se:.4f}'} ({why}): "
                    f"the interval {shown} has zero width and claims a certainty the data do not give."
                    + (advice if pinned or se == 0 else "")
                )
            elif pinned:
                out.append(
                    f"warning: {name}: {metric} = {est:.4f} is pinned at {'0' if est <= 0.5 else '1'}: the spread over "
                    f"problems is nearly zero, so spread-based intervals are too narrow.{advice}"
                )
    return out


def compare_warnings(records: Sequence[dict]) -> list[str]:
    """Where the paired comparisons of ``passatk compare`` records deserve a warning, one sentence each.

    Fewer than :data:`FEW_PROBLEMS` shared problems, and a paired standard
    error of 0 (the two models' per-problem values differ by the same amount
    everywhere, usually not at all): its interval has zero width.

    >>> compare_warnings([{"a": "A", "b": "B", "problems": 40,
    ...     "pass_at_k": {"1": {"difference": 0.0, "se": 0.0, "ci": [0.0, 0.0]}}}])  # doctest: +NORMALIZE_WHITESPACE
    ['warning: A - B at k=1: the paired SE is 0 (the difference is +0.0000 on every shared problem): the interval
      [+0.0000, +0.0000] has zero width; no test can be read from it.']
    """
    out = []
    for rec in records:
        pair = f"{rec['a']} - {rec['b']}"
        if rec["problems"] < FEW_PROBLEMS:
            out.append(
                f"warning: {pair}: only {rec['problems']} shared problems; a paired interval over fewer than "
                f"{FEW_PROBLEMS} problems is rough: read it as a guide."
            )
        for k, e in rec["pass_at_k"].items():
            ci = e.get("ci")
            if e.get("se") == 0 or (ci is not None and ci[0] == ci[1]):
                shown = f"[{ci[0]:+.4f}, {ci[1]:+.4f}]" if ci is not None else "-"
                out.append(
                    f"warning: {pair} at k={k}: the paired SE is 0 (the difference is {e['difference']:+.4f} on every "
                    f"shared problem): the interval {shown} has zero width; no test can be read from it."
                )
    return out


def crossover_warnings(crossovers: Iterable) -> list[str]:
    """A warning for each crossover whose interval covers every k: the data cannot say whether or where the curves cross.

    >>> from types import SimpleNamespace
    >>> from passatk.uncertainty import ConfidenceInterval
    >>> x = SimpleNamespace(models=("A", "B"), ks=np.arange(1, 9), level=0.95, share_crossing=0.37,
    ...                     ci=ConfidenceInterval(1.0, float("inf")))
    >>> crossover_warnings([x])  # doctest: +NORMALIZE_WHITESPACE
    ['warning: A vs B: the 95% interval of the crossover covers every k (from 1 to beyond the largest k, 8; a
      crossing in 37% of bootstrap replicates): these data cannot say whether or where the curves cross.']
    """
    out = []
    for x in crossovers:
        lo, hi = float(x.ci.low), float(x.ci.high)
        kmin, kmax = int(np.min(x.ks)), int(np.max(x.ks))
        if not (np.isfinite(lo) and lo <= kmin and hi >= kmax):
            continue
        upper = f"beyond the largest k, {kmax}" if not np.isfinite(hi) else f"{hi:g}"
        out.append(
            f"warning: {x.models[0]} vs {x.models[1]}: the {int(round(100 * x.level))}% interval of the crossover covers "
            f"every k (from {lo:g} to {upper}; a crossing in {100 * x.share_crossing:.0f}% of bootstrap replicates): "
            "these data cannot say whether or where the curves cross."
        )
    return out
