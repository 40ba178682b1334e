"""Judged mode for Go and Rust: HumanEval-X and MultiPL-E tests in a judge program of their own, calling the sample's.

The compiled mode (the tests compiled into the sample's program) already asks Go and Rust runs
for passatk's proof lines on descriptor 3 (tests/test_compiled_exits.py), so most early exits
that pass the reference harness fail there too.  The attacks below are each shown to pass the
weaker design first: the reference harness (:func:`_reference`: the compiled job without
passatk's TestMain and proof lines, as CodeGeeX and MultiPL-E run it), and, for the Rust
samples that write the proof lines themselves, passatk's compiled mode as well.  In the judged
mode (the default) every one of them fails.
"""

from __future__ import annotations

import gzip
import json

import pytest

from passatk.execute import Limits, evaluate, languages, plan_sandbox
from passatk.execute.judged import _go_entry, _go_imports, _go_type, _rs_entry, _rs_server, judged_job
from passatk.execute.languages import GO_HARNESS
from passatk.execute.pool import LocalPool
from passatk.execute.tasks import load_problems
from test_languages import TRIVIAL, _broken, _need_sandboxed

_FILES = {
    ("humaneval-x", "go"): "humaneval-x/humaneval_go.jsonl.gz",
    ("multipl-e", "go"): "multipl-e/humaneval-go-reworded.jsonl.gz",
    ("humaneval-x", "rust"): "humaneval-x/humaneval_rust.jsonl.gz",
    ("multipl-e", "rust"): "multipl-e/humaneval-rs-reworded.jsonl.gz",
}


def _problems(shared_data, fmt, lang):
    _need_sandboxed(lang)
    path = shared_data / _FILES[(fmt, lang)]
    return path, load_problems(path)


def _run(jobs, timeout=10.0):
    plan = plan_sandbox("bwrap", languages.runtime_binds(), quiet=True)
    out = {}
    LocalPool(plan, Limits(timeout=timeout, memory_mb=1024, wall_factor=3, pids=64), workers=2).run(
        [{**j, "key": str(i)} for i, j in enumerate(jobs)], lambda v: out.__setitem__(int(v.key), v)
    )
    return [out[i] for i in range(len(jobs))]


def _reference(job):
    """The compiled job as the reference harness runs it: without passatk's Go TestMain and the proof lines it asks for."""
    steps = [
        {**{k: v for k, v in s.items() if k != "proof"}, "argv": [a for a in s["argv"] if not a.endswith(GO_HARNESS)]}
        for s in job["steps"]
    ]
    rule = {k: v for k, v in job["rule"].items() if k != "proof"}
    return {**{k: v for k, v in job.items() if k != "harness"}, "steps": steps, "rule": rule}


# --------------------------------------------------------------------------- #
# the entry point, read from the prompt (no toolchain needed)
# --------------------------------------------------------------------------- #
class TestGoEntry:
    @pytest.mark.parametrize(
        "prompt, expected",
        [
            ("func Add(x int, y int) int {\n", ("Add", ["x", "y"], "int")),
            ("// c\nfunc F(a, b interface{}) interface{} {\n", ("F", ["a", "b"], "interface{}")),
            ("func G(lst [][]int, x int) [][2]int {\n", ("G", ["lst", "x"], "[][2]int")),
            ("func H(m map[string]string) map[rune]int {\n", ("H", ["m"], "map[rune]int")),
            ("func K() []interface{} {\n", ("K", [], "[]interface{}")),
        ],
    )
    def test_found(self, prompt, expected):
        """The last function header of the prompt gives the entry point, its parameters' names and its result type."""
        assert _go_entry(prompt) == expected

    @pytest.mark.parametrize(
        "prompt",
        [
            "func F(p *int) int {\n",  # a pointer
            "func F(x int) (int, int) {\n",  # two results
            "func F(x int) {\n",  # no result
            "func F(x int) error {\n",  # an interface with methods
            "func F(xs ...int) int {\n",  # variadic
            "func F(int, string) int {\n",  # types without names
            "type P struct{}\nfunc F(p P) int {\n",  # a type of the prompt's own
            "// func F(x int) int {\n",  # a header in a comment
        ],
    )
    def test_not_judged(self, prompt):
        """A signature with a type the channel does not carry, or that is not one function's, has no entry point: the job stays compiled."""
        assert _go_entry(prompt) is None

    def test_types(self):
        """Slices, arrays and maps nest; named types, pointers, channels and functions are not carried."""
        assert _go_type("map[string][][2]any") and _go_type("[]byte")
        assert not any(_go_type(t) for t in ("*int", "chan int", "func()", "map[string]P", "struct{}"))


class TestGoImports:
    def test_unused_imports_become_blank(self):
        """An import that only the left-out part used (the tests' testing, the sample's strings) becomes _ "path"; used ones stay."""
        text = 'package p\n\nimport (\n    "testing"\n    "math/rand"\n    a "github.com/x/assert"\n)\n\nvar _ = rand.Int\n'
        assert _go_imports(text) == text.replace('"testing"', '_ "testing"').replace(
            'a "github.com/x/assert"', '_ "github.com/x/assert"'
        )

    def test_a_name_in_a_comment_or_string_is_no_use(self):
        """A package named only in a comment or a string literal is not used: made blank too (else the program would not build)."""
        text = 'package p\nimport "fmt"\n// fmt.Println\nvar s = "fmt.Sprint"\n'
        assert _go_imports(text).startswith('package p\nimport _ "fmt"\n')


class TestRustEntry:
    def test_found_after_the_prompts_comment(self):
        """HumanEval-X's header is in the declaration, followed by the prompt's comment: still the entry point."""
        assert _rs_entry("use std::cmp;\nfn add(x:i32, y:i32) -> i32{\n\n/*\nAdd two numbers\n*/\n") == (
            "add",
            [("x", "i32"), ("y", "i32")],
        )

    @pytest.mark.parametrize(
        "prompt", ["fn f<'a>(a: &'a str) -> bool {\n", "fn f((a, b): (i32, i32)) -> i32 {\n", "// fn f() {\n"]
    )
    def test_not_found(self, prompt):
        """Generic functions, patterns as parameters and headers in comments have no entry point."""
        assert _rs_entry(prompt) is None

    def test_references_are_decoded_owned(self):
        """A &T parameter is decoded as T and passed by reference; &str is decoded as a string of its own."""
        main = _rs_server("f", [("s", "&str"), ("v", "&Vec<f64>"), ("w", "&mut Vec<i32>"), ("n", "isize")])
        assert "let a0: &str = " in main and "let a1: Vec<f64> = " in main and "let mut a2: Vec<i32> = " in main
        assert "f(a0, &a1, &mut a2, a3)" in main

    def test_other_languages_stay_compiled(self):
        """A language without a call server keeps the compiled job (None from judged_job)."""
        assert judged_job({"format": "multipl-e", "language": "php", "prompt": "", "tests": ""}, "", {"steps": []}) is None


# --------------------------------------------------------------------------- #
# attacks: each passes the weaker design and fails in the judged mode
# --------------------------------------------------------------------------- #
# testing.Main with no tests prints "PASS" and calls os.Exit(0): the sample's file cannot import os
# (the prompt's imports are fixed), so this is its os.Exit(0) from init(), before any test.
_GO_INIT_EXIT = "func init() { testing.Main(func(string, string) (bool, error) { return true, nil }, nil, nil, nil) }"
_GO_TEST_MAIN = 'func TestMain(m *testing.M) { fmt.Println("PASS") }'
_GO_ATTACKS = {  # name: (format, completion of the first problem (HX: Go/0, MultiPL-E: correct_bracketing), judged status)
    "os.Exit(0) from init() (testing.Main), HumanEval-X": (
        "humaneval-x",
        "    return false\n}\n\n" + _GO_INIT_EXIT + "\n",
        "error",
    ),
    "os.Exit(0) from init() (testing.Main), MultiPL-E": ("multipl-e", "    return false\n}; " + _GO_INIT_EXIT + "\n", "error"),
    "own TestMain printing PASS, HumanEval-X": ("humaneval-x", "    return false\n}\n\n" + _GO_TEST_MAIN + "\n", "compile_error"),
    "own TestMain printing PASS, MultiPL-E": ("multipl-e", "    return false\n}; " + _GO_TEST_MAIN + "\n", "compile_error"),
}
# Rust: the proof lines of passatk's compiled mode (descriptor 3) can be written by the sample itself.
_RS_PROOF_HX = "passatk: test test_has_close_elements returned\\n"
_RS_WRITE = (
    "use std::io::Write; let mut proof = unsafe {{ <std::fs::File as std::os::unix::io::FromRawFd>::from_raw_fd(3) }}; "
    'let _ = proof.write_all(b"{line}"); let _ = std::io::stdout().write_all(b"\\ntest result: ok. 1 passed; 0 failed\\n"); '
    "std::process::exit(0)"
)
_RS_ATTACKS = {  # name: (format, completion, judged status, passes passatk's compiled mode too)
    "std::process::exit(0), MultiPL-E": ("multipl-e", "    std::process::exit(0)\n", "error", False),
    "the proof line written, then exit(0), MultiPL-E": (
        "multipl-e",
        "    " + _RS_WRITE.format(line="passatk: main returned\\n") + "\n",
        "error",
        True,
    ),
    "printed markers and the proof line, then exit(0), HumanEval-X": (
        "humaneval-x",
        "    " + _RS_WRITE.format(line=_RS_PROOF_HX) + "\n}\n",
        "error",
        True,
    ),
    "an ELF constructor (a static's initialiser) that does it before main, HumanEval-X": (
        "humaneval-x",
        "    false\n}\n"
        '#[used] #[link_section = ".init_array"] static PASSATK_ATTACK: extern "C" fn() = {\n'
        '    extern "C" fn run() { ' + _RS_WRITE.format(line=_RS_PROOF_HX) + " }\n    run\n};\n",
        "error",
        True,
    ),
}


def _first(shared_data, fmt, lang):
    path, problems = _problems(shared_data, fmt, lang)
    with gzip.open(path, "rt") as fh:
        rec = json.loads(fh.readline())
    return problems[rec["task_id" if fmt == "humaneval-x" else "name"]].spec


@pytest.mark.sandbox
@pytest.mark.parametrize("attack", list(_GO_ATTACKS))
def test_go_attacks_pass_the_reference_harness_and_fail_judged(shared_data, attack):
    """Each Go early exit passes the reference harness (exit 0, PASS) and fails in the judged mode, with judged: true.

    The weaker design here is the reference harness: passatk's compiled mode already fails these
    (its TestMain's proof line is missing, or two TestMains do not build; test_compiled_exits.py).
    """
    fmt, completion, status = _GO_ATTACKS[attack]
    spec = _first(shared_data, fmt, "go")
    compiled = languages.program_job(spec, completion, judged=False)
    judged = languages.program_job(spec, completion)
    assert judged["kind"] == "judged"
    ref, got = _run([_reference(compiled), judged])
    assert (ref.status, ref.judged) == ("passed", False), ref
    assert (got.status, got.judged) == (status, True), got


@pytest.mark.sandbox
@pytest.mark.parametrize("attack", list(_RS_ATTACKS))
def test_rust_attacks_pass_compiled_and_fail_judged(shared_data, attack):
    """Each Rust early exit passes the reference harness (and, writing the proof line itself, passatk's compiled mode); judged, it fails."""
    fmt, completion, status, forges = _RS_ATTACKS[attack]
    spec = _first(shared_data, fmt, "rust")
    compiled = languages.program_job(spec, completion, judged=False)
    judged = languages.program_job(spec, completion)
    assert judged["kind"] == "judged"
    ref, comp, got = _run([_reference(compiled), compiled, judged])
    assert (ref.status, ref.judged) == ("passed", False), ref
    assert (comp.status == "passed") is forges, comp
    assert (got.status, got.judged) == (status, True), got


_RIGHT = {  # correct_bracketing (MultiPL-E's first problem), solved
    "go": (
        "    depth := 0\n    for _, c := range brackets {\n        if c == '<' { depth++ } else { depth-- }\n"
        "        if depth < 0 { return false }\n    }\n    return depth == 0\n}\n"
    ),
    "rust": (
        "    let mut depth = 0;\n    for c in brackets.chars() {\n        if c == '<' { depth += 1 } else { depth -= 1 }\n"
        "        if depth < 0 { return false; }\n    }\n    depth == 0\n"
    ),
}
_PRINTS = {  # the same, printing what a passing run prints and what an answer looks like, on stdout and stderr
    "go": '    fmt.Println("PASS\\n[\\"ok\\",true]\\nok")\n' + _RIGHT["go"],
    "rust": '    println!("[\\"ok\\",true]\\ntest result: ok."); eprintln!("noise");\n' + _RIGHT["rust"],
}
_WRONG_PRINTS = {
    "go": '    fmt.Println("PASS\\n[\\"ok\\",true]\\nok")\n    return true\n}\n',
    "rust": '    println!("[\\"ok\\",true]\\ntest result: ok.");\n    true\n',
}


@pytest.mark.sandbox
@pytest.mark.parametrize("lang", ["go", "rust"])
def test_output_cannot_change_a_verdict(shared_data, lang):
    """A right solution that prints passes; a wrong one that prints a pass's markers and answers fails; a panic fails as raised."""
    spec = _first(shared_data, "multipl-e", lang)
    panic = '    panic("no")\n}\n' if lang == "go" else '    panic!("no")\n'
    jobs = [languages.program_job(spec, c) for c in (_RIGHT[lang], _PRINTS[lang], _WRONG_PRINTS[lang], panic)]
    got = _run(jobs)
    assert [(v.status, v.judged) for v in got] == [("passed", True)] * 2 + [("failed", True)] * 2, got
    assert "raised: no" in got[3].detail, got[3]


@pytest.mark.sandbox
def test_garbage_on_the_channel_is_a_protocol_violation(shared_data):
    """A Rust sample that writes on the channel itself gets its lines read as answers: garbage is an error, never a pass."""
    spec = _first(shared_data, "multipl-e", "rust")
    garbage = "    " + _RS_WRITE.format(line="not json\\n").replace("std::process::exit(0)", "true") + "\n"
    got = _run([languages.program_job(spec, garbage)])[0]
    assert (got.status, got.judged) == ("error", True) and "protocol violation" in got.detail, got


@pytest.mark.sandbox
def test_evaluate_records_say_judged(shared_data):
    """evaluate judges Go and Rust by default, and its records say so."""
    _need_sandboxed("go")
    _need_sandboxed("rust")
    recs = []
    for lang in ("go", "rust"):
        path = shared_data / _FILES[("multipl-e", lang)]
        samples = [{"name": "HumanEval_0_has_close_elements", "completion": TRIVIAL[lang]}]
        samples.append({"name": "HumanEval_56_correct_bracketing", "completion": _RIGHT[lang]})
        recs += evaluate(samples, path, workers=1, timeout=10.0).records
    assert [(r["status"], r["judged"]) for r in recs] == [("failed", True), ("passed", True)] * 2, recs


# --------------------------------------------------------------------------- #
# fidelity: canonical solutions pass, broken ones and trivial bodies fail
# --------------------------------------------------------------------------- #
def _read(path):
    return [json.loads(line) for line in gzip.open(path, "rt") if line.strip()]


# HumanEval-X problems whose canonical solution fails in the compiled mode too (test_languages.KNOWN_FAILING, FLAKY)
_KNOWN = {"go": {"Go/95"}, "rust": {"Rust/50"}}
_ACCEPTED = {"go": set(), "rust": {"Rust/4", "Rust/32"}}  # broken variants the tests accept (the default value is right)


@pytest.mark.slow
@pytest.mark.sandbox
@pytest.mark.timeout(3600)  # two builds a problem on two busy cores
@pytest.mark.parametrize("lang", ["go", "rust"])
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
@pytest.mark.sandbox
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("lang", ["go", "rust"])
def test_multiple_trivial_bodies_fail(shared_data, lang):
    """Every third MultiPL-E prompt with a trivial body fails judged, and no job falls into a sandbox error."""
    path, problems = _problems(shared_data, "multipl-e", lang)
    recs = _read(path)[::3]
    got = _run([languages.program_job(problems[r["name"]].spec, TRIVIAL[lang]) for r in recs])
    bad = {r["name"]: (v.status, v.detail) for r, v in zip(recs, got) if v.status in ("passed", "sandbox_error")}
    assert bad == {}


# --------------------------------------------------------------------------- #
# the Verifier's door: {"language": "rust", "source", "tests"}
# --------------------------------------------------------------------------- #
_RS_ADD = "use std::collections::HashMap;\nfn add(x: i64, y: i64) -> i64 {\n    %s\n}\n"
_RS_ADD_TESTS = (
    "fn main() {\n    let candidate = add;\n    assert_eq!(candidate(1, 2), 3);\n    assert_eq!(candidate(5, 7), 12);\n}\n"
)
_RS_CONSTRUCTOR = (
    '#[used] #[link_section = ".init_array"] static PASSATK_ATTACK: extern "C" fn() = {\n'
    '    extern "C" fn run() { std::process::exit(0) }\n    run\n};\n'
)


@pytest.mark.sandbox
def test_verifier_rust_tests_tasks_are_judged():
    """A Rust Verifier task whose tests name the entry point (let candidate = f;) is judged: exit(0) passes only compiled."""
    _need_sandboxed("rust")
    from passatk.execute import Verifier

    sources = [_RS_ADD % "x + y", _RS_ADD % "std::process::exit(0)", _RS_ADD % "x * y", _RS_ADD % "x * y" + _RS_CONSTRUCTOR]
    compiled = _run([languages.code_tests_job("rust", s, _RS_ADD_TESTS, judged=False) for s in sources[1::2]])
    assert [v.status for v in compiled] == ["passed", "passed"], compiled  # the attacks are real in the compiled mode
    with Verifier(workers=2, timeout=10.0) as v:
        got = v.verify([{"language": "rust", "source": s, "tests": _RS_ADD_TESTS} for s in sources])
    assert [(g.status, g.judged) for g in got] == [("passed", True), ("error", True), ("failed", True), ("error", True)], got


@pytest.mark.parametrize(
    "source, marker",
    [
        (_RS_ADD % "0" + _RS_CONSTRUCTOR, "PASSATK_ATTACK"),  # a static of the sample's
        ("fn add(x: i64, y: [u8; { std::process::exit(0); 1 }]) -> i64 {\n    0\n}\n", "exit(0); 1"),  # code in a type
        ("use std::io; static Z: i32 = 0;\nfn add(x: i64, y: i64) -> i64 {\n    0\n}\n", "static Z"),  # an item after a use
    ],
)
def test_the_rust_sample_source_never_runs_in_the_judge(source, marker):
    """Only whole `use` lines and a header of plain types reach the judge: a static, code in a type, a trailing item never do.

    Such a task is judged without them, or falls back to the compiled mode (judged: false).  A judge
    built from the sample's whole source (the weaker design) would hold each marker, and run it.
    """
    _need_sandboxed("rust")
    job = languages.code_tests_job(
        "rust", source, "fn main() {\n    let candidate = add;\n    assert_eq!(candidate(1, 2), 0);\n}\n"
    )
    assert marker not in job.get("judge", {}).get("source", ""), job


# --------------------------------------------------------------------------- #
# the channel carries every value of the declared types exactly
# --------------------------------------------------------------------------- #
_GO_ROUND_TRIP = {
    "name": "round_trip",
    "language": "go_test.go",
    "prompt": (
        'package round_trip_test\n\nimport (\n    "math"\n    "reflect"\n    "testing"\n)\n\n'
        "func echo(a []int, s string, m map[rune]float64, x interface{}, n []string) []interface{} {\n"
    ),
    "tests": (
        "func TestEcho(t *testing.T) {\n"
        '    s := "h\\"i\\n\\xff\\x00é"\n'
        "    m := map[rune]float64{'a': 0.1, 'é': math.Inf(-1), 3: math.Copysign(0, -1)}\n"
        '    x := []interface{}{nil, int64(-1 << 63), uint8(255), "x", [2]bool{true, false}, map[string][]int{"k": nil}}\n'
        "    got := echo([]int{}, s, m, x, nil)\n"
        "    want := []interface{}{[]int{}, s, m, x, []string(nil), float32(1.5)}\n"
        '    if !reflect.DeepEqual(got, want) || math.Signbit(got[2].(map[rune]float64)[3]) != true {\n        t.Fatalf("%#v", got)\n    }\n'
        '    if nan := echo(nil, "", map[rune]float64{1: math.NaN()}, nil, nil)[2].(map[rune]float64)[1]; !math.IsNaN(nan) {\n'
        '        t.Fatalf("%v", nan)\n    }\n}\n'
    ),
    "stop_tokens": ["\nfunc", "struct", "\n// "],
}
_RS_ROUND_TRIP = {
    "name": "round_trip",
    "language": "rs",
    "prompt": (
        "use std::collections::HashMap;\n"
        "fn echo(s: &str, v: Vec<(i64, f64)>, m: HashMap<String, Option<u8>>, c: char) "
        "-> (String, Vec<(i64, f64)>, HashMap<String, Option<u8>>, Vec<char>) {\n"
    ),
    "tests": (
        "}\n\nfn main() {\n    let candidate = echo;\n"
        '    let s = "h\\"i\\n\\u{0}é\\u{1F600}";\n'
        "    let v = vec![(i64::MIN, 0.1), (i64::MAX, -0.0), (0, f64::INFINITY), (1, 1e-308)];\n"
        '    let mut m = HashMap::new(); m.insert("é".to_string(), Some(255u8)); m.insert(String::new(), None);\n'
        "    let got = candidate(s, v.clone(), m.clone(), 'é');\n"
        "    assert_eq!(got, (s.to_string(), v, m, vec!['é']));\n"
        "    assert!(got.1[1].1.is_sign_negative());\n"
        "    assert!(candidate(\"\", vec![(0, f64::NAN)], HashMap::new(), 'a').1[0].1.is_nan());\n}\n"
    ),
    "stop_tokens": ["\n}"],
}
_ROUND_TRIP_BODIES = {
    "go": "    return []interface{}{a, s, m, x, n, float32(1.5)}\n}\n",
    "rust": "    (s.to_string(), v, m, vec![c])\n",
}


@pytest.mark.sandbox
@pytest.mark.parametrize("lang, rec", [("go", _GO_ROUND_TRIP), ("rust", _RS_ROUND_TRIP)])
def test_values_cross_the_channel_exactly(tmp_path, lang, rec):
    """Bytes outside ASCII, extreme integers, -0.0, NaN, infinities, nil against empty slices, nested interface{} values round-trip.

    A channel that went through text (Go's json.Marshal replaces a byte like \\xff; %v prints nil and
    empty slices alike) or through float64 for integers would fail these comparisons.
    """
    _need_sandboxed(lang)
    path = tmp_path / "round_trip.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    spec = load_problems(path)["round_trip"].spec
    job = languages.program_job(spec, _ROUND_TRIP_BODIES[lang])
    assert job["kind"] == "judged"
    got = _run([job])[0]
    assert (got.status, got.judged) == ("passed", True), got


@pytest.mark.sandbox
@pytest.mark.parametrize(
    "line",
    ['["ok",1]', '["ok",true,1]', '["maybe",true]', "[" * 300 + "]" * 300, '["ok",true] trailing', '["ok","\\u0100"]'],
)
def test_a_forged_answer_the_type_does_not_allow_is_a_protocol_violation(shared_data, line):
    """A Rust sample that writes its own answer line (an int for a bool, extra items, a bad tag, 300 deep, trailing text) ends the judge: error.

    A judge that read answers loosely (JSON's 1 as true, the first value of a longer line) would take them.
    """
    spec = _first(shared_data, "multipl-e", "rust")
    forged = (
        "    "
        + _RS_WRITE.format(line=line.replace("\\", "\\\\").replace('"', '\\"') + "\\n").replace(
            "std::process::exit(0)", "loop {}"
        )
        + "\n"
    )
    got = _run([languages.program_job(spec, forged)])[0]
    assert (got.status, got.judged) == ("error", True) and "protocol violation" in got.detail, got
