"""passatk.rl on numpy: closed forms against exact arithmetic, validation, adapters, k_schedule."""

from __future__ import annotations

import inspect
import itertools
import math
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

pytest.importorskip("array_api_compat", reason="passatk.rl needs the rl extra (pip install 'passatk[rl]')")

from passatk import max_at_k, pass_at_k  # noqa: E402
from passatk.rl import (  # noqa: E402
    ESTIMATORS,
    _kernels,
    k_schedule,
    pass_at_k_weights,
    trl_pass_at_k_advantages,
    verl_advantage_estimator,
)
from strategies import binary_groups  # noqa: E402


# --------------------------------------------------------------------------- #
# exact references (Fractions and math.comb, independent of the implementation)
# --------------------------------------------------------------------------- #
def rho_exact(n: int, c: int, m: int) -> Fraction:
    """Unbiased pass@m from n samples with c correct; pass@0 = 0."""
    return 1 - Fraction(comb(n - c, m), comb(n, m))


def binary_exact(v: list[int], k: int, estimator: str) -> list[float]:
    """The note's and PKPO's binary formulas, and Chen et al.'s advantages over n, in exact arithmetic."""
    n, c = len(v), sum(v)
    out = []
    for vi in v:
        c_others = c - vi
        rho = rho_exact(n - 1, c_others, k - 1)
        w = Fraction(k, n) * (vi + (1 - vi) * rho)
        if estimator == "loo":
            w -= Fraction(k, n - 1) * rho_exact(n - 1, c_others, k)
        elif estimator == "loo_minus_one":
            w -= Fraction(k, n) * rho_exact(n - 1, c_others, max(k - 1, 1))
        elif estimator == "chen":
            mean = rho_exact(n, c, k)
            sigma = math.sqrt(mean * (1 - mean))
            fail_others = Fraction(comb(n - c - 1, k - 1), comb(n - 1, k - 1)) if vi == 0 else None
            adv = 0.0 if sigma == 0 else float((1 - mean) if vi else (1 - mean - fail_others)) / sigma
            out.append(adv / n)
            continue
        out.append(float(w))
    return out


# --------------------------------------------------------------------------- #
class TestBinaryClosedForms:
    def test_issue_test_vector_unbiased(self):
        """n = 8, c = 3, k = 4: 1/2 for a correct sample, (1/2)(31/35) = 0.442857... otherwise."""
        w = pass_at_k_weights([[1, 1, 1, 0, 0, 0, 0, 0]], 4, estimator="unbiased")[0]
        np.testing.assert_allclose(w, [0.5] * 3 + [31 / 70] * 5, rtol=1e-15)

    def test_issue_test_vector_loo_minus_one(self):
        """n = 8, c = 3, k = 4: 1/7 = 0.142857... for a correct sample, exactly 0 otherwise."""
        w = pass_at_k_weights([[0, 1, 0, 1, 0, 0, 1, 0]], 4)[0]
        np.testing.assert_allclose(w[[1, 3, 6]], 1 / 7, rtol=1e-14)
        assert (w[[0, 2, 4, 5, 7]] == 0.0).all()

    @pytest.mark.parametrize("estimator", ESTIMATORS)
    @settings(max_examples=60, deadline=None)
    @given(data=st.data())
    def test_matches_exact_arithmetic(self, estimator, data):
        """Every estimator equals its formula evaluated in Fractions with math.comb."""
        v, k = data.draw(binary_groups(estimator))
        got = pass_at_k_weights(np.array([v], dtype=bool), k, estimator=estimator)[0]
        np.testing.assert_allclose(got, binary_exact(v, k, estimator), rtol=1e-12, atol=1e-15)

    @given(groups=binary_groups())
    @example(groups=([0, 0, 0], 2))
    @example(groups=([1, 1, 1], 3))
    @example(groups=([1], 1))
    def test_unbiased_weights_sum_to_k_times_pass_at_k(self, groups):
        """sum_i w_i = k * pass@k(n, c, k): each k-subset's max is counted k times."""
        v, k = groups
        w = pass_at_k_weights([v], k, estimator="unbiased")[0]
        assert w.sum() == pytest.approx(k * pass_at_k(len(v), sum(v), k), rel=1e-12, abs=1e-15)

    @pytest.mark.parametrize("estimator", ["unbiased", "loo", "loo_minus_one"])
    @settings(max_examples=40, deadline=None)
    @given(data=st.data())
    def test_count_shortcut_equals_sorted_path(self, estimator, data):
        """The O(n) count formulas give the numbers of the general max@k path on the same 0/1 rewards."""
        v, k = data.draw(binary_groups(estimator))
        rewards = np.array([v], dtype=np.float64)
        general = _kernels.sorted_weights(np, rewards, k, estimator, "cpu")
        np.testing.assert_allclose(pass_at_k_weights(rewards, k, estimator=estimator), general, rtol=1e-12, atol=1e-15)

    def test_none_correct_and_all_correct(self):
        """None correct: all 0.  All correct: unbiased k/n; loo_minus_one 0, as the others already pass."""
        assert (pass_at_k_weights(np.zeros((2, 6)), 3, estimator="unbiased") == 0).all()
        assert (pass_at_k_weights(np.zeros((2, 6)), 3) == 0).all()
        np.testing.assert_allclose(pass_at_k_weights(np.ones((1, 6)), 3, estimator="unbiased"), 0.5)
        for k in (1, 3, 6):
            assert (pass_at_k_weights(np.ones((1, 6)), k) == 0).all()

    def test_k_equal_n(self):
        """k = n: the only k-subset is the whole group; a lone correct sample carries weight 1."""
        np.testing.assert_allclose(pass_at_k_weights([[0, 1, 0, 0]], 4), [[0, 1, 0, 0]], rtol=1e-15)
        np.testing.assert_allclose(pass_at_k_weights([[0, 1, 0, 1]], 4, estimator="unbiased"), 1.0, rtol=1e-15)

    def test_k_equal_one(self):
        """k = 1: 'unbiased' is REINFORCE (V_i / n); 'loo_minus_one' is REINFORCE with a leave-one-out baseline."""
        v = np.array([[1, 0, 1, 1, 0]])
        np.testing.assert_allclose(pass_at_k_weights(v, 1, estimator="unbiased"), v / 5, rtol=1e-15)
        others_mean = (v.sum() - v) / 4
        np.testing.assert_allclose(pass_at_k_weights(v, 1), (v - others_mean) / 5, rtol=1e-14)

    def test_integer_rewards_are_not_truncated(self):
        """Integer input gives float weights equal to those of the same rewards as floats."""
        ints = np.array([[1, 0, 0, 1, 0, 0]], dtype=np.int32)
        w = pass_at_k_weights(ints, 3, estimator="unbiased")
        assert w.dtype == np.float64
        np.testing.assert_array_equal(w, pass_at_k_weights(ints.astype(float), 3, estimator="unbiased"))
        assert 0 < w.min() < 1  # fractional weights survive

    def test_chen_matches_its_advantages_and_is_zero_on_flat_groups(self):
        """'chen' times n is Chen et al.'s (A_pos, A_neg); groups where every k-subset agrees get 0."""
        w = pass_at_k_weights([[1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0], [0] * 6], 2, estimator="chen")
        mean = 1 - comb(5, 2) / comb(6, 2)
        sigma = math.sqrt(mean * (1 - mean))
        np.testing.assert_allclose(6 * w[0, 0], (1 - mean) / sigma, rtol=1e-14)
        np.testing.assert_allclose(6 * w[0, 1], (1 - mean - comb(4, 1) / comb(5, 1)) / sigma, rtol=1e-14)
        assert (w[1:] == 0).all()  # n - c < k: every pair passes; c = 0: none does

    def test_loo_sums_to_minus_k_pass_over_n_minus_one(self):
        """PKPO's s^(loo) as in their listing is not centred: it sums to -k pass@k / (n - 1)."""
        v = [1, 0, 0, 1, 0, 0, 0]
        w = pass_at_k_weights([v], 3, estimator="loo")[0]
        assert w.sum() == pytest.approx(-3 * pass_at_k(7, 2, 3) / 6, rel=1e-13)


# --------------------------------------------------------------------------- #
class TestRealRewards:
    G = np.array([0.1, 0.3, 0.5, 0.7, 0.9])

    def test_issue_test_vectors(self):
        """g = [.1, .3, .5, .7, .9], k = 2: max@k 0.7, s = [.24, .24, .26, .30, .36], s^(loo-1) = [0, .02, .06, .12, .20]."""
        s = pass_at_k_weights(self.G[None], 2, estimator="unbiased")[0]
        np.testing.assert_allclose(s, [0.24, 0.24, 0.26, 0.30, 0.36], rtol=1e-14)
        assert s.sum() / 2 == pytest.approx(0.7, rel=1e-14) == max_at_k(self.G, 2)
        s1 = pass_at_k_weights(self.G[None], 2)[0]
        np.testing.assert_allclose(s1, [0, 0.02, 0.06, 0.12, 0.20], rtol=1e-12, atol=1e-16)

    @given(
        g=st.lists(st.sampled_from([-1.5, 0.0, 0.25, 2.0]), min_size=2, max_size=9),
        seed=st.integers(0, 2**32 - 1),
        estimator=st.sampled_from(["unbiased", "loo_minus_one"]),
    )
    def test_ties_are_independent_of_their_order(self, g, seed, estimator):
        """Permuting the samples permutes the weights bit for bit; tied rewards get identical weights."""
        g = np.array(g)
        k = 1 + seed % len(g)
        perm = np.random.default_rng(seed).permutation(len(g))
        w = pass_at_k_weights(np.stack([g, g[perm]]), k, estimator=estimator)
        np.testing.assert_array_equal(w[0][perm], w[1])
        for value in np.unique(g):
            assert np.unique(w[0][g == value]).size == 1

    def test_unbiased_sums_to_k_max_at_k(self):
        """sum_i s_i = k * max@k, cross-checked with passatk.max_at_k on a random batch."""
        g = np.random.default_rng(3).normal(size=(50, 12))
        w = pass_at_k_weights(g, 5, estimator="unbiased")
        np.testing.assert_allclose(w.sum(axis=1), 5 * max_at_k(g, 5), rtol=1e-12)

    def test_shift_changes_only_the_baseline_free_weights(self):
        """Adding a constant to every reward moves s_i but leaves s^(loo-1) unchanged (it is a marginal gain)."""
        g = np.random.default_rng(4).random((4, 9))
        np.testing.assert_allclose(pass_at_k_weights(g + 3.0, 4), pass_at_k_weights(g, 4), atol=1e-14)

    def test_large_group_is_stable(self):
        """n = 4096, k = 2048: finite weights whose sum matches k * max@k."""
        g = np.random.default_rng(5).random((2, 4096))
        w = pass_at_k_weights(g, 2048, estimator="unbiased")
        assert np.isfinite(w).all()
        np.testing.assert_allclose(w.sum(axis=1), 2048 * max_at_k(g, 2048), rtol=1e-10)


# --------------------------------------------------------------------------- #
class TestIndex:
    def test_ragged_groups_equal_per_group_calls(self):
        """With ``index`` each group is computed on its own, whatever the order and sizes of the groups."""
        rng = np.random.default_rng(11)
        sizes = {"q7": 4, "q1": 6, "q3": 4, "q9": 3}
        labels = np.array([u for u, s in sizes.items() for _ in range(s)], dtype=object)
        rng.shuffle(labels)
        rewards = rng.random(labels.size)
        got = pass_at_k_weights(rewards, 3, index=labels)
        for u in sizes:
            np.testing.assert_array_equal(got[labels == u], pass_at_k_weights(rewards[labels == u][None], 3)[0])

    def test_integer_labels_and_binary_rewards(self):
        """Integer labels work as strings do; binary rewards take the same path with an index."""
        v = np.array([True, False, False, True, True, False, False])
        idx = np.array([5, 5, 5, 2, 2, 2, 2])
        got = pass_at_k_weights(v, 2, estimator="unbiased", index=idx)
        np.testing.assert_allclose(got[:3], binary_exact([1, 0, 0], 2, "unbiased"), rtol=1e-14)
        np.testing.assert_allclose(got[3:], binary_exact([1, 1, 0, 0], 2, "unbiased"), rtol=1e-14)


# --------------------------------------------------------------------------- #
class TestValidation:
    @pytest.mark.parametrize(
        ("kwargs", "error", "message"),
        [
            ({"rewards": [[1, 0, 1]], "k": 4}, ValueError, r"every prompt has n=3 < k=4"),
            ({"rewards": [[1, 0, 1]], "k": 3, "estimator": "loo"}, ValueError, r"'loo' needs k < n.*n=3, k=3"),
            ({"rewards": [[1]], "k": 1}, ValueError, r"needs n >= 2; every prompt has n=1"),
            ({"rewards": [[1, 0]], "k": 0}, ValueError, r"`k` must be at least 1; got k=0"),
            ({"rewards": [[1, 0]], "k": 1.5}, ValueError, r"`k` must hold whole numbers"),
            ({"rewards": [[1, 0]], "k": True}, TypeError, r"`k` must be a single integer"),
            ({"rewards": [[1, 0]], "k": [1, 2]}, TypeError, r"`k` must be a single integer"),
            ({"rewards": [[1, 0]], "k": 1, "estimator": "pkpo"}, ValueError, r"`estimator` must be one of.*'pkpo'"),
            (
                {"rewards": [[0.5, 0.0]], "k": 1, "estimator": "chen"},
                ValueError,
                r"'chen' is defined for binary.*0.5 at index \(0, 0\)",
            ),
            ({"rewards": [[0.5, np.nan]], "k": 1}, ValueError, r"must be finite; got nan at index \(0, 1\)"),
            ({"rewards": [1.0, 0.0, 1.0], "k": 1}, ValueError, r"shape \(prompts, samples\); got shape \(3,\).*`index`"),
            ({"rewards": [[1.0, 0.0]], "k": 1, "index": [0, 0]}, ValueError, r"with `index`, `rewards` must be 1-D"),
            ({"rewards": [1.0, 0.0], "k": 1, "index": [0]}, ValueError, r"one group label per sample: expected shape \(2,\)"),
            ({"rewards": [1.0, 0.0, 1.0], "k": 2, "index": ["a", "a", "b"]}, ValueError, r"group 'b' has n=1 < k=2"),
            ({"rewards": np.zeros((0, 4)), "k": 1}, ValueError, r"`rewards` is empty"),
            ({"rewards": [["a", "b"]], "k": 1}, TypeError, r"bool, integer or real numbers; got dtype <U1"),
            ({"rewards": [[1 + 1j, 0]], "k": 1}, TypeError, r"got dtype complex128"),
        ],
    )
    def test_errors(self, kwargs, error, message):
        """Bad input raises a clear error naming the argument and echoing the value."""
        with pytest.raises(error, match=message):
            pass_at_k_weights(**kwargs)

    def test_k_schedule_errors(self):
        """k_schedule rejects negative steps, k_end > k_start and non-integers."""
        with pytest.raises(ValueError, match=r"`step` must be at least 0; got step=-1"):
            k_schedule(-1, k_start=8, switch_step=10)
        with pytest.raises(ValueError, match=r"k_start=2, k_end=4"):
            k_schedule(0, k_start=2, k_end=4, switch_step=10)
        with pytest.raises(TypeError, match=r"`ramp_steps` must be an integer; got ramp_steps=1.5"):
            k_schedule(0, k_start=8, switch_step=10, ramp_steps=1.5)


# --------------------------------------------------------------------------- #
class TestAdapters:
    def test_verl_signature_and_outputs(self):
        """veRL's argument names; (advantages, returns) of shape (bs, T), n_group * w per response, masked."""
        fn = verl_advantage_estimator(k=2, estimator="unbiased")
        params = list(inspect.signature(fn).parameters)
        assert params[:4] == ["token_level_rewards", "response_mask", "index", "config"]
        scores = np.array([1.0, 0.0, 0.0, 1.0, 1.0])
        token_rewards = np.zeros((5, 4))
        token_rewards[np.arange(5), [3, 2, 1, 3, 0]] = scores  # outcome reward on the last real token
        mask = (np.arange(4) <= np.array([3, 2, 1, 3, 0])[:, None]).astype(np.int64)
        uid = np.array(["b", "a", "a", "b", "b"], dtype=object)
        adv, ret = fn(token_rewards, mask, uid, config={"norm_adv_by_std_in_grpo": True}, epsilon=1e-6)
        assert adv.shape == (5, 4) and ret is adv
        weights = pass_at_k_weights(scores, 2, estimator="unbiased", index=uid)
        expected = weights * np.array([3, 2, 2, 3, 3])
        np.testing.assert_allclose(adv, expected[:, None] * mask, rtol=1e-15)
        assert (adv[mask == 0] == 0).all()

    def test_verl_estimator_checks_k_when_built(self):
        """A bad k or estimator fails at registration time, not mid-training."""
        with pytest.raises(ValueError, match="at least 1"):
            verl_advantage_estimator(k=0)
        with pytest.raises(ValueError, match="must be one of"):
            verl_advantage_estimator(k=2, estimator="grpo")

    def test_trl_recipe_reshapes_and_broadcasts_back(self):
        """(prompts * G,) -> (prompts, G) -> weights -> G * w flattened, in TRL's consecutive layout."""
        rewards = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0])
        got = trl_pass_at_k_advantages(rewards, num_generations=4, k=2)
        want = 4 * pass_at_k_weights(rewards.reshape(2, 4), 2).reshape(-1)
        np.testing.assert_array_equal(got, want)

    def test_trl_rejects_a_batch_that_is_not_whole_groups(self):
        """A batch that is not a multiple of the group size is an error, never one big group."""
        with pytest.raises(ValueError, match=r"whole number of groups of num_generations=4; got shape \(6,\)"):
            trl_pass_at_k_advantages(np.zeros(6), num_generations=4, k=2)
        with pytest.raises(ValueError, match=r"positive integer; got num_generations=0"):
            trl_pass_at_k_advantages(np.zeros(6), num_generations=0, k=2)


# --------------------------------------------------------------------------- #
class TestKSchedule:
    @pytest.mark.parametrize(
        ("step", "kwargs", "expected"),
        [
            (0, {"k_start": 8, "switch_step": 100}, 8),
            (99, {"k_start": 8, "switch_step": 100}, 8),
            (100, {"k_start": 8, "switch_step": 100}, 1),
            (10**6, {"k_start": 8, "switch_step": 100}, 1),
            (100, {"k_start": 8, "k_end": 2, "switch_step": 100}, 2),
            (105, {"k_start": 64, "switch_step": 100, "ramp_steps": 10}, 8),  # 64 * (1/64)^(1/2)
            (110, {"k_start": 64, "switch_step": 100, "ramp_steps": 10}, 1),
            (0, {"k_start": 1, "switch_step": 0}, 1),
        ],
    )
    def test_values(self, step, kwargs, expected):
        """k_start before the switch, k_end after, geometric in between."""
        assert k_schedule(step, **kwargs) == expected

    @given(k_start=st.integers(1, 256), k_end=st.integers(1, 256), switch=st.integers(0, 50), ramp=st.integers(0, 50))
    def test_never_increases_and_stays_in_range(self, k_start, k_end, switch, ramp):
        """Over training, k is non-increasing and between k_end and k_start."""
        k_start, k_end = max(k_start, k_end), min(k_start, k_end)
        ks = [k_schedule(s, k_start=k_start, k_end=k_end, switch_step=switch, ramp_steps=ramp) for s in range(120)]
        assert all(a >= b for a, b in itertools.pairwise(ks))
        assert ks[0] == (k_start if switch > 0 else ks[0]) and ks[-1] == k_end
        assert all(k_end <= k <= k_start for k in ks)
