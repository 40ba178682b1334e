"""Speed of passatk.rl.pass_at_k_weights against a per-group loop over the PKPO listing.

What people use today to get pass@k-aware rewards is the numpy listing in
Walder & Karkhanis (arXiv:2505.15201, Appendix B), called once per prompt
group.  ``listing_sloo_minus_one`` below follows that listing's computation
step by step (each weight a product of ratios, one group at a time), except
that it works in float instead of truncating integer rewards.

Run:  python benchmarks/bench_rl.py [--prompts 4096] [--samples 64] [--k 8]

Prints, for 0/1 and for real rewards, the time per batch of the loop, of
passatk on numpy and of passatk on torch CPU (when torch is installed), the
speed-ups, and the largest difference between the results.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from passatk.rl import pass_at_k_weights


# --------------------------------------------------------------------------- #
# the reference: PKPO's listing, one group at a time
# --------------------------------------------------------------------------- #
def _entry(n: int, k: int, i: int, j: int) -> float:
    """Entry (i, j) of PKPO's normalised weight matrix (0-based sorted positions), by a product of ratios."""
    if i == j and i >= k - 1:
        return k / (n - k + 1) * float(np.prod(np.arange(i - k + 2, i + 1) / np.arange(n - k + 2, n + 1)))
    if j > i and j >= k - 1 and k >= 2:
        ratios = np.arange(j - k + 2, j) / np.arange(n - k + 2, n)
        return k / (n - k + 1) * (k - 1) / n * float(np.prod(ratios))
    return 0.0


def _diagonal(n: int, k: int) -> np.ndarray:
    return np.array([_entry(n, k, i, i) for i in range(n)])


def _steps(n: int, k: int) -> np.ndarray:
    """Differences between neighbouring entries that the listing accumulates (its ``_deltas``)."""
    return np.array([_entry(n - 1, k, i, i + 1) - _entry(n - 1, k, i + 1, i + 1) for i in range(n - 2)])


def _in_sorted_order(fn, g, k):
    order = np.argsort(g)
    out = np.zeros(g.shape)
    out[order] = fn(g[order], k)
    return out


def _s_sorted(x, k):
    n = len(x)
    c = x * _diagonal(n, k)
    c[: n - 1] += x[1:] * _steps(n + 1, k)
    return np.cumsum(c[::-1])[::-1]


def _others_sorted(x, k):
    """k times the max@k estimate of the other n - 1 samples, for each sample (the listing's ``_b``)."""
    n = len(x)
    w = _diagonal(n - 1, k) * np.arange(1, n)
    w[1:] += _steps(n, k) * np.arange(1, n - 1)
    first = np.array([(w * x[1:]).sum()])
    return np.cumsum(np.concatenate((first, (x[:-1] - x[1:]) * w)))


def listing_sloo_minus_one(g: np.ndarray, k: int) -> np.ndarray:
    """PKPO's s^(loo-1) for one group (k >= 2), as the listing computes it."""
    g = np.asarray(g, dtype=float)
    s = _in_sorted_order(_s_sorted, g, k)
    return s - _in_sorted_order(_others_sorted, g, k - 1) * k / (k - 1) / len(g)


def listing_batch(rewards: np.ndarray, k: int) -> np.ndarray:
    return np.stack([listing_sloo_minus_one(row, k) for row in rewards])


# --------------------------------------------------------------------------- #
def best_of(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=4096)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None

    rng = np.random.default_rng(0)
    shape = (args.prompts, args.samples)
    batches = {
        "0/1 rewards": (rng.random(shape) < rng.random((args.prompts, 1))).astype(np.float64),
        "real rewards": rng.random(shape),
    }
    print(
        f"pass@k weights, estimator loo_minus_one, k={args.k}, (prompts, samples)={shape}, "
        f"best of {args.repeats}; torch on 1 CPU thread"
    )
    print(
        f"{'rewards':<14}{'PKPO listing loop':>19}{'passatk numpy':>15}{'speed-up':>10}"
        f"{'passatk torch':>15}{'speed-up':>10}{'max |diff|':>12}"
    )
    for name, rewards in batches.items():
        t0 = time.perf_counter()
        reference = listing_batch(rewards, args.k)  # seconds: timed once
        t_loop = time.perf_counter() - t0
        t_np = best_of(lambda rewards=rewards: pass_at_k_weights(rewards, args.k), args.repeats)
        diff = np.abs(reference - pass_at_k_weights(rewards, args.k)).max()
        row = f"{name:<14}{t_loop * 1e3:>16.0f} ms{t_np * 1e3:>12.1f} ms{t_loop / t_np:>9.0f}x"
        if torch is not None:
            tensor = torch.from_numpy(rewards)
            t_torch = best_of(lambda tensor=tensor: pass_at_k_weights(tensor, args.k), args.repeats)
            diff = max(diff, np.abs(pass_at_k_weights(tensor, args.k).numpy() - reference).max())
            row += f"{t_torch * 1e3:>12.1f} ms{t_loop / t_torch:>9.0f}x"
        else:
            row += f"{'(no torch)':>25}"
        print(row + f"{diff:>12.1e}")


if __name__ == "__main__":
    main()
