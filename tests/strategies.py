"""Hypothesis strategies shared by the test modules (one definition each).

Import them as ``from strategies import nck`` (``tests/`` is on ``sys.path``
under pytest's default import mode).
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from passatk import Results


@st.composite
def nck(draw, max_n: int = 300, *, usable: bool = False):
    """A valid (n, c, k) triple: 1 <= k <= n, 0 <= c <= n; with ``usable``, 2k <= n (variance estimable)."""
    n = draw(st.integers(2 if usable else 1, max_n))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n // 2 if usable else n))
    return n, c, k


@st.composite
def nck_large(draw, max_k: int = 300):
    """(n, c, k) with n log-uniform up to 10**9, k <= min(n, max_k), and c often at an edge (0, 1, k, n - k, n)."""
    n = draw(st.integers(0, 9).flatmap(lambda e: st.integers(1, 10**e)))
    k = draw(st.integers(1, min(n, max_k)))
    edges = sorted({x for x in (0, 1, 2, k - 1, k, n - k, n - k + 1, n - 1, n) if 0 <= x <= n})
    c = draw(st.one_of(st.sampled_from(edges), st.integers(0, n), st.integers(0, min(n, 3 * k))))
    return n, c, k


@st.composite
def binary_groups(draw, estimator: str = "unbiased"):
    """One group of 0/1 rewards and a k that the RL estimator accepts."""
    low = {"loo": 2, "loo_minus_one": 2}.get(estimator, 1)
    n = draw(st.integers(low, 14))
    v = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    k = draw(st.integers(1, n - 1 if estimator == "loo" else n))
    return v, k


@st.composite
def benchmarks(draw, min_size: int = 2, max_size: int = 40):
    """A benchmark and a k: ``min_size``-``max_size`` problems, n in 2..30 each, any c, and 2k <= min n."""
    size = draw(st.integers(min_size, max_size))
    n = draw(st.lists(st.integers(2, 30), min_size=size, max_size=size))
    c = [draw(st.integers(0, m)) for m in n]
    k = draw(st.integers(1, min(n) // 2))
    return Results.from_counts([f"t{i}" for i in range(size)], n, c), k


@st.composite
def model_pairs(draw, max_size: int = 30):
    """Two models on (mostly) the same problems, and a k valid for both: ``(a, b, k)``.

    Each model may have a few problems of its own, so the shared-problem
    filter is exercised too; at least 2 problems are shared.
    """
    shared = draw(st.integers(2, max_size))
    extra_a, extra_b = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    k_max = draw(st.integers(1, 8))

    def model(ids, name):
        n = [draw(st.integers(k_max, 20)) for _ in ids]
        c = [draw(st.integers(0, m)) for m in n]
        return Results.from_counts(ids, n, c, name=name)

    common = [f"p{i}" for i in range(shared)]
    a = model(common + [f"a{i}" for i in range(extra_a)], "A")
    b = model(common + [f"b{i}" for i in range(extra_b)], "B")
    return a, b, draw(st.integers(1, k_max))


@st.composite
def bias_cases(draw):
    """(n, k, p) with p a decimal of at most three places, k possibly above n."""
    n = draw(st.integers(1, 30))
    k = draw(st.integers(1, 40))
    p = Fraction(draw(st.integers(0, 1000)), 1000)
    return n, k, p


@st.composite
def outcome_tables(draw, max_problems: int = 12, max_n: int = 12):
    """``{task_id: [bool, ...]}`` with 1..max_problems problems of 1..max_n samples each."""
    size = draw(st.integers(1, max_problems))
    return {f"task/{i}": draw(st.lists(st.booleans(), min_size=1, max_size=max_n)) for i in range(size)}
