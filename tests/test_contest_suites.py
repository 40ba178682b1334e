"""The judges' own regression suites: DOMjudge's and Kattis's example problems, every submission given its folder's verdict.

Each submission in ``submissions/<verdict>/`` (or with an ``@EXPECTED_RESULTS@``
line) must get one of the verdicts it expects, except the few listed in
:data:`EXCEPTIONS`, each with the verdict passatk gives and why (the same list is
in docs/guide/contests.md).  Submissions in a language with no toolchain here
are skipped by the judge with a reason, and must be of a language passatk has
no recipe for.
"""

from __future__ import annotations

import re

import pytest

from passatk.execute import SandboxError, contest, plan_sandbox

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

#: submission (relative to the contest folder) -> (passatk's verdict, why it differs from the folder's)
EXCEPTIONS = {
    "domjudge/example_problems/hello/submissions/multiple/test-memstatic.cc": (
        "compile_error",
        "a 2 GB static array: g++ writes an object file past the build's file-size limit",
    ),
    "domjudge/example_problems/hello/submissions/multiple/test-multithread.c": (
        "run_time_error",
        "a statically linked program whose threads cannot start under the sandbox's limits aborts",
    ),
    "domjudge/example_problems/hello/submissions/run_time_error/test-chroot-escape.sh": (
        "accepted",
        "tests DOMjudge's chroot with Debian's ischroot, which the sandbox does not have: the script prints the answer",
    ),
    "domjudge/example_problems/hello/submissions/time_limit_exceeded/test-suspend-ppid.c": (
        "wrong_answer",
        "stops the process that runs it (SIGSTOP to its parent) and sleeps 10 s, within passatk's wall-clock limit"
        " of a case (3 x the 5 s time limit + 1 s; DOMjudge's is about the time limit), then prints its wrong answer",
    ),
    "domjudge/example_problems/hello/submissions/wrong_answer/test-permissions.c": (
        "run_time_error",
        "expects a file of DOMjudge's judgehost (/etc/root-permission-test.txt) and exits 1 without it",
    ),
    "domjudge/example_problems/fltcmp/submissions/accepted/fltcmp-test-write-files-between-submissions.R": (
        "wrong_answer",
        "expects DOMjudge's TMPDIR layout (/testcaseNNNNN/write_tmp)",
    ),
    "domjudge/example_problems/fltcmp/submissions/accepted/fltcmp-test-write-files-between-testcases.R": (
        "wrong_answer",
        "expects DOMjudge's TMPDIR layout (/testcaseNNNNN/write_tmp)",
    ),
    "kattis/examples/different/submissions/accepted/different_py2.py": (
        "compile_error",
        "Python 2; passatk runs .py files with Python 3",
    ),
    "kattis/examples/different/submissions/accepted/prolog": (
        "compile_error",
        "Prolog in .pl files, which passatk reads as Perl (there is no Prolog toolchain)",
    ),
}
#: languages of the suites that passatk has no recipe for (the judge skips them, saying so)
UNSUPPORTED = {"adb", "awk", "f95", "kt", "lisp", "p", "pas", "plg", "pp", "scala", "swift"}

PROBLEMS = [
    "domjudge/example_problems/hello",
    "domjudge/example_problems/fltcmp",
    "domjudge/example_problems/boolfind",
    "domjudge/example_problems/hangman",
    "domjudge/example_problems/jumble",
    "kattis/examples/hello",
    "kattis/examples/different",
    "kattis/examples/guess",
    "kattis/examples/oddecho",
]


@pytest.fixture(scope="module")
def verifier():
    try:
        plan_sandbox("bwrap", quiet=True)
    except SandboxError as exc:
        pytest.skip(f"bubblewrap does not work on this machine: {exc}")
    from passatk import Verifier

    with Verifier(workers=2, sandbox="bwrap", max_timeout=60) as v:
        yield v


@pytest.mark.parametrize("problem", PROBLEMS)
def test_suite(shared_data, verifier, problem):
    """Every submission gets a verdict its judges expect, but for the listed exceptions (which get exactly theirs)."""
    root = shared_data / "contest"
    path = root / problem
    if not path.is_dir():
        pytest.skip(f"{path} is absent (see ../shared/data/README.md)")
    records = contest.judge(path, verifier=verifier)
    wrong = []
    for rec in records:
        name = str(rec["submission"]).split(str(root) + "/", 1)[-1]
        if rec["verdict"] == "skipped":
            ext = name.rsplit(".", 1)[-1] if "." in name.rsplit("/", 1)[-1] else ""
            assert ext in UNSUPPORTED or "extra-file-" in name or "multifile-pas" in name, (name, rec["reason"])
            continue
        if name in EXCEPTIONS:
            if rec["verdict"] != EXCEPTIONS[name][0]:
                wrong.append((name, rec["verdict"], EXCEPTIONS[name][0], rec.get("detail", "")[:120]))
            continue
        if "expected" in rec and not rec["agrees"]:
            wrong.append((name, rec["verdict"], rec["expected"], rec.get("detail", "")[:120]))
    assert not wrong, "\n".join(map(str, wrong))
    judged = [r for r in records if "agrees" in r]
    assert judged, "no submission with an expected verdict was judged"


def test_multi_pass_packages_are_read(shared_data):
    """hangman and jumble declare ``validation: custom multi-pass``: their validators get the package's pass limit."""
    base = shared_data / "contest" / "domjudge" / "example_problems"
    for name, passes in (("hangman", 26), ("jumble", 2)):
        if not (base / name).is_dir():
            pytest.skip(f"{base / name} is absent")
        assert contest.load_package(base / name).checker["passes"] == passes


def _kattis_hello(shared_data):
    """Kattis's hello package; skip when it or bubblewrap is absent."""
    path = shared_data / "contest" / "kattis" / "examples" / "hello"
    if not path.is_dir():
        pytest.skip(f"{path} is absent")
    try:
        plan_sandbox("bwrap", quiet=True)
    except SandboxError as exc:
        pytest.skip(f"bubblewrap does not work on this machine: {exc}")
    return path


def test_cli(shared_data):
    """passatk judge: a table saying how many agree, and --json a record per submission with verdict and expected."""
    import json

    from typer.testing import CliRunner

    from passatk.cli import app

    path = _kattis_hello(shared_data)
    runner = CliRunner()
    table = runner.invoke(app, ["judge", str(path), "--workers", "1"], env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "7 of 7 submissions with an expected verdict got one of theirs." in table.output, table.output
    assert re.search(r"hello: 1 cases, \d+ s \(5 × the slowest accepted case\), 512 MiB", table.output), table.output
    one = path / "submissions" / "wrong_answer" / "hello.cc"
    out = runner.invoke(app, ["judge", str(path), str(one), "--json", "--workers", "1"])
    assert out.exit_code == 0, out.output
    (rec,) = [json.loads(line) for line in out.output.splitlines() if line.startswith("{")]
    assert (rec["verdict"], rec["expected"], rec["agrees"]) == ("wrong_answer", ["wrong_answer"], True)
    assert rec["cases"][0]["case"] == "secret/hello"
    missing = runner.invoke(app, ["judge", str(path / "nope")])
    assert missing.exit_code != 0 and "not a problem package" in missing.output


def test_a_package_without_a_time_limit_gets_problemtools_limit(shared_data):
    """Kattis's hello states no time limit: its accepted hello_alarm.c spins for 1 s of CPU, so a fixed 1 s limit
    made it a time_limit_exceeded or not by chance (it failed so in CI); problemtools' rule gives 5 s, and every
    submission agrees.  Judging one submission alone derives a limit from the package's accepted ones too."""
    path = _kattis_hello(shared_data)
    prob = contest.load_package(path)
    assert not prob.time_limit_stated and prob.time_multiplier == 5.0
    records = contest.judge(prob, workers=1)
    assert all(r["agrees"] for r in records if "agrees" in r), [
        (r["submission"], r["verdict"], r.get("time_limit"), r.get("detail")) for r in records if not r.get("agrees", True)
    ]
    alarm = next(r for r in records if r["submission"].endswith("hello_alarm.c"))
    # its CPU time is a second of spinning less what other work takes of the CPU: 5 s on a quiet machine
    assert alarm["verdict"] == "accepted" and 0.1 < alarm["cases"][0]["cpu"] < 1.5
    slowest = max(c["cpu"] for r in records if "/accepted/" in r["submission"] and r["verdict"] != "skipped" for c in r["cases"])
    assert {r["time_limit"] for r in records if r["verdict"] != "skipped"} == {contest.derived_time_limit(slowest)}
    (one,) = contest.judge(prob, [path / "submissions" / "wrong_answer" / "hello.cc"], workers=1)
    assert one["verdict"] == "wrong_answer" and one["time_limit"] >= 1.0
    stated = contest.load_package(path, time_limit=2.0)
    assert stated.time_limit_stated
    (fixed,) = contest.judge(stated, [path / "submissions" / "wrong_answer" / "hello.cc"], workers=1)
    assert fixed["time_limit"] == 2.0


def test_derived_time_limit_is_problemtools_rounding():
    """max(1, round(5 x slowest)) whole seconds, halves rounded up, as verifyproblem computes it."""
    assert [contest.derived_time_limit(t) for t in (0.0, 0.05, 0.1, 0.3, 0.94, 1.1, 2.0)] == [1, 1, 1, 2, 5, 6, 10]
    assert contest.derived_time_limit(0.5, multiplier=3) == 2.0
