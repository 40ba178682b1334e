"""Tests of the crossing k of two pass@k curves (passatk.crossover) and of the curves (passatk.curves)."""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from passatk import Results, crossover, curves, pass_at_k, summarize
from passatk._validation import DEFAULT_SEED
from passatk.curves import log2_ks
from passatk.report import crossover_lines


def exact_mean(n: int, cs, k: int) -> Fraction:
    """Benchmark pass@k from math.comb, independent of the package."""
    return sum(1 - Fraction(comb(n - c, k), comb(n, k)) for c in cs) / len(cs)


FOCUSED = [16, 16, 14, 15, 0, 0, 0, 0]  # sure of half the problems, blind to the rest
DIVERSE = [3, 4, 2, 2, 2, 1, 3, 0]  # rarely right, but on almost every problem


def pair(copies: int = 1):
    ids = [f"t{i}" for i in range(8 * copies)]
    a = Results.from_counts(ids, [16] * len(ids), FOCUSED * copies, name="focused")
    b = Results.from_counts(ids, [16] * len(ids), DIVERSE * copies, name="diverse")
    return a, b


class TestCrossover:
    def test_difference_and_crossing_match_exact_arithmetic(self):
        """The difference curve equals exact fractions at every k, and k_cross is the first k where its sign flips."""
        a, b = pair()
        x = crossover(a, b, n_resamples=50, rng=0)
        exact = [exact_mean(16, FOCUSED, k) - exact_mean(16, DIVERSE, k) for k in range(1, 17)]
        np.testing.assert_allclose(x.difference, [float(e) for e in exact], rtol=0, atol=1e-14)
        first = next(k for k, e in zip(range(1, 17), exact) if e < 0)
        assert (x.leader_at_small_k, x.k_cross, first) == ("focused", 5, 5)
        assert x.ks.tolist() == list(range(1, 17)) and x.problems == 8

    def test_interval_tightens_with_more_problems(self):
        """With the same pattern on 25x the problems, every replicate crosses and the interval is within [4, 6]."""
        x = crossover(*pair(copies=25), n_resamples=400, rng=1)
        assert x.share_crossing == 1.0
        assert 4 <= x.ci.low <= x.k_cross <= x.ci.high <= 6
        assert np.isin(x.bootstrap_distribution, np.arange(1, 17)).all()

    def test_no_crossing_is_reported_honestly(self):
        """A model ahead at every k gives k_cross None, an interval reaching beyond the grid, and null in JSON."""
        ids = list("abcdef")
        strong = Results.from_counts(ids, [10] * 6, [9, 8, 7, 6, 5, 4], name="strong")
        weak = Results.from_counts(ids, [10] * 6, [1, 1, 0, 0, 0, 0], name="weak")
        x = crossover(strong, weak, n_resamples=200, rng=0)
        assert x.leader_at_small_k == "strong" and x.k_cross is None and x.share_crossing == 0.0
        assert np.isinf(x.ci.low) and np.isinf(x.ci.high)
        d = json.loads(json.dumps(x.to_dict()))
        assert d["k_cross"] is None and d["ci"] == [None, None] and d["k_max"] == 10

    def test_reproducible_by_default_and_rng_changes_it(self):
        """Two calls with the defaults give the same share_crossing and interval (seed DEFAULT_SEED); another rng changes them."""
        a, b = pair()
        x, y = crossover(a, b), crossover(a, b)
        assert (x.share_crossing, x.ci) == (y.share_crossing, y.ci)
        np.testing.assert_array_equal(x.bootstrap_distribution, y.bootstrap_distribution)
        np.testing.assert_array_equal(crossover(a, b, rng=DEFAULT_SEED).bootstrap_distribution, x.bootstrap_distribution)
        other = crossover(a, b, rng=1)
        assert other.share_crossing != x.share_crossing
        np.testing.assert_array_equal(
            crossover(a, b, rng=np.random.default_rng(1)).bootstrap_distribution, other.bootstrap_distribution
        )

    def test_identical_models_have_no_leader(self):
        """Two identical curves: no leader, no crossing."""
        a, _ = pair()
        x = crossover(a, a, n_resamples=20, rng=0)
        assert x.leader_at_small_k is None and x.k_cross is None

    def test_paired_bootstrap_resamples_problems_together(self):
        """Replicate k's equal a direct recomputation with the same generator draws (problems resampled jointly)."""
        a, b = pair()
        x = crossover(a, b, [1, 2, 4, 8, 16], n_resamples=30, rng=7)
        g = np.random.default_rng(7)
        ks = [1, 2, 4, 8, 16]
        for rep in range(30):
            idx = g.integers(0, 8, 8)
            d = (pass_at_k(16, np.array(FOCUSED)[idx], ks) - pass_at_k(16, np.array(DIVERSE)[idx], ks)).mean(axis=0)
            behind = np.flatnonzero(d < 0)
            assert x.bootstrap_distribution[rep] == (ks[behind[0]] if behind.size else np.inf)

    def test_only_shared_problems_are_used(self):
        """Problems present in one model only are left out of the paired comparison."""
        a, b = pair()
        extra = Results.from_counts(list(a.task_ids) + ["only_a"], [16] * 9, FOCUSED + [16], name="focused")
        x, y = crossover(extra, b, n_resamples=20, rng=0), crossover(a, b, n_resamples=20, rng=0)
        assert x.problems == 8 and np.array_equal(x.difference, y.difference)

    @pytest.mark.parametrize(
        ("args", "kwargs", "error", "match"),
        [
            ((None,), {}, TypeError, "`a` must be a passatk.Results"),
            (("other",), {}, ValueError, r"share 0 problem\(s\); a paired comparison needs at least 1"),
            ((), {"ks": [1, 17]}, ValueError, "pass@17 cannot be estimated without bias"),
            ((), {"level": 1.5}, ValueError, "`level` must be a number strictly between 0 and 1"),
            ((), {"n_resamples": 0}, ValueError, "`n_resamples` must be an integer >= 2; got n_resamples=0"),
        ],
    )
    def test_bad_input(self, args, kwargs, error, match):
        """Bad arguments raise with a message naming them."""
        a, b = pair()
        if args == (None,):
            a = None
        elif args == ("other",):
            b = Results.from_counts(["zz"], [16], [1])
        with pytest.raises(error, match=match):
            crossover(a, b, **kwargs)


class TestCurves:
    def test_curve_values_equal_pass_at_k_at_each_k(self):
        """Each model's curve is the mean of pass_at_k over problems at every k on the grid (exact fractions)."""
        a, b = pair()
        out = curves({"focused": a, "diverse": b})
        for name, cs in (("focused", FOCUSED), ("diverse", DIVERSE)):
            s = out.summaries[name]
            assert s.ks == (1, 2, 4, 8, 16)
            np.testing.assert_allclose(s.estimate, [float(exact_mean(16, cs, k)) for k in s.ks], rtol=1e-14)
            np.testing.assert_allclose(s.estimate, pass_at_k(16, cs, list(s.ks)).mean(axis=0), rtol=0, atol=0)

    def test_bands_come_from_summarize(self):
        """The bands are exactly those of passatk.summarize at the requested level."""
        a, _ = pair()
        out = curves(a, [1, 3, 9], level=0.8)
        ref = summarize(a, [1, 3, 9], level=0.8, rng=0)
        np.testing.assert_array_equal(out.summaries["focused"].ci.low, ref.ci.low)
        np.testing.assert_array_equal(out.summaries["focused"].ci.high, ref.ci.high)

    def test_extrapolation_is_separate_and_beyond_n(self):
        """--extrapolate-to adds model-based points only above each model's n, on a log2 grid ending at the target."""
        a, b = pair(copies=3)
        out = curves({"focused": a, "diverse": b}, extrapolate_to=100)
        assert out.extrapolations["focused"].ks.tolist() == [32, 64, 100]
        d = json.loads(json.dumps(out.to_dict()))
        assert d["models"]["diverse"]["beyond_n"]["model_based"] is True
        assert list(d["models"]["diverse"]["pass_at_k"]) == ["1", "2", "4", "8", "16"]
        assert len(d["crossovers"]) == 1 and d["crossovers"][0]["k_cross"] == 5

    def test_reproducible_by_default(self):
        """curves() with the defaults gives the same crossings on every call, and the same as rng=DEFAULT_SEED."""
        a, b = pair()
        runs = [curves({"a": a, "b": b}).crossovers[0] for _ in range(2)] + [
            curves({"a": a, "b": b}, rng=DEFAULT_SEED).crossovers[0]
        ]
        assert len({(x.share_crossing, x.ci.low, x.ci.high) for x in runs}) == 1
        assert curves({"a": a, "b": b}, rng=1).crossovers[0].share_crossing != runs[0].share_crossing

    def test_models_without_shared_problems_have_no_crossover(self):
        """Curves of two different benchmarks are drawn side by side, with no pair compared."""
        a, _ = pair()
        other = Results.from_counts(["x", "y", "z"], [4, 4, 4], [1, 2, 3], name="other")
        out = curves({"focused": a, "other": other})
        assert out.crossovers == [] and crossover_lines(out.crossovers) == []
        assert out.summaries["other"].ks == (1, 2, 4)

    def test_crossover_sentences(self):
        """The sentence names leader, challenger and crossing k, or says there is none."""
        a, b = pair(copies=5)
        (line,) = crossover_lines(curves({"focused": a, "diverse": b}).crossovers)
        assert line.startswith("focused leads diverse at k = 1; diverse overtakes it at k = 5 (95% CI: ")

    @pytest.mark.parametrize(
        ("kwargs", "error", "match"),
        [
            ({"extrapolate_to": 16}, ValueError, "`extrapolate_to` must be an integer above the samples per problem"),
            ({"extrapolate_to": 50.5}, TypeError, "got extrapolate_to=50.5"),
            ({"ks": [1, 32]}, ValueError, "pass@32 cannot be estimated without bias"),
        ],
    )
    def test_bad_input(self, kwargs, error, match):
        """Asking to extrapolate below n, or for an unbiased k above n, is an error naming the value."""
        a, _ = pair()
        with pytest.raises(error, match=match):
            curves(a, **kwargs)


@pytest.mark.parametrize(
    ("k_max", "k_min", "expected"),
    [
        (1, 1, [1]),
        (2, 1, [1, 2]),
        (24, 1, [1, 2, 4, 8, 16, 24]),
        (64, 1, [1, 2, 4, 8, 16, 32, 64]),
        (1000, 101, [128, 256, 512, 1000]),
    ],
)
def test_log2_grid(k_max, k_min, expected):
    """Powers of two in [k_min, k_max) and k_max itself."""
    assert log2_ks(k_max, k_min) == expected
