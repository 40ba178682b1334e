"""Go and Rust programs that end before their tests do, with the markers a pass prints: none of them passes.

The tests are compiled into the sample's own program (as every reference harness does), so a
sample can end the process, with status 0, before the tests run or in the middle of them, and
print whatever a passing run prints first.  Each attack below passed on fe6e81c (exit 0 and
``PASS`` or ``test result: ok.`` on stdout, or, for MultiPL-E Rust, exit 0 alone); the honest
twin in the same run shows that the recipe still passes a right solution.  What is left (a Rust
sample that writes the harness's lines itself) is pinned too, as the README states it.  These are
the compiled mode's tests (``program_job(..., judged=False)``); ``evaluate`` judges Go and Rust in a
judge program by default, where every one of these fails (tests/test_judged_go_rust.py).
"""

from __future__ import annotations

import gzip
import json

import pytest

from passatk.execute import Limits, languages, plan_sandbox
from passatk.execute.pool import LocalPool
from passatk.execute.tasks import load_problems
from test_languages import _need_sandboxed

pytestmark = pytest.mark.sandbox

_FILES = {
    ("humaneval-x", "go"): "humaneval-x/humaneval_go.jsonl.gz",
    ("humaneval-x", "rust"): "humaneval-x/humaneval_rust.jsonl.gz",
    ("multipl-e", "go"): "multipl-e/humaneval-go-reworded.jsonl.gz",
    ("multipl-e", "rust"): "multipl-e/humaneval-rs-reworded.jsonl.gz",
}

# A Go test binary whose TestMain does not call m.Run() runs no test, and exits 0 when TestMain returns.
_GO_TEST_MAIN = 'func TestMain(m *testing.M) { fmt.Println("PASS") }'
# testing.Main with no tests prints "PASS" and calls os.Exit(0); from init(), that is before any test.
_GO_INIT_EXIT = "func init() { testing.Main(func(string, string) (bool, error) { return true, nil }, nil, nil, nil) }"
# libtest's end-of-tests line written past its output capture, then an exit before the test returns.
_RS_PRINT_EXIT = (
    "    use std::io::Write;\n"
    '    let _ = std::io::stdout().write_all(b"\\ntest result: ok. 1 passed; 0 failed; 0 ignored\\n");\n'
    "    std::process::exit(0)\n"
    "}\n"
)
# The same from an ELF constructor: before libtest's main, before any test.
_RS_CONSTRUCTOR = (
    "    false\n}\n"
    '#[used] #[link_section = ".init_array"] static PASSATK_ATTACK: extern "C" fn() = {\n'
    '    extern "C" fn run() { println!("running 1 test\\ntest result: ok. 1 passed; 0 failed"); std::process::exit(0) }\n'
    "    run\n};\n"
)

# (format, language, completion, the status it gets now, a substring of its detail)
ATTACKS = {
    "go humaneval-x: own TestMain": (
        "humaneval-x",
        "go",
        "    return false\n}\n\n" + _GO_TEST_MAIN + "\n",
        "compile_error",
        "TestMain",
    ),
    "go multipl-e: own TestMain on the closing brace's line": (
        "multipl-e",
        "go",
        "    return false\n}; " + _GO_TEST_MAIN + "\n",
        "compile_error",
        "TestMain",
    ),
    "go humaneval-x: testing.Main from init": (
        "humaneval-x",
        "go",
        "    return false\n}\n\n" + _GO_INIT_EXIT + "\n",
        "failed",
        "ended before its tests did",
    ),
    "go multipl-e: testing.Main from init": (
        "multipl-e",
        "go",
        "    return false\n}; " + _GO_INIT_EXIT + "\n",
        "failed",
        "ended before its tests did",
    ),
    "rust humaneval-x: prints test result: ok. and exits 0": (
        "humaneval-x",
        "rust",
        _RS_PRINT_EXIT,
        "failed",
        "ended before its tests did",
    ),
    "rust humaneval-x: the same from a constructor": (
        "humaneval-x",
        "rust",
        _RS_CONSTRUCTOR,
        "failed",
        "ended before its tests did",
    ),
    "rust multipl-e: exits 0": ("multipl-e", "rust", "    std::process::exit(0)\n", "failed", "ended before its tests did"),
}

RIGHT = {  # the first problem of each file, solved
    ("multipl-e", "go"): (
        "    depth := 0\n    for _, c := range brackets {\n        if c == '<' { depth++ } else { depth-- }\n"
        "        if depth < 0 { return false }\n    }\n    return depth == 0\n}\n"
    ),
    ("multipl-e", "rust"): (
        "    let mut depth = 0;\n    for c in brackets.chars() {\n        if c == '<' { depth += 1 } else { depth -= 1 }\n"
        "        if depth < 0 { return false; }\n    }\n    depth == 0\n}\n"
    ),
}


def _first(shared_data, fmt, lang):
    _need_sandboxed(lang)
    path = shared_data / _FILES[(fmt, lang)]
    with gzip.open(path, "rt") as fh:
        rec = json.loads(fh.readline())
    return path, rec


def _compiled(path, task, completions):
    """The compiled mode's verdicts of completions of one problem (the tests in the sample's program)."""
    spec = load_problems(path)[task].spec
    jobs = [{**languages.program_job(spec, c, judged=False), "key": str(i)} for i, c in enumerate(completions)]
    out = {}
    plan = plan_sandbox("bwrap", languages.runtime_binds(), quiet=True)
    LocalPool(plan, Limits(timeout=10.0), workers=2).run(jobs, lambda v: out.__setitem__(int(v.key), v))
    return [out[i] for i in range(len(jobs))]


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_early_exit_with_a_passing_runs_markers_does_not_pass(shared_data, attack):
    """A wrong solution that ends the run early (own TestMain, testing.Main, process::exit(0)) after printing a pass's markers is not a pass."""
    fmt, lang, completion, status, detail = ATTACKS[attack]
    path, rec = _first(shared_data, fmt, lang)
    key = "task_id" if fmt == "humaneval-x" else "name"
    right = rec["canonical_solution"] if fmt == "humaneval-x" else RIGHT[(fmt, lang)]
    attack, right = _compiled(path, rec[key], [completion, right])
    assert right.status == "passed", right
    assert attack.status == status and detail in attack.detail, attack


# Rust code may write on any descriptor: a sample that knows passatk's lines can forge them (the README says so).
_RS_FORGER = (
    "    use std::io::Write;\n"
    "    let mut proof = unsafe { <std::fs::File as std::os::unix::io::FromRawFd>::from_raw_fd(3) };\n"
    '    let _ = proof.write_all(b"passatk: test test_has_close_elements returned\\n");\n'
    '    let _ = std::io::stdout().write_all(b"test result: ok.\\n");\n'
    "    std::process::exit(0)\n"
    "}\n"
)


def test_a_rust_sample_that_writes_the_harness_lines_itself_still_passes(shared_data):
    """The limit the README states: a Rust sample that writes the harness's line on descriptor 3 and exits 0 passes."""
    path, rec = _first(shared_data, "humaneval-x", "rust")
    got = _compiled(path, rec["task_id"], [_RS_FORGER])[0]
    assert got.status == "passed", got


class TestRustWrapping:
    def test_tests_in_comments_and_strings_are_left_alone(self):
        """Only #[test] functions in code are wrapped and expected; one in a comment or a string is text."""
        test = (
            "/*\n#[test]\nfn commented() {}\n*/\n"
            'const S: &str = "#[test] fn quoted() {";\n'
            "#[cfg(test)]\nmod tests {\n    #[test]\n    fn real() {\n        assert!(true);\n    }\n}\n"
        )
        wrapped, lines = languages._rust_tests(test)
        assert lines == ("passatk: test real returned",)
        assert wrapped.count("__passatk_body_0") == 2 and "fn commented() {}" in wrapped and "fn quoted() {" in wrapped
        assert wrapped.count("\n") == test.count("\n")  # the same lines: a panic's line number is the benchmark's

    def test_multiple_main_is_wrapped(self):
        """MultiPL-E's main runs the benchmark's tests, then writes its line; without a main, nothing is wrapped."""
        tests = "}\n\nfn main() {\n    assert_eq!(1, 1);\n}\n"
        wrapped = languages._rust_main(tests)
        assert wrapped.startswith("}\n\nfn main() { __passatk_tests(); ") and "passatk: main returned" in wrapped
        assert wrapped.endswith("fn __passatk_tests() {\n    assert_eq!(1, 1);\n}\n")
        assert languages._rust_main("// fn main() {\n") is None
