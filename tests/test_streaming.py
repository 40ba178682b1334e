"""Any number of samples: evaluate and load_results read their files lazily, in memory flat in the number of lines.

The memory tests measure with ``tracemalloc`` (Python's own allocations, so
not disturbed by other processes) and compare a file ten times larger with a
small one: a reader that holds its lines grows by their size (the design
before streaming held about 1.5 KB per sample in ``evaluate`` and the whole
text in ``load_results``), a streaming one does not.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
from pathlib import Path

import pytest

from passatk import load_results
from passatk.exceptions import ResultsFormatError
from passatk.execute import evaluate
from passatk.execute.pool import FifoScheduler
from passatk.loaders import iter_jsonl, read_jsonl

PROBLEMS = [
    {
        "task_id": "t/0",
        "prompt": 'def inc(x):\n    """x + 1"""\n',
        "test": "def check(f):\n    assert f(1) == 2\n",
        "entry_point": "inc",
    },
    {
        "task_id": "t/1",
        "prompt": 'def dbl(x):\n    """2 x"""\n',
        "test": "def check(f):\n    assert f(3) == 6\n",
        "entry_point": "dbl",
    },
]
RIGHT = {"t/0": "    return x + 1\n", "t/1": "    return 2 * x\n"}
WRONG = {"t/0": "    return x\n", "t/1": "    return x + 1\n"}


def _write(path: Path, records) -> Path:
    with open(path, "w") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")
    return path


def _samples(count: int):
    """``count`` samples alternating over the two problems: right, right, wrong, ... (three programs a problem)."""
    for i in range(count):
        task = f"t/{i % 2}"
        text = (RIGHT if (i // 2) % 3 != 2 else WRONG)[task]
        yield {"task_id": task, "completion": text, "i": i}


@pytest.fixture()
def problems(tmp_path) -> Path:
    return _write(tmp_path / "problems.jsonl", PROBLEMS)


def _peak(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# --------------------------------------------------------------------------- #
# evaluate
# --------------------------------------------------------------------------- #
@pytest.mark.sandbox
class TestEvaluateStreams:
    def test_records_keep_order_fields_and_verdicts(self, tmp_path, problems):
        """Every input field is kept, in input order; identical programs ran once; the file equals ``records``."""
        path = _write(tmp_path / "s.jsonl", _samples(60))
        res = evaluate(path, problems, workers=2)
        assert (res.samples, res.programs, res.executed, res.reused) == (60, 4, 4, 0)
        assert [r["i"] for r in res.records] == list(range(60))
        expected = [(i // 2) % 3 != 2 for i in range(60)]
        assert [r["passed"] for r in res.records] == expected
        assert res.status_counts == {"passed": 40, "failed": 20}
        on_disk = [json.loads(line) for line in (tmp_path / "s.jsonl_results.jsonl").read_text().splitlines()]
        assert on_disk == res.records
        assert res.results.task_ids.tolist() == ["t/0", "t/1"]
        assert res.results.n.tolist() == [30, 30] and res.results.c.tolist() == [20, 20]
        assert [o.tolist() for o in res.results.outcomes] == [expected[0::2], expected[1::2]]
        assert res.results.duplicate_share.tolist() == [1 - 2 / 30, 1 - 2 / 30]

    def test_in_memory_samples_keep_their_records(self, problems):
        res = evaluate(list(_samples(6)), problems, workers=1)
        assert res.path is None
        assert [(r["i"], r["passed"]) for r in res.records] == [(i, (i // 2) % 3 != 2) for i in range(6)]

    def test_memory_is_flat_in_the_number_of_samples(self, tmp_path, problems):
        """Ten times the samples (all sharing four programs) costs the controller no more memory."""
        small = _write(tmp_path / "small.jsonl", _samples(2_000))
        large = _write(tmp_path / "large.jsonl", _samples(20_000))
        evaluate(small, problems, workers=1)  # imports and the sandbox's first start out of the way
        peaks = [_peak(lambda p=p: evaluate(p, problems, workers=1, fresh=True)) for p in (small, large)]
        # holding the records alone would take 18,000 x ~1 KB
        assert peaks[1] - peaks[0] < 1_000_000, peaks

    def test_a_bad_line_stops_the_run_before_anything_runs(self, tmp_path, problems):
        path = tmp_path / "s.jsonl"
        lines = [json.dumps(s) for s in _samples(5)]
        lines[3] = '{"task_id": "t/1", "completion": '
        path.write_text("\n".join(lines) + "\n")
        with pytest.raises(ValueError, match=r"s\.jsonl:4: not valid JSON"):
            evaluate(path, problems, workers=1)
        assert not (tmp_path / "s.jsonl_results.jsonl").exists()
        assert not (tmp_path / "s.jsonl_results.jsonl.journal").exists()

    def test_a_sample_without_problem_is_named_with_its_line(self, tmp_path, problems):
        path = _write(tmp_path / "s.jsonl", [*_samples(3), {"task_id": "t/9", "completion": "pass"}])
        with pytest.raises(ValueError, match=r"1 sample task\(s\) have no problem, e\.g\. 't/9' \(sample 4\)"):
            evaluate(path, problems, workers=1)

    def test_a_crash_while_writing_leaves_no_half_file_and_the_rerun_resumes(self, tmp_path, problems, monkeypatch):
        import passatk._json

        path = _write(tmp_path / "s.jsonl", _samples(30))
        real, written = passatk._json.dumps, []

        def failing(value, **options):
            if options:  # the journal's records (sorted keys): only the results file fails here
                return real(value, **options)
            if len(written) == 10:
                raise OSError("disk full")
            written.append(value)
            return real(value)

        monkeypatch.setattr(passatk._json, "dumps", failing)
        with pytest.raises(OSError, match="disk full"):
            evaluate(path, problems, workers=1)
        monkeypatch.setattr(passatk._json, "dumps", real)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["problems.jsonl", "s.jsonl", "s.jsonl_results.jsonl.journal"]
        again = evaluate(path, problems, workers=1)
        assert (again.executed, again.reused) == (0, 4)
        assert len((tmp_path / "s.jsonl_results.jsonl").read_text().splitlines()) == 30


# --------------------------------------------------------------------------- #
# load_results and the JSONL reader
# --------------------------------------------------------------------------- #
def _results_lines(count: int):
    for i in range(count):
        yield {"task_id": f"t/{i % 7}", "completion": f"return {i % 5}  # {'x' * 200}", "passed": i % 3 == 0}


class TestLoadResultsStreams:
    def test_counts_outcomes_and_duplicates(self, tmp_path):
        path = _write(tmp_path / "r.jsonl", _results_lines(700))
        res = load_results(path)
        assert res.n.tolist() == [100] * 7
        assert res.c.tolist() == [sum(1 for i in range(t, 700, 7) if i % 3 == 0) for t in range(7)]
        assert res.outcomes[1].tolist() == [i % 3 == 0 for i in range(1, 700, 7)]
        assert res.duplicate_share.tolist() == [1 - 5 / 100] * 7  # five distinct texts per task

    def test_memory_is_flat_in_the_number_of_lines(self, tmp_path):
        small = _write(tmp_path / "small.jsonl", _results_lines(5_000))
        large = _write(tmp_path / "large.jsonl", _results_lines(50_000))  # 12 MB of text
        load_results(small)
        peaks = [_peak(lambda p=p: load_results(p)) for p in (small, large)]
        # a byte (verdict) and four (text hash) per line are kept: 45,000 more lines, 225 KB
        assert peaks[1] - peaks[0] < 1_000_000, peaks

    def test_gzip_and_csv_stream_too(self, tmp_path):
        gz = tmp_path / "r.jsonl.gz"
        with gzip.open(gz, "wt") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in _results_lines(70))
        csv = tmp_path / "r.csv"
        csv.write_text("task_id,passed\n" + "".join(f"t/{i % 7},{int(i % 3 == 0)}\n" for i in range(70)))
        for path in (gz, csv):
            assert load_results(path).n.tolist() == [10] * 7

    def test_errors_name_the_line_where_the_reader_meets_them(self, tmp_path):
        path = tmp_path / "r.jsonl"
        lines = [json.dumps(r) for r in _results_lines(9)]
        lines[6] = "{not json"
        path.write_text("\n".join(lines) + "\n")
        with pytest.raises(ResultsFormatError, match=r"r\.jsonl:7: not valid JSON"):
            load_results(path)
        lines[6] = json.dumps({"task_id": "t/1", "passed": "maybe"})
        path.write_text("\n".join(lines) + "\n")
        with pytest.raises(ResultsFormatError, match=r"r\.jsonl:7: field 'passed' must be a boolean"):
            load_results(path)

    def test_a_truncated_gzip_is_an_error_not_a_short_result(self, tmp_path):
        path = tmp_path / "r.jsonl.gz"
        with gzip.open(path, "wt") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in _results_lines(5_000))
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
        with pytest.raises(ResultsFormatError, match=r"r\.jsonl\.gz:\d+: cannot be read"):
            load_results(path)

    def test_documents_and_one_line_files(self, tmp_path):
        one = tmp_path / "one.jsonl"
        one.write_text('{"task_id": "a", "passed": true}')
        assert load_results(one).n.tolist() == [1]
        doc = tmp_path / "doc.json"
        doc.write_text('[\n  {"task_id": "a"},\n  {"task_id": "b"}\n]\n')
        assert read_jsonl(doc) == [(1, {"task_id": "a"}), (2, {"task_id": "b"})]
        empty = tmp_path / "empty.jsonl"
        empty.write_text("\n\n")
        with pytest.raises(ResultsFormatError, match="empty"):
            list(iter_jsonl(empty))

    def test_nan_literals_and_huge_ints_read_as_pythons_json_does(self, tmp_path):
        path = tmp_path / "odd.jsonl"
        path.write_text('{"task_id": "a", "x": NaN, "y": 123456789012345678901234567890}\n')
        [(_, rec)] = read_jsonl(path)
        assert rec["x"] != rec["x"] and rec["y"] == 123456789012345678901234567890


# --------------------------------------------------------------------------- #
# the scheduler draws jobs only as workers take them
# --------------------------------------------------------------------------- #
def test_scheduler_pulls_lazily_and_retries_first():
    pulled = []

    def jobs():
        for i in range(100):
            pulled.append(i)
            yield {"key": str(i)}

    s = FifoScheduler()
    s.add(jobs())
    assert pulled == [] and not s.done()
    assert [j["key"] for j in s.take(0, 3)] == ["0", "1", "2"]
    assert len(pulled) <= 5
    lost = s.lost(0)
    s.retry(lost)
    assert [j["key"] for j in s.take(1, 4)] == ["0", "1", "2", "3"]
    for j in list(s.take(1, 1000)):
        s.finished(1, j["key"])
    for key in "0123":
        s.finished(1, key)
    assert s.done() and len(pulled) == 100
