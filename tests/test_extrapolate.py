"""Tests of the model-based pass@k beyond n (passatk.extrapolate)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import integrate, stats

from passatk import Results
from passatk._validation import DEFAULT_SEED
from passatk.extrapolate import ExtrapolationResult, _Counts, _neg_log_likelihood, _pass_at_k_under, pass_at_k_beyond


def simulate(alpha, beta, problems, n, seed, weights=None):
    """Counts of ``problems`` problems whose p is drawn from a beta law (or a mixture of them)."""
    g = np.random.default_rng(seed)
    alpha, beta = np.atleast_1d(alpha), np.atleast_1d(beta)
    comp = g.choice(alpha.size, size=problems, p=weights)
    p = g.beta(alpha[comp], beta[comp])
    n = np.broadcast_to(n, (problems,))
    return Results.from_counts(range(problems), n, g.binomial(n, p))


def true_pass_at_k(alpha, beta, ks, weights=(1.0,)):
    """1 - E[(1-p)^k] by numerical integration against the beta density (independent of the closed form)."""
    out = []
    for k in ks:
        miss = sum(
            w * integrate.quad(lambda p, a=a, b=b, k=k: (1 - p) ** k * stats.beta.pdf(p, a, b), 0, 1, limit=200)[0]
            for w, a, b in zip(weights, np.atleast_1d(alpha), np.atleast_1d(beta))
        )
        out.append(1.0 - miss)
    return np.array(out)


class TestPassAtKBeyond:
    def test_closed_form_equals_integral_under_the_fit(self):
        """The estimate is 1 - E[(1-p)^k] under the fitted beta law, checked by quadrature."""
        res = simulate(0.7, 1.5, 300, 10, seed=1)
        fit = pass_at_k_beyond(res, [1, 7, 50, 1000], n_resamples=20, rng=0)
        assert isinstance(fit, ExtrapolationResult)
        np.testing.assert_allclose(fit.estimate, true_pass_at_k(fit.alpha, fit.beta, [1, 7, 50, 1000]), rtol=1e-6)

    def test_log_likelihood_matches_scipy_betabinom_with_mixed_n(self):
        """The reported log-likelihood is scipy's beta-binomial log-pmf summed over problems of different n."""
        g = np.random.default_rng(3)
        n = g.choice([3, 10, 40], size=200)
        res = Results.from_counts(range(200), n, g.binomial(n, g.beta(0.5, 1.2, 200)))
        fit = pass_at_k_beyond(res, [1], n_resamples=2, rng=0)
        ref = stats.betabinom.logpmf(res.c, res.n, fit.alpha[0], fit.beta[0]).sum()
        assert fit.log_likelihood == pytest.approx(ref, rel=1e-10)

    def test_fit_is_a_local_maximum(self):
        """Moving alpha or beta by 1% either way lowers the beta-binomial likelihood (scipy's)."""
        res = simulate(0.4, 2.5, 400, 12, seed=4)
        fit = pass_at_k_beyond(res, [1], n_resamples=2, rng=0)
        ll = lambda a, b: stats.betabinom.logpmf(res.c, res.n, a, b).sum()  # noqa: E731
        best = ll(fit.alpha[0], fit.beta[0])
        for fa, fb in [(1.01, 1), (0.99, 1), (1, 1.01), (1, 0.99)]:
            assert ll(fit.alpha[0] * fa, fit.beta[0] * fb) < best

    def test_recovers_parameters_of_a_known_law(self):
        """With 20,000 problems of n=10 the fitted beta law is within 6% of the true (alpha, beta) = (0.6, 1.8)."""
        fit = pass_at_k_beyond(simulate(0.6, 1.8, 20_000, 10, seed=5), [1, 100], n_resamples=10, rng=0)
        np.testing.assert_allclose([fit.alpha[0], fit.beta[0]], [0.6, 1.8], rtol=0.06)
        np.testing.assert_allclose(fit.estimate, true_pass_at_k(0.6, 1.8, [1, 100]), atol=0.01)

    def test_band_covers_truth_in_at_least_90_percent_of_replicates(self):
        """Over 40 seeded replicates (200 problems, n in 5..15), the 95% bands hold the true pass@k and parameters >= 90% of the time."""
        a, b, ks = 0.6, 1.8, [1, 10, 100, 1000]
        truth = true_pass_at_k(a, b, ks)
        covered = np.zeros(len(ks))
        params = np.zeros(2)
        replicates = 40
        for seed in range(replicates):
            g = np.random.default_rng(1000 + seed)
            n = g.integers(5, 16, 200)
            res = Results.from_counts(range(200), n, g.binomial(n, g.beta(a, b, 200)))
            fit = pass_at_k_beyond(res, ks, n_resamples=100, rng=seed)
            ci = fit.confidence_interval()
            covered += (ci.low <= truth) & (truth <= ci.high)
            pci = fit.parameter_confidence_interval()
            params += [pci["alpha"].low[0] <= a <= pci["alpha"].high[0], pci["beta"].low[0] <= b <= pci["beta"].high[0]]
        assert (covered / replicates >= 0.9).all(), covered / replicates
        assert (params / replicates >= 0.9).all(), params / replicates

    def test_mixture_recovers_a_two_component_law_and_wins_on_bic(self):
        """Data from 0.4 Beta(0.3, 8) + 0.6 Beta(4, 2): the 2-component fit finds the weights, wins on BIC, and its band holds the truth."""
        res = simulate([0.3, 4.0], [8.0, 2.0], 3000, 10, seed=6, weights=[0.4, 0.6])
        ks = [1, 10, 100, 1000]
        mix = pass_at_k_beyond(res, ks, law="beta_binomial_mixture", n_resamples=40, rng=0)
        one = pass_at_k_beyond(res, ks, n_resamples=10, rng=0)
        np.testing.assert_allclose(mix.weights, [0.4, 0.6], atol=0.05)
        assert mix.bic < one.bic
        truth = true_pass_at_k([0.3, 4.0], [8.0, 2.0], ks, weights=[0.4, 0.6])
        np.testing.assert_allclose(mix.estimate[:3], truth[:3], atol=0.02)
        ci = mix.confidence_interval()
        assert ((ci.low <= truth) & (truth <= ci.high)).all(), (ci, truth)

    def test_estimates_increase_with_k_and_stay_in_unit_interval(self):
        """Model-based pass@k is increasing in k and within [0, 1], bootstrap draws included."""
        fit = pass_at_k_beyond(simulate(0.3, 3.0, 150, 8, seed=7), [1, 2, 8, 64, 512, 4096], n_resamples=30, rng=0)
        assert (np.diff(fit.estimate) > 0).all()
        draws = fit.bootstrap_distribution
        assert draws.shape == (30, 6)
        assert ((draws >= 0) & (draws <= 1)).all() and (np.diff(draws, axis=1) >= 0).all()

    def test_flagged_model_based_and_json_ready(self):
        """The result says it is model-based, and to_dict() round-trips through JSON with every k."""
        fit = pass_at_k_beyond(simulate(0.5, 1.0, 100, 10, seed=8), [1, 1000], n_resamples=20, rng=0)
        d = json.loads(json.dumps(fit.to_dict()))
        assert fit.model_based and d["model_based"] is True
        assert set(d["pass_at_k"]) == {"1", "1000"}
        lo, hi = d["pass_at_k"]["1000"]["ci"]
        assert lo <= d["pass_at_k"]["1000"]["estimate"] <= hi
        assert d["fit"]["alpha"] == fit.alpha.tolist()
        assert fit.standard_error.shape == (2,)

    def test_seeded_bootstrap_is_reproducible(self):
        """The same seed gives the same band; another seed a different one."""
        res = simulate(0.5, 1.0, 80, 10, seed=9)
        a, b = (pass_at_k_beyond(res, [100], n_resamples=30, rng=s).confidence_interval() for s in (1, 1))
        c = pass_at_k_beyond(res, [100], n_resamples=30, rng=2).confidence_interval()
        assert np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high)
        assert not (np.array_equal(c.low, a.low) and np.array_equal(c.high, a.high))

    def test_reproducible_by_default(self):
        """Without rng the band uses DEFAULT_SEED: the same on every call, and the same as rng=DEFAULT_SEED."""
        res = simulate(0.5, 1.0, 80, 10, seed=9)
        runs = [
            pass_at_k_beyond(res, [100], n_resamples=30, **kw).confidence_interval() for kw in ({}, {}, {"rng": DEFAULT_SEED})
        ]
        assert len({(float(ci.low[0]), float(ci.high[0])) for ci in runs}) == 1

    def test_wider_level_gives_wider_band(self):
        """A 99% band contains the 80% band."""
        fit = pass_at_k_beyond(simulate(0.5, 1.0, 80, 10, seed=10), [10, 100], n_resamples=50, rng=0)
        wide, narrow = fit.confidence_interval(0.99), fit.confidence_interval(0.8)
        assert (wide.low <= narrow.low).all() and (wide.high >= narrow.high).all()

    def test_all_failures_everywhere_gives_tiny_pass_at_k(self):
        """No success in any sample: the fitted law piles up at p = 0 and pass@1000 stays small."""
        res = Results.from_counts(range(50), [10] * 50, [0] * 50)
        fit = pass_at_k_beyond(res, [1, 1000], n_resamples=5, rng=0)
        assert fit.estimate[0] < 1e-3 and fit.estimate[1] < 0.05

    @pytest.mark.parametrize(
        ("kwargs", "error", "match"),
        [
            ({"results": [(10, 3)]}, TypeError, "`results` must be a passatk.Results"),
            ({"ks": 0}, ValueError, "`k` must be at least 1"),
            ({"ks": []}, ValueError, "`k` is an empty sequence"),
            ({"law": "poisson"}, ValueError, "`law` must be one of 'beta_binomial', 'beta_binomial_mixture'; got law='poisson'"),
            ({"law": "poisson"}, ValueError, "`law` must be one of"),
            ({"components": 2}, ValueError, "law='beta_binomial' has one component; got components=2"),
            ({"law": "beta_binomial_mixture", "components": 7}, ValueError, r"in \[2, 5\]; got components=7"),
            ({"law": "beta_binomial_mixture", "components": 2.0}, TypeError, "`components` must be an integer"),
            ({"n_resamples": 1}, ValueError, "`n_resamples` must be an integer >= 2; got n_resamples=1"),
            ({"results": Results.from_counts(["a", "b"], [5, 5], [1, 2])}, ValueError, "at least 3 problems; got 2"),
            ({"results": Results.from_counts(list("abcd"), [1] * 4, [0, 1, 1, 0])}, ValueError, "every problem has n=1"),
        ],
    )
    def test_bad_input_names_the_argument(self, kwargs, error, match):
        """Each bad argument raises with a message naming it and echoing the value."""
        args = {"results": Results.from_counts(list("abcde"), [5] * 5, [0, 1, 2, 3, 5]), "ks": [10]} | kwargs
        with pytest.raises(error, match=match):
            pass_at_k_beyond(args.pop("results"), args.pop("ks"), **args)

    @pytest.mark.parametrize(("level", "error"), [(0, ValueError), (1, ValueError), (1.5, ValueError), ("0.9", TypeError)])
    def test_bad_confidence_level(self, level, error):
        """confidence_interval() rejects levels outside (0, 1), naming the argument; a string is a TypeError."""
        fit = pass_at_k_beyond(simulate(0.5, 1.0, 30, 10, seed=11), [10], n_resamples=5, rng=0)
        with pytest.raises(error, match="`level` must be"):
            fit.confidence_interval(level)


@pytest.mark.parametrize("m", [1, 2, 3])
def test_gradient_matches_finite_differences(m):
    """The analytic gradient of the (mixture) log-likelihood equals central differences, for several fits at once."""
    g = np.random.default_rng(12)
    n = g.choice([4, 9, 30], size=120)
    counts = _Counts.of(n, g.binomial(n, g.beta(0.6, 1.4, 120)))
    w = g.integers(0, 4, size=(3, counts.n.size)).astype(float)
    x = g.normal(0, 0.8, size=3 * (3 * m - 1))
    value, grad = _neg_log_likelihood(x, w, counts, m)
    h = 1e-6
    numeric = [
        (_neg_log_likelihood(x + h * e, w, counts, m)[0] - _neg_log_likelihood(x - h * e, w, counts, m)[0]) / (2 * h)
        for e in np.eye(x.size)
    ]
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-6)
    ref = -sum(
        w[r] @ np.log(sum(p * stats.betabinom.pmf(counts.c, counts.n, a, b) for p, a, b in zip(*_params(x, r, m))))
        for r in range(3)
    )
    assert value == pytest.approx(ref, rel=1e-10)


def _params(x, r, m):
    """Weights, alphas, betas of fit ``r``: logit means, log concentrations, mixing logits (first fixed at 0)."""
    row = x.reshape(3, 3 * m - 1)[r]
    mean, conc = 1 / (1 + np.exp(-row[:m])), np.exp(row[m : 2 * m])
    logits = np.r_[0.0, row[2 * m :]]
    return np.exp(logits) / np.exp(logits).sum(), mean * conc, (1 - mean) * conc


def test_closed_form_reference_value():
    """For Beta(1, 1) (p uniform), pass@k = 1 - B(1, 1+k)/B(1, 1) = k/(k+1); a 50/50 mixture with a point near 0 halves it."""
    ks = np.array([1, 9, 999])
    one = _pass_at_k_under(np.array([[1.0]]), np.array([[1.0]]), np.array([[1.0]]), ks)[0]
    np.testing.assert_allclose(one, ks / (ks + 1), rtol=1e-12)
    mix = _pass_at_k_under(np.array([[1.0, 1e-9]]), np.array([[1.0, 1e9]]), np.array([[0.5, 0.5]]), ks)[0]
    np.testing.assert_allclose(mix, ks / (ks + 1) / 2, rtol=1e-6)
