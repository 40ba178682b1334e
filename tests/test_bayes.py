"""Tests of method="bayes" (hierarchical beta-binomial posterior), the clustered Wilson interval and method="auto"."""

from __future__ import annotations

import json
import time
from fractions import Fraction
from math import prod

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.special import expit

from passatk import Results, summarize
from passatk.uncertainty._bayes import LOG_S_PRIOR_SCALE, _log_posterior, bayes_interval, population_mean
from passatk.uncertainty._summary import AUTO_LARGE, auto_methods
from strategies import benchmarks

G = np.random.default_rng(5)


def counts(c, n=10):
    c = np.asarray(c)
    return Results.from_counts([f"t{i}" for i in range(c.size)], np.broadcast_to(n, c.shape), c)


def log_prior(u, logs):
    """Uniform m on (0, 1) seen on the logit scale, logistic log s (scipy's densities)."""
    m = expit(u)
    return np.log(m * (1 - m)) + stats.logistic.logpdf(logs, scale=LOG_S_PRIOR_SCALE) + np.log(LOG_S_PRIOR_SCALE)


class TestPosterior:
    @settings(max_examples=60, deadline=None)
    @given(
        st.lists(st.tuples(st.integers(1, 40), st.floats(0, 1)), min_size=1, max_size=25),
        st.floats(-8, 8),
        st.floats(-4, 8),
    )
    @example([(1, 0.0)], -8.0, 8.0)
    def test_log_posterior_equals_scipy_betabinom(self, problems, u, logs):
        """The grouped likelihood equals the sum of scipy.stats.betabinom.logpmf over problems (up to the binomial coefficients)."""
        n = np.array([m for m, _ in problems])
        c = np.array([int(round(f * m)) for m, f in problems])
        m, s = expit(u), np.exp(logs)
        ref = stats.betabinom.logpmf(c, n, m * s, (1 - m) * s).sum() - stats.binom.logpmf(c, n, 0.5).sum() + n.sum() * np.log(0.5)
        got = _log_posterior(np.array([u]), np.array([logs]), n, c)[0] - log_prior(u, logs)
        assert got == pytest.approx(ref, rel=1e-9, abs=1e-8)

    @settings(max_examples=100, deadline=None)
    @given(
        st.fractions(Fraction(1, 20), 20),
        st.fractions(Fraction(1, 20), 20),
        st.integers(1, 64),
        st.sampled_from(["pass@k", "pass^k"]),
    )
    @example(Fraction(1, 20), Fraction(20), 64, "pass@k")
    def test_population_mean_equals_the_exact_moment(self, a, b, k, metric):
        """mu_k(a, b) equals 1 - prod (b+j)/(a+b+j) (or prod (a+j)/(a+b+j)), j < k, in exact rational arithmetic."""
        ratio = prod(((a if metric == "pass^k" else b) + j) / (a + b + j) for j in range(k))
        ref = ratio if metric == "pass^k" else 1 - ratio
        got = population_mean(np.array([float(a)]), np.array([float(b)]), np.array([k]), metric)[0, 0]
        assert got == pytest.approx(float(ref), rel=1e-11, abs=1e-300)

    @pytest.mark.parametrize(("a", "b", "k"), [(1.0, 1.0, 10), (2.5, 0.7, 3), (0.8, 4.0, 16)])
    def test_population_mean_equals_quadrature(self, a, b, k):
        """And E[1 - (1-p)^k] under Beta(a, b) by scipy's quadrature."""
        ref = stats.beta.expect(lambda p: 1 - (1 - p) ** k, (a, b))
        assert population_mean(np.array([a]), np.array([b]), np.array([k]), "pass@k")[0, 0] == pytest.approx(ref, rel=1e-8)

    def test_interval_equals_a_dense_grid_posterior(self):
        """The library's interval matches equal-tailed quantiles on a dense 300 x 300 grid around scipy's fit (2% of the width)."""
        n = np.full(40, 12)
        c = G.binomial(12, G.beta(0.6, 1.4, 40))
        ks = np.array([1, 4, 12])
        ci, _ = bayes_interval(n, c, ks, 0.9, "pass@k", np.random.default_rng(0))
        u, logs = np.meshgrid(np.linspace(-4, 3, 300), np.linspace(-3, 6, 300), indexing="ij")
        m, s = expit(u.ravel()), np.exp(logs.ravel())
        a, b = m * s, (1 - m) * s
        loglik = stats.betabinom.logpmf(c[None, :], n[None, :], a[:, None], b[:, None]).sum(axis=1)
        w = np.exp(loglik + log_prior(u.ravel(), logs.ravel()) - (loglik + log_prior(u.ravel(), logs.ravel())).max())
        edge = (u.ravel() < -3.95) | (u.ravel() > 2.95) | (logs.ravel() < -2.95) | (logs.ravel() > 5.95)
        assert w[edge].max() < 1e-4 * w.max()  # the grid holds the posterior
        keep = w > 1e-8 * w.max()
        mus = population_mean(a[keep], b[keep], ks, "pass@k")  # checked against quadrature above
        for j in range(ks.size):
            mu = mus[:, j]
            ww = w[keep]
            order = np.argsort(mu)
            cdf = np.cumsum(ww[order]) / ww.sum()
            lo, hi = np.interp([0.05, 0.95], cdf, mu[order])
            width = hi - lo
            assert ci.low[j] == pytest.approx(lo, abs=0.02 * width) and ci.high[j] == pytest.approx(hi, abs=0.02 * width)

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(benchmarks(min_size=2, max_size=30), st.sampled_from(["pass@k", "pass^k"]))
    def test_properties(self, bench, metric):
        """In [0, 1], ordered, the same on a second call, and the 80% interval inside the 95% one (same draws)."""
        res, k = bench
        s = summarize(res, [1, k], method="bayes", metric=metric)
        assert (0 <= s.ci.low).all() and (s.ci.low <= s.ci.high).all() and (s.ci.high <= 1).all()
        np.testing.assert_array_equal(summarize(res, [1, k], method="bayes", metric=metric).ci.high, s.ci.high)
        inner = s.confidence_interval(0.8)
        assert (s.ci.low <= inner.low).all() and (inner.high <= s.ci.high).all()

    def test_keeps_a_width_when_nothing_is_solved(self):
        """No problem solved: the interval starts at 0 and keeps a width, like Wilson's (t gives [0, 0])."""
        s = summarize(counts(np.zeros(100, dtype=int)), [1, 5], method="bayes")
        assert (s.ci.low < 1e-3).all() and (0.005 < s.ci.high).all() and (s.ci.high < 0.05).all()

    def test_fast_for_1000_problems(self):
        """1000 problems with 1000 different n, three k: under a second."""
        n = G.integers(10, 1000, 1000)
        res = Results.from_counts([f"t{i}" for i in range(1000)], n, G.binomial(n, G.beta(0.5, 0.5, 1000)))
        summarize(res, [1], method="bayes")  # imports
        start = time.perf_counter()
        summarize(res, [1, 5, 10], method="bayes")
        assert time.perf_counter() - start < 1.0


class TestClusteredWilson:
    RES = counts(G.binomial(10, G.beta(0.5, 1.0, 30)))
    CLUSTER = [i // 3 for i in range(30)]

    def test_singleton_clusters_give_the_plain_wilson(self):
        """One problem per cluster: the design effect is 1 and the interval the plain Wilson interval."""
        plain = summarize(self.RES, [1, 4], method="wilson").ci
        one = summarize(self.RES, [1, 4], method="wilson", cluster=range(30)).ci
        np.testing.assert_allclose(one.low, plain.low, rtol=1e-12)
        np.testing.assert_allclose(one.high, plain.high, rtol=1e-12)

    def test_is_wilson_at_the_effective_n(self):
        """N_eff = N (S^2/N) / SE_CR1^2 with SE_CR1 summed as inspect_ai's clustered stderr does; the bounds solve the score equation."""
        s = summarize(self.RES, [1], method="wilson", cluster=self.CLUSTER)
        x = s.per_problem[:, 0]
        mean, groups = x.mean(), np.array(self.CLUSTER)
        clustered = sum(np.outer(x[groups == g] - mean, x[groups == g] - mean).sum() for g in range(10))
        se2 = clustered * 10 / 9 / 30**2
        n_eff = 30 * (x.var(ddof=1) / 30) / se2
        z2 = stats.norm.ppf(0.975) ** 2
        # (mean - mu)^2 = z^2 mu (1 - mu) / N_eff  <=>  (1 + z2/N) mu^2 - (2 mean + z2/N) mu + mean^2 = 0
        roots = np.sort(np.roots([1 + z2 / n_eff, -(2 * mean + z2 / n_eff), mean**2]).real)
        assert (s.ci.low[0], s.ci.high[0]) == pytest.approx(tuple(roots), rel=1e-10)

    def test_wider_with_alike_clusters(self):
        """Triplets of identical problems: N_eff about N/3, wider than Wilson ignoring the clusters."""
        res = counts(np.repeat(G.binomial(10, G.beta(0.5, 1.0, 10)), 3))
        clustered = summarize(res, [1], method="wilson", cluster=self.CLUSTER).ci
        iid = summarize(res, [1], method="wilson").ci
        assert clustered.high[0] - clustered.low[0] > 1.5 * (iid.high[0] - iid.low[0])


class TestAuto:
    def test_picks_by_kind_of_data(self):
        """Pinned (at most 2 problems off the edge) or 0/1 estimates: wilson; fewer than 500 problems: bayes; more: t (wilson within 15/N of an edge); clusters: wilson."""
        pinned = counts(np.r_[np.zeros(298, dtype=int), 3, 5])
        assert auto_methods(summarize(pinned, [1]).per_problem, None)[0] == ("wilson", "pinned at 0")
        small = counts(G.binomial(10, G.beta(0.3, 3, 60)))
        assert summarize(small, [1, 5], method="auto").picked == ("bayes", "bayes")
        assert summarize(small, [10], method="auto").picked == ("wilson",)  # k = n: each estimate is 1[c > 0]
        large = counts(G.binomial(10, G.beta(0.3, 3, AUTO_LARGE)))
        assert summarize(large, [1], method="auto").picked == ("t",)
        clustered = summarize(small, [1], method="auto", cluster=[i // 3 for i in range(60)])
        assert clustered.picked == ("wilson",) and "20 clusters" in clustered.picked_because[0]
        rare = counts(np.r_[np.zeros(592, dtype=int), np.full(8, 5)])  # N x mean = 4 < 15: still Wilson
        assert summarize(rare, [1], method="auto").picked_because == ("600 problems, within 15/N of 0",)
        easy = counts(np.r_[np.full(58, 10), 9, 8])
        assert summarize(easy, [1, 10], method="auto").picked_because[1] == "pinned at 1"

    def test_binary_estimates_get_the_binomial_interval(self):
        """One sample per problem (or all-or-nothing problems): the estimate is a binomial proportion, Wilson's case."""
        one = counts(G.binomial(1, G.beta(0.5, 0.5, 80)), n=1)
        s = summarize(one, [1], method="auto")
        assert s.picked_because == ("every estimate 0 or 1",)
        x, z = one.c.sum(), stats.norm.ppf(0.975)  # the binomial score interval, from its formula
        centre, half = (x + z**2 / 2) / (80 + z**2), z * np.sqrt(x * (80 - x) / 80 + z**2 / 4) / (80 + z**2)
        assert (s.ci.low[0], s.ci.high[0]) == pytest.approx((centre - half, centre + half), rel=1e-12)
        all_or_nothing = counts(np.r_[np.zeros(30, dtype=int), np.full(30, 10)])
        assert summarize(all_or_nothing, [1, 5], method="auto").picked == ("wilson", "wilson")
        mixed = counts(np.r_[np.zeros(30, dtype=int), np.full(29, 10), 5])
        assert summarize(mixed, [1], method="auto").picked == ("bayes",)

    def test_interval_is_the_picked_ones_per_k(self):
        """Each k's interval is the picked method's; to_dict says which and why."""
        res = counts(np.r_[G.binomial(10, G.beta(1, 1, 60)), 10, 10])
        s = summarize(res, [1, 10], method="auto")
        for j, m in enumerate(s.picked):
            ci = summarize(res, [1, 10], method=m).ci
            assert (s.ci.low[j], s.ci.high[j]) == (ci.low[j], ci.high[j])
        rec = s.to_dict()
        assert rec["method"] == "auto" and rec["pass_at_k"]["10"]["method"] == s.picked[1]
        assert rec["pass_at_k"]["1"]["picked_because"] == "62 problems (< 500)"

    def test_fixed_target_is_normal(self):
        """target='fixed' has one interval, so auto is normal there."""
        s = summarize(counts(G.binomial(10, G.beta(1, 1, 30))), [1], method="auto", target="fixed")
        assert s.method == "normal" and s.picked is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "bayes", "cluster": range(8)}, r"method='bayes' models the problems as independent"),
        ({"method": "bayes", "target": "fixed"}, r"with target='fixed' use method='normal'"),
        ({"method": "baye"}, r"`method` must be one of .*'bayes', 'auto'; got method='baye'"),
    ],
)
def test_bad_options(kwargs, message):
    """Refusals name the option and what to use instead."""
    with pytest.raises(ValueError, match=message):
        summarize(counts([3, 0, 10, 5, 1, 2, 7, 4]), [1], **kwargs)


class TestCli:
    typer = pytest.importorskip("typer", reason="the cli extra")

    @pytest.fixture()
    def path(self, tmp_path):
        p = tmp_path / "m.csv"
        c = np.random.default_rng(9).binomial(10, np.random.default_rng(9).beta(0.4, 1.5, 50))
        p.write_text("task_id,n,c\n" + "".join(f"t{i},10,{x}\n" for i, x in enumerate(c)))
        return p

    def run(self, *args):
        from typer.testing import CliRunner

        from passatk.cli import app

        return CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, list(args))

    def test_score_bayes_json(self, path):
        """--ci bayes: the record's interval is summarize's and the options say bayes."""
        out = self.run("score", str(path), "-k", "1,10", "--ci", "bayes", "--json")
        assert out.exit_code == 0, out.output
        rec = json.loads(out.stdout)["m"]
        ref = summarize(Results.from_counts([f"t{i}" for i in range(50)], [10] * 50, _c(path)), [1, 10], method="bayes")
        assert rec["options"]["ci"] == "bayes" and rec["method"] == "bayes"
        assert rec["pass_at_k"]["10"]["ci"] == pytest.approx([ref.ci.low[1], ref.ci.high[1]], rel=1e-12)

    def test_score_auto_says_what_it_picked(self, path):
        """--ci auto: the table is followed by the method picked for each k and why; JSON has it per k."""
        out = self.run("score", str(path), "-k", "1,10", "--ci", "auto")
        assert out.exit_code == 0, out.output
        said = "--ci auto picked for m: k=1: bayes (50 problems (< 500)); k=10: wilson (every estimate 0 or 1)"
        assert said in out.output  # n = 10 here: pass@10 of a problem is 1[c > 0], a binomial case
        rec = json.loads(self.run("score", str(path), "--ci", "auto", "--json").stdout)["m"]
        assert rec["pass_at_k"]["1"]["method"] == "bayes"

    def test_bad_ci_is_one_line(self, path):
        """An unknown --ci exits 2 with one line listing the methods."""
        out = self.run("score", str(path), "--ci", "wald")
        assert out.exit_code == 2 and "'bayes', 'auto'; got method='wald'" in out.output and "Traceback" not in out.output

    def test_scorer_is_refused_for_a_counts_file(self, path):
        """--scorer is for inspect_ai and lm-eval logs: a counts file says so."""
        out = self.run("score", str(path), "--scorer", "accuracy")
        assert out.exit_code == 2 and "`scorer` chooses among the scorers of an inspect_ai or lm-eval log" in out.output


def _c(path) -> list[int]:
    return [int(line.split(",")[2]) for line in path.read_text().splitlines()[1:]]
