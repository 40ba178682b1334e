"""Declared execution environments: which Python and which packages samples see, recorded with every result."""

import gzip
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from passatk.cli import app
from passatk.execute import Verifier, evaluate
from passatk.execute.environments import (
    EnvironmentError_,
    create_environment,
    default_environment,
    read_environment,
    resolve_environment,
)

pytestmark = pytest.mark.sandbox

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "humaneval"
PROBLEM = {
    "task_id": "T/0",
    "prompt": 'def f():\n    """Three."""\n',
    "test": "def check(c):\n    assert c() == 3\n",
    "entry_point": "f",
}
USES_FAKEPKG = "    import fakepkg\n    return fakepkg.VALUE\n"
USES_TYPER = "    import typer\n    return 3\n"  # typer: in passatk's own environment (the cli extra), never in the default one


@pytest.fixture(scope="module")
def tiny_env(tmp_path_factory):
    """A virtual environment (no pip) holding one distribution of its own, fakepkg 1.2."""
    root = tmp_path_factory.mktemp("envs") / "tiny"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    site = next(root.glob("lib/python3*/site-packages"))
    (site / "fakepkg").mkdir()
    (site / "fakepkg" / "__init__.py").write_text("VALUE = 3\n")
    (site / "fakepkg-1.2.dist-info").mkdir()
    (site / "fakepkg-1.2.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: fakepkg\nVersion: 1.2\n")
    return root


@pytest.fixture
def problems(tmp_path):
    path = tmp_path / "problems.jsonl"
    path.write_text(json.dumps(PROBLEM) + "\n")
    return path


def _quiet_evaluate(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return evaluate(*args, **kwargs)


class TestResolveEnvironment:
    @pytest.mark.parametrize(
        "given, message",
        [
            (
                "/nonexistent/bin/python",
                r"must be a Python interpreter or an environment's prefix; got '/nonexistent/bin/python' \(not an executable\)",
            ),
            ("/bin/ls", r"'/bin/ls' is not one \(run as one, it exited with status \d+ without describing itself\)"),
            ("/usr/share", r"'/usr/share' is a directory without bin/python: not a Python environment"),
            ("no-such-env-xyz", r"got 'no-such-env-xyz', which is none of these"),
        ],
    )
    def test_bad_python(self, given, message):
        """Something that is not a Python is a ValueError naming it, before anything runs."""
        with pytest.raises(ValueError, match=message):
            resolve_environment(given)

    def test_default_is_numpy_and_the_standard_library(self):
        """The default environment shows samples numpy only, whatever passatk's own environment holds."""
        env = default_environment()
        assert [d.split("==")[0] for d in env.distributions] == ["numpy"]
        assert env.python == os.path.realpath(sys.executable)
        assert len(env.import_paths) == 1 and sorted(os.listdir(env.import_paths[0]))[0].startswith("numpy")

    def test_a_venv_is_asked_about_itself(self, tiny_env):
        """A venv's prefix gives its own site-packages and distributions, and a digest unlike the default's."""
        env = resolve_environment(str(tiny_env))
        assert env.distributions == ("fakepkg==1.2",)
        assert env.version.split()[0] == sys.version.split()[0]
        assert env.digest != default_environment().digest
        assert resolve_environment(str(tiny_env / "bin" / "python")).digest == env.digest
        assert resolve_environment(str(tiny_env), site_packages=False).distributions == ()


class TestEvaluateInEnvironment:
    def test_verdict_follows_the_declared_environment(self, problems, tiny_env):
        """A sample importing a package passes in the environment that has it, and errors naming it elsewhere."""
        samples = [{"task_id": "T/0", "completion": USES_FAKEPKG}, {"task_id": "T/0", "completion": USES_TYPER}]
        own = _quiet_evaluate(samples, problems, python=sys.executable, workers=1)  # passatk's whole environment
        default = _quiet_evaluate(samples, problems, workers=1)
        tiny = _quiet_evaluate(samples, problems, python=str(tiny_env), workers=1)
        assert [r["status"] for r in own.records] == ["error", "passed"]
        assert [r["status"] for r in default.records] == ["error", "error"]
        assert [r["status"] for r in tiny.records] == ["passed", "error"]
        assert "No module named 'fakepkg'" in default.records[0]["result"]
        assert "No module named 'typer'" in default.records[1]["result"]

    def test_results_file_records_the_environment(self, problems, tiny_env, tmp_path):
        """Every record carries the environment's version and digest; the file beside it and score --json its distributions."""
        samples = tmp_path / "s.jsonl"
        samples.write_text(json.dumps({"task_id": "T/0", "completion": USES_FAKEPKG}) + "\n")
        out = tmp_path / "r.jsonl"
        result = _quiet_evaluate(samples, problems, python=str(tiny_env), workers=1, out=out)
        env = resolve_environment(str(tiny_env))
        (rec,) = [json.loads(line) for line in out.read_text().splitlines()]
        assert rec["passed"] is True
        assert rec["environment"] == {"python": sys.version.split()[0], "sha256": env.digest}
        assert read_environment(out)["distributions"] == ["fakepkg==1.2"]
        assert result.environment.digest == env.digest
        cli = CliRunner().invoke(app, ["score", str(out), "--json"])
        assert cli.exit_code == 0, cli.output
        assert json.loads(cli.stdout)["r"]["inputs"][0]["environment"]["sha256"] == env.digest

    def test_another_environment_reruns_the_journal(self, problems, tiny_env, tmp_path):
        """Verdicts journaled in one environment are not reused in another."""
        samples = tmp_path / "s.jsonl"
        samples.write_text(json.dumps({"task_id": "T/0", "completion": USES_FAKEPKG}) + "\n")
        first = _quiet_evaluate(samples, problems, python=str(tiny_env), workers=1)
        again = _quiet_evaluate(samples, problems, workers=1)
        assert (first.executed, first.status_counts) == (1, {"passed": 1})
        assert (again.executed, again.reused, again.status_counts) == (1, 0, {"error": 1})

    def test_verifier_takes_python(self, tiny_env):
        """Verifier(python=...) runs its tasks in that environment."""
        task = {"source": "import fakepkg\ndef f(): return fakepkg.VALUE", "tests": "assert f() == 3"}
        with Verifier(workers=1, python=str(tiny_env)) as v:
            assert v.verify([task])[0].status == "passed"
            assert v.environment.distributions == ("fakepkg==1.2",)


class TestCreateEnvironment:
    @pytest.mark.parametrize(
        "name, requirements, message",
        [
            ("../x", None, r"`name` must be a plain name"),
            ("mine", None, r"needs a requirements file \(--requirements\)"),
            ("bigcodebench", None, r"give the folder holding it \(--data\)"),
            ("mine", "/nonexistent/requirements.txt", r"does not exist"),
        ],
    )
    def test_bad_requests(self, name, requirements, message):
        """A bad name or a missing requirements file is a ValueError saying so."""
        with pytest.raises(ValueError, match=message):
            create_environment(name, requirements)

    def test_requirements_that_do_not_install(self, tmp_path, monkeypatch):
        """pip's failure is an error naming the file and quoting pip; nothing is left behind."""
        monkeypatch.setenv("PASSATK_CACHE", str(tmp_path / "cache"))
        reqs = tmp_path / "reqs.txt"
        reqs.write_text("passatk-no-such-distribution-xyz==0.0.1\n")
        with pytest.raises(
            EnvironmentError_, match=r"installing .*reqs.txt failed \(exit status 1\).*passatk-no-such-distribution-xyz"
        ):
            create_environment("broken", reqs, quiet=True)
        assert not (tmp_path / "cache" / "envs" / "broken").exists()

    def test_cli_env_show(self, tiny_env):
        """`passatk env show PATH --json` prints the record results files carry."""
        out = CliRunner().invoke(app, ["env", "show", str(tiny_env), "--json"])
        assert out.exit_code == 0, out.output
        assert json.loads(out.stdout)["distributions"] == ["fakepkg==1.2"]
        bad = CliRunner().invoke(app, ["env", "show", "/bin/ls"])
        assert bad.exit_code == 2 and "is not one" in bad.output


# Lines of the CodeGen samples (HumanEval) that pass only where passatk's own extras are installed:
# they import pandas, scipy, requests, torch, matplotlib or sklearn and would pass without them.
CODEGEN_LINES = [1565, 2052, 2092, 3521, 5729, 6786, 7659, 9992, 10705, 11033, 11555, 12206, 12491, 12756, 14102]


@pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data/humaneval (HumanEval and the CodeGen samples)")
def test_codegen_count_no_longer_depends_on_passatk_environment():
    """15 CodeGen samples pass in passatk's own venv and error (naming the module) in the default environment."""
    wanted = set(CODEGEN_LINES)
    with gzip.open(DATA / "codegen-16b-mono_t0.8_n100.samples.jsonl.gz", "rt") as fh:
        samples = [json.loads(line) for i, line in enumerate(fh, 1) if i in wanted]
    modules = {"pandas", "scipy", "requests", "torch", "matplotlib", "sklearn"}
    missing = [m for m in modules if subprocess.run([sys.executable, "-c", f"import {m}"], capture_output=True).returncode]
    if missing:
        pytest.skip(f"passatk's environment lacks {missing}: the 'before' half needs them")
    problems = DATA / "HumanEval.jsonl.gz"
    before = _quiet_evaluate(samples, problems, dataset="humaneval", python=sys.executable, workers=2)
    after = _quiet_evaluate(samples, problems, dataset="humaneval", workers=2)
    assert before.status_counts == {"passed": 15}
    assert after.status_counts == {"error": 15}
    assert all("ModuleNotFoundError: No module named" in r["result"] for r in after.records)


def test_serve_health_reports_the_environment(tiny_env):
    """passatk serve --python: /health says which environment programs run in."""
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from passatk.serve import ServeOptions, create_app

    with Verifier(workers=1, python=str(tiny_env)) as verifier:
        client = TestClient(create_app(verifier, ServeOptions(python=str(tiny_env))))
        health = client.get("/health").json()
        assert health["environment"]["distributions"] == ["fakepkg==1.2"]
        task = {"source": "import fakepkg\ndef f(): return fakepkg.VALUE", "tests": "assert f() == 3"}
        assert client.post("/verify", json=task).json()["status"] == "passed"
