"""Contest judging: stdin/stdout in every language, built once and run per case, judged as DOMjudge and Kattis judge."""

from __future__ import annotations

import pytest

from passatk.execute import SandboxError, contest, languages, plan_sandbox
from passatk.execute._worker.cases import compare
from passatk.execute.languages import ToolchainMissing


def _need(language):
    try:
        languages.require(language)
    except ToolchainMissing as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def verifier():
    try:
        plan_sandbox("bwrap", quiet=True)
    except SandboxError as exc:
        pytest.skip(f"bubblewrap does not work on this machine: {exc}")
    from passatk import Verifier

    with Verifier(workers=2, sandbox="bwrap") as v:
        yield v


class TestCompare:
    """The default output validator (Kattis's and DOMjudge's token rules)."""

    @pytest.mark.parametrize(
        ("output", "answer", "flags", "ok"),
        [
            (b"Hello World!\n", b"hello   world!", {}, True),  # case-insensitive, any whitespace
            (b"Hello World!\n", b"hello world!", {"case_sensitive": True}, False),
            (b"a  b", b"a b", {"space_change_sensitive": True}, False),
            (b"a b\n", b"a b\n", {"space_change_sensitive": True}, True),
            (b"1 2 3", b"1 2", {}, False),  # extra output is wrong
            (b"1", b"1 2", {}, False),
            (b"3.1415927", b"3.14159265", {"float_tolerance": 1e-6}, True),
            (b"3.15", b"3.14159265", {"float_tolerance": 1e-6}, False),
            (b"3.14159265", b"3.14159265", {}, True),
            (b"3.1415927", b"3.14159265", {}, False),  # no tolerance: floats are tokens like any other
            (b"1e2", b"100", {"float_absolute_tolerance": 1e-9}, True),
            (b"abc", b"1.5", {"float_tolerance": 1e-6}, False),
            (b"nan", b"nan", {"float_tolerance": 1e-6}, True),
            (b"", b"", {}, True),
            (b"ok  \n\n", b"ok", {"rule": "lines"}, True),
            (b" ok", b"ok", {"rule": "lines"}, False),
        ],
    )
    def test_rules(self, output, answer, flags, ok):
        """Each rule accepts exactly what Kattis's default validator accepts."""
        assert compare(output, answer, flags)[0] is ok

    def test_flags(self):
        """validator_flags parse into the comparator's options."""
        assert contest.parse_flags("float_tolerance 1E-6 case_sensitive") == {"float_tolerance": 1e-6, "case_sensitive": True}
        assert contest.parse_flags("space_change_sensitive float_relative_tolerance 0.5") == {
            "space_change_sensitive": True,
            "float_relative_tolerance": 0.5,
        }


class TestExpected:
    """Which verdicts a package's submission may get."""

    def test_header_wins(self):
        """An @EXPECTED_RESULTS@ line overrides the folder."""
        assert contest.expected_verdicts("accepted", ["/* @EXPECTED_RESULTS@: CORRECT, NO-OUTPUT */"]) == (
            "accepted",
            "no_output",
        )
        assert contest.expected_verdicts("wrong_answer", ["# @EXPECTED_RESULTS@: RUN-ERROR,WRONG-ANSWER"]) == (
            "run_time_error",
            "wrong_answer",
        )

    def test_folders(self):
        """Folders name the verdict; unknown folders expect nothing."""
        assert contest.expected_verdicts("compiler_error") == ("compile_error",)
        assert contest.expected_verdicts("output_limit") == ("output_limit_exceeded",)
        assert contest.expected_verdicts("check_manually") == ()

    def test_languages(self):
        """Extensions map onto passatk's languages; the others are None."""
        assert [contest.detect_language(n) for n in ("a.c", "a.cc", "a.C", "A.java", "a.py", "a.rs", "a.pas")] == [
            "c",
            "cpp",
            "cpp",
            "java",
            "python",
            "rust",
            None,
        ]


CPP_SUM = '#include <iostream>\nint main(){long a,b; while(std::cin>>a>>b) std::cout<<a+b<<"\\n";}'
CASES = [["1 2\n", "3\n"], ["5 5\n", "10\n"], ["-1 1\n", "0\n"]]


@pytest.mark.sandbox
class TestVerdicts:
    """Each judge verdict, exactly, on C++ programs (the build once, each case a fresh run)."""

    def _one(self, verifier, source, cases=CASES, **extra):
        _need("cpp")
        task = {"language": "cpp", "source": source, "stdio": cases, "timeout": 1, **extra}
        return verifier.verify([task])[0]

    def test_accepted(self, verifier):
        """A right program passes every case; per-case results come back."""
        v = self._one(verifier, CPP_SUM)
        assert (v.status, v.output["verdict"], v.pass_fraction) == ("passed", "accepted", 1.0)
        assert [c["verdict"] for c in v.output["cases"]] == ["accepted"] * 3

    def test_wrong_answer_fraction(self, verifier):
        """A program right on two cases of three: wrong_answer, pass_fraction 2/3, every case run."""
        src = '#include <iostream>\nint main(){long a,b; std::cin>>a>>b; std::cout<<(a<0? 7 : a+b)<<"\\n";}'
        v = self._one(verifier, src)
        assert (v.status, v.output["verdict"]) == ("failed", "wrong_answer")
        assert v.pass_fraction == pytest.approx(2 / 3)
        assert [c["verdict"] for c in v.output["cases"]] == ["accepted", "accepted", "wrong_answer"]

    def test_time_limit(self, verifier):
        """A loop is time_limit_exceeded at the case's CPU limit."""
        v = self._one(verifier, "int main(){ volatile long x=0; for(;;) x++; }", cases=CASES[:1])
        assert (v.status, v.output["verdict"]) == ("timeout", "time_limit_exceeded")
        assert v.output["cases"][0]["cpu"] < 2.5  # (on a loaded machine its wall-clock limit may come first)

    def test_time_limit_stops_the_cases(self, verifier):
        """Out of time on one case, the rest are not run (they would be too): counted as failed in pass_fraction."""
        src = '#include <iostream>\nint main(){long a,b; std::cin>>a>>b; if (a == 5) for(;;); std::cout<<a+b<<"\\n";}'
        v = self._one(verifier, src)
        assert [c["verdict"] for c in v.output["cases"]] == ["accepted", "time_limit_exceeded"]
        assert v.pass_fraction == pytest.approx(1 / 3)

    def test_run_time_error(self, verifier):
        """A crash (signal) and a non-zero exit are run_time_error."""
        for src in ("int main(){ int *p = 0; *p = 1; return 0; }", "int main(){ return 3; }"):
            v = self._one(verifier, src, cases=CASES[:1])
            assert (v.status, v.output["verdict"]) == ("error", "run_time_error")

    def test_compile_error(self, verifier):
        """A program that does not build is compile_error, with the compiler's first error."""
        v = self._one(verifier, "int main(){ retur 0; }")
        assert (v.status, v.output["verdict"]) == ("compile_error", "compile_error")
        assert "retur" in v.detail

    def test_no_output(self, verifier):
        """Exit 0 with nothing written where an answer is expected: no_output (DOMjudge's)."""
        v = self._one(verifier, "int main(){ return 0; }", cases=CASES[:1])
        assert v.output["verdict"] == "no_output" and v.status == "failed"

    def test_output_limit(self, verifier):
        """More output than the limit, within the time limit, is output_limit_exceeded; writing forever is out of time.

        As DOMjudge: output past the limit is dropped and the program runs on.
        """
        src = '#include <cstdio>\nint main(){ for(int i = 0; i < 200000; i++) fputs("Hello world!\\n", stdout); }'
        v = self._one(verifier, src, cases=CASES[:1], contest={"output_mb": 1})
        assert v.output["verdict"] == "output_limit_exceeded"
        src = '#include <cstdio>\nint main(){ for(;;) fputs("Hello world!\\n", stdout); }'
        v = self._one(verifier, src, cases=CASES[:1], contest={"output_mb": 1})
        assert v.output["verdict"] == "time_limit_exceeded"

    def test_memory_limit(self, verifier):
        """Allocating past the case's memory limit is memory_limit_exceeded."""
        src = (
            '#include <vector>\n#include <cstdio>\nint main(){ std::vector<char> v(size_t(900)<<20, 1); printf("%d\\n", v[5]); }'
        )
        v = self._one(verifier, src, cases=CASES[:1], contest={"memory_mb": 256})
        assert (v.status, v.output["verdict"]) == ("oom", "memory_limit_exceeded")

    def test_forged_output_is_only_output(self, verifier):
        """A program that prints what a judge would say, or exits 42, is still compared on its output."""
        src = '#include <cstdio>\n#include <cstdlib>\nint main(){ puts("accepted"); fflush(stdout); exit(42); }'
        v = self._one(verifier, src, cases=CASES[:1])
        assert v.output["verdict"] == "run_time_error"
        src = '#include <cstdio>\nint main(){ puts("passed\\n{\\"verdict\\": \\"accepted\\"}"); }'
        v = self._one(verifier, src, cases=CASES[:1])
        assert v.output["verdict"] == "wrong_answer"


@pytest.mark.sandbox
class TestLanguages:
    """stdio tasks in every language with a toolchain: built once, each case a fresh run."""

    PROGRAMS = {
        "c": '#include <stdio.h>\nint main(){long a,b; while(scanf("%ld %ld",&a,&b)==2) printf("%ld\\n",a+b); return 0;}',
        "cpp": CPP_SUM,
        "java": "import java.util.*;\npublic class Sum { public static void main(String[] x) { Scanner s = new Scanner(System.in);"
        " while (s.hasNextLong()) System.out.println(s.nextLong() + s.nextLong()); } }",
        "python": "import sys\nfor line in sys.stdin:\n    a, b = map(int, line.split())\n    print(a + b)",
        "nodejs": "const l = require('fs').readFileSync(0, 'utf8').trim().split('\\n');"
        " for (const x of l) { const [a, b] = x.split(' ').map(Number); console.log(a + b); }",
        "typescript": "declare var require: any; const l: string[] = require('fs').readFileSync(0, 'utf8').trim().split('\\n');"
        " for (const x of l) { const [a, b] = x.split(' ').map(Number); console.log(a + b); }",
        "go": 'package main\nimport "fmt"\nfunc main() { var a, b int64; for { if _, e := fmt.Scan(&a, &b); e != nil { return }; fmt.Println(a + b) } }',
        "rust": "use std::io::*;\nfn main() { let mut s = String::new(); stdin().read_to_string(&mut s).unwrap();"
        " let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();"
        ' for p in v.chunks(2) { println!("{}", p[0] + p[1]); } }',
        "ruby": "STDIN.each_line { |l| a, b = l.split.map(&:to_i); puts a + b }",
        "bash": "while read a b; do echo $((a + b)); done",
    }

    @pytest.mark.parametrize("language", list(PROGRAMS))
    def test_sum(self, verifier, language):
        """The same problem accepted in each language, and a wrong answer caught in each."""
        if language != "python":
            _need(language)
        task = {"language": language, "source": self.PROGRAMS[language], "timeout": 2, "contest": {}}  # Python too, as a judge
        v = verifier.verify([{**task, "stdio": CASES}])[0]
        assert (v.status, v.output["verdict"]) == ("passed", "accepted"), v.detail
        wrong = [[a, str(int(b) + 1) + "\n"] for a, b in CASES]
        v = verifier.verify([{**task, "stdio": wrong}])[0]
        assert v.output["verdict"] == "wrong_answer"


TESTLIB_STYLE = r"""
#include <cstdio>
#include <cstdlib>
// testlib's convention without testlib.h: checker input output answer; exit 0 accepted, 1 wrong answer
int main(int argc, char **argv) {
    FILE *out = fopen(argv[2], "r"), *ans = fopen(argv[3], "r");
    long a, b;
    if (fscanf(ans, "%ld", &b) != 1) return 3;  // the answer file is broken: a checker failure
    if (fscanf(out, "%ld", &a) != 1) { fprintf(stderr, "no number"); return 1; }
    return labs(a - b) <= 1 ? 0 : 1;  // any answer within 1 is right
}
"""
KATTIS_PY = """import sys
inp, ans, feedback = sys.argv[1], sys.argv[2], sys.argv[3]
want = open(ans).read().split()
got = sys.stdin.read().split()
if got == want:
    sys.exit(42)
open(feedback + "judgemessage.txt", "w").write(f"expected {want}, got {got}")
sys.exit(43)
"""


@pytest.mark.sandbox
class TestCheckers:
    """A problem's checker decides; it runs in a process of its own, and never as a pass when it fails."""

    def _task(self, source, checker, cases=CASES, **extra):
        _need("cpp")
        return {"language": "cpp", "source": source, "stdio": cases, "checker": checker, "timeout": 2, **extra}

    def test_testlib_checker(self, verifier):
        """A testlib checker (input output answer, exit 0) accepts what the exact comparison would not."""
        off_by_one = '#include <iostream>\nint main(){long a,b; std::cin>>a>>b; std::cout<<a+b+1<<"\\n";}'
        off_by_two = '#include <iostream>\nint main(){long a,b; std::cin>>a>>b; std::cout<<a+b+2<<"\\n";}'
        checker = {"source": TESTLIB_STYLE, "type": "testlib"}
        v1, v2 = verifier.verify([self._task(off_by_one, checker), self._task(off_by_two, checker)])
        assert (v1.status, v1.output["verdict"]) == ("passed", "accepted")
        assert (v2.status, v2.output["verdict"]) == ("failed", "wrong_answer")

    def test_kattis_validator(self, verifier):
        """A Kattis validator (exit 42 / 43, output on its stdin) decides; its judgemessage is the detail."""
        checker = {"source": KATTIS_PY, "type": "kattis"}
        right, wrong = CPP_SUM, '#include <cstdio>\nint main(){ puts("7"); }'
        v1, v2 = verifier.verify([self._task(right, checker), self._task(wrong, checker)])
        assert v1.output["verdict"] == "accepted"
        assert v2.output["verdict"] == "wrong_answer" and "expected ['3'], got ['7']" in v2.detail

    def test_forged_acceptance(self, verifier):
        """A program that exits 42, prints the validator's words or writes a feedback file is judged on its output."""
        checker = {"source": KATTIS_PY, "type": "kattis"}
        forgeries = [
            '#include <cstdlib>\n#include <cstdio>\nint main(){ puts("7"); fflush(stdout); exit(42); }',
            '#include <cstdio>\nint main(){ puts("exit 42 accepted judgemessage.txt"); }',
            '#include <cstdio>\nint main(){ FILE *f = fopen("judgemessage.txt", "w"); if (f) fputs("ok", f); puts("7"); }',
        ]
        verdicts = verifier.verify([self._task(src, checker) for src in forgeries])
        assert [v.output["verdict"] for v in verdicts] == ["run_time_error", "wrong_answer", "wrong_answer"]
        assert not any(v.passed for v in verdicts)

    @pytest.mark.parametrize(
        ("checker_source", "why"),
        [
            ("import sys\nsys.exit(1)\n", "neither 42 nor 43"),
            ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", "killed by signal"),
            ("while True:\n    pass\n", "ran out of time"),
        ],
    )
    def test_checker_failure_is_a_judge_error(self, verifier, checker_source, why):
        """A checker that fails, crashes or loops gives judge_error (status sandbox_error): never a pass, never wrong_answer."""
        checker = {"source": checker_source, "type": "kattis", "cpu": 1}
        v = verifier.verify([self._task(CPP_SUM, checker, cases=CASES[:1])])[0]
        assert (v.status, v.output["verdict"]) == ("sandbox_error", "judge_error")
        assert why in v.detail

    def test_checker_that_does_not_build(self, verifier):
        """A checker that does not build is an error naming it, before anything runs."""
        with pytest.raises(contest.JudgeError, match=r"tasks\[0\]\['checker'\].*does not build"):
            verifier.verify([self._task(CPP_SUM, {"source": "#include <cstdio>\nint main( {", "type": "testlib"})])

    def test_weaker_design_is_fooled(self, tmp_path):
        """The attack the design stops: a validator run from the program's own directory is replaced by the program.

        A judge that copies the validator beside the program and runs it after
        the program (in one sandbox) accepts a program that overwrites it; here
        the validator lives in passatk's cache, read-only, and runs in the
        worker's sandbox, so the same program is a wrong answer (test above).
        """
        import shutil
        import subprocess
        import sys

        attack = "import os\nopen('validator.py', 'w').write('import sys; sys.exit(42)')\nprint(7)\n"
        (tmp_path / "validator.py").write_text(KATTIS_PY)
        (tmp_path / "prog.py").write_text(attack)
        out = subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, input="1 2\n", capture_output=True, text=True).stdout
        (tmp_path / "in").write_text("1 2\n")
        (tmp_path / "ans").write_text("3\n")
        weak = subprocess.run(
            [sys.executable, "validator.py", "in", "ans", str(tmp_path) + "/"],
            cwd=tmp_path,
            input=out,
            capture_output=True,
            text=True,
        )
        assert weak.returncode == 42  # the weaker design accepts "7" for "3"
        shutil.rmtree(tmp_path)

    def test_forged_acceptance_python(self, verifier):
        """The same attack on passatk: the program cannot reach the validator, which rejects its 7."""
        checker = {"source": KATTIS_PY, "type": "kattis"}
        attack = "import os\ntry:\n    open('validator.py', 'w').write('import sys; sys.exit(42)')\nexcept OSError:\n    pass\nprint(7)\n"
        v = verifier.verify([{"language": "python", "source": attack, "stdio": CASES[:1], "checker": checker}])[0]
        assert v.output["verdict"] == "wrong_answer"


class TestPackages:
    """Bad packages are errors naming the file, never verdicts."""

    BUILD = '#!/bin/sh\nprintf \'#!/bin/sh\\nexec python3 "$(dirname "$0")/check.py" "$@"\\n\' > run\nchmod +x run\n'

    def _package(self, root, validator: dict):
        (root / "problem.yaml").write_text("name: sum\nvalidation: custom\n")
        (root / "data" / "secret").mkdir(parents=True)
        (root / "data" / "secret" / "1.in").write_text("1 2\n")
        (root / "data" / "secret" / "1.ans").write_text("3\n")
        folder = root / "output_validators" / "v"
        folder.mkdir(parents=True)
        for name, text in validator.items():
            (folder / name).write_text(text)
        for sub, text in (("accepted", "print(3)\n"), ("wrong_answer", "print(4)\n")):
            (root / "submissions" / sub).mkdir(parents=True)
            (root / "submissions" / sub / "a.py").write_text(text)
        return root

    @pytest.mark.sandbox
    @pytest.mark.parametrize("scripts", ["build", "run"])
    def test_validator_with_build_or_run_script(self, tmp_path, verifier, scripts):
        """A validator folder with a build script (which writes run) or a run script alone is the package format's any-language program."""
        run = '#!/bin/sh\nexec python3 "$(dirname "$0")/check.py" "$@"\n'
        files = {"check.py": KATTIS_PY, **({"build": self.BUILD} if scripts == "build" else {"run": run})}
        prob = contest.load_package(self._package(tmp_path, files))
        assert prob.checker["argv"][0].endswith("/run")
        records = contest.judge(prob, verifier=verifier)
        assert [(r["verdict"], r["agrees"]) for r in records] == [("accepted", True), ("wrong_answer", True)]

    @pytest.mark.parametrize(
        ("files", "message"),
        [
            (
                {"build": "#!/bin/sh\necho 'no compiler here' >&2\nexit 1\n", "check.py": ""},
                r"v/build: the checker does not build: .*no compiler",
            ),
            ({"build": "#!/bin/sh\ntrue\n", "check.py": ""}, r"v: its build script left no run file"),
        ],
    )
    def test_validator_build_script_fails(self, tmp_path, files, message):
        """A build script that fails, or leaves no run, is an error naming the validator's folder."""
        with pytest.raises(contest.JudgeError, match=message):
            contest.load_package(self._package(tmp_path, files))

    @pytest.mark.parametrize("passes", ["1", "two", "1.5"])
    def test_bad_validation_passes(self, tmp_path, passes):
        """limits.validation_passes below 2 or not an integer is an error naming problem.yaml and the value."""
        root = self._package(tmp_path, {"check.py": KATTIS_PY})
        (root / "problem.yaml").write_text(f"name: sum\nvalidation: custom multi-pass\nlimits:\n  validation_passes: {passes}\n")
        with pytest.raises(contest.JudgeError, match=r"problem.yaml: limits.validation_passes must be an integer of at least 2"):
            contest.load_package(root)

    def test_multi_pass_default(self, tmp_path):
        """A multi-pass package without validation_passes gets the format's default, 2; a plain one no passes."""
        root = self._package(tmp_path, {"check.py": KATTIS_PY})
        assert "passes" not in contest.load_package(root).checker
        (root / "problem.yaml").write_text("name: sum\nvalidation: custom multi-pass\n")
        assert contest.load_package(root).checker["passes"] == 2

    @pytest.mark.parametrize("passes", [0, -1, True, 2.5])
    def test_bad_passes_argument(self, passes):
        """build_checker's passes must be a positive integer; the message echoes the value."""
        with pytest.raises(ValueError, match=r"`passes` must be a positive integer; got passes="):
            contest.build_checker(source=KATTIS_PY, passes=passes)

    def test_no_data(self, tmp_path):
        (tmp_path / "problem.yaml").write_text("name: empty\n")
        with pytest.raises(contest.JudgeError, match=r"no test data"):
            contest.load_package(tmp_path)

    def test_custom_without_validator(self, tmp_path):
        (tmp_path / "problem.yaml").write_text("name: x\nvalidation: custom\n")
        (tmp_path / "data" / "secret").mkdir(parents=True)
        (tmp_path / "data" / "secret" / "1.in").write_text("1\n")
        (tmp_path / "data" / "secret" / "1.ans").write_text("1\n")
        with pytest.raises(contest.JudgeError, match=r"problem.yaml: validation is custom but there is no output_validators"):
            contest.load_package(tmp_path)

    def test_validator_that_does_not_build(self, tmp_path):
        (tmp_path / "problem.yaml").write_text("name: x\nvalidation: custom\nlimits:\n  memory: 256  # MiB\n")
        (tmp_path / "data" / "sample").mkdir(parents=True)
        (tmp_path / "data" / "sample" / "1.in").write_text("1\n")
        (tmp_path / "data" / "sample" / "1.ans").write_text("1\n")
        (tmp_path / "output_validators" / "v").mkdir(parents=True)
        (tmp_path / "output_validators" / "v" / "validate.cc").write_text("int main( {")
        with pytest.raises(contest.JudgeError, match=r"output_validators/v: the checker does not build"):
            contest.load_package(tmp_path)

    def test_simple_yaml(self):
        """problem.yaml read without PyYAML: scalars, quoted strings and one level of mapping."""
        text = "name: Hello\nlimits:\n  memory: 512 # MiB\n  time_limit: 2.5\nvalidator_flags: 'float_tolerance 1e-6'\n"
        assert contest._simple_yaml(text, None) == {
            "name": "Hello",
            "limits": {"memory": 512, "time_limit": 2.5},
            "validator_flags": "float_tolerance 1e-6",
        }


RECORD = {
    "name": "1_A. Sum",
    "public_tests": {"input": ["1 2\n"], "output": ["3\n"]},
    "private_tests": {"input": ["5 5\n"], "output": ["10\n"]},
    "generated_tests": {"input": ["-1 1\n"], "output": ["0\n"]},
    "time_limit": {"seconds": 2, "nanos": 0},
    "memory_limit_bytes": 256000000,
    "solutions": {"language": [2, 3], "solution": [CPP_SUM, "a, b = map(int, input().split())\nprint(a + b)"]},
    "incorrect_solutions": {"language": [2], "solution": ['#include <cstdio>\nint main(){ puts("3"); }']},
}


@pytest.mark.sandbox
class TestRecords:
    """CodeContests records: every test, the limits, solutions judged right and incorrect ones wrong."""

    def test_codecontests(self, verifier):
        _need("cpp")
        prob = contest.problem_from_record(RECORD)
        assert (len(prob.cases), prob.time_limit, prob.memory_mb) == (3, 2.0, 244)
        sols = contest.record_solutions(RECORD)
        verdicts = verifier.verify([prob.task(lang, src) for lang, src, _ in sols])
        assert [v.passed for v in verdicts] == [ok for _, _, ok in sols] == [True, True, False]

    def test_evaluate_answers(self, tmp_path):
        """evaluate on a file of records: a model's answer's last fenced block, in its fence's language."""
        import json

        import passatk

        _need("cpp")
        problems = tmp_path / "problems.jsonl"
        problems.write_text(json.dumps(RECORD) + "\n")
        samples = [
            {"task_id": "1_A. Sum", "completion": f"Use longs.\n```cpp\n{CPP_SUM}\n```\n"},
            {"task_id": "1_A. Sum", "completion": "```python\nprint(3)\n```"},
        ]
        result = passatk.evaluate(samples, problems, workers=1)
        assert [r["status"] for r in result.records] == ["passed", "failed"]


SPIN = "import time\nend = time.process_time() + 0.5\nwhile time.process_time() < end:\n    pass\nprint(3)\n"
SPIN_RECORD = {"name": "spin", "public_tests": {"input": ["1 2\n"], "output": ["3\n"]}, "time_limit": 0.2}


class TestTimeMultipliers:
    """A factor on a contest problem's time limit per language, for evaluate as for passatk judge."""

    @pytest.mark.parametrize(
        ("given", "message"),
        [
            ({"cobol": 2}, r"`time_multipliers` names 'cobol', which is not a language passatk knows"),
            ({"java": 0}, r"`time_multipliers\['java'\]` must be a positive number; got 0"),
            ({"java": "x"}, r"`time_multipliers\['java'\]` must be a positive number; got 'x'"),
            ({"java": float("inf")}, r"must be a positive number; got inf"),
        ],
    )
    def test_bad_multipliers(self, given, message):
        """Each bad entry is an error naming it and its value."""
        with pytest.raises(ValueError, match=message):
            contest.time_multipliers_iv(given)

    def test_names_are_normalised(self):
        """A factor given for c++ or py applies to passatk's cpp and python (a raw lookup missed them silently)."""
        prob = contest.problem_from_record(SPIN_RECORD)
        _need("cpp")
        assert prob.job("cpp", CPP_SUM, time_multipliers={"C++": 2})["time_limit"] == 0.4
        assert prob.job("python", SPIN, time_multipliers={"py": 3})["time_limit"] == pytest.approx(0.6)

    def test_only_for_contest_problems(self):
        """Multipliers for problems none of which is a contest problem are an error, not ignored."""
        from passatk.execute.tasks import Problem

        with pytest.raises(ValueError, match=r"apply to contest problems"):
            contest.with_time_multipliers({"t": Problem("t", "stdio", {"cases": [], "rule": "lines"})}, {"python": 2})

    @pytest.mark.sandbox
    def test_evaluate(self, tmp_path):
        """A Python answer spinning 0.5 s is out of time under the 0.2 s limit, accepted with python=10, not with cpp=10."""
        import json

        import passatk

        problems = tmp_path / "problems.jsonl"
        problems.write_text(json.dumps(SPIN_RECORD) + "\n")
        samples = [{"task_id": "spin", "completion": f"```python\n{SPIN}```\n"}]
        statuses = [
            passatk.evaluate(samples, problems, workers=1, time_multipliers=factors).records[0]["status"]
            for factors in (None, {"python": 10}, {"cpp": 10})
        ]
        assert statuses == ["timeout", "passed", "timeout"]

    @pytest.mark.sandbox
    def test_cli(self, tmp_path):
        """passatk evaluate --time-multiplier LANGUAGE=FACTOR; a bad one is a one-line error (exit 2, passatk's user error)."""
        import json

        from typer.testing import CliRunner

        from passatk.cli import app

        problems = tmp_path / "problems.jsonl"
        problems.write_text(json.dumps(SPIN_RECORD) + "\n")
        samples = tmp_path / "samples.jsonl"
        samples.write_text(json.dumps({"task_id": "spin", "completion": f"```python\n{SPIN}```\n"}) + "\n")
        out = tmp_path / "results.jsonl"
        base = ["evaluate", str(samples), "--problems", str(problems), "--out", str(out), "--workers", "1", "-k", "1", "--quiet"]
        runner = CliRunner()
        ok = runner.invoke(app, [*base, "--time-multiplier", "python=10"])
        assert ok.exit_code == 0, ok.output
        assert json.loads(out.read_text())["status"] == "passed"
        for bad, said in (("python", "must be LANGUAGE=FACTOR"), ("cobol=2", "not a language passatk knows")):
            out = runner.invoke(app, [*base, "--fresh", "--time-multiplier", bad])
            assert out.exit_code == 2 and said in out.output, out.output


@pytest.mark.sandbox
class TestRewards:
    """veRL's compute_score and TRL's code_reward take contest tasks (language, cases, checker, limits)."""

    def test_verl_cpp(self):
        from passatk.integrations.verl import compute_score

        _need("cpp")
        truth = {"inputs": [c[0] for c in CASES], "outputs": [c[1] for c in CASES], "language": "cpp", "timeout": 2}
        good = compute_score("codecontests", f"```cpp\n{CPP_SUM}\n```", truth, workers=1)
        bad = compute_score("codecontests", '```cpp\n#include <cstdio>\nint main(){ puts("3"); }\n```', truth, workers=1)
        assert (good["score"], bad["score"]) == (1.0, 0.0)

    def test_verify_endpoint(self, verifier):
        """POST /verify takes a contest task (language, cases, checker) and answers its verdict with per-case results."""
        import asyncio

        httpx = pytest.importorskip("httpx")
        pytest.importorskip("starlette")
        from passatk.serve import ServeOptions, create_app

        _need("cpp")

        async def ask():
            transport = httpx.ASGITransport(app=create_app(verifier, ServeOptions()))
            async with httpx.AsyncClient(transport=transport, base_url="http://passatk") as client:
                checker = {"source": KATTIS_PY, "type": "kattis"}
                tasks = [
                    {"language": "cpp", "source": src, "stdio": CASES, "checker": checker} for src in (CPP_SUM, "int main(){}")
                ]
                return await client.post("/verify", json=tasks)

        reply = asyncio.run(ask())
        assert reply.status_code == 200, reply.text
        got = reply.json()
        assert [v["status"] for v in got] == ["passed", "failed"]
        assert [v["output"]["verdict"] for v in got] == ["accepted", "no_output"]
        assert len(got[0]["output"]["cases"]) == 3

    def test_trl_cpp_checker(self):
        from passatk.integrations.trl import code_reward

        _need("cpp")
        answers = [[{"role": "assistant", "content": f"```cpp\n{CPP_SUM}\n```"}], "```cpp\nint main(){}\n```"]
        rewards = code_reward(
            prompts=["p", "p"],
            completions=answers,
            stdio=[CASES, CASES],
            language=["cpp", "cpp"],
            checker=[{"source": KATTIS_PY, "type": "kattis"}] * 2,
            workers=1,
        )
        assert rewards == [1.0, 0.0]


GUESS_VALIDATOR = """import sys
secret = int(open(sys.argv[1]).read())
for turn in range(1, 11):
    line = sys.stdin.readline()
    if not line:
        sys.exit(43)
    try:
        guess = int(line)
    except ValueError:
        sys.exit(43)
    if guess == secret:
        print("correct", flush=True)
        sys.exit(42)
    print("higher" if guess < secret else "lower", flush=True)
sys.exit(43)
"""
GUESS_RIGHT = r"""
#include <cstdio>
#include <cstring>
int main() {
    int lo = 1, hi = 1000; char said[16];
    while (true) {
        int mid = (lo + hi) / 2; printf("%d\n", mid); fflush(stdout);
        if (scanf("%15s", said) != 1 || !strcmp(said, "correct")) return 0;
        if (!strcmp(said, "higher")) lo = mid + 1; else hi = mid - 1;
    }
}
"""


@pytest.mark.sandbox
class TestInteractive:
    """An interactive validator and the program, connected through the worker; the validator decides."""

    CASES = [["7\n", ""], ["500\n", ""], ["1000\n", ""]]

    def _verify(self, verifier, source, language="cpp"):
        if language != "python":
            _need(language)
        checker = {"source": GUESS_VALIDATOR, "type": "kattis", "interactive": True}
        return verifier.verify([{"language": language, "source": source, "stdio": self.CASES, "checker": checker, "timeout": 2}])[
            0
        ]

    def test_binary_search_is_accepted(self, verifier):
        v = self._verify(verifier, GUESS_RIGHT)
        assert (v.status, v.output["verdict"], v.pass_fraction) == ("passed", "accepted", 1.0)

    def test_wrong_guesses(self, verifier):
        """Guessing 1, 2, 3, ... runs out of turns: wrong_answer on the cases it cannot reach."""
        src = "i = 0\nwhile True:\n    i += 1\n    print(i, flush=True)\n    if input() == 'correct':\n        break\n"
        v = self._verify(verifier, src, "python")
        assert [c["verdict"] for c in v.output["cases"]] == ["accepted", "wrong_answer", "wrong_answer"]

    def test_forgeries(self, verifier):
        """Printing the validator's words, exiting 42 or stopping early is never accepted."""
        forged = [
            '#include <cstdio>\nint main(){ puts("correct"); return 0; }',
            "#include <cstdlib>\nint main(){ exit(42); }",
            '#include <cstdio>\n#include <cstdlib>\nint main(){ puts("500"); fflush(stdout); exit(42); }',
        ]
        verdicts = [self._verify(verifier, src) for src in forged]
        assert not any(v.passed for v in verdicts)
        # the validator rejects "correct" as a guess; a program that ends with status 42 before the validator
        # decides has crashed (the validator gives up only after the program's output has ended)
        assert [v.output["verdict"] for v in verdicts] == ["wrong_answer", "run_time_error", "run_time_error"]

    def test_loop_after_the_answer(self, verifier):
        """Right, then never ending: time_limit_exceeded (DOMjudge's order, as Kattis's: how the program ended before the validator's accept)."""
        src = GUESS_RIGHT.replace('!strcmp(said, "correct")) return 0;', '!strcmp(said, "correct")) for(;;);')
        v = self._verify(verifier, src)
        assert v.output["verdict"] == "time_limit_exceeded"

    def test_wrong_answer_of_a_validator_that_ended_first(self, verifier):
        """The program closes its output and spins; the validator says wrong answer and ends first: wrong_answer (DOMjudge).

        The weaker design took the end of the program's output for its end:
        the program "ended" first, so the verdict was how it ended (stopped,
        a run_time_error), not the validator's wrong answer, which DOMjudge
        reports when the validator's process exited first.
        """
        v = self._verify(verifier, "import os\nos.close(1)\nwhile True:\n    pass\n", "python")
        assert v.output["verdict"] == "wrong_answer", v.detail

    def test_flood_is_out_of_time(self, verifier):
        """A program that floods a slow validator and never reads is out of time, not a judge error.

        The weaker design relayed everything the program wrote (up to the
        8 MiB output limit) into a buffer for the validator, which then had
        minutes of backlog after the program's end and was killed: a judge
        error (DOMjudge's boolfind-test-loop.cc was one).  The relay now holds
        64 KiB for a reader that is behind and stops reading the writer, as a
        pipe would.
        """
        slow = "import sys, time\nfor line in sys.stdin:\n    time.sleep(0.0005)\nsys.exit(43)\n"
        checker = {"source": slow, "type": "kattis", "interactive": True}
        task = {"language": "python", "source": "while True:\n    print('x' * 100)\n", "stdio": self.CASES[:1]}
        v = verifier.verify([{**task, "checker": checker, "timeout": 1}])[0]
        assert v.output["verdict"] == "time_limit_exceeded", v.detail

    def test_failed_validator_beats_a_crash(self, verifier):
        """A validator that fails is a judge error even when the program crashed too (DOMjudge checks the validator first).

        The weaker design (Kattis's order) reported the program's crash, a
        run_time_error, hiding that the problem's validator is broken.
        """
        checker = {"source": "import sys\nsys.stdin.read()\nsys.exit(1)\n", "type": "kattis", "interactive": True}
        task = {"language": "python", "source": "import sys\nsys.exit(3)\n", "stdio": self.CASES[:1], "checker": checker}
        v = verifier.verify([{**task, "timeout": 2}])[0]
        assert (v.status, v.output["verdict"]) == ("sandbox_error", "judge_error")
        assert "neither 42 nor 43" in v.detail


COUNT_VALIDATOR = """import os, sys
# input "N T": the program must print N + 1; below T the next pass is "N+1 T"; the answer is the case's first N
inp, ans, feedback = sys.argv[1], sys.argv[2], sys.argv[3]
n, t = map(int, open(inp).read().split())
first = int(open(ans).read())
if os.path.exists(os.path.join(feedback, "nextpass.in")):
    sys.exit(2)  # the judge must remove the last pass's nextpass.in: a judge error otherwise
with open(os.path.join(feedback, "log.txt"), "a") as log:  # state of the validator's own, kept between passes
    log.write(f"{n}\\n")
got = sys.stdin.read().split()
if got != [str(n + 1)]:
    open(os.path.join(feedback, "judgemessage.txt"), "w").write(f"expected {n + 1}, got {got[:3]}")
    sys.exit(43)
if n + 1 < t:
    open(os.path.join(feedback, "nextpass.in"), "w").write(f"{n + 1} {t}\\n")
    sys.exit(42)
seen = open(os.path.join(feedback, "log.txt")).read().split()
sys.exit(42 if seen == [str(k) for k in range(first, t)] else 3)  # every pass logged: the feedback dir lasted
"""
JUMBLE_VALIDATOR = """import os, re, sys
# DOMjudge's jumble: pass 1 "jumble W": print a word of [a-z0-9] without W in it; pass 2 "unjumble X": print W again
inp, ans, feedback = sys.argv[1], sys.argv[2], sys.argv[3]
how, word = open(inp).read().split()
got = sys.stdin.read().split()
if len(got) != 1:
    sys.exit(43)
if how == "unjumble":
    sys.exit(42 if got == open(ans).read().split() else 43)
if not re.fullmatch("[a-z0-9]+", got[0]) or word in got[0]:
    sys.exit(43)
open(os.path.join(feedback, "nextpass.in"), "w").write(f"unjumble {got[0]}\\n")
sys.exit(42)
"""
COUNT_RIGHT = "n, t = map(int, input().split())\nprint(n + 1)\n"


@pytest.mark.sandbox
class TestMultiPass:
    """Multi-pass validation: the validator's nextpass.in is the next run's input, at most ``passes`` runs a case."""

    def _verify(self, verifier, source, cases, validator=COUNT_VALIDATOR, passes=3, **extra):
        checker = {"source": validator, "type": "kattis", "passes": passes}
        task = {"language": "python", "source": source, "stdio": cases, "checker": checker, "timeout": 2, "contest": {}}
        return verifier.verify([{**task, **extra}])[0]

    def test_passes(self, verifier):
        """Each case runs until the validator writes no nextpass.in; its record counts the passes."""
        v = self._verify(verifier, COUNT_RIGHT, [["0 3\n", "0\n"], ["5 7\n", "5\n"], ["1 2\n", "1\n"]])
        assert (v.status, v.output["verdict"], v.detail) == ("passed", "accepted", "")
        assert [c["passes"] for c in v.output["cases"]] == [3, 2, 1]

    def test_wrong_in_a_later_pass(self, verifier):
        """A wrong answer in pass 2 is the case's verdict, and the detail says which pass."""
        src = "n, t = map(int, input().split())\nprint(n + 1 if n == 0 else n + 2)\n"
        v = self._verify(verifier, src, [["0 3\n", "0\n"]])
        assert v.output["verdict"] == "wrong_answer"
        assert v.detail == "case 1: pass 2: expected 2, got ['3']" and v.output["cases"][0]["passes"] == 2

    def test_too_many_passes_is_a_judge_error(self, verifier):
        """A validator that asks for a pass beyond the limit is a judge error (DOMjudge's), never a pass."""
        v = self._verify(verifier, COUNT_RIGHT, [["0 5\n", "0\n"]], passes=3)
        assert (v.status, v.output["verdict"]) == ("sandbox_error", "judge_error")
        assert "asked for pass 4 (nextpass.in) of a problem with at most 3" in v.detail

    def test_time_limit_is_per_pass(self, verifier):
        """Each pass is a run of its own, under the case's time limit: 4 passes of 0.6 s fit a 1 s limit."""
        src = "import time\nn, t = map(int, input().split())\nend = time.process_time() + 0.6\n"
        src += "while time.process_time() < end:\n    pass\nprint(n + 1)\n"
        v = self._verify(verifier, src, [["0 4\n", "0\n"]], passes=4, timeout=1)
        assert v.output["verdict"] == "accepted" and v.output["cases"][0]["cpu"] > 2.0

    def test_forged_next_pass(self, verifier):
        """A program cannot ask for a pass: writing nextpass.in wherever it can, it is judged on its output alone.

        The weaker design, a judge that reads nextpass.in from the program's
        own working directory or TMPDIR (or a feedback directory it can see),
        would run a second pass on "1 1" here, whose validator then fails
        (log not starting at 0): a judge error the program chose.
        """
        src = (
            "import glob, os\n"
            "for d in ['.', os.environ.get('TMPDIR', '.'), '/tmp', *glob.glob('/tmp/*/feedback'), *glob.glob('/proc/*/cwd/feedback')]:\n"
            "    try:\n"
            "        open(os.path.join(d, 'nextpass.in'), 'w').write('1 1\\n')\n"
            "    except OSError:\n"
            "        pass\n" + COUNT_RIGHT
        )
        v = self._verify(verifier, src, [["0 1\n", "0\n"], ["4 5\n", "4\n"]])
        assert (v.output["verdict"], [c["passes"] for c in v.output["cases"]]) == ("accepted", [1, 1])

    def test_interactive_multi_pass(self, verifier):
        """An interactive validator can ask for passes too: each pass a fresh run talking to the validator again."""
        validator = """import os, sys
n = int(open(sys.argv[1]).read())
print(n, flush=True)
got = sys.stdin.readline().split()
if got != [str(n + 1)]:
    sys.exit(43)
if n + 1 < 3:
    open(os.path.join(sys.argv[3], "nextpass.in"), "w").write(str(n + 1))
sys.exit(42)
"""
        checker = {"source": validator, "type": "kattis", "interactive": True, "passes": 3}
        task = {"language": "python", "source": "print(int(input()) + 1)\n", "stdio": [["0\n", ""], ["2\n", ""]]}
        v = verifier.verify([{**task, "checker": checker, "timeout": 2}])[0]
        assert (v.output["verdict"], [c["passes"] for c in v.output["cases"]]) == ("accepted", [3, 1])

    @pytest.mark.parametrize(
        ("source", "verdict"),
        [
            ("import sys\nprint(1, flush=True)\nsys.exit(42)\n", "run_time_error"),  # the validator's accept code
            ("print(42)\n", "wrong_answer"),  # its accept code as the answer
            ("print('nextpass.in')\n", "wrong_answer"),  # the file's name, as if it could ask
        ],
    )
    def test_forged_acceptance(self, verifier, source, verdict):
        """Exiting or printing the validator's words passes no pass: the program's exit status and output are only that."""
        v = self._verify(verifier, source, [["0 3\n", "0\n"]])
        assert (v.output["verdict"], v.output["cases"][0]["passes"]) == (verdict, 1)

    @pytest.mark.parametrize(
        ("spot", "verdict"),
        [
            ("tmpdir", "wrong_answer"),
            ("/tmp", "wrong_answer"),
            ("/dev/shm", "wrong_answer"),
            ("daemon", "wrong_answer"),
            ("own file", "run_time_error"),
        ],
    )
    def test_no_memory_between_passes(self, verifier, spot, verdict):
        """A program that keeps pass 1's word for pass 2 finds it gone (or is caught changing its own files).

        DOMjudge gives every pass a fresh TMPDIR.  The weaker design, one
        scratch space for all of a case's runs (passatk's before this test),
        accepted each of these cheats on jumble, which the validator cannot
        tell from an honest answer: the word kept in TMPDIR, /tmp, /dev/shm,
        by a process left running (setsid, then written after the run), or
        appended to the program's own source (a file it owns).
        """
        src = f"""import os, sys, time
spot = {spot!r}
path = {{"tmpdir": os.path.join(os.environ["TMPDIR"], "s"), "own file": os.path.abspath(__file__)}}.get(spot, spot + "/s")
if spot == "daemon":
    path = os.path.join(os.environ["TMPDIR"], "s")
how, word = input().split()
if how == "jumble":
    if spot == "daemon":
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(0.5)
                open(path, "w").write(word)
            os._exit(0)
    elif spot == "own file":
        os.chmod(os.path.dirname(path), 0o755)
        open(path, "a").write("\\n# " + word + "\\n")
    else:
        open(path, "w").write(word)
    print("0")
else:
    if spot == "daemon":
        time.sleep(1)
    try:
        print(open(path).read().split()[-1])
    except (OSError, IndexError):
        print("lost")
"""
        v = self._verify(verifier, src, [["jumble abc\n", "abc\n"]], validator=JUMBLE_VALIDATOR, passes=2)
        assert v.output["verdict"] == verdict, v.output
        if spot == "own file":
            assert "the run changed its program's files (" in v.detail


def test_a_run_has_its_memory_limit_from_its_first_instruction(tmp_path, monkeypatch):
    """A run's address-space limit is inherited at the spawn, not set on the program after it started.

    The weaker design spawned the program, then set its limit with ``prlimit``: a program that allocated at
    once, before the parent got there, kept more than its limit (Kattis's ``memory_limit.cc`` was accepted so
    under load).  Here the parent never gets there (``prlimit`` does nothing), which under the weaker design
    lets the 256 MiB allocation succeed (exit 0); the limit must hold anyway (exit 3)."""
    import os
    import shutil
    import subprocess

    from passatk.execute._worker import cases

    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    src = tmp_path / "grab.c"
    src.write_text(
        "#include <stdlib.h>\n#include <string.h>\n"
        "int main(void) { char *p = malloc(256u << 20); if (!p) return 3; memset(p, 1, 256u << 20); return 0; }\n"
    )
    subprocess.run(["gcc", "-O1", "-o", str(tmp_path / "grab"), str(src)], check=True)
    monkeypatch.setattr(cases.resource, "prlimit", lambda *args: None)
    step = {"argv": [str(tmp_path / "grab")], "env": {"PATH": "/usr/bin:/bin"}, "cpu": 5.0, "memory_bytes": 64 << 20}
    fds = [os.open(os.devnull, os.O_RDONLY), os.open(os.devnull, os.O_WRONLY), os.open(os.devnull, os.O_WRONLY)]
    before = cases.resource.getrlimit(cases.resource.RLIMIT_AS)
    try:
        pid = cases._spawn_run(step, str(tmp_path / "grab"), fds)
    finally:
        for fd in fds:
            os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 3
    assert cases.resource.getrlimit(cases.resource.RLIMIT_AS) == before  # the spawning process's own is back
