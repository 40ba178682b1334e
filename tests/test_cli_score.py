"""Tests of `passatk score` through typer's CliRunner (colour off)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("typer", reason="the cli extra")
from typer.testing import CliRunner  # noqa: E402

from passatk import load_results, pass_at_k  # noqa: E402
from passatk.cli import app  # noqa: E402

runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})


def test_score_json_on_real_minif2f(shared_data):
    """--json gives one record per prover with problems, samples and pass@k equal to the library's."""
    path = shared_data / "minif2f" / "proof_outcomes_by_problem.json"
    res = runner.invoke(app, ["score", str(path), "-k", "1,8,24", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    models = load_results(path)
    assert set(out) == set(models)
    for name, r in models.items():
        assert out[name]["problems"] == 244 and out[name]["samples"] == 244 * 24
        for k in (1, 8, 24):
            want = float(np.mean(pass_at_k(r.n, r.c, k)))
            assert out[name]["pass_at_k"][str(k)]["estimate"] == pytest.approx(want, abs=1e-15)


def test_score_table_lists_models_and_ks(shared_data):
    """The table names every model and every k."""
    path = shared_data / "minif2f" / "proof_outcomes_by_problem.json"
    res = runner.invoke(app, ["score", str(path), "-k", "1,24"])
    assert res.exit_code == 0, res.output
    for text in ("DeepSeek-Prover-V2-7B", "pass@1", "pass@24", "244"):
        assert text in res.stdout


def test_default_ks_stop_at_smallest_n(tmp_path):
    """Without -k, the default 1, 10, 100 stops at the smallest n (stated, not silent)."""
    p = tmp_path / "c.csv"
    p.write_text("task_id,n,c\na,20,3\nb,50,0\n")
    out = json.loads(runner.invoke(app, ["score", str(p), "--json"]).stdout)
    assert list(out["c"]["pass_at_k"]) == ["1", "10"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-k", "1,25"], "problem '0' (index 0) has n=24 < k=25"),
        (["-k", "one"], "-k must be comma-separated integers"),
        (["-k", "0"], "-k values must be integers >= 1"),
    ],
)
def test_user_errors_are_one_line(shared_data, args, message):
    """User errors print one line to stderr and exit 2 (1 is a failed CI gate), with no traceback."""
    path = shared_data / "minif2f" / "proof_outcomes_by_problem.json"
    res = runner.invoke(app, ["score", str(path), *args])
    assert res.exit_code == 2
    assert message in res.stderr and "Traceback" not in res.output
    assert len(res.stderr.strip().splitlines()) == 1


def test_bad_file_names_line(tmp_path):
    """A malformed results file is reported with its line number."""
    p = tmp_path / "r.jsonl"
    p.write_text('{"task_id": "a", "passed": true}\nnot json\n')
    res = runner.invoke(app, ["score", str(p)])
    assert res.exit_code == 2 and "r.jsonl:2: not valid JSON" in res.stderr
