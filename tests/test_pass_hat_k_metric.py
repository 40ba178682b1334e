"""metric="pass^k" through summarize, compare, curves and crossover, and --metric through score, compare and curve."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings

from passatk import Results, compare, compare_all, crossover, curves, pass_hat_k, summarize, variance_estimate
from strategies import benchmarks, model_pairs

IDS = [f"t{i}" for i in range(12)]
A = Results.from_counts(IDS, [16] * 12, [16, 15, 12, 9, 8, 8, 4, 3, 1, 0, 16, 14], name="A")
B = Results.from_counts(IDS, [16] * 12, [13, 12, 12, 10, 6, 9, 6, 6, 5, 2, 10, 9], name="B")


class TestSummarizePassHatK:
    @given(benchmarks())
    @settings(max_examples=40, deadline=None)
    def test_estimate_is_mean_of_pass_hat_k(self, bench):
        """The estimate is the mean of pass_hat_k; per_problem is pass_hat_k; var_within is sum of its variance estimates / N^2."""
        res, k = bench
        s = summarize(res, [1, k], metric="pass^k")
        values = pass_hat_k(res.n, res.c, [1, k])
        np.testing.assert_array_equal(s.per_problem, values)
        np.testing.assert_allclose(s.estimate, values.mean(axis=0), rtol=1e-15, atol=0)
        vhat = variance_estimate(res.n, res.c, [1, k], metric="pass^k")
        np.testing.assert_allclose(s.var_within, vhat.sum(axis=0) / len(res) ** 2, rtol=1e-12, atol=1e-300)
        assert s.metric == "pass^k" and s.to_dict()["metric"] == "pass^k"

    @pytest.mark.parametrize("method", ["t", "normal", "wilson", "percentile", "bca"])
    def test_every_interval_method(self, method):
        """Every interval method works on pass^k, holds the estimate and lies in [0, 1] where it is clipped."""
        s = summarize(A, [1, 2, 4, 8], metric="pass^k", method=method, n_resamples=500)
        assert (s.ci.low <= s.estimate + 1e-12).all() and (s.estimate <= s.ci.high + 1e-12).all()
        assert (s.ci.low >= -1e-12).all() and (s.ci.high <= 1 + 1e-12).all()
        again = s.confidence_interval(0.9)
        assert (again.high - again.low <= s.ci.high - s.ci.low + 1e-12).all()

    def test_spread_se_and_fixed_target(self):
        """The population SE is the spread of pass_hat_k over sqrt(N); the fixed SE is sqrt(sum V_hat)/N."""
        values = pass_hat_k(A.n, A.c, [2, 8])
        s = summarize(A, [2, 8], metric="pass^k")
        np.testing.assert_allclose(s.se, values.std(axis=0, ddof=1) / np.sqrt(12), rtol=1e-12)
        f = summarize(A, [2, 8], metric="pass^k", target="fixed")
        vhat = variance_estimate(A.n, A.c, [2, 8], metric="pass^k")
        np.testing.assert_allclose(f.se, np.sqrt(vhat.sum(axis=0)) / 12, rtol=1e-12)

    def test_k1_agrees_with_pass_at_k(self):
        """At k = 1 both metrics are c/n, so the two summaries agree."""
        a, b = summarize(A, 1, metric="pass^k"), summarize(A, 1)
        np.testing.assert_array_equal(a.estimate, b.estimate)
        np.testing.assert_array_equal(a.se, b.se)

    def test_errors(self):
        """An unknown metric and k > n are ValueErrors naming them."""
        with pytest.raises(ValueError, match=r"`metric` must be one of 'pass@k', 'pass\^k'"):
            summarize(A, 1, metric="pass^^k")
        with pytest.raises(ValueError, match=r"pass\^17 cannot be estimated .*problem 't0'"):
            summarize(A, 17, metric="pass^k")


class TestComparePassHatK:
    @given(model_pairs())
    @settings(max_examples=30, deadline=None)
    def test_difference_is_mean_of_paired_pass_hat_k(self, pair):
        """The difference is the mean, over shared problems, of pass_hat_k(A) - pass_hat_k(B); the SE is their spread."""
        a, b, k = pair
        cmp = compare(a, b, k, metric="pass^k")
        sa, sb = a.subset(list(cmp.task_ids)), b.subset(list(cmp.task_ids))
        d = pass_hat_k(sa.n, sa.c, [k]) - pass_hat_k(sb.n, sb.c, [k])
        np.testing.assert_allclose(cmp.difference, d.mean(axis=0), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(cmp.se, d.std(axis=0, ddof=1) / np.sqrt(len(d)), rtol=1e-12, atol=1e-15)
        assert cmp.metric == "pass^k" and cmp.to_dict()["metric"] == "pass^k"

    def test_compare_all_passes_the_metric(self):
        """compare_all compares pass^k for every pair."""
        c = Results.from_counts(IDS, [16] * 12, [16] * 6 + [0] * 6, name="C")
        out = compare_all({"A": A, "B": B, "C": c}, [1, 4], metric="pass^k")
        assert [x.metric for x in out] == ["pass^k"] * 3
        np.testing.assert_allclose(out[0].difference, compare(A, B, [1, 4], metric="pass^k").difference)


class TestCurvesPassHatK:
    def test_curves_and_crossover(self):
        """Curves of pass^k are summarize(metric="pass^k") on the grid; crossover uses pass_hat_k per problem."""
        out = curves({"A": A, "B": B}, metric="pass^k")
        s = out.summaries["A"]
        assert s.ks == (1, 2, 4, 8, 16) and s.metric == "pass^k"
        np.testing.assert_allclose(s.estimate, pass_hat_k(A.n, A.c, list(s.ks)).mean(axis=0), rtol=1e-15)
        assert (np.diff(s.estimate) <= 1e-15).all()  # pass^k falls with k
        x = crossover(A, B, metric="pass^k", n_resamples=200)
        want = (pass_hat_k(A.n, A.c, list(range(1, 17))) - pass_hat_k(B.n, B.c, list(range(1, 17)))).mean(axis=0)
        np.testing.assert_allclose(x.difference, want, rtol=1e-12, atol=1e-15)
        assert out.to_dict()["models"]["A"]["metric"] == "pass^k"

    def test_extrapolation_is_pass_at_k_only(self):
        """extrapolate_to with pass^k is refused, not silently a pass@k extrapolation."""
        with pytest.raises(ValueError, match=r"`extrapolate_to` is for pass@k only"):
            curves(A, metric="pass^k", extrapolate_to=64)


typer = pytest.importorskip("typer", reason="the cli extra")
from typer.testing import CliRunner  # noqa: E402

from passatk.cli import app  # noqa: E402

runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})


def _counts(tmp_path, res: Results, name: str):
    p = tmp_path / f"{name}.csv"
    p.write_text("task_id,n,c\n" + "".join(f"{t},{n},{c}\n" for t, n, c in zip(res.task_ids, res.n, res.c)))
    return p


class TestCliMetric:
    def test_score_json_matches_api(self, tmp_path):
        """score --metric pass^k --json: options.metric says so, and every estimate, SE and CI is summarize's."""
        path = _counts(tmp_path, A, "a")
        res = runner.invoke(app, ["score", str(path), "-k", "1,4,8", "--metric", "pass^k", "--json"])
        assert res.exit_code == 0, res.output
        rec = json.loads(res.stdout)["a"]
        assert rec["options"]["metric"] == "pass^k" and rec["metric"] == "pass^k"
        s = summarize(load(path), [1, 4, 8], metric="pass^k", rng=0)
        for j, k in enumerate((1, 4, 8)):
            e = rec["pass_at_k"][str(k)]
            assert e["estimate"] == pytest.approx(float(s.estimate[j]), abs=1e-15)
            assert e["se"] == pytest.approx(float(s.se[j]), abs=1e-15)
            assert e["ci"] == pytest.approx([float(s.ci.low[j]), float(s.ci.high[j])], abs=1e-15)

    @pytest.mark.parametrize("ci", ["wilson", "bca"])
    def test_score_table_and_markdown_name_the_metric(self, tmp_path, ci):
        """The table and the Markdown label rows pass^k, for any --ci."""
        path = _counts(tmp_path, A, "a")
        res = runner.invoke(app, ["score", str(path), "-k", "1,4", "--metric", "pass^k", "--ci", ci])
        assert res.exit_code == 0, res.output
        assert "pass^4" in res.stdout and "pass^k (unbiased" in res.stdout and "pass@4" not in res.stdout
        md = runner.invoke(app, ["score", str(path), "-k", "4", "--metric", "pass^k", "--format", "markdown"])
        assert md.exit_code == 0 and "**pass^k**" in md.stdout and "| pass^4 |" in md.stdout

    def test_default_is_pass_at_k(self, tmp_path):
        """Without --metric the record says pass@k and the numbers are pass@k's."""
        path = _counts(tmp_path, A, "a")
        rec = json.loads(runner.invoke(app, ["score", str(path), "-k", "4", "--json"]).stdout)["a"]
        assert rec["options"]["metric"] == "pass@k"
        assert rec["pass_at_k"]["4"]["estimate"] == pytest.approx(float(summarize(A, 4).estimate[0]), abs=1e-15)

    def test_compare_json_matches_api(self, tmp_path):
        """compare --metric pass^k --json: options.metric and the differences are compare(metric="pass^k")'s."""
        pa, pb = _counts(tmp_path, A, "a"), _counts(tmp_path, B, "b")
        res = runner.invoke(app, ["compare", str(pa), str(pb), "-k", "1,4", "--metric", "pass^k", "--json"])
        assert res.exit_code == 0, res.output
        rec = json.loads(res.stdout)[0]
        assert rec["options"]["metric"] == "pass^k" and rec["metric"] == "pass^k"
        cmp = compare(load(pa), load(pb), [1, 4], metric="pass^k")
        for j, k in enumerate((1, 4)):
            assert rec["pass_at_k"][str(k)]["difference"] == pytest.approx(float(cmp.difference[j]), abs=1e-15)
            assert rec["pass_at_k"][str(k)]["p_value"] == pytest.approx(float(cmp.p_value[j]), abs=1e-15)
        table = runner.invoke(app, ["compare", str(pa), str(pb), "-k", "4", "--metric", "pass^k"])
        assert table.exit_code == 0 and "pass^k: A - B" in table.stdout

    def test_curve_json_matches_api(self, tmp_path):
        """curve --metric pass^k --json: each model's summary is curves(metric="pass^k")'s."""
        pa, pb = _counts(tmp_path, A, "a"), _counts(tmp_path, B, "b")
        res = runner.invoke(app, ["curve", str(pa), str(pb), "--metric", "pass^k", "--json"])
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        want = curves({"a": load(pa), "b": load(pb)}, metric="pass^k", rng=0).to_dict()
        for name in ("a", "b"):
            assert doc["models"][name]["metric"] == "pass^k"
            for k, e in want["models"][name]["pass_at_k"].items():
                assert doc["models"][name]["pass_at_k"][k]["estimate"] == pytest.approx(e["estimate"], abs=1e-15)
                assert doc["models"][name]["pass_at_k"][k]["ci"] == pytest.approx(e["ci"], abs=1e-15)
        table = runner.invoke(app, ["curve", str(pa), "--metric", "pass^k"])
        assert table.exit_code == 0 and "pass^k curve" in table.stdout

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["score", "--metric", "pass#k"], "`--metric` must be pass@k or pass^k; got --metric=pass#k"),
            (["score", "-k", "17", "--metric", "pass^k"], "pass^17 cannot be estimated"),
            (["compare", "--metric", "pass#k"], "`metric` must be one of"),
            (["curve", "--metric", "pass^k", "--extrapolate-to", "64"], "`extrapolate_to` is for pass@k only"),
        ],
    )
    def test_user_errors(self, tmp_path, args, message):
        """A bad --metric, k > n, or pass^k with --extrapolate-to is a one-line error, exit 2."""
        pa, pb = _counts(tmp_path, A, "a"), _counts(tmp_path, B, "b")
        files = [str(pa), str(pb)] if args[0] == "compare" else [str(pa)]
        res = runner.invoke(app, [args[0], *files, *args[1:]])
        assert res.exit_code == 2, res.output
        assert message in res.stderr and "Traceback" not in res.output


def load(path):
    from passatk import load_results

    return load_results(path)


class TestGatesMetric:
    def test_fail_under_and_fail_if_worse_name_pass_hat_k(self, tmp_path):
        """The CI gates read the pass^k numbers and say pass^k in their messages."""
        pa = _counts(tmp_path, A, "a")
        res = runner.invoke(app, ["score", str(pa), "-k", "4", "--metric", "pass^k", "--fail-under", "4=0.99"])
        assert res.exit_code == 1 and "pass^4 = " in res.output
        worse = Results.from_counts(IDS, [16] * 12, [0] * 12, name="W")
        pw = _counts(tmp_path, worse, "w")
        res = runner.invoke(app, ["compare", str(pa), str(pw), "-k", "1", "--metric", "pass^k", "--fail-if-worse"])
        assert res.exit_code == 1 and "w is worse than a at pass^1" in res.output
