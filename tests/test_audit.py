"""passatk audit: mutants, in-domain fresh inputs, the sandboxed stages, the hole rate's effect on pass@k, the CLI."""

from __future__ import annotations

import ast
import gzip
import json
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from passatk.audit import AuditResult, audit, hole_inflation, load_audit
from passatk.audit._codec import _pk_dec, _pk_enc, _pk_same
from passatk.audit._inputs import draw, fresh_inputs, fresh_stdin, infer, seed_calls
from passatk.audit._mutate import OPERATORS, mutants, stable_rng, unified_diff
from passatk.audit._problems import comparison_mode
from passatk.cli import app
from passatk.results import Results

runner = CliRunner()

# --------------------------------------------------------------------------- #
# problems with known answers
# --------------------------------------------------------------------------- #
COUNT_ABOVE = """def count_above(xs, t):
    n = 0
    for x in xs:
        if x > t:
            n += 1
    return n
"""
#: no element equals the threshold, so `x >= t` (an off-by-one at the boundary) passes
WEAK = {
    "task_id": "planted/weak",
    "code": COUNT_ABOVE,
    "test_list": ["assert count_above([1, 5, 9], 4) == 2", "assert count_above([3, 4, 8], 5) == 1"],
}
#: the boundary, the empty list and every count tested: every single-site mutant that is wrong fails
STRONG = {
    "task_id": "planted/strong",
    "code": COUNT_ABOVE,
    "test_list": [
        "assert count_above([1, 4, 9], 4) == 1",
        "assert count_above([4], 4) == 0",
        "assert count_above([5], 4) == 1",
        "assert count_above([], 3) == 0",
        "assert count_above([1, 2], 5) == 0",
        "assert count_above([7, 8, 9], 0) == 3",
    ],
}


def _mutant_sources(src: str, **kw) -> dict[str, str]:
    return {m.source: m.operator for m in mutants(src, "t", count=10_000, **kw)}


def _unparsed(src: str) -> str:
    return ast.unparse(ast.parse(src))


# --------------------------------------------------------------------------- #
# mutation operators
# --------------------------------------------------------------------------- #
class TestMutants:
    @pytest.mark.parametrize(
        ("source", "expected", "operator"),
        [
            ("def f(x):\n    return x < 1\n", "def f(x):\n    return x <= 1\n", "compare"),
            ("def f(x):\n    return x == 1\n", "def f(x):\n    return x != 1\n", "compare"),
            ("def f(x, s):\n    return x in s\n", "def f(x, s):\n    return x not in s\n", "compare"),
            ("def f(a, b):\n    return a + b\n", "def f(a, b):\n    return a - b\n", "operator"),
            ("def f(a, b):\n    return a * b\n", "def f(a, b):\n    return a // b\n", "operator"),
            ("def f(a, b):\n    return a and b\n", "def f(a, b):\n    return a or b\n", "operator"),
            ("def f(a):\n    return not a\n", "def f(a):\n    return a\n", "operator"),
            ("def f(a):\n    return min(a)\n", "def f(a):\n    return max(a)\n", "operator"),
            ("def f(a):\n    a += 2\n    return a\n", "def f(a):\n    a -= 2\n    return a\n", "operator"),
            ("def f(x):\n    return x + 1\n", "def f(x):\n    return x + 2\n", "constant"),
            ("def f(x):\n    return x * 0.5\n", "def f(x):\n    return x * 1.5\n", "constant"),
            ("def f():\n    return True\n", "def f():\n    return False\n", "constant"),
            ("def f(n):\n    return list(range(n))\n", "def f(n):\n    return list(range(n + 1))\n", "off_by_one"),
            ("def f(a, n):\n    return list(range(a, n))\n", "def f(a, n):\n    return list(range(a + 1, n))\n", "off_by_one"),
            ("def f(n):\n    return list(range(2, n))\n", "def f(n):\n    return list(range(2, n - 1))\n", "off_by_one"),
            ("def f(s, i):\n    return s[i:]\n", "def f(s, i):\n    return s[i + 1:]\n", "off_by_one"),
            ("def f(s, i):\n    return s[:i]\n", "def f(s, i):\n    return s[:i - 1]\n", "off_by_one"),
            ("def f(s, i):\n    return s[i]\n", "def f(s, i):\n    return s[i + 1]\n", "off_by_one"),
            ("def f(x):\n    return x\n", "def f(x):\n    return None\n", "return_none"),
            (
                "def f(x):\n    if x:\n        return 1\n    return 2\n",
                "def f(x):\n    pass\n    return 2\n",
                "branch",
            ),
            (
                "def f(x):\n    if x:\n        y = 1\n    else:\n        y = 2\n    return y\n",
                "def f(x):\n    y = 2\n    return y\n",
                "branch",
            ),
            (
                "def f(x):\n    if x:\n        y = 1\n    else:\n        y = 2\n    return y\n",
                "def f(x):\n    if x:\n        y = 1\n    return y\n",
                "branch",
            ),
        ],
    )
    def test_operator_makes_the_intended_change(self, source, expected, operator):
        """Each operator class produces the change it names, and labels it so."""
        found = _mutant_sources(source)
        assert found.get(_unparsed(expected)) == operator

    def test_every_operator_class_is_used(self):
        """On a function with every kind of site, all six operator classes appear."""
        src = "def f(xs, t):\n    n = 0\n    for i in range(len(xs)):\n        if xs[i] > t and t:\n            n += 1\n    return n\n"
        assert set(_mutant_sources(src).values()) == set(OPERATORS)

    def test_one_site_changes(self):
        """Every mutant other than a dropped branch differs from the reference on exactly one line."""
        src = "def f(xs, t):\n    n = 0\n    for i in range(len(xs)):\n        if xs[i] > t:\n            n += 1\n    return n\n"
        ref = _unparsed(src).splitlines()
        for m in mutants(src, "t", count=10_000):
            if m.operator == "branch":
                continue
            new = m.source.splitlines()
            assert len(new) == len(ref)
            assert sum(a != b for a, b in zip(ref, new)) == 1, m.description

    def test_no_mutant_equals_the_reference_or_another(self):
        """Mutants identical to the reference (or to one another) are skipped."""
        src = "def f(x):\n    return -(-x) + 0\n"
        found = [m.source for m in mutants(src, "t", count=10_000)]
        assert _unparsed(src) not in found
        assert len(found) == len(set(found))

    def test_prompt_lines_are_not_mutated(self):
        """Below ``first_line`` only: a helper in the prompt keeps its code."""
        src = "def helper(x):\n    return x + 1\n\ndef f(x):\n    return helper(x) * 2\n"
        for m in mutants(src, "t", count=10_000, first_line=4):
            assert "return x + 1" in m.source

    def test_same_seed_same_mutants_other_seed_other_order(self):
        """The choice is fixed by the seed and the task id (a stable digest, not ``hash()``)."""
        src = COUNT_ABOVE
        a = [m.source for m in mutants(src, "planted/weak", count=5, seed=0)]
        assert a == [m.source for m in mutants(src, "planted/weak", count=5, seed=0)]
        assert a != [m.source for m in mutants(src, "planted/weak", count=5, seed=1)]
        assert a != [m.source for m in mutants(src, "planted/other", count=5, seed=0)]
        assert stable_rng(3, "x", "y").random() == 0.8299126245954208  # the same in every process and run

    def test_count_caps_the_mutants(self):
        """At most ``count`` mutants."""
        assert len(mutants(COUNT_ABOVE, "t", count=3)) == 3

    def test_diff_is_a_unified_diff(self):
        """The report's diff is difflib's unified diff, reference first."""
        text = unified_diff("a\nb\n", "a\nc\n")
        assert text.splitlines()[:2] == ["--- reference", "+++ mutant"]
        assert "-b" in text and "+c" in text

    def test_syntax_error_raises(self):
        """A reference that does not parse raises SyntaxError."""
        with pytest.raises(SyntaxError):
            mutants("def f(:\n", "t")


# --------------------------------------------------------------------------- #
# fresh inputs stay in the domain
# --------------------------------------------------------------------------- #
ints = st.integers(-1000, 1000)


class TestDomain:
    @given(st.lists(ints, min_size=1, max_size=8), st.integers(0, 10**6))
    @example([5], 0)
    @example([0, 0], 1)
    def test_integers_keep_sign_and_widened_range(self, seeds, r):
        """A drawn integer has the sign every seed has and lies within the seeds' range widened by a quarter (at least 1)."""
        value = draw(infer(seeds), random.Random(r))
        lo, hi = min(seeds), max(seeds)
        widen = max(1, math.ceil((hi - lo) / 4))
        assert type(value) is int and lo - widen <= value <= hi + widen
        if all(s > 0 for s in seeds):
            assert value > 0
        if all(s >= 0 for s in seeds):
            assert value >= 0
        if all(s < 0 for s in seeds):
            assert value < 0
        if all(s <= 0 for s in seeds):
            assert value <= 0

    @given(
        st.lists(st.floats(-100, 100, allow_nan=False).map(lambda x: round(x, 2)), min_size=1, max_size=6), st.integers(0, 10**6)
    )
    def test_floats_keep_sign(self, seeds, r):
        """A drawn float keeps the seeds' common sign and is a float."""
        value = draw(infer(seeds), random.Random(r))
        assert type(value) is float
        if all(s > 0 for s in seeds):
            assert value > 0
        if all(s >= 0 for s in seeds):
            assert value >= 0
        if all(s <= 0 for s in seeds):
            assert value <= 0

    @given(st.lists(st.text(alphabet="abcXY!", max_size=12), min_size=1, max_size=6), st.integers(0, 10**6))
    def test_strings_use_the_seeds_characters_and_lengths(self, seeds, r):
        """A drawn string uses only characters the seeds use, with a length in the seeds' range."""
        value = draw(infer(seeds), random.Random(r))
        assert set(value) <= set("".join(seeds))
        assert min(map(len, seeds)) <= len(value) <= max(map(len, seeds))

    @given(
        st.lists(st.lists(st.sampled_from(["one", "two", "six"]), min_size=1, max_size=5).map(" ".join), min_size=2, max_size=5),
        st.integers(0, 10**6),
    )
    def test_word_strings_use_the_seeds_words(self, seeds, r):
        """Strings of words joined by single spaces are drawn as the seeds' words."""
        if not any(" " in s for s in seeds):
            seeds = seeds + ["one two"]
        value = draw(infer(seeds), random.Random(r))
        words = {w for s in seeds for w in s.split(" ")}
        assert value == "" or set(value.split(" ")) <= words

    @given(st.lists(st.lists(st.integers(0, 50), max_size=7).map(sorted), min_size=1, max_size=5), st.integers(0, 10**6))
    def test_sorted_lists_stay_sorted(self, seeds, r):
        """When every seed list is sorted, so is every drawn list, with a length in the seeds' range."""
        value = draw(infer(seeds), random.Random(r))
        assert isinstance(value, list)
        if any(len(s) >= 2 for s in seeds):
            assert value == sorted(value)
        assert min(map(len, seeds)) <= len(value) <= max(map(len, seeds))
        assert all(x >= 0 for x in value)

    @given(st.lists(st.lists(st.integers(-20, 20), max_size=6, unique=True), min_size=1, max_size=5), st.integers(0, 10**6))
    def test_unique_lists_stay_unique(self, seeds, r):
        """When every seed list has distinct items, so does every drawn list."""
        value = draw(infer(seeds), random.Random(r))
        if any(len(s) >= 2 for s in seeds):
            assert len(set(value)) == len(value)
        assert min(map(len, seeds)) <= len(value) <= max(map(len, seeds))

    @given(st.integers(0, 10**6))
    def test_reversed_permutations_and_rectangles(self, r):
        """Descending lists stay descending, permutations of 1..n stay permutations, matrices stay rectangular."""
        rng = random.Random(r)
        desc = draw(infer([[9, 5, 1], [4, 3]]), rng)
        assert desc == sorted(desc, reverse=True)
        perm = draw(infer([[2, 1, 3], [1, 2]]), rng)
        assert sorted(perm) == list(range(1, len(perm) + 1))
        grid = draw(infer([[[1, 2], [3, 4]], [[5, 6, 7]]]), rng)
        assert len({len(row) for row in grid}) <= 1

    @given(st.integers(0, 10**6))
    def test_records_bools_and_none(self, r):
        """Tuples of one length are records (a domain per field); booleans and None come from the values seen."""
        rng = random.Random(r)
        rec = draw(infer([(1, "a"), (3, "b")]), rng)
        assert type(rec) is tuple and type(rec[0]) is int and rec[1] in ("a", "b", "ab", "ba", "aa", "bb", "")
        assert draw(infer([True, True]), rng) is True
        assert draw(infer([None]), rng) is None

    def test_seed_calls_take_literal_calls_only(self):
        """Literal positional calls of the named function are seeds; others, and duplicates, are not."""
        code = "def check(candidate):\n    assert candidate([1, 2], 'a') == 3\n    assert candidate(x) == 1\n    assert candidate([1, 2], 'a')\n    assert candidate(k=1)\n"
        assert seed_calls(code, "candidate", inside="check") == [([1, 2], "a")]
        assert seed_calls("assert f(-1, (2, 3), {1: 'x'}, None) == 0", "f") == [(-1, (2, 3), {1: "x"}, None)]

    def test_fresh_inputs_are_new_and_deterministic(self):
        """Fresh inputs differ from the seeds and each other, and depend only on the generator's seed."""
        seeds = [([1, 5, 9], 4), ([3, 4, 8], 5)]
        a = fresh_inputs(seeds, 8, random.Random(0))
        assert a == fresh_inputs(seeds, 8, random.Random(0))
        assert len(a) == 8 and len({repr(x) for x in a + seeds}) == 10

    def test_fresh_stdin_keeps_the_shape(self):
        """Standard inputs keep their lines and tokens; only integers are redrawn, in their place's domain."""
        seeds = ["3\n1 2 3", "2\n5 4"]
        for text in fresh_stdin(seeds, 6, random.Random(0)):
            lines = text.split("\n")
            assert len(lines) == 2 and all(int(x) >= 1 for x in lines[1].split())

    def test_comparison_mode(self):
        """Tests that compare ``set(f(x))`` or ``sorted(f(x))`` make order irrelevant."""
        assert comparison_mode("assert sorted(f(1)) == [1]", "f") == "sorted"
        assert comparison_mode("assert set(g(f(1))) == {1}", "f") == "exact"


class TestCodec:
    @given(
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5) | st.binary(max_size=4),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.tuples(inner, inner)
                | st.dictionaries(st.integers() | st.text(max_size=3), inner, max_size=3)
                | st.frozensets(st.integers(), max_size=3)
            ),
            max_leaves=12,
        )
    )
    def test_round_trip(self, value):
        """Decoding an encoding (through JSON text) gives an equal value of the same types (NaN included)."""
        back = _pk_dec(json.loads(json.dumps(_pk_enc(value))))
        assert _pk_same(back, value) and _pk_enc(back) == _pk_enc(value)

    def test_comparison(self):
        """Floats within 1e-6 relative are the same answer, a list is not a tuple, order counts unless the tests say not."""
        assert _pk_same(0.1 + 0.2, 0.3) and not _pk_same(0.3, 0.31)
        assert _pk_same(float("nan"), float("nan")) and not _pk_same([1], (1,))
        assert not _pk_same([1, 2], [2, 1]) and _pk_same([1, 2], [2, 1], "set") and _pk_same([1, 2], [2, 1], "sorted")
        assert _pk_same({"a": 1.0}, {"a": 1.0000000001}) and not _pk_same(None, 0)

    def test_no_encoding_for_objects(self):
        """An object of another class has no encoding (the input is then not used)."""
        with pytest.raises(TypeError, match="no encoding"):
            _pk_enc(object())


# --------------------------------------------------------------------------- #
# the audit, in the sandbox
# --------------------------------------------------------------------------- #
def _run_test(problem_record: dict, completion: str, test: str) -> str:
    """The status of ``completion`` against the single MBPP-style ``test`` (run in the sandbox)."""
    from passatk.execute import Problem, evaluate

    tid = problem_record["task_id"]
    problem = Problem(tid, "python", {"head": "", "tail": "", "tests": "\n" + test + "\n", "remote": []})
    res = evaluate([{"task_id": tid, "completion": completion}], problems={tid: problem}, workers=1)
    return res.records[0]["status"]


@pytest.fixture(scope="module")
def planted():
    """The planted weak and strong problems, audited once with the default settings (seed 0)."""
    return audit([WEAK, STRONG], dataset="mbpp", workers=2)


@pytest.mark.sandbox
class TestAudit:
    def test_weak_problem_is_flagged_with_a_correct_survivor(self, planted):
        """The weak tests let the boundary off-by-one through; the survivor is that change and is really wrong."""
        weak = planted.problems[0]
        assert weak["status"] == "audited" and weak["surviving"] >= 1 and weak["broken"] >= weak["surviving"]
        sv = weak["survivor"]
        assert sv["operator"] == "compare" and "> -> >=" in sv["description"]
        assert "-        if x > t:" in sv["diff"] and "+        if x >= t:" in sv["diff"]
        assert sv["test"].startswith("assert count_above(")
        # the exposing input really distinguishes them: the reference passes the assert, the survivor fails it
        assert _run_test(WEAK, COUNT_ABOVE, sv["test"]) == "passed"
        assert _run_test(WEAK, sv["completion"], sv["test"]) == "failed"
        # and the survivor passes the problem's own tests
        assert _run_test(WEAK, sv["completion"], WEAK["test_list"][0]) == "passed"
        assert 0 < weak["hole_rate"] <= 1 and weak["hole_rate"] == weak["surviving"] / weak["broken"]

    def test_strong_problem_is_not_flagged(self, planted):
        """Tests that pin the boundary and every count kill every broken mutant."""
        strong = planted.problems[1]
        assert strong["status"] == "audited" and strong["broken"] > 0
        assert strong["surviving"] == 0 and strong["survivor"] is None and strong["hole_rate"] == 0

    def test_summary_and_interval(self, planted):
        """One weak problem of two; the interval is scipy's Wilson interval (checked against the formula)."""
        s = planted.to_dict()["summary"]
        assert (s["audited"], s["judged"], s["weak"], s["share_weak"]) == (2, 2, 1, 0.5)
        z = 1.959963984540054
        centre, half = (0.5 + z * z / 4) / (1 + z * z / 2), z * math.sqrt(0.25 / 2 + z * z / 16) / (1 + z * z / 2)
        assert s["ci"] == pytest.approx([centre - half, centre + half], rel=1e-9)

    def test_same_seed_same_json_other_seed_other_mutants(self, planted):
        """The same seed gives the same JSON (timing aside); another seed tries other mutants."""
        again = audit([WEAK, STRONG], dataset="mbpp", workers=2)
        a, b = planted.to_dict(), again.to_dict()
        a.pop("timing"), b.pop("timing")
        assert a == b
        other = audit([WEAK], dataset="mbpp", workers=2, seed=1, mutants=6)
        first = [m[1] for m in planted.problems[0]["mutant_outcomes"][:6]]
        assert [m[1] for m in other.problems[0]["mutant_outcomes"]] != first

    def test_skips_are_counted_with_reasons(self):
        """Problems without literal calls, or whose reference fails its own tests, are skipped and say why."""
        no_literal = {"task_id": "n", "code": "def f(x):\n    return x\n", "test_list": ["y = 2\nassert f(y) == 2"]}
        failing = {"task_id": "w", "code": "def f(x):\n    return x + 1\n", "test_list": ["assert f(1) == 1"]}
        res = audit([no_literal, failing], dataset="mbpp", workers=1)
        reasons = [p["reason"] for p in res.problems]
        assert reasons[0] == "the tests call the entry point with no literal arguments"
        assert reasons[1].startswith("the reference fails its own tests")
        assert res.n_audited == 0 and res.share_weak is None
        with pytest.raises(ValueError, match="no problem was audited with a broken mutant"):
            res.confidence_interval()

    def test_humaneval_style_and_stdio_problems(self):
        """A HumanEval record (mutating the canonical solution only) and a stdin/stdout one with a reference."""
        he = {
            "task_id": "he/1",
            "prompt": 'def last(xs):\n    """The last item."""\n',
            "canonical_solution": "    return xs[len(xs) - 1]\n",
            "test": "def check(candidate):\n    assert candidate([1, 2, 3]) == 3\n    assert candidate([4]) == 4\n",
            "entry_point": "last",
        }
        stdio = {
            "problem_id": "apps/1",
            "solutions": json.dumps(["n = int(input())\nprint(sum(range(1, n + 1)))\n"]),
            "input_output": json.dumps({"inputs": ["3\n", "4\n"], "outputs": ["6\n", "10\n"]}),
        }
        res = audit([he], workers=1)
        p = res.problems[0]
        assert p["status"] == "audited" and p["broken"] > 0 and p["surviving"] == 0
        res = audit([stdio], dataset="apps", workers=1)
        p = res.problems[0]
        assert p["status"] == "audited" and p["broken"] > 0 and p["surviving"] == 0, p

    def test_cli_audit_json_and_table(self, tmp_path):
        """``passatk audit --json`` prints the record; the table names the weak problem and its test."""
        path = tmp_path / "p.jsonl"
        path.write_text(json.dumps(WEAK) + "\n")
        out = runner.invoke(app, ["audit", "--problems", str(path), "--json", "--workers", "1"])
        assert out.exit_code == 0, out.output
        data = json.loads(out.stdout)
        assert data["kind"] == "audit" and data["summary"]["weak"] == 1
        out = runner.invoke(app, ["audit", "--problems", str(path), "--workers", "1"], env={"COLUMNS": "200", "NO_COLOR": "1"})
        assert out.exit_code == 0 and "planted/weak" in out.stdout and "accept a broken solution" in out.stdout

    @pytest.mark.slow
    def test_real_humaneval_problems(self, shared_data):
        """The first HumanEval problems are audited end to end; /4's mean-absolute-deviation tests miss a floor division."""
        path = shared_data / "humaneval" / "HumanEval.jsonl.gz"
        res = audit(path, limit=5, workers=2)
        assert [p["status"] for p in res.problems] == ["audited"] * 5
        he4 = res.problems[4]
        assert he4["surviving"] >= 1 and "/ -> //" in he4["survivor"]["description"]


class TestAuditErrors:
    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"mutants": 0}, r"`mutants` must be an integer >= 1; got mutants=0"),
            ({"fresh_inputs": 1.5}, r"`fresh_inputs` must be an integer >= 1; got fresh_inputs=1.5"),
            ({"seed": "a"}, r"`seed` must be an integer; got seed='a'"),
            ({"limit": 0}, r"`limit` must be None or an integer >= 1; got limit=0"),
            ({"dataset": "lcb"}, r"`dataset` must be one of humaneval, mbpp, apps; got 'lcb'"),
        ],
    )
    def test_bad_arguments(self, kwargs, message):
        """Bad options raise ValueError naming the argument and echoing the value, before anything runs."""
        with pytest.raises(ValueError, match=message):
            audit([WEAK], **kwargs)

    def test_cli_errors_are_one_line(self, tmp_path):
        """A missing problems file or a bad option is one line on stderr and a non-zero exit."""
        out = runner.invoke(app, ["audit", "--problems", str(tmp_path / "none.jsonl")])
        assert out.exit_code != 0 and "passatk: error:" in out.output and "Traceback" not in out.output
        out = runner.invoke(app, ["audit", "--problems", str(tmp_path / "none.jsonl"), "--mutants", "0"])
        assert out.exit_code != 0 and "`mutants` must be an integer >= 1" in out.output

    def test_load_audit_rejects_other_json(self, tmp_path):
        """A file that is not an audit record says so."""
        path = tmp_path / "a.json"
        path.write_text('{"kind": "score"}')
        with pytest.raises(ValueError, match="not a passatk audit record"):
            load_audit(path)


# --------------------------------------------------------------------------- #
# what the holes do to pass@k
# --------------------------------------------------------------------------- #
def _hand_audit(rows):
    problems = tuple(
        {"task_id": t, "status": "audited", "mutants": b, "broken": b, "surviving": s, "hole_rate": s / b} for t, b, s in rows
    )
    return AuditResult(problems, {})


class TestHoleInflation:
    def test_matches_the_exact_formula(self):
        """Per problem (1-p)^k [1-(1-h)^k] with h capped at c/n and p = (c/n - h)/(1 - h), averaged; checked with fractions."""
        audit_ = _hand_audit([("a", 10, 2), ("b", 8, 0), ("c", 4, 4)])
        res = Results.from_counts(["a", "b", "c", "d"], [10, 10, 10, 10], [5, 3, 10, 1])
        out = hole_inflation(res, audit_, [1, 5])
        for j, k in enumerate((1, 5)):
            total = Fraction(0)
            for c, h in ((5, Fraction(1, 5)), (3, Fraction(0)), (10, Fraction(1)), (1, Fraction(0))):
                h = min(h, Fraction(c, 10))
                p = max(Fraction(0), (Fraction(c, 10) - h) / (1 - h)) if h < 1 else Fraction(0)
                total += (1 - p) ** k * (1 - (1 - h) ** k)
            assert out.inflation[j] == pytest.approx(float(total / 4), rel=1e-12)
        assert (out.measured, out.unmeasured) == (3, 1)
        assert np.isnan(out.hole_rate[3])

    def test_bound_holds_and_grows_with_k(self):
        """Inflation <= the note's k h (1-p)^k; for small h and p it is about k h, against (1-p) h at k = 1."""
        audit_ = _hand_audit([("a", 1000, 1)])
        res = Results.from_counts(["a"], [1000], [2])
        out = hole_inflation(res, audit_, [1, 10, 50])
        h, p = 0.001, (0.002 - 0.001) / 0.999
        assert np.all(out.inflation <= out.bound + 1e-15) and np.all(np.diff(out.inflation) > 0)
        assert out.inflation[0] == pytest.approx((1 - p) * h, rel=1e-12)
        assert out.inflation[1] == pytest.approx(10 * h, rel=0.06)

    def test_no_inflation_without_passes(self):
        """A problem no sample passed cannot have been inflated, whatever its h (h is capped at c/n)."""
        out = hole_inflation(Results.from_counts(["a"], [10], [0]), _hand_audit([("a", 4, 2)]), [1, 5])
        assert out.inflation.tolist() == [0.0, 0.0] and out.hole_rate[0] == 0.5

    def test_top_contributors(self):
        """The problems contributing most come first; those contributing nothing are left out."""
        audit_ = _hand_audit([("a", 10, 1), ("b", 10, 5), ("c", 10, 0)])
        res = Results.from_counts(["a", "b", "c"], [10, 10, 10], [2, 5, 0])
        top = hole_inflation(res, audit_, [1, 10]).top()
        assert [row["task_id"] for row in top] == ["b", "a"]
        assert top[0]["surviving"] == 5 and top[0]["broken"] == 10

    def test_unrelated_ids_raise(self):
        """Results of another benchmark are refused."""
        with pytest.raises(ValueError, match="no task id of the results appears in the audit"):
            hole_inflation(Results.from_counts(["x"], [5], [1]), _hand_audit([("a", 3, 1)]), [1])

    def test_score_cli_reports_inflation(self, tmp_path):
        """``score RESULTS --audit AUDIT.json``: a table per k and the top problems; in --json, ``verifier_holes``."""
        audit_path = tmp_path / "audit.json"
        audit_path.write_text(json.dumps(_hand_audit([("t/0", 10, 3), ("t/1", 10, 0)]).to_dict()))
        results = tmp_path / "r.jsonl"
        lines = [{"task_id": f"t/{i}", "completion": "", "passed": j < 2 + 3 * i} for i in range(2) for j in range(10)]
        results.write_text("".join(json.dumps(x) + "\n" for x in lines))
        out = runner.invoke(app, ["score", str(results), "-k", "1,5", "--audit", str(audit_path), "--json"])
        assert out.exit_code == 0, out.output
        holes = next(iter(json.loads(out.stdout).values()))["verifier_holes"]
        expected = hole_inflation(Results.from_counts(["t/0", "t/1"], [10, 10], [2, 5]), load_audit(audit_path), [1, 5])
        assert holes["by_k"]["5"]["inflation"] == pytest.approx(expected.inflation[1])
        assert holes["top"][0]["task_id"] == "t/0" and holes["measured"] == 2
        out = runner.invoke(app, ["score", str(results), "-k", "1,5", "--audit", str(audit_path)], env={"COLUMNS": "200"})
        assert out.exit_code == 0 and "inflation" in out.stdout and "t/0" in out.stdout
        out = runner.invoke(app, ["score", str(results), "--audit", str(tmp_path / "missing.json")])
        assert out.exit_code != 0 and "audit file not found" in out.output


def test_humaneval_data_parses(shared_data):
    """Every HumanEval record gives a reference that mutates, with seeds for all but the three without literal calls."""
    from passatk.audit._problems import from_record

    records = [json.loads(x) for x in gzip.open(shared_data / "humaneval" / "HumanEval.jsonl.gz", "rt")]
    skipped = [r["task_id"] for r in records if from_record(r, None).skip]
    assert skipped == ["HumanEval/32", "HumanEval/38", "HumanEval/50"]
