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
