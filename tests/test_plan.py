"""Tests of plan_comparison() and `passatk plan`: the sample-size formula, its inputs, and the power it delivers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

pytest.importorskip("typer", reason="the cli extra")
from typer.testing import CliRunner  # noqa: E402

from passatk import PlanResult, Results, compare, load_results, plan_comparison, variance_estimate  # noqa: E402
from passatk.cli import app  # noqa: E402

runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})
Z2 = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2


@pytest.fixture(scope="module")
def minif2f(shared_data):
    return load_results(shared_data / "minif2f" / "proof_outcomes_by_problem.json")


class TestFormula:
    def test_defaults_by_hand(self):
        """No pilot: omega 0.25, worst-case sigma^2 = 1/4 at k = 1; N = ceil(z^2 [omega^2 + 2 sigma^2 / n] / delta^2)."""
        plan = plan_comparison(0.03, samples_per_problem=[1, 10, 100])
        want = [int(np.ceil(Z2 * (0.0625 + 0.5 / n) / 0.03**2)) for n in (1, 10, 100)]
        assert plan.problems.tolist() == want == [4906, 982, 589]
        assert plan.problems_floor == int(np.ceil(Z2 * 0.0625 / 0.03**2)) == 546
        assert isinstance(plan, PlanResult) and "default" in plan.source

    def test_worst_case_sigma_is_the_maximum_over_p(self):
        """Without p, sigma^2 is max_p k^2 p (1-p)^(2k-1), checked on a fine grid of p."""
        grid = np.linspace(0, 1, 200001)
        for k in (1, 3, 10):
            plan = plan_comparison(0.05, k)
            best = float(np.max(k * k * grid * (1 - grid) ** (2 * k - 1)))
            assert plan.sigma2_a == pytest.approx(best, rel=1e-8)
            assert plan.samples_per_problem == tuple(k * m for m in (1, 2, 5, 10, 20, 50, 100))

    def test_stated_assumptions(self):
        """p and omega as stated: sigma^2 = k^2 p (1-p)^(2k-1), omega^2 = omega^2; alpha and power enter through z."""
        plan = plan_comparison(0.1, 2, alpha=0.01, power=0.9, p=0.2, omega=0.1, samples_per_problem=[4])
        sigma2 = 4 * 0.2 * 0.8**3
        z2 = (stats.norm.ppf(0.995) + stats.norm.ppf(0.9)) ** 2
        assert plan.sigma2_a == plan.sigma2_b == pytest.approx(sigma2)
        assert plan.problems[0] == int(np.ceil(z2 * (0.01 + 2 * sigma2 / 4) / 0.01))

    def test_more_samples_never_need_more_problems(self):
        """N falls as n grows and never goes below the floor set by omega."""
        plan = plan_comparison(0.02, 1, samples_per_problem=[1, 2, 4, 8, 1000])
        assert np.all(np.diff(plan.problems) <= 0) and plan.problems[-1] >= plan.problems_floor

    def test_power_by_simulation(self):
        """The N plan_comparison() gives from the true components yields ~80% power for compare() on simulated benchmarks.

        p_A ~ Beta(2, 3), p_B = 0.8 p_A, n = 5, k = 1: delta = 0.08, omega^2 = 0.04 Var(p_A) = 0.0016,
        sigma_A^2 = E[p(1-p)] = 0.2, sigma_B^2 = 0.192.  plan_comparison takes one p for both models, so
        p is chosen with 2 p (1-p) = sigma_A^2 + sigma_B^2 = 0.392, which gives the same N.  600
        replications: Monte Carlo SE 0.016; a one-sided z (a classic slip) would give ~70% and fail
        the +-0.05 band, and so would an N off by a fifth.
        """
        p = (1 - np.sqrt(1 - 2 * 0.392)) / 2  # p (1 - p) = 0.196
        plan = plan_comparison(0.08, 1, omega=0.04, p=float(p), samples_per_problem=[5])
        big_n = int(plan.problems[0])
        assert big_n == int(np.ceil(Z2 * (0.0016 + 0.392 / 5) / 0.08**2)) == 99  # the formula by hand
        assert plan_comparison(0.08, 1, omega=0.04, samples_per_problem=[5]).problems[0] > big_n  # worst case: more
        rng = np.random.default_rng(7)
        ids = [str(i) for i in range(big_n)]
        hits = 0
        for _ in range(600):
            pa = rng.beta(2, 3, big_n)
            a = Results.from_counts(ids, [5] * big_n, rng.binomial(5, pa), name="a")
            b = Results.from_counts(ids, [5] * big_n, rng.binomial(5, 0.8 * pa), name="b")
            hits += compare(a, b, 1).p_value[0] < 0.05
        assert abs(hits / 600 - 0.80) <= 0.05, hits / 600


class TestPilot:
    def test_two_model_components_on_minif2f(self, minif2f):
        """sigma^2 = mean(n V_hat) per model and omega^2 = var(d) - mean(V_hat_A + V_hat_B), from the real provers."""
        a, b = list(minif2f.values())[:2]
        plan = plan_comparison(0.05, 4, pilot=minif2f, samples_per_problem=[24])
        va, vb = variance_estimate(a.n, a.c, 4), variance_estimate(b.n, b.c, 4)
        d = a.pass_at_k(4) - b.pass_at_k(4)
        assert plan.sigma2_a == pytest.approx(np.mean(24 * va), rel=1e-12)
        assert plan.sigma2_b == pytest.approx(np.mean(24 * vb), rel=1e-12)
        assert plan.omega2 == pytest.approx(np.var(d, ddof=1) - np.mean(va + vb), rel=1e-10)
        assert plan.problems[0] == int(np.ceil(Z2 * (plan.omega2 + (plan.sigma2_a + plan.sigma2_b) / 24) / 0.0025))
        assert a.name in plan.source and b.name in plan.source

    def test_one_model_uses_assumed_correlation(self, minif2f):
        """One model: omega^2 = 2 sigma_b^2 (1 - r) with sigma_b^2 its between-problem variance."""
        a = list(minif2f.values())[0]
        plan = plan_comparison(0.05, 1, pilot=a, correlation=0.6)
        va = variance_estimate(a.n, a.c, 1)
        between = np.var(a.pass_at_k(1), ddof=1) - np.mean(va)
        assert plan.omega2 == pytest.approx(2 * between * 0.4, rel=1e-10)
        assert plan.sigma2_a == plan.sigma2_b and "correlation 0.6" in plan.source

    def test_stated_omega_overrides_the_pilot(self, minif2f):
        """omega given with a pilot replaces the pilot's omega; sigma still comes from the pilot."""
        plan = plan_comparison(0.05, 1, pilot=minif2f, omega=0.1)
        assert plan.omega2 == pytest.approx(0.01) and "stated" in plan.source


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"delta": 0}, ValueError, r"`delta` must be a difference in pass@k in \(0, 1\], e.g. 0.03; got delta=0"),
        ({"delta": 0.1, "k": 0}, ValueError, r"`k` must be an integer >= 1; got k=0"),
        ({"delta": 0.1, "alpha": 1.2}, ValueError, r"`alpha` must be a number strictly between 0 and 1"),
        ({"delta": 0.1, "power": 0}, ValueError, r"`power` must be a number strictly between 0 and 1"),
        ({"delta": 0.1, "k": 5, "samples_per_problem": [2, 10]}, ValueError, r"integers >= k=5; got \[2, 10\]"),
        ({"delta": 0.1, "omega": -1}, ValueError, r"`omega` must be a number in \[0, 1\]; got omega=-1"),
        ({"delta": 0.1, "p": 2}, ValueError, r"`p` must be a probability in \[0, 1\]; got p=2"),
        ({"delta": 0.1, "correlation": 3}, ValueError, r"`correlation` must lie in \[-1, 1\]"),
        ({"delta": 0.1, "pilot": [1, 2]}, TypeError, r"`pilot` must be a Results"),
        (
            {"delta": 0.1, "k": 2, "pilot": Results.from_counts(["a", "b"], [3, 8], [1, 2], name="m")},
            ValueError,
            r"needs n >= 2k = 4 .* model 'm' has n=3 for problem 'a'",
        ),
    ],
)
def test_errors(kwargs, error, message):
    """Bad input raises with a message naming the argument and echoing the value."""
    with pytest.raises(error, match=message):
        plan_comparison(**kwargs)


def test_cli_plan_without_pilot():
    """`passatk plan --delta 0.03 --k 1` prints the table, the assumptions and the floor."""
    res = runner.invoke(app, ["plan", "--delta", "0.03", "--k", "1"])
    assert res.exit_code == 0, res.output
    for text in ("4906", "982", "589", "omega=0.25 (default)", "no n gets below 546 problems"):
        assert text in res.stdout, text


def test_cli_plan_json_with_real_pilot(shared_data, minif2f):
    """--pilot on the real minif2f file gives the library's plan as JSON."""
    path = shared_data / "minif2f" / "proof_outcomes_by_problem.json"
    res = runner.invoke(app, ["plan", "--delta", "0.05", "-k", "4", "--pilot", str(path), "--n", "4,24", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == plan_comparison(0.05, 4, pilot=minif2f, samples_per_problem=[4, 24]).to_dict()


def test_cli_plan_error_is_one_line(shared_data):
    """A pilot with too few samples for the k is a one-line error."""
    path = shared_data / "minif2f" / "proof_outcomes_by_problem.json"
    res = runner.invoke(app, ["plan", "--delta", "0.05", "-k", "13", "--pilot", str(path)])
    assert res.exit_code == 2 and "needs n >= 2k = 26" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


class TestMonotone:
    @settings(max_examples=60, deadline=None)
    @given(
        st.floats(0.01, 0.5),
        st.floats(0.01, 0.5),
        st.floats(0.5, 0.99),
        st.floats(0.5, 0.99),
        st.integers(1, 8),
        st.floats(0, 0.5),
    )
    def test_more_problems_for_smaller_delta_and_higher_power(self, d1, d2, w1, w2, k, omega):
        """N (and its floor) never grows as delta grows, and never shrinks as the power asked for grows."""
        (d_lo, d_hi), (w_lo, w_hi) = sorted((d1, d2)), sorted((w1, w2))
        ns = [k, 4 * k, 50 * k]

        def needed(delta, power):
            plan = plan_comparison(delta, k, power=power, omega=omega, samples_per_problem=ns)
            return plan.problems, plan.problems_floor

        (big, floor_big), (small, floor_small) = needed(d_lo, w_hi), needed(d_hi, w_hi)
        assert (big >= small).all() and floor_big >= floor_small
        (more, floor_more), (fewer, floor_fewer) = needed(d_lo, w_hi), needed(d_lo, w_lo)
        assert (more >= fewer).all() and floor_more >= floor_fewer
        assert (np.diff(big) <= 0).all() and big[-1] >= floor_big  # more samples never need more problems


class TestPassHatK:
    def test_worst_case_sigma_is_the_maximum_over_p(self):
        """No pilot, pass^k: sigma^2 is the maximum over p of k^2 p^(2k-1) (1-p), at p = 1 - 1/(2k) (a grid of p)."""
        for k in (1, 3, 8):
            plan = plan_comparison(0.05, k=k, metric="pass^k")
            grid = np.linspace(0, 1, 200_001)
            assert plan.sigma2_a == pytest.approx((k**2 * grid ** (2 * k - 1) * (1 - grid)).max(), rel=1e-8)
            assert plan.metric == "pass^k" and "1-1/(2k)" in plan.source

    def test_a_stated_p_mirrors_pass_at_k(self):
        """pass^k of success rate p has pass@k's leading variance at 1 - p."""
        a = plan_comparison(0.04, k=4, p=0.3, metric="pass^k")
        b = plan_comparison(0.04, k=4, p=0.7)
        assert a.problems.tolist() == b.problems.tolist() and a.sigma2_a == b.sigma2_a

    def test_a_pilot_equals_pass_at_k_of_the_mirrored_counts(self):
        """pass^k(n, c, k) = 1 - pass@k(n, n - c, k): a pass^k plan from a pilot is the pass@k plan of the pilot with c -> n - c."""
        g = np.random.default_rng(2)
        ids = [f"t{i}" for i in range(50)]
        n = g.integers(8, 30, 50)
        ca, cb = g.binomial(n, g.beta(2, 1, 50)), g.binomial(n, g.beta(1.5, 1, 50))
        pilot = [Results.from_counts(ids, n, ca, name="A"), Results.from_counts(ids, n, cb, name="B")]
        mirrored = [Results.from_counts(ids, n, n - ca, name="A"), Results.from_counts(ids, n, n - cb, name="B")]
        got = plan_comparison(0.05, k=4, pilot=pilot, metric="pass^k")
        ref = plan_comparison(0.05, k=4, pilot=mirrored)
        assert got.problems.tolist() == ref.problems.tolist()
        assert (got.omega2, got.sigma2_a, got.sigma2_b) == pytest.approx((ref.omega2, ref.sigma2_a, ref.sigma2_b), rel=1e-12)

    def test_cli(self):
        """passatk plan --metric pass^k: the table says pass^4, the JSON carries the metric; a bad metric is one line."""
        out = runner.invoke(app, ["plan", "--delta", "0.05", "-k", "4", "--metric", "pass^k"])
        assert out.exit_code == 0, out.output
        assert "detect a pass^4 difference of 0.05" in out.output
        rec = json.loads(runner.invoke(app, ["plan", "--delta", "0.05", "-k", "4", "--metric", "pass^k", "--json"]).output)
        assert rec["metric"] == "pass^k"
        assert rec["plan"][0]["problems"] == plan_comparison(0.05, k=4, metric="pass^k").problems[0]
        bad = runner.invoke(app, ["plan", "--delta", "0.05", "--metric", "pass#k"])
        assert bad.exit_code == 2 and "`metric` must be one of" in bad.output
