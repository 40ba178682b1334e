"""What a new user of the `passatk` command meets first (issue 32): help and version, the same options everywhere,
tables at 80 columns, warnings that are passatk's own, natural order, file modes, Ctrl-C, and the statistics warnings."""

from __future__ import annotations

import ast
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("typer", reason="the cli extra")
import typer  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import passatk  # noqa: E402
from passatk import Results  # noqa: E402
from passatk.cli import app, relay_warnings  # noqa: E402

runner = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "200"})
narrow = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "80"})


def write_counts(path: Path, ids, n, c) -> Path:
    path.write_text("task_id,n,c\n" + "".join(f"{t},{a},{b}\n" for t, a, b in zip(ids, n, c)))
    return path


def commands() -> dict:
    return typer.main.get_command(app).commands


class TestHelpAndVersion:
    def test_version(self):
        """--version (and -V) print passatk's version and exit 0."""
        for flag in ("--version", "-V"):
            res = runner.invoke(app, [flag])
            assert res.exit_code == 0 and res.stdout == f"passatk {passatk.__version__}\n"

    @pytest.mark.parametrize("name", ["", "score", "compare", "curve", "report", "evaluate", "plan", "audit", "serve", "demo"])
    def test_h_is_help(self, name):
        """-h prints the same help as --help, for the command and for each subcommand."""
        args = [name] if name else []
        short, long = runner.invoke(app, [*args, "-h"]), runner.invoke(app, [*args, "--help"])
        assert short.exit_code == 0 and short.stdout == long.stdout and "Usage:" in short.stdout


class TestSameOptionNames:
    def test_every_json_command_takes_format(self):
        """Every command with --json (subcommands too: passatk env create) also takes --format (json being the same as --json)."""
        todo = list(commands().items())
        while todo:
            name, cmd = todo.pop()
            todo += [(f"{name} {sub}", c) for sub, c in getattr(cmd, "commands", {}).items()]
            opts = {o for p in cmd.params for o in p.opts}
            if "--json" in opts:
                assert "--format" in opts, name

    def test_commands_that_print_scores_share_the_statistics_options(self):
        """score, evaluate, demo and report take the same --ci, --level and --seed (and evaluate --target, --metric)."""
        for name in ("score", "evaluate", "demo", "report"):
            opts = {o for p in commands()[name].params for o in p.opts}
            assert {"--ci", "--level", "--seed", "--json", "--format", "-k"} <= opts or name == "demo", (name, opts)
        for name in ("score", "evaluate"):
            opts = {o for p in commands()[name].params for o in p.opts}
            assert {"--target", "--metric", "--ci", "--seed"} <= opts
        assert {"-n", "--n"} <= {o for p in commands()["demo"].params for o in p.opts}
        assert {"-n", "--n"} <= {o for p in commands()["plan"].params for o in p.opts}

    def test_format_json_is_json(self, tmp_path):
        """--format json prints the same JSON as --json; --format markdown is refused where there is no Markdown."""
        f = write_counts(tmp_path / "m.csv", [f"p{i}" for i in range(40)], [4] * 40, [i % 5 for i in range(40)])
        a = runner.invoke(app, ["plan", "--delta", "0.05", "--pilot", str(f), "--json"])
        b = runner.invoke(app, ["plan", "--delta", "0.05", "--pilot", str(f), "--format", "json"])
        assert a.exit_code == b.exit_code == 0 and json.loads(a.stdout) == json.loads(b.stdout)
        bad = runner.invoke(app, ["plan", "--delta", "0.05", "--format", "markdown"])
        assert bad.exit_code == 2 and "--format must be table or json; got 'markdown'." in bad.stderr

    def test_report_json_help_says_what_it_prints(self):
        """report --json's help names the keys it prints."""
        opt = next(p for p in commands()["report"].params if "--json" in p.opts)
        assert '"path"' in opt.help and '"bytes"' in opt.help and '"score"' in opt.help


class TestEightyColumns:
    LONG = ("deepseek-ai_DeepSeek-Prover-V2-7B", "AI-MO_Kimina-Prover-Preview-Distill-7B", "Goedel-LM_Goedel-Prover-SFT")

    def files(self, tmp_path):
        rng = np.random.default_rng(0)
        ids = [f"p{i}" for i in range(60)]
        return [str(write_counts(tmp_path / f"{name}.csv", ids, [8] * 60, rng.integers(0, 9, 60).tolist())) for name in self.LONG]

    @pytest.mark.parametrize("command", ["compare", "curve"])
    def test_long_names_become_letters_with_a_legend(self, tmp_path, command):
        """At 80 columns compare and curve fit the width, cut no cell (no '…'), and name each letter in a legend."""
        res = narrow.invoke(app, [command, *self.files(tmp_path), "-k", "1,2"])
        assert res.exit_code == 0, res.output
        assert all(len(line) <= 80 for line in res.stdout.splitlines())
        assert "…" not in res.stdout
        for letter, name in zip("ABC", self.LONG):
            assert f"{letter} = {name}\n" in res.stdout

    def test_wide_terminal_keeps_the_names(self, tmp_path):
        """Where the full names fit, they are shown and there is no legend."""
        res = CliRunner(env={"NO_COLOR": "1", "COLUMNS": "250"}).invoke(app, ["compare", *self.files(tmp_path)[:2], "-k", "1"])
        assert res.exit_code == 0 and f"- {self.LONG[1]}" in res.stdout and "A = " not in res.stdout


class TestWarnings:
    def test_a_samples_syntax_warning_is_not_passatks(self, capsys):
        """A SyntaxWarning from parsing a sample's code is dropped; passatk's own warnings are printed as passatk's."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ast.parse('import re\nre.findall("\\d+", "a1")\n')  # MBPP's regular expressions: invalid escape sequence
            passatk.results.warn_if_duplicated(Results.from_outcomes({"t": [1, 1, 1]}, completions={"t": [7, 7, 7]}))
        assert any(issubclass(w.category, (SyntaxWarning, DeprecationWarning)) for w in caught)  # Python 3.12+ / 3.11
        relay_warnings(caught)
        err = capsys.readouterr().err
        assert "invalid escape sequence" not in err
        assert err.startswith("passatk: warning: ") and "repeat another sample's completion (worst: 't'" in err

    def test_score_warns_about_few_problems_and_zero_se(self, tmp_path):
        """score says when there are fewer than 30 problems and when an SE is 0 (a zero-width interval), on stderr."""
        f = write_counts(tmp_path / "m.csv", ["a", "b", "c"], [5, 5, 5], [5, 5, 5])
        res = runner.invoke(app, ["score", str(f), "-k", "1", "--json"])
        assert res.exit_code == 0 and json.loads(res.stdout)["m"]["pass_at_k"]["1"]["se"] == 0
        assert "passatk: warning: m: only 3 problems; an interval over fewer than 30 problems is rough" in res.stderr
        assert "passatk: warning: m: pass@1 = 1.0000 is pinned at 1 and its SE is 0" in res.stderr
        assert "has zero width" in res.stderr

    def test_no_warning_on_healthy_data(self, tmp_path):
        """40 problems with spread: no warning at all."""
        f = write_counts(tmp_path / "m.csv", [f"p{i}" for i in range(40)], [10] * 40, [i % 11 for i in range(40)])
        res = runner.invoke(app, ["score", str(f), "-k", "1,5"])
        assert res.exit_code == 0 and res.stderr == ""

    def test_compare_warns(self, tmp_path):
        """compare says when the pair shares fewer than 30 problems, and when the paired SE is 0."""
        a = write_counts(tmp_path / "a.csv", ["x", "y", "z"], [4, 4, 4], [1, 2, 3])
        b = write_counts(tmp_path / "b.csv", ["x", "y", "z"], [4, 4, 4], [1, 2, 3])
        res = runner.invoke(app, ["compare", str(a), str(b), "-k", "1"])
        assert res.exit_code == 0, res.output
        assert "passatk: warning: a - b: only 3 shared problems" in res.stderr
        assert "passatk: warning: a - b at k=1: the paired SE is 0 (the difference is +0.0000 on every shared problem)" in (
            res.stderr
        )

    def test_curve_warns_when_the_crossover_interval_covers_every_k(self, tmp_path):
        """Two models that are alike: the crossover's interval covers every k, and curve says so."""
        rng = np.random.default_rng(3)
        ids = [f"p{i}" for i in range(40)]
        c = rng.integers(0, 9, 40)
        a = write_counts(tmp_path / "a.csv", ids, [8] * 40, c.tolist())
        b = write_counts(tmp_path / "b.csv", ids, [8] * 40, np.clip(c + rng.integers(-1, 2, 40), 0, 8).tolist())
        res = runner.invoke(app, ["curve", str(a), str(b), "--no-band"])
        assert res.exit_code == 0, res.output
        assert re.search(r"passatk: warning: a vs b: the 95% interval of the crossover covers every k \(from 1 to", res.stderr)
        assert "these data cannot say whether or where the curves cross." in res.stderr

    def test_report_carries_the_crossover_warning(self, tmp_path):
        """The HTML report lists the same crossover warning."""
        from passatk.html_report import save_report

        rng = np.random.default_rng(3)
        ids = [f"p{i}" for i in range(40)]
        c = rng.integers(0, 9, 40)
        models = {
            "a": Results.from_counts(ids, [8] * 40, c),
            "b": Results.from_counts(ids, [8] * 40, np.clip(c + rng.integers(-1, 2, 40), 0, 8)),
        }
        info = save_report(models, tmp_path / "r.html", [1, 2])
        assert any(w.startswith("a vs b: the 95% interval of the crossover covers every k") for w in info["warnings"])


class TestOneProblem:
    def test_score_of_one_problem_gives_the_fixed_se_and_says_why(self, tmp_path):
        """One problem: exit 0, the fixed-target SE, and a note that says why (never a hint in Python syntax)."""
        f = write_counts(tmp_path / "one.csv", ["a"], [10], [4])
        res = runner.invoke(app, ["score", str(f), "-k", "1,5,10", "--json"])
        assert res.exit_code == 0, res.output
        rec = json.loads(res.stdout)["one"]
        assert rec["target"] == "fixed" and rec["problems"] == 1
        want = passatk.summarize(Results.from_counts(["a"], [10], [4]), [1, 5], target="fixed").to_dict()["pass_at_k"]
        assert rec["pass_at_k"]["1"]["se"] == pytest.approx(want["1"]["se"]) and rec["pass_at_k"]["5"] == want["5"]
        assert rec["pass_at_k"]["10"] == {"estimate": 1.0, "se": None, "ci": None}  # n < 2k: the estimate alone
        assert "passatk: note: " in res.stderr and "--target fixed's" in res.stderr and "needs n >= 2k" in res.stderr
        assert "target='fixed'" not in res.stderr
        table = runner.invoke(app, ["score", str(f), "-k", "1"])
        assert table.exit_code == 0 and "1 problem, 10 samples" in table.stdout


class TestNaturalOrder:
    def test_excluded_ids_in_natural_order(self):
        """HumanEval/2 is listed before HumanEval/10."""
        from passatk.report import excluded_lines

        (line,) = excluded_lines(
            [{"a": "A", "b": "B", "only_in_a": ["HumanEval/10", "HumanEval/2", "HumanEval/1"], "only_in_b": []}]
        )
        assert "(HumanEval/1, HumanEval/2, HumanEval/10)" in line

    def test_audit_tables_in_natural_order(self):
        """The problems that contribute most to the hole inflation are tied-broken in natural order."""
        from passatk.audit._inflation import HoleInflationResult

        ids = np.array(["HumanEval/10", "HumanEval/2"])
        res = HoleInflationResult.__new__(HoleInflationResult)
        object.__setattr__(res, "contribution", np.array([[0.1], [0.1]]))
        object.__setattr__(res, "task_ids", ids)
        object.__setattr__(res, "hole_rate", np.array([0.5, 0.5]))
        object.__setattr__(res, "_p", np.array([0.1, 0.1]))
        object.__setattr__(res, "_h", np.array([0.5, 0.5]))
        object.__setattr__(res, "_detail", {})
        object.__setattr__(res, "ks", np.array([1]))
        assert [r["task_id"] for r in res.top(2)] == ["HumanEval/2", "HumanEval/10"]


class TestFileModes:
    @pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640)])
    def test_report_mode_follows_the_umask(self, tmp_path, umask, mode):
        """The HTML report gets 0666 & ~umask, as any new file, not mkstemp's 0600."""
        from passatk.html_report import save_report

        old = os.umask(umask)
        try:
            save_report(
                {"m": Results.from_counts([f"p{i}" for i in range(40)], [4] * 40, [i % 5 for i in range(40)])},
                tmp_path / "r.html",
                [1],
            )
        finally:
            os.umask(old)
        assert (tmp_path / "r.html").stat().st_mode & 0o777 == mode


class TestMultiPLENames:
    def test_results_keyed_by_name_load(self, tmp_path):
        """A results file whose lines are keyed by MultiPL-E's `name` (no task_id) loads, one problem per name."""
        path = tmp_path / "s.jsonl_results.jsonl"
        lines = [{"name": "HumanEval_53_add", "completion": "x", "passed": p} for p in (True, False, True)]
        lines += [{"name": "HumanEval_2_trunc", "completion": "y", "passed": False}]
        path.write_text("".join(json.dumps(r) + "\n" for r in lines))
        res = passatk.load_results(path)
        assert res.task_ids.tolist() == ["HumanEval_53_add", "HumanEval_2_trunc"]
        assert res.n.tolist() == [3, 1] and res.c.tolist() == [2, 0]
        one = tmp_path / "one.jsonl"
        one.write_text(json.dumps(lines[0]) + "\n")
        assert passatk.load_results(one).task_ids.tolist() == ["HumanEval_53_add"]


# --------------------------------------------------------------------------- #
# in the sandbox
# --------------------------------------------------------------------------- #
PROBLEM = {
    "task_id": "T/0",
    "prompt": 'def f(x):\n    """Double x."""\n',
    "entry_point": "f",
    "test": "def check(candidate):\n    assert candidate(2) == 4\n",
}


@pytest.mark.sandbox
class TestInTheSandbox:
    def test_evaluate_one_problem_exits_0(self, tmp_path):
        """evaluate of one problem prints its estimate with the fixed-target SE and exits 0 (it exited 2 before)."""
        problems = tmp_path / "p.jsonl"
        problems.write_text(json.dumps(PROBLEM) + "\n")
        samples = tmp_path / "s.jsonl"
        samples.write_text(
            "".join(
                json.dumps({"task_id": "T/0", "completion": c}) + "\n" for c in ["    return 2 * x\n"] * 3 + ["    return x\n"]
            )
        )
        res = runner.invoke(app, ["evaluate", str(samples), "--problems", str(problems), "-k", "1", "--workers", "1", "--json"])
        assert res.exit_code == 0, res.output
        rec = json.loads(res.stdout)["s"]
        assert rec["pass_at_k"]["1"]["estimate"] == 0.75 and rec["target"] == "fixed" and rec["pass_at_k"]["1"]["se"] > 0
        assert "passatk: note: " in res.stderr

    def test_evaluate_never_exits_2_after_a_successful_run(self, tmp_path):
        """After the run, a k above n is left out with a note, and an SE that cannot be computed is said, not an error."""
        problems = tmp_path / "p.jsonl"
        problems.write_text("".join(json.dumps({**PROBLEM, "task_id": f"T/{i}"}) + "\n" for i in range(2)))
        samples = tmp_path / "s.jsonl"
        samples.write_text(
            "".join(json.dumps({"task_id": f"T/{i}", "completion": "    return 2 * x\n"}) + "\n" for i in range(2))
        )
        base = ["evaluate", str(samples), "--problems", str(problems), "--workers", "1", "--json"]
        res = runner.invoke(app, [*base, "-k", "1,10"])
        assert res.exit_code == 0, res.output
        assert list(json.loads(res.stdout)["s"]["pass_at_k"]) == ["1"]
        assert "passatk: note: k = 10 is more than the 1 sample(s) of the problem with fewest" in res.stderr
        fixed = runner.invoke(app, [*base, "-k", "1", "--target", "fixed"])  # the fixed target needs n >= 2k
        assert fixed.exit_code == 0, fixed.output
        assert json.loads(fixed.stdout)["s"]["pass_at_k"]["1"] == {"estimate": 1.0, "se": None, "ci": None}
        assert "at k = 1 there is no SE or interval (--target fixed needs n >= 2k" in fixed.stderr
        assert runner.invoke(app, ["score", str(samples) + "_results.jsonl", "-k", "1", "--target", "fixed"]).exit_code == 2

    @pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600)])
    def test_results_mode_follows_the_umask(self, tmp_path, umask, mode):
        """evaluate's results file gets 0666 & ~umask, as the journal beside it does."""
        problems = tmp_path / "p.jsonl"
        problems.write_text(json.dumps(PROBLEM) + "\n")
        samples = tmp_path / "s.jsonl"
        samples.write_text(json.dumps({"task_id": "T/0", "completion": "    return 2 * x\n"}) + "\n")
        old = os.umask(umask)
        try:
            out = passatk.evaluate(samples, problems, workers=1).path
        finally:
            os.umask(old)
        assert Path(out).stat().st_mode & 0o777 == mode

    def test_multiple_samples_keyed_by_name(self, tmp_path):
        """MultiPL-E samples keyed by `name`: evaluate runs them, keeps the key in the results, and scores them."""
        import shutil

        from multiple_handwritten import records

        if shutil.which("bash") is None:
            pytest.skip("bash is not installed")
        rec, right, wrong = next(r for r in records() if r[0]["language"] == "sh")
        problems = tmp_path / "humaneval-sh.jsonl"
        problems.write_text(json.dumps(rec) + "\n")
        samples = tmp_path / "s.jsonl"
        samples.write_text("".join(json.dumps({"name": rec["name"], "completion": c}) + "\n" for c in (right, right, wrong)))
        res = runner.invoke(app, ["evaluate", str(samples), "--problems", str(problems), "-k", "1", "--workers", "1", "--json"])
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["s"]["pass_at_k"]["1"]["estimate"] == pytest.approx(2 / 3)
        lines = [json.loads(x) for x in (tmp_path / "s.jsonl_results.jsonl").read_text().splitlines()]
        assert [x["name"] for x in lines] == [rec["name"]] * 3 and "task_id" not in lines[0]
        assert [x["passed"] for x in lines] == [True, True, False]

    def test_ctrl_c_says_what_was_saved_and_how_to_resume(self, tmp_path):
        """Ctrl-C during evaluate: exit 130, what was saved, and the command that resumes it; that command finishes."""
        problems = tmp_path / "p.jsonl"
        problems.write_text(json.dumps(PROBLEM) + "\n")
        samples = tmp_path / "s.jsonl"
        slow = "    import time\n    t = time.process_time()\n    while time.process_time() - t < 0.3:\n        pass\n    return 2 * x\n"
        samples.write_text("".join(json.dumps({"task_id": "T/0", "completion": slow + f"# {i}\n"}) + "\n" for i in range(40)))
        cmd = [
            sys.executable,
            "-m",
            "passatk",
            "evaluate",
            str(samples),
            "--problems",
            str(problems),
            "--workers",
            "1",
            "-k",
            "1",
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        journal = Path(str(samples) + "_results.jsonl.journal")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not journal.exists() or journal.stat().st_size == 0):
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "passatk: interrupted: " in err and f"saved in {journal}" in err
        assert "Resume (runs only what the journal lacks): passatk evaluate " in err
        resume = err.split("Resume (runs only what the journal lacks): ")[1].split("\n")[0]
        assert resume.startswith(f"passatk evaluate {samples} --problems {problems}")
        done = subprocess.run(
            [sys.executable, "-m", "passatk", *resume.split()[1:]], capture_output=True, text=True, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        assert "from the journal" in done.stderr and re.search(r"[1-9]\d* from the journal", done.stderr)


def test_errors_name_options_not_python_arguments(tmp_path):
    """A library message that names an argument (target='fixed') names the option on the command line (--target fixed)."""
    f = write_counts(tmp_path / "m.csv", [f"p{i}" for i in range(40)], [4] * 40, [i % 5 for i in range(40)])
    res = runner.invoke(app, ["score", str(f), "-k", "4", "--target", "fixed"])
    assert res.exit_code == 2
    assert "--target fixed needs n >= 2k samples per problem" in res.stderr and "target='fixed'" not in res.stderr


def test_plan_fits_80_columns(tmp_path):
    """plan's table and its notes fit 80 columns (the notes are wrapped, not printed as one long line)."""
    res = narrow.invoke(app, ["plan", "--delta", "0.03", "-k", "1"])
    assert res.exit_code == 0, res.output
    assert max(len(line) for line in res.stdout.splitlines()) <= 80
    assert "variance components: assumed" in res.stdout


def test_curve_warns_about_few_problems(tmp_path):
    """curve says when a model has fewer than 30 problems (its bands are rough), as score does."""
    f = write_counts(tmp_path / "m.csv", [f"p{i}" for i in range(10)], [8] * 10, [i % 9 for i in range(10)])
    res = runner.invoke(app, ["curve", str(f), "--no-band"])
    assert res.exit_code == 0, res.output
    assert "passatk: warning: m: only 10 problems; an interval over fewer than 30 problems is rough" in res.stderr
    assert "--ci auto." not in res.stderr and "(score and report take --ci auto)" in res.stderr
