"""A failing assert of the tests says which assert, its call's arguments, and the value got and expected."""

import gzip
import json
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from passatk.cli import app
from passatk.execute import Verifier, evaluate
from passatk.execute._worker.asserts import explain

pytestmark = pytest.mark.sandbox

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "humaneval"


@pytest.fixture(scope="module")
def verifier():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with Verifier(workers=1) as v:
            yield v


class TestDetails:
    @pytest.mark.parametrize(
        "source, tests, detail",
        [
            (
                "def f(x): return x + 1",
                "def check(candidate):\n    assert candidate(1) == 3\ncheck(f)",
                "AssertionError: assert candidate(1) == 3: candidate(1) returned 2; expected 3",
            ),
            (
                "def f(x): return x + 1",
                "def check(candidate):\n    for i in range(5):\n        assert candidate(i) < 3, 'small'\ncheck(f)",
                "AssertionError: assert candidate(i) < 3: candidate(2) returned 3; expected it < 3 (small)",
            ),
            ("def f(x): return False", "assert f(2)", "AssertionError: assert f(2): f(2) returned False"),
            (
                "def f(x): return 'ab'",
                "assert f(1) in ('a', 'b')",
                "AssertionError: assert f(1) in ('a', 'b'): f(1) returned 'ab'; expected it in ('a', 'b')",
            ),
            (
                "def f(x): return 0.5",
                "assert abs(f(2) - 0.25) < 1e-6",
                "AssertionError: assert abs(f(2) - 0.25) < 1e-6: abs(0.25) returned 0.25; expected it < 1e-06",
            ),
            ("x = 3", "assert x == 4", "AssertionError: assert x == 4: got 3; expected 4"),
            (
                "def f(x): return x",
                ["assert f(1) == 1", "assert f(2) == 3"],
                "case 1: AssertionError: assert f(2) == 3: f(2) returned 2; expected 3",
            ),
        ],
    )
    def test_detail(self, verifier, source, tests, detail):
        """The verdict's detail names the assert, the call and its arguments as evaluated, got and expected."""
        (v,) = verifier.verify([{"source": source, "tests": tests}])
        assert (v.status, v.detail) == ("failed", detail)

    def test_operands_evaluated_once(self, verifier):
        """The rewritten assert calls the sample exactly as often as the original: once per operand."""
        source = "calls = []\ndef f(x):\n    calls.append(x)\n    return len(calls)"
        (v,) = verifier.verify([{"source": source, "tests": "assert f(0) == 1\nassert f(0) == 2\nassert f(0) == 4"}])
        assert v.detail == "AssertionError: assert f(0) == 4: f(0) returned 3; expected 4"

    def test_passing_asserts_unchanged(self, verifier):
        """Asserts that hold still pass, with starred calls, keywords and chained comparisons left as written."""
        tests = "assert f(*[1]) == 2\nassert f(x=1) == 2\nassert 1 < f(1) < 3\nassert f(1)"
        (v,) = verifier.verify([{"source": "def f(x): return x + 1", "tests": tests}])
        assert v.status == "passed"

    def test_bounded_values(self):
        """Long values are shown bounded (reprlib), never in full."""
        text = explain("f(1) == y", op="==", left=list(range(1000)), right="x" * 1000, call="f", args=[1])
        assert len(text) < 200 and text.startswith("assert f(1) == y: f(1) returned [0, 1, 2, 3, 4, 5, 6, 7, ...]")


@pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data/humaneval (HumanEval and the CodeGen samples)")
def test_codegen_failures_name_the_assert(tmp_path):
    """Every failing CodeGen sample of the first 10 HumanEval problems says what failed, in the results file and the report."""
    with gzip.open(DATA / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz", "rt") as fh:
        samples = [r for r in map(json.loads, fh) if int(r["task_id"].split("/")[1]) < 10]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = evaluate(path, DATA / "HumanEval.jsonl.gz", dataset="humaneval", workers=2)
    failed = [r["result"] for r in result.records if r["status"] == "failed"]
    assert len(failed) > 100
    bare = [d for d in failed if d.strip() in ("failed: AssertionError:", "failed: AssertionError")]
    assert bare == []
    assert sum("returned" in d and "expected" in d for d in failed) > 0.9 * len(failed)
    report = tmp_path / "r.html"
    out = CliRunner().invoke(app, ["report", str(result.path), "--output", str(report)])
    assert out.exit_code == 0, out.output
    assert "returned" in report.read_text()
