"""Judged mode: HumanEval-X and MultiPL-E tests in a judge program of their own, calling the sample's program.

Every attack below passes in the compiled mode (the tests compiled into the sample's program, as
the reference harnesses do: an exit with status 0 is a pass) and fails in the judged mode (the
default), where only the judge program's own exit status decides.
"""

from __future__ import annotations

import gzip
import json
import os

import pytest

from passatk.execute import Limits, evaluate, languages, plan_sandbox
from passatk.execute.judged import _cpp_entry, _split_params, cpp_runtime, java_runtime, judged_job
from passatk.execute.pool import LocalPool
from passatk.execute.tasks import load_problems
from test_languages import TRIVIAL, _broken, _need_sandboxed

pytestmark = pytest.mark.sandbox

_FILES = {
    ("humaneval-x", "cpp"): "humaneval-x/humaneval_cpp.jsonl.gz",
    ("multipl-e", "cpp"): "multipl-e/humaneval-cpp-reworded.jsonl.gz",
    ("humaneval-x", "java"): "humaneval-x/humaneval_java.jsonl.gz",
    ("multipl-e", "java"): "multipl-e/humaneval-java-reworded.jsonl.gz",
    ("humaneval-x", "nodejs"): "humaneval-x/humaneval_js.jsonl.gz",
    ("multipl-e", "nodejs"): "multipl-e/humaneval-js-reworded.jsonl.gz",
    ("multipl-e", "typescript"): "multipl-e/humaneval-ts-reworded.jsonl.gz",
}


def _problems(shared_data, fmt, lang):
    _need_sandboxed(lang)
    path = shared_data / _FILES[(fmt, lang)]
    return path, load_problems(path)


def _run(jobs, timeout=10.0):
    langs = {j.get("language", "cpp") for j in jobs}
    binds = (*languages.sandbox_binds(langs), str(cpp_runtime().parent), *((str(java_runtime()),) if "java" in langs else ()))
    plan = plan_sandbox("bwrap", binds, quiet=True)
    out = {}
    LocalPool(plan, Limits(timeout=timeout, memory_mb=1024, wall_factor=3, pids=64), workers=2).run(
        [{**j, "key": str(i)} for i, j in enumerate(jobs)], lambda v: out.__setitem__(int(v.key), v)
    )
    return [out[i] for i in range(len(jobs))]


# --------------------------------------------------------------------------- #
# the entry point, read from the prompt
# --------------------------------------------------------------------------- #
class TestEntryPoint:
    @pytest.mark.parametrize(
        "prompt, expected",
        [
            ("long add(long x, long y) {\n", ("add", ["x", "y"], "long (*)(long, long)")),
            (
                "// c\nstd::map<std::string,long> histogram(std::string test) {\n",
                ("histogram", ["test"], "std::map<std::string,long> (*)(std::string)"),
            ),
            (
                "std::tuple<long, long> f(std::tuple<long, long> a, std::vector<std::pair<int,int>> b){",
                ("f", ["a", "b"], "std::tuple<long, long> (*)(std::tuple<long, long>, std::vector<std::pair<int,int>>)"),
            ),
            (
                "vector<string> separate_paren_groups(string paren_string){\n",
                ("separate_paren_groups", ["paren_string"], "vector<string> (*)(string)"),
            ),
            ("int f(std::vector<long>& arr) {", ("f", ["arr"], "int (*)(std::vector<long>&)")),
            ("static long g() {\n", ("g", [], "long (*)()")),
        ],
    )
    def test_found(self, prompt, expected):
        """The last function header of the prompt gives the entry point, its parameters' names and its pointer type."""
        assert _cpp_entry(prompt) == expected

    @pytest.mark.parametrize("prompt", ["/* no header */\n", "int f(int) {\n", "int main() {\n", "int f(int x);\n"])
    def test_not_found(self, prompt):
        """A prompt that does not open a named function's body (or names a parameter's type only) has no entry point."""
        assert _cpp_entry(prompt) is None

    def test_split_params_keeps_template_commas(self):
        """Commas inside a template's arguments do not split parameters."""
        assert _split_params("std::map<std::string, long> d, std::tuple<long, float, bool> t, int n") == ["d", "t", "n"]

    def test_not_judged_languages_fall_back(self):
        """A language without a call server keeps the compiled job (None from judged_job)."""
        spec = {"format": "multipl-e", "language": "php", "prompt": "<?php\nfunction f() {\n", "tests": "}\n"}
        assert judged_job(spec, "1", {"steps": []}) is None


# --------------------------------------------------------------------------- #
# attacks: an early exit passes in the compiled mode, never in the judged mode
# --------------------------------------------------------------------------- #
# MultiPL-E cuts the completion at "\n}", so the attacks close the function on the same line.
_MPL_ATTACKS = {  # name: (completion of HumanEval_53_add, judged status)
    "exit(0) from a static constructor": (
        "    return x + y + 1; } static int passatk_attack = (exit(0), 0); long passatk_unused() { return 0;",
        "error",
    ),
    "exit(0) inside the entry point": ("    exit(0);", "error"),
    "atexit handler that exits 0": ("    atexit([] { _exit(0); }); exit(1);", "error"),
    "quick_exit(0)": ("    quick_exit(0);", "error"),
    "SIGABRT handler: a failed assert exits 0": ("    signal(SIGABRT, [](int) { _exit(0); });\n    return x + y + 1;", "failed"),
}
_HX_ATTACKS = {  # name: (completion of CPP/53, judged status)
    "exit(0) from a static constructor": (
        "    return x + y + 1;\n}\nstatic int passatk_attack = (exit(0), 0);\n",
        "error",
    ),
    "SIGABRT handler: a failed assert exits 0": (
        "    return x - y;\n}\n"
        'extern "C" void (*signal(int, void (*)(int)) noexcept)(int);\n'
        "static void passatk_on_abort(int) { _Exit(0); }\n"
        "static int passatk_attack = (signal(6, passatk_on_abort), 0);\n",
        "failed",
    ),
}


# Java: MultiPL-E cuts at "\n    }\n"; HumanEval-X's completion closes the method and the class.
_JAVA_MPL_ATTACKS = {
    "System.exit(0) inside the entry point": ("        System.exit(0); return 0;", "error"),
    "Runtime.halt(0) inside the entry point": ("        Runtime.getRuntime().halt(0); return 0;", "error"),
    "System.exit(0) from a static initializer": (
        "        return x + y + 1; } static { System.exit(0); } static long passatkUnused() { return 0;",
        "error",
    ),
    "shutdown hook that halts 0 after a failed assert": (
        "        Runtime.getRuntime().addShutdownHook(new Thread(() -> Runtime.getRuntime().halt(0)));\n        return x * y;",
        "failed",
    ),
    "uncaught-exception handler that exits 0": (
        "        Thread.setDefaultUncaughtExceptionHandler((t, e) -> System.exit(0));\n        return x * y;",
        "failed",
    ),
}
_JAVA_HX_ATTACKS = {
    "System.exit(0) from a static initializer": (
        "        return x + y + 1;\n    }\n    static { System.exit(0); }\n}\n",
        "error",
    ),
    "uncaught-exception handler that exits 0": (
        "        Thread.setDefaultUncaughtExceptionHandler((t, e) -> System.exit(0));\n        return x * y;\n    }\n}\n",
        "failed",
    ),
}


# JavaScript and TypeScript: the completion closes the function; MultiPL-E cuts at "\nfunction ", "\n//", ...
_JS_MPL_ATTACKS = {
    "process.exit(0) inside the entry point": ("  require('process').exit(0);\n  return 0;\n}\n", "error"),
    "process.exit(0) at the top level": ("  return x - y;\n}\nrequire('process').exit(0);\n", "error"),
    "assert.deepEqual replaced": ("  return x - y;\n}\nrequire('node:assert').deepEqual = () => {};\n", "failed"),
    "exit code 0 forced on the way out": (
        "  require('process').on('exit', () => { require('process').exitCode = 0; });\n  return x - y;\n}\n",
        "failed",
    ),
}
_JS_HX_ATTACKS = {
    "console.assert replaced": ("  return x - y;\n}\nconsole.assert = () => {};\n", "failed"),
    "process.exit(0) at the top level": ("  return x - y;\n}\nprocess.exit(0);\n", "error"),
}


@pytest.mark.parametrize(
    "fmt, lang, task, attacks",
    [
        ("multipl-e", "nodejs", "HumanEval_53_add", _JS_MPL_ATTACKS),
        ("multipl-e", "typescript", "HumanEval_53_add", _JS_MPL_ATTACKS),
        ("humaneval-x", "nodejs", "JavaScript/53", _JS_HX_ATTACKS),
        ("multipl-e", "cpp", "HumanEval_53_add", _MPL_ATTACKS),
        ("humaneval-x", "cpp", "CPP/53", _HX_ATTACKS),
        ("multipl-e", "java", "HumanEval_53_add", _JAVA_MPL_ATTACKS),
        ("humaneval-x", "java", "Java/53", _JAVA_HX_ATTACKS),
    ],
)
def test_early_exits_pass_compiled_and_fail_judged(shared_data, fmt, lang, task, attacks):
    """Each early exit is a pass in the compiled mode (the attack is real) and fails in the judged mode, with judged: true."""
    _, problems = _problems(shared_data, fmt, lang)
    spec = problems[task].spec
    names = list(attacks)
    jobs = [languages.program_job(spec, attacks[n][0], judged=False) for n in names]
    jobs += [languages.program_job(spec, attacks[n][0]) for n in names]
    assert all(j["kind"] == "judged" for j in jobs[len(names) :])
    got = _run(jobs)
    compiled, judged = got[: len(names)], got[len(names) :]
    for name, c, j in zip(names, compiled, judged):
        assert (c.status, c.judged) == ("passed", False), (name, c)
        assert (j.status, j.judged) == (attacks[name][1], True), (name, j)


def test_output_cannot_change_a_verdict(shared_data):
    """A right solution that writes on stdout and stderr passes; a wrong one that prints what a pass prints fails."""
    _, problems = _problems(shared_data, "multipl-e", "cpp")
    spec = problems["HumanEval_53_add"].spec
    right = '    printf("[\\"ok\\",1]\\n"); fprintf(stderr, "noise\\n"); return x + y;'
    wrong = '    printf("[\\"ok\\",1]\\n"); fflush(stdout); return x * y;'
    got = _run([languages.program_job(spec, right), languages.program_job(spec, wrong)])
    assert [(v.status, v.judged) for v in got] == [("passed", True), ("failed", True)], got


def test_answers_on_the_channel_must_still_be_right(shared_data):
    """The sample may write on the channel itself: an answer it forges is an answer, and a wrong one fails."""
    _, problems = _problems(shared_data, "multipl-e", "cpp")
    spec = problems["HumanEval_53_add"].spec
    forged = '    for (int i = 0; i < 100; i++) write(3, "[\\"ok\\",1]\\n", 9);\n    return 1;'
    garbage = '    write(3, "not json\\n", 9);\n    return x + y;'
    got = _run([languages.program_job(spec, forged), languages.program_job(spec, garbage)])
    assert (got[0].status, got[0].judged) == ("failed", True), got[0]
    assert (got[1].status, got[1].judged) == ("error", True) and "protocol violation" in got[1].detail, got[1]


def test_compile_error_and_exception(shared_data):
    """A call server that does not build is compile_error (the compiler's first error); an exception fails."""
    _, problems = _problems(shared_data, "multipl-e", "cpp")
    spec = problems["HumanEval_53_add"].spec
    got = _run([languages.program_job(spec, "    return undeclared_name;"), languages.program_job(spec, "    throw 0;")])
    assert got[0].status == "compile_error" and "undeclared_name" in got[0].detail, got[0]
    assert (got[1].status, got[1].judged) == ("failed", True) and "raised" in got[1].detail, got[1]


# --------------------------------------------------------------------------- #
# falling back to the compiled mode, marked judged: false
# --------------------------------------------------------------------------- #
_STRUCT_PROMPT = (
    "#include<assert.h>\n#include<bits/stdc++.h>\n"
    "struct P { long a; bool operator==(const P& o) const { return a == o.a; } };\n"
    "P twice(P p) {\n"
)
_STRUCT_TESTS = "}\nint main() {\n    auto candidate = twice;\n    assert(candidate(P{1}) == P{2});\n}\n"


def test_a_type_the_channel_cannot_carry_falls_back(tmp_path):
    """A judge program that does not build (a struct of the prompt's own) runs in the compiled mode: judged is false."""
    _need_sandboxed("cpp")
    path = tmp_path / "struct.jsonl"
    rec = {"name": "struct_twice", "language": "cpp", "prompt": _STRUCT_PROMPT, "tests": _STRUCT_TESTS, "stop_tokens": ["\n}"]}
    path.write_text(json.dumps(rec) + "\n")
    spec = load_problems(path)["struct_twice"].spec
    jobs = [languages.program_job(spec, "    return P{p.a * 2};"), languages.program_job(spec, "    return p;")]
    assert [j["kind"] for j in jobs] == ["judged", "judged"]
    got = _run(jobs)
    assert [(v.status, v.judged) for v in got] == [("passed", False), ("failed", False)], got


def test_no_entry_point_is_compiled_and_says_so(shared_data):
    """HumanEval-X prompts that do not open the entry point's body (CPP/10) are compiled jobs with judged false."""
    _, problems = _problems(shared_data, "humaneval-x", "cpp")
    job = languages.program_job(problems["CPP/10"].spec, "}")
    assert (job["kind"], job["judged"]) == ("program", False)


def test_evaluate_records_say_judged(shared_data):
    """evaluate uses the judged mode by default, and its records say so."""
    path, _ = _problems(shared_data, "multipl-e", "cpp")
    samples = [
        {"name": "HumanEval_53_add", "completion": "    return x + y;"},
        {"name": "HumanEval_53_add", "completion": "    exit(0);"},
    ]
    recs = evaluate(samples, path, workers=1, timeout=10.0).records
    assert [(r["status"], r["judged"]) for r in recs] == [("passed", True), ("error", True)], recs


# --------------------------------------------------------------------------- #
# fidelity: canonical solutions pass, broken ones and trivial bodies fail
# --------------------------------------------------------------------------- #
def _read(path):
    return [json.loads(line) for line in gzip.open(path, "rt") if line.strip()]


# HumanEval-X problems whose canonical solution fails in the compiled mode too (see test_languages)
_KNOWN = {
    "cpp": {"CPP/10", "CPP/32", "CPP/38", "CPP/50"}
    | ({"CPP/22", "CPP/137"} if not os.path.exists("/usr/include/boost/any.hpp") else set()),
    "java": set(),
    "nodejs": {"JavaScript/112", "JavaScript/155"}
    | ({"JavaScript/162"} if not any(os.path.exists(p + "/js-md5") for p in languages._NODE_PATH.split(":")) else set()),
}
_ACCEPTED = {"cpp": {"CPP/23"}, "java": set(), "nodejs": set()}  # broken variants the tests accept (the default value is right)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # two builds a problem on two busy cores
@pytest.mark.parametrize("lang", ["cpp", "java", "nodejs"])
def test_humaneval_x_canonical_and_broken(shared_data, lang):
    """Every third HumanEval-X canonical solution passes judged (but the known failures); broken variants fail."""
    path, problems = _problems(shared_data, "humaneval-x", lang)
    recs = _read(path)[::3]
    jobs = [languages.program_job(problems[r["task_id"]].spec, r["canonical_solution"]) for r in recs]
    jobs += [languages.program_job(problems[r["task_id"]].spec, _broken(lang, r)) for r in recs]
    got = _run(jobs)
    canonical, broken = got[: len(recs)], got[len(recs) :]
    failing = {r["task_id"]: v for r, v in zip(recs, canonical) if not v.passed}
    assert set(failing) - _KNOWN[lang] == set(), failing
    accepted = {r["task_id"] for r, v in zip(recs, broken) if v.passed}
    assert accepted - _ACCEPTED[lang] == set(), accepted
    assert not any(v.status == "sandbox_error" for v in got)


@pytest.mark.slow
@pytest.mark.timeout(3600)  # tsc takes seconds a program, twice a problem
@pytest.mark.parametrize("lang", ["cpp", "java", "nodejs", "typescript"])
def test_multiple_trivial_bodies_fail(shared_data, lang):
    """Every third MultiPL-E prompt with a trivial body fails judged, and no job falls into a sandbox error."""
    path, problems = _problems(shared_data, "multipl-e", lang)
    recs = _read(path)[::3]
    got = _run(
        [languages.program_job(problems[r["name"]].spec, TRIVIAL.get(lang, '  throw new Error("trivial");\n}\n')) for r in recs]
    )
    bad = {r["name"]: (v.status, v.detail) for r, v in zip(recs, got) if v.status in ("passed", "sandbox_error")}
    assert bad == {}


# --------------------------------------------------------------------------- #
# the Verifier's door: {"language", "source", "tests"}
# --------------------------------------------------------------------------- #
_ADD = "#include <bits/stdc++.h>\nlong add(long x, long y) {\n    %s\n}\n"
_ADD_TESTS = "int main() {\n    auto candidate = add;\n    assert(candidate(1, 2) == 3);\n    assert(candidate(5, 7) == 12);\n}\n"


def test_verifier_tests_tasks_are_judged():
    """A Verifier task with MultiPL-E-style tests is judged: an exit(0) passes only with judged=False (compiled mode)."""
    _need_sandboxed("cpp")
    from passatk.execute import Verifier

    right, early = _ADD % "return x + y;", _ADD % "exit(0);"
    jobs = [languages.code_tests_job("cpp", early, _ADD_TESTS, judged=False)]
    assert (_run(jobs)[0].status, jobs[0]["judged"]) == ("passed", False)  # the attack is real in the compiled mode
    tasks = [{"language": "cpp", "source": s, "tests": _ADD_TESTS} for s in (right, early, _ADD % "return x * y;")]
    with Verifier(workers=2, timeout=10.0) as v:
        got = v.verify(tasks)
    assert [(g.status, g.judged) for g in got] == [("passed", True), ("error", True), ("failed", True)], got


def test_verifier_tests_without_a_candidate_are_compiled():
    """Tests that do not name the entry point as MultiPL-E does stay compiled, and say judged: false."""
    _need_sandboxed("cpp")
    job = languages.code_tests_job("cpp", _ADD % "return x + y;", "int main() { assert(add(1, 2) == 3); }")
    assert (job["kind"], job["judged"]) == ("program", False)


def test_verify_records_carry_judged():
    """/verify's record of a verdict carries ``judged`` when the task was a function-call task in a compiled language."""
    from passatk.execute._worker.verdict import Verdict
    from passatk.serve import _verdict_record

    assert _verdict_record(Verdict("k", "failed", judged=True))["judged"] is True
    assert _verdict_record(Verdict("k", "failed", judged=False))["judged"] is False
    assert "judged" not in _verdict_record(Verdict("k", "passed"))
    assert Verdict.from_dict(Verdict("k", "error", judged=True).to_dict()).judged is True


def test_verifier_tests_tasks_in_javascript_are_judged():
    """A JavaScript task whose tests name the entry point (let candidate = f;) is judged: process.exit(0) is no pass."""
    _need_sandboxed("nodejs")
    from passatk.execute import Verifier

    tests = "const assert = require('node:assert');\nlet candidate = add;\nassert.deepEqual(candidate(1, 2), 3);\n"
    sources = ["function add(x, y) {\n  return x + y;\n}\n", "const add = (x, y) => {\n  process.exit(0);\n}\n"]
    assert _run([languages.code_tests_job("nodejs", sources[1], tests, judged=False)])[0].status == "passed"
    with Verifier(workers=2, timeout=10.0) as v:
        got = v.verify([{"language": "nodejs", "source": src, "tests": tests} for src in sources])
    assert [(g.status, g.judged) for g in got] == [("passed", True), ("error", True)], got


@pytest.mark.parametrize(
    "lang, source",
    [
        (
            "cpp",
            "#include <bits/stdc++.h>\nusing namespace std; static int z = (exit(0), 0);\nlong add(long x, long y) {\n    return 0;\n}\n",
        ),
        ("cpp", "#include <cstdlib>\nlong add(long x, long y, long z = (exit(0), 0)) {\n    return 0;\n}\n"),
        ("nodejs", "function add(x, y, z = process.exit(0)) {\n  return 0;\n}\n"),
    ],
)
def test_the_sample_source_never_runs_in_the_judge(lang, source):
    """Verifier tasks: a trailing statement on a kept line or a default argument of the sample's never reaches the judge.

    Such a task is judged without them, or falls back to the compiled mode (judged: false), never a judged pass.
    """
    _need_sandboxed(lang)
    tests = {
        "cpp": "int main() {\n    auto candidate = add;\n    assert(candidate(1, 2) == 3);\n}\n",
        "nodejs": "const assert = require('node:assert');\nlet candidate = add;\nassert.deepEqual(candidate(1, 2), 3);\n",
    }[lang]
    job = languages.code_tests_job(lang, source, tests)
    assert "exit(0)" not in job.get("judge", {}).get("source", ""), job.get("judge")
    got = _run([job])[0]
    assert not (got.passed and got.judged), got
