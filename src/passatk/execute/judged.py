"""Judged mode for function-call tasks in compiled languages: the tests run outside the sample's program.

In HumanEval-X and MultiPL-E every language but Python compiles the tests
into the sample's own program, and a pass is "the program exited 0" (see
:mod:`passatk.execute.languages`): whatever the program can do, a sample can
do first (``exit(0)`` from a static constructor or ``atexit``, printed
markers).  In judged mode two programs are built from one problem:

* the **call server**, the sample's program: the prompt and the completion as
  the benchmark assembles them, with the tests left out and a ``main`` of
  passatk's in their place, generated from the entry point's signature, that
  reads one call a line on descriptor 3 (the arguments, in a tagged JSON
  encoding) and writes the return value, encoded the same way, as the answer;
* the **judge program**: the benchmark's own tests, unchanged, compiled with
  the trusted prompt in which the entry point's body is a proxy that sends
  each call to the call server and decodes its answer into the declared
  return type.  The tests compare with the benchmark's own operators and
  helpers (``==``, ``issame``, ``abs(a - b) < 1e-3``), so the comparison is
  the benchmark's by construction.

The judge program is built and run by the worker (trusted side, its own
sandbox, never the sample's); the call server is built and run in the
sample's sandbox and reaches the judge only through the call channel, a
socket that is neither its standard output nor its standard error (see
:mod:`passatk.execute._worker.judged`).  The judge holds the expected
values and never sends them; the sample can answer however it likes, but
only correct answers to every call make the judge's tests return, and only
the judge's exit status decides.  A call server that exits early, crashes
or writes garbage on the channel leaves the judge without an answer: a
non-pass.

Where a problem cannot be judged this way (no entry point found in the
prompt, a language not done yet, or, found by the worker, a judge program
that does not build: a type the channel does not carry), the job falls back
to the compiled mode and its verdict says ``judged: false``.

The encoding (both sides are compiled from the same declared types, so the
types need no names): an integer is a JSON integer, a boolean ``true`` or
``false``, a string a JSON string of bytes (every byte outside printable
ASCII escaped as ``\\u00XX``); a floating-point number ``["f", "<C99 hex
float>"]`` (exact); a vector/list ``["l", item, ...]``; a tuple or pair
``["t", item, ...]``; a map ``["d", ["t", key, value], ...]``; an optional
``["o"]`` or ``["o", value]``; a variant ``["v", index, value]``; an
``std::any`` ``["a", type, value]``.  A call is the JSON array of its
arguments on one line; an answer is ``["ok", value]`` or ``["raised",
message]`` on one line.  Go and Rust write a float as ``["f", "<shortest
round-trip text>"]``; Go's ``interface{}`` is ``["a", "<Go type>", value]``
(``["x", "<Go type>"]`` for a type the channel does not carry) and a nil
slice or map ``null`` (see ``_callserver/passatk_rpc.go`` and ``.rs``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path

__all__ = ["JUDGED_LANGUAGES", "code_tests_judged", "judged_job", "rust_runtime"]

JUDGED_LANGUAGES = (
    "cpp",
    "go",
    "java",
    "nodejs",
    "rust",
    "typescript",
)  # languages with a call server and a judge program; the others stay compiled
_HERE = Path(__file__).with_name("_callserver")


@cache
def _cpp_rpc() -> str:
    return (_HERE / "passatk_rpc.hpp").read_text(encoding="utf-8")


def cpp_runtime() -> Path:
    """The channel's C++ runtime (parser, channel, errors) compiled once into ``passatk_rpc.o`` in the cache.

    Both programs link it instead of compiling it each time: the call server
    then costs little more to build than the compiled mode's program.
    """
    from passatk.execute.languages import _build_once, _clean_env, _run, _tool_version

    digest = hashlib.sha256(_cpp_rpc().encode()).hexdigest()[:12]

    def build(tmp: Path) -> None:
        (tmp / "passatk_rpc.cpp").write_text('#define PASSATK_RPC_IMPL\n#include "passatk_rpc.hpp"\n')
        (tmp / "passatk_rpc.hpp").write_text(_cpp_rpc())
        argv = ["g++", "-std=c++11", "-O2", "-c", "passatk_rpc.cpp", "-o", "passatk_rpc.o"]
        _run(argv, tmp, _clean_env(str(tmp)), "the C++ call channel's runtime")

    return _build_once(f"cpp-rpc-{digest}-{_tool_version(['g++', '--version'])}", build) / "passatk_rpc.o"


# --------------------------------------------------------------------------- #
# C++
# --------------------------------------------------------------------------- #
# the entry point's header, at the end of the prompt: `<type> <name>(<params>) {`
_CPP_SIGNATURE = re.compile(r"(?:^|\n)([^\n;{}]*?\b(\w+)\s*\(([^()]*)\)\s*\{)\s*$")
_CPP_MAIN = re.compile(r"^\s*int\s+main\s*\(", re.M)


def _params(params: str) -> list[tuple[str, str]] | None:
    """``(type, name)`` of each parameter of a C-like parameter list (commas inside ``<>``, ``()``, ``[]`` kept), or None."""
    parts, depth, at = [], 0, 0
    for i, ch in enumerate(params):
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(params[at:i])
            at = i + 1
    parts.append(params[at:])
    parts = [p.strip() for p in parts]
    if parts == [""] or parts == ["void"]:
        return []
    out = []
    for part in parts:
        part = part.split("=")[0].strip()
        m = re.search(r"(\w+)\s*$", part)
        if m is None or m.group(1) == part or not part[: m.start()].strip():  # a type without a name
            return None
        out.append((part[: m.start()].strip(), m.group(1)))
    return out


def _split_params(params: str) -> list[str] | None:
    """The parameters' names in a C-like parameter list, or None."""
    found = _params(params)
    return None if found is None else [name for _, name in found]


def _cpp_entry(prompt: str) -> tuple[str, list[str], str] | None:
    """The entry point whose body the prompt opens: its name, its parameters' names and its function-pointer type; or None.

    The pointer type picks the entry point among overloads of its name
    (``strlen``, ``unique``, ``is_sorted``: the standard library's, seen
    through ``using namespace std``).
    """
    m = _CPP_SIGNATURE.search(prompt)
    if m is None or m.group(2) in ("if", "for", "while", "switch", "main"):
        return None
    params = _params(m.group(3))
    ret = re.sub(r"\b(?:static|inline|extern|constexpr)\b", "", m.group(1)[: m.start(2) - m.start(1)]).strip()
    if params is None or not ret:
        return None
    return m.group(2), [name for _, name in params], f"{ret} (*)({', '.join(t for t, _ in params)})"


def _cpp_header(pointer: str) -> str:
    """The channel's header, with only the codecs the entry point's types need (a C++11 build pays for each include)."""
    needs = "".join(
        f"#define {macro} 1\n"
        for macro, word in (("PASSATK_RPC_MAPS", r"map\b"), ("PASSATK_RPC_CSTR", r"char\s*\*"))
        if re.search(word, pointer)
    )
    return needs + _cpp_rpc()


def _cpp_server(name: str, pointer: str) -> str:
    return f"\n{_cpp_header(pointer)}\nint main() {{ return passatk_rpc::serve(static_cast<{pointer}>(&{name})); }}\n"


def _cpp_proxy(name: str, params: list[str], pointer: str) -> str:
    args = "".join(", " + p for p in params)
    return f"\n    return passatk_rpc::call(static_cast<{pointer}>(&{name}){args});\n"


def _cpp_programs(spec: Mapping, completion: str) -> tuple[str, str] | None:
    """(the call server's program, the judge's program) of a C++ problem, or None."""
    from passatk.execute.languages import _CPP_INCLUDES, truncate

    if spec["format"] == "humaneval-x":
        prompt = spec["prompt"]
        entry = _cpp_entry(prompt)
        if entry is None:
            return None
        setup = "".join(s + "\n" for s in _CPP_INCLUDES if s not in prompt)
        server = setup + "\n" + prompt + completion + "\n" + _cpp_server(entry[0], entry[2])
        judge = _cpp_header(entry[2]) + setup + "\n" + prompt + _cpp_proxy(*entry) + "}\n" + spec["test"]
        return server, judge
    prompt, tests = spec["prompt"], spec["tests"]
    entry, main = _cpp_entry(prompt), _CPP_MAIN.search(tests)
    if entry is None or main is None:
        return None
    body = truncate(completion, spec.get("stop_tokens", ()))
    server = prompt + body + "\n" + tests[: main.start()] + _cpp_server(entry[0], entry[2])
    judge = _cpp_header(entry[2]) + prompt + _cpp_proxy(*entry) + tests
    return server, judge


_CPP_CANDIDATE = re.compile(r"\bcandidate\s*=\s*&?\s*(\w+)\s*;")
# Only these lines of the sample's source reach the judge program, and its entry point's header is
# rebuilt from types of a conservative grammar: no parentheses (decltype, attributes, calls), no
# default arguments, nothing that could run the sample's code in the judge.
_CPP_PREAMBLE = re.compile(
    r"^[ \t]*(#[ \t]*include[ \t]*<[\w./+-]+>|using[ \t]+namespace[ \t]+\w+(?:::\w+)*[ \t]*;)[ \t]*$", re.M
)
_CPP_TYPE = re.compile(r"[A-Za-z_][\w:<>,\s*&]*")


def _cpp_code_programs(source: str, tests: str) -> tuple[str, str] | None:
    """(call server, judge) for a whole program and MultiPL-E-style tests (``auto candidate = f;``), or None.

    The judge program holds the source's ``#include <...>`` and ``using
    namespace`` lines (those alone), the entry point's header rebuilt from its
    types with the proxy as its body, then the tests; tests that call other
    functions of the source do not build there, and the job falls back to the
    compiled mode.  The source is the sample's: nothing else of it reaches the
    judge.
    """
    named, main = _CPP_CANDIDATE.search(tests), _CPP_MAIN.search(tests)
    if named is None or main is None:
        return None
    name = named.group(1)
    headers = list(re.finditer(r"(?:^|\n)([^\n;{}]*?\b" + re.escape(name) + r"\s*\(([^()]*)\)\s*\{)", source))
    if not headers:
        return None
    entry = _cpp_entry(headers[-1].group(1).strip())
    params = _params(headers[-1].group(2))
    if entry is None or params is None or "=" in headers[-1].group(2):
        return None
    ret = entry[2].split(" (*)(", 1)[0]
    if not all(_CPP_TYPE.fullmatch(t) for t in (ret, *(t for t, _ in params))):
        return None
    header = f"{ret} {name}({', '.join(f'{t} {n}' for t, n in params)}) {{"
    preamble = "".join(m.group(1) + "\n" for m in _CPP_PREAMBLE.finditer(source))
    server = source + "\n" + tests[: main.start()] + _cpp_server(name, entry[2])
    judge = _cpp_header(entry[2]) + preamble + header + _cpp_proxy(*entry) + "}\n" + tests
    return server, judge


def code_tests_judged(language: str, source: str, tests: str, compiled: dict) -> dict | None:
    """The judged job of a whole program and its tests (the Verifier's ``tests`` tasks), or None.

    As :func:`judged_job`, for a program that defines the entry point the tests
    name (``auto candidate = f;``, ``let candidate = f;``: MultiPL-E's form).
    """
    if language == "cpp":
        programs = _cpp_code_programs(source, tests)
    elif language == "rust":
        programs = _rs_code_programs(source, tests)
    elif language in ("nodejs", "typescript"):
        programs = _js_code_programs(source, tests, ts=language == "typescript")
    else:
        return None
    return None if programs is None else _job(language, *programs, compiled)


def judged_job(spec: Mapping, completion: str, compiled: dict) -> dict | None:
    """The judged job of a HumanEval-X or MultiPL-E problem and a completion, or None where it cannot be judged.

    ``compiled`` is the compiled-mode job (:func:`passatk.execute.languages.program_job`'s),
    whose recipe both programs are built with; it is also the job's ``fallback``,
    run (and marked ``judged: false``) when the judge program does not build.
    """
    lang = spec["language"]
    if lang not in JUDGED_LANGUAGES:
        return None
    if lang in ("go", "rust"):
        made = (_go_programs if lang == "go" else _rust_programs)(spec, completion)
        return None if made is None else _job(lang, *made[:2], compiled, harness=made[2:])
    programs = {"cpp": _cpp_programs, "java": _java_programs}.get(lang, _js_programs)(spec, completion)
    return None if programs is None else _job(lang, *programs, compiled)


def _job(lang: str, server: str, judge: str, compiled: dict, harness: tuple[dict, dict] = ({}, {})) -> dict | None:
    """The judged job of two programs built with the compiled job's recipe.

    ``harness``: the files written beside the call server's and the judge's
    program (Go's call channel, in the test file the recipe builds with).
    """
    steps = [dict(s) for s in compiled["steps"]]
    if [s["phase"] for s in steps].count("run") != 1 or steps[-1]["phase"] != "run":
        return None
    run = steps[-1]
    if lang == "java":  # the channel is opened by its descriptor number, which java.io keeps to itself
        runtime = str(java_runtime())
        for step in steps:  # PassatkRpc, compiled once, on both class paths
            argv = list(step["argv"])
            if "-cp" in argv:
                at = argv.index("-cp") + 1
                argv[at] = argv[at] + ":" + runtime
            else:
                at = 1 + next(i for i, a in enumerate(argv[1:]) if not a.startswith("-"))
                argv[at:at] = ["-cp", (".:" if step["phase"] == "run" else "") + runtime]
            step["argv"] = argv
        run["argv"] = [run["argv"][0], _JAVA_OPEN, *run["argv"][1:]]
        keep = ["*.class"]
    elif run["argv"][0] == "node":  # the script itself (JavaScript) or what tsc made of it (TypeScript)
        keep = ["*.js"]
    elif run["argv"][0].startswith("./"):
        keep = [run["argv"][0][2:]]
        if lang == "cpp":  # the channel's runtime, compiled once, linked after the program
            runtime = str(cpp_runtime())
            for step in steps[:-1]:
                if compiled["file"] in step["argv"]:
                    at = step["argv"].index(compiled["file"]) + 1
                    step["argv"] = [*step["argv"][:at], runtime, *step["argv"][at:]]
        elif lang == "rust":  # the channel's crate, compiled once
            link = ["--extern", f"passatk_rpc={rust_runtime()}"]
            for step in steps[:-1]:
                step["argv"] = [*step["argv"], *link]
    else:
        return None
    server_steps = [{k: v for k, v in s.items() if k != "proof"} for s in steps]  # the channel is descriptor 3
    if lang == "rust":  # the call server has a main of its own, not libtest's
        server_steps[:-1] = [{**s, "argv": [a for a in s["argv"] if a != "--test"]} for s in server_steps[:-1]]
    if lang == "go":  # the call server links without a symbol table: 0.05 s of its build's 0.35 s
        server_steps[:-1] = [{**s, "argv": [*s["argv"][:3], "-ldflags=-s -w", *s["argv"][3:]]} for s in server_steps[:-1]]
    sample = {**compiled, "source": server, "steps": [*server_steps[:-1], {**server_steps[-1], "call": True}], "rule": {}}
    judged = {"source": judge, "file": compiled["file"], "steps": steps, "keep": keep}
    if harness[0]:
        sample["harness"] = harness[0]
        judged["harness"] = harness[1]
    judged.update({k: compiled[k] for k in ("copies", "workdir") if k in compiled})  # Go's module, where it is built
    return {"kind": "judged", "language": lang, "sample": sample, "judge": judged, "fallback": compiled}


# --------------------------------------------------------------------------- #
# Java
# --------------------------------------------------------------------------- #
_JAVA_OPEN = "--add-opens=java.base/java.io=ALL-UNNAMED"
_JAVA_SIGNATURE = re.compile(
    r"(?:^|\n)[ \t]*((?:(?:public|protected|private|static|final|synchronized)\s+)*)"
    r"([\w.$]+(?:\s*<[\w\s<>,.?\[\]]*>)?(?:\s*\[\s*\])*)\s+(\w+)\s*\(([^()]*)\)\s*(?:throws\s+[\w.,\s]+?)?\s*\{\s*$"
)
_JAVA_CLASS = re.compile(r"^\s*(?:public\s+|final\s+|abstract\s+)*class\s+(\w+)", re.M)
_JAVA_MAIN = re.compile(r"^[ \t]*public\s+static\s+void\s+main\s*\(", re.M)


@cache
def _java_rpc() -> str:
    return (_HERE / "PassatkRpc.java").read_text(encoding="utf-8")


def java_runtime() -> Path:
    """The directory of ``PassatkRpc``'s classes, compiled once into the cache and put on both programs' class paths."""
    from passatk.execute.languages import _build_once, _clean_env, _run, _tool_version

    digest = hashlib.sha256(_java_rpc().encode()).hexdigest()[:12]

    def build(tmp: Path) -> None:
        (tmp / "PassatkRpc.java").write_text(_java_rpc())
        _run(["javac", "-J-Xmx512m", "-encoding", "UTF8", "-d", ".", "PassatkRpc.java"], tmp, _clean_env(str(tmp)), "PassatkRpc")
        (tmp / "PassatkRpc.java").unlink()

    return _build_once(f"java-rpc-{digest}-{_tool_version(['javac', '-version'])}", build)


def _java_entry(prompt: str) -> tuple[str, str, str, list[str]] | None:
    """(owner class, return type, name, parameter names) of the method whose body the prompt opens, or None."""
    m = _JAVA_SIGNATURE.search(prompt)
    owners = _JAVA_CLASS.findall(prompt[: m.start()] if m else "")
    if m is None or not owners or m.group(2) in ("void", "new", "return", "else") or m.group(3) in ("if", "for", "while"):
        return None
    params = _split_params(m.group(4))
    return None if params is None else (owners[-1], m.group(2), m.group(3), params)


def _java_proxy(owner: str, ret: str, name: str, params: list[str]) -> str:
    args = "new Object[] {" + ", ".join(params) + "}"
    return f'\n        return ({ret}) PassatkRpc.call({owner}.class, "{name}", {args});\n'


def _java_serve(owner: str, name: str) -> str:
    return f'PassatkRpc.serve({owner}.class, "{name}");'


def _java_programs(spec: Mapping, completion: str) -> tuple[str, str] | None:
    """(the call server's program, the judge's program) of a Java problem, or None."""
    from passatk.execute.languages import truncate

    entry = _java_entry(spec["prompt"])
    if entry is None:
        return None
    owner, _, name, _ = entry
    if spec["format"] == "humaneval-x":
        prompt, test = spec["prompt"], spec["test"]
        main_class = f"public class Main {{\n    public static void main(String[] args) throws Exception {{ {_java_serve(owner, name)} }}\n}}\n"
        server = prompt + completion + "\n" + main_class
        judge = prompt + _java_proxy(*entry) + "    }\n}\n" + test
        return server, judge
    prompt, tests = spec["prompt"], spec["tests"]
    main = _JAVA_MAIN.search(tests)
    if main is None:
        return None
    body = truncate(completion, spec.get("stop_tokens", ()))
    serve_main = f"    public static void main(String[] args) throws Exception {{ {_java_serve(owner, name)} }}\n}}\n"
    server = prompt + body + "\n" + tests[: main.start()] + serve_main
    judge = prompt + _java_proxy(*entry) + tests
    return server, judge


# --------------------------------------------------------------------------- #
# JavaScript and TypeScript
# --------------------------------------------------------------------------- #
_JS_SIGNATURE = re.compile(
    r"(?:^|\n)[ \t]*(?:(?:const|let|var)\s+(\w+)\s*=\s*\(([^()]*)\)\s*=>|function\s+(\w+)\s*\(([^()]*)\)(?:\s*:\s*[^{};=]+?)?)\s*\{\s*$"
)
# HumanEval-X's tests only print "Assertion failed" (its harness fails any output): the judge fails at once instead
_JS_ASSERT = "console.assert = (ok, ...m) => { if (!ok) { require('fs').writeSync(2, 'Assertion failed\\n'); require('process').exit(1); } };\n"
_TS_REQUIRE = "declare var require: any;\n"


@cache
def _js_rpc() -> str:
    return (_HERE / "passatk_rpc.js").read_text(encoding="utf-8")


def _js_entry(prompt: str) -> tuple[str, list[str]] | None:
    """The function (or arrow function bound to a name) whose body the prompt opens, and its parameters' names; or None."""
    m = _JS_SIGNATURE.search(prompt)
    if m is None:
        return None
    name, params = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
    names = _js_params(params)
    return None if names is None else (name, names)


def _js_params(params: str) -> list[str] | None:
    """The parameters' names of a JavaScript or TypeScript parameter list, or None (destructured or rest parameters)."""
    parts, depth, at = [], 0, 0
    for i, ch in enumerate(params):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(params[at:i])
            at = i + 1
    parts.append(params[at:])
    names = []
    for part in (p.strip() for p in parts):
        if not part:
            continue
        found = re.fullmatch(r"(\w+)\??\s*(?::.*)?(?:=.*)?", part, re.S)
        if found is None:  # a destructured or rest parameter
            return None
        names.append(found.group(1))
    return names


_JS_CANDIDATE = re.compile(r"\bcandidate\s*=\s*(\w+)\s*;")


def _js_proxy(params: list[str], ts: bool) -> str:
    call = f"__passatk.call([{', '.join(params)}])"
    return f"\n  return {f'({call} as any)' if ts else call};\n}}\n"


def _js_code_programs(source: str, tests: str, ts: bool) -> tuple[str, str] | None:
    """(call server, judge) for a whole program and MultiPL-E-style tests (``let candidate = f;``), or None."""
    named = _JS_CANDIDATE.search(tests)
    if named is None:
        return None
    name = re.escape(named.group(1))
    header = re.compile(
        r"(?:^|\n)[ \t]*((?:function\s+" + name + r"\s*\(([^()]*)\)(?:\s*:\s*[^{};=]+?)?"
        r"|(?:const|let|var)\s+" + name + r"\s*=\s*\(([^()]*)\)\s*=>)\s*\{)"
    )
    found = list(header.finditer(source))
    if not found:
        return None
    m = found[-1]
    params = _js_params(m.group(2) if m.group(2) is not None else m.group(3))
    if params is None:
        return None
    head = _TS_REQUIRE if ts else ""
    server = head + source + "\n" + f"\n{_js_rpc()}\n__passatk.serve({named.group(1)});\n"
    # the header rebuilt from the names alone: a default value in the sample's would run in the judge
    typed = [f"{p}: any" if ts else p for p in params]
    header = f"function {named.group(1)}({', '.join(typed)}){': any' if ts else ''} {{"
    judge = head + _js_rpc() + header + _js_proxy(params, ts) + tests
    return server, judge


def _js_programs(spec: Mapping, completion: str) -> tuple[str, str] | None:
    """(the call server's program, the judge's program) of a JavaScript or TypeScript problem, or None."""
    from passatk.execute.languages import truncate

    entry = _js_entry(spec["prompt"])
    if entry is None:
        return None
    name, params = entry
    ts = spec["language"] == "typescript"
    head = _TS_REQUIRE if ts else ""
    proxy = _js_proxy(params, ts)
    serve = f"\n{_js_rpc()}\n__passatk.serve({name});\n"
    if spec["format"] == "humaneval-x":
        server = spec["prompt"] + completion + "\n" + serve
        judge = _js_rpc() + _JS_ASSERT + spec["prompt"] + proxy + spec["test"]
        return server, judge
    body = truncate(completion, spec.get("stop_tokens", ()))
    server = head + spec["prompt"] + body + "\n" + serve
    judge = head + _js_rpc() + spec["prompt"] + proxy + spec["tests"]
    return server, judge


# --------------------------------------------------------------------------- #
# Go
# --------------------------------------------------------------------------- #
# Go's programs are built as the compiled mode builds them (``go test -c`` of the program and
# passatk's test file, languages.GO_HARNESS); in judged mode that file holds the call channel
# (passatk_rpc.go), and, beside the call server, a TestMain that answers calls instead of testing.
_GO_TOKEN = re.compile(r"""//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|`[^`]*`|'(?:[^'\\\n]|\\.)*'""", re.S)
_GO_ANY = re.compile(r"interface\s*\{\s*\}")
_GO_HEADER = re.compile(r"(?:^|\n)func\s+(\w+)\s*\(([^()]*)\)\s*([^{}()\n]*?)\s*\{\s*$")
_GO_IMPORTS = re.compile(r"\bimport[ \t]*(?:\(([^()]*)\)|([^\n]*))")  # on the code: a block, or one line (its path blanked)
_GO_SPEC = re.compile(r"(?:([\w.]+)[ \t]+)?\"([^\"\n]+)\"")
_GO_BASIC = frozenset(
    "bool string int int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 float32 float64 rune byte any".split()
)


@cache
def _go_rpc() -> str:
    return (_HERE / "passatk_rpc.go").read_text(encoding="utf-8")


def _go_code(text: str) -> str:
    """``text`` with its comments and literals blanked and ``interface{}`` written ``any`` (the same length)."""
    code = _GO_TOKEN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return _GO_ANY.sub(lambda m: "any".ljust(len(m.group(0))), code)


def _go_type(text: str) -> bool:
    """Whether the channel carries a Go type: numbers, strings, booleans, ``interface{}``, and slices, arrays and maps of them.

    >>> _go_type("map[string][]any"), _go_type("[2]float64"), _go_type("*int"), _go_type("struct")
    (True, True, False, False)
    """
    text = text.strip()
    if text in _GO_BASIC:
        return True
    sliced = re.fullmatch(r"\[\d*\]\s*(\S.*)", text, re.S)
    if sliced:
        return _go_type(sliced.group(1))
    if text.startswith("map["):
        depth = 0
        for i in range(3, len(text)):
            depth += (text[i] == "[") - (text[i] == "]")
            if depth == 0:
                return _go_type(text[4:i]) and _go_type(text[i + 1 :])
    return False


def _go_entry(text: str) -> tuple[str, list[str], str] | None:
    """The function whose body ``text`` opens: its name, its parameters' names and its result type; or None.

    None as well where a parameter or the result has a type the channel does
    not carry, or where the function returns more or fewer than one value.

    >>> _go_entry("// Add\\nfunc Add(x, y int, s []string) map[rune]interface{} {\\n")
    ('Add', ['x', 'y', 's'], 'map[rune]interface{}')
    """
    code = _go_code(text)
    m = _GO_HEADER.search(code)
    if m is None or not _go_type(m.group(3)):
        return None
    names, typed = [], True
    for part in m.group(2).split(",") if m.group(2).strip() else []:
        bits = part.split(None, 1)
        if not bits or not re.fullmatch(r"[A-Za-z_]\w*", bits[0]) or bits[0] == "_":
            return None
        names.append(bits[0])
        typed = len(bits) == 2
        if typed and not _go_type(bits[1]):
            return None
    return (m.group(1), names, text[m.start(3) : code.rindex("{", 0, m.end())].strip()) if typed else None


def _go_imports(text: str) -> str:
    """``text`` with each import its code does not use made blank (``_ "path"``): Go does not build a program with an unused import.

    The call server leaves the tests out, and the judge the sample's body, and
    with them the uses of some of the prompt's imports.

    >>> print(_go_imports('package p\\n\\nimport (\\n    "fmt"\\n    "testing"\\n)\\n\\nvar s = fmt.Sprint(1) // testing.T\\n'))
    package p
    <BLANKLINE>
    import (
        "fmt"
        _ "testing"
    )
    <BLANKLINE>
    var s = fmt.Sprint(1) // testing.T
    <BLANKLINE>
    """
    code = _go_code(text)
    decls = list(_GO_IMPORTS.finditer(code))
    if not decls:
        return text
    used = code[decls[-1].end() :]
    out, at = [], 0
    for decl in decls:
        for spec in _GO_SPEC.finditer(text, decl.start() + len("import"), decl.end()):
            name = spec.group(1) or spec.group(2).rsplit("/", 1)[-1]
            if name not in ("_", ".") and not re.search(r"\b" + re.escape(name) + r"\s*\.", used):
                out += [text[at : spec.start()], f'_ "{spec.group(2)}"']
                at = spec.end()
    return "".join(out) + text[at:]


def _go_proxy(name: str, params: list[str], ret: str) -> str:
    args = "".join(", " + p for p in params)
    return f"\n\tvar passatkResult {ret}\n\tpassatkCall({name}, &passatkResult{args})\n\treturn passatkResult\n}}\n"


def _go_programs(spec: Mapping, completion: str) -> tuple[str, str, dict, dict] | None:
    """(the call server's program, the judge's program, their harness files) of a Go problem, or None."""
    from passatk.execute.languages import GO_HARNESS, go_parts, truncate

    trusted = spec.get("test_setup", "") if spec["format"] == "humaneval-x" else spec["prompt"]
    package = re.search(r"^\s*package\s+(\w+)", trusted, re.M)
    if spec["format"] == "humaneval-x":
        setup, imports, prompt = go_parts(spec, completion)
        entry = _go_entry(prompt)
        if entry is None or package is None:
            return None
        server = setup + "\n" + imports + prompt + completion + "\n"
        # the standard packages the completion names are imported for the tests too, as CodeGeeX does
        # (Go/2, 4, 44 and 151's tests use math, which only a completion's use of it imports)
        judge = setup + "\n" + imports + prompt + _go_proxy(*entry) + spec["test"]
    else:
        entry = _go_entry(spec["prompt"])
        if entry is None or package is None:
            return None
        server = spec["prompt"] + truncate(completion, spec.get("stop_tokens", ())) + "\n"
        judge = spec["prompt"] + _go_proxy(*entry) + spec["tests"]
    rpc = f"package {package.group(1)}\n\n{_go_rpc()}"
    serve = f"\nfunc TestMain(m *testing.M) {{ passatkServeMain(m, {entry[0]}) }}\n"
    return _go_imports(server), _go_imports(judge), {GO_HARNESS: rpc + serve}, {GO_HARNESS: rpc}


# --------------------------------------------------------------------------- #
# Rust
# --------------------------------------------------------------------------- #
# Both programs link the crate passatk_rpc (passatk_rpc.rs, compiled once: rust_runtime); the call
# server's main is generated from the entry point's parameter types, the judge's proxy from their names.
_RS_HEADER = re.compile(r"(?:^|\n)[ \t]*(?:pub\s+)?fn\s+(\w+)\s*\(((?:[^()]|\([^()]*\))*)\)\s*(?:->\s*([^{};]+?))?\s*\{\s*$")


_RS_LINK = "\nextern crate passatk_rpc;\n"  # at the crate root: every edition (2015's MultiPL-E, 2021's HumanEval-X)


@cache
def _rs_rpc() -> str:
    return (_HERE / "passatk_rpc.rs").read_text(encoding="utf-8")


def rust_runtime() -> Path:
    """The channel's Rust crate (passatk_rpc.rs) compiled once into ``libpassatk_rpc.rlib`` in the cache.

    Both programs link it (``--extern``) instead of compiling its parser and
    codecs each time: the call server then costs little more to build than
    the compiled mode's program.
    """
    from passatk.execute.languages import _build_once, _clean_env, _run, _tool_version

    digest = hashlib.sha256(_rs_rpc().encode()).hexdigest()[:12]

    def build(tmp: Path) -> None:
        (tmp / "passatk_rpc.rs").write_text(_rs_rpc())
        argv = ["rustc", "--edition", "2021", "-O", "--crate-type", "rlib", "--crate-name", "passatk_rpc", "passatk_rpc.rs"]
        _run(argv, tmp, _clean_env(str(tmp)), "the Rust call channel's crate")
        (tmp / "passatk_rpc.rs").unlink()

    return _build_once(f"rust-rpc-{digest}-{_tool_version(['rustc', '--version'])}", build) / "libpassatk_rpc.rlib"


def _rs_split(params: str) -> list[str]:
    parts, depth, at = [], 0, 0
    for i, ch in enumerate(params):
        depth += (ch in "<([") - (ch in ">)]")
        if ch == "," and depth == 0:
            parts.append(params[at:i])
            at = i + 1
    parts.append(params[at:])
    return [p.strip() for p in parts if p.strip()]


def _rs_entry(text: str) -> tuple[str, list[tuple[str, str]]] | None:
    """The function whose body ``text`` opens (comments and strings aside): its name and ``(name, type)`` of each parameter; or None.

    >>> _rs_entry("fn f(a: &str, mut v: Vec<(i32, f64)>) -> bool {\\n/* doc */\\n")
    ('f', [('a', '&str'), ('v', 'Vec<(i32, f64)>')])
    """
    from passatk.execute.languages import _rust_code

    m = _RS_HEADER.search(_rust_code(text))
    if m is None:
        return None
    params = []
    for part in _rs_split(text[m.start(2) : m.end(2)]):
        found = re.fullmatch(r"(?:mut\s+)?([A-Za-z_]\w*)\s*:\s*(\S.*)", part, re.S)
        if found is None:
            return None
        params.append((found.group(1), found.group(2).strip()))
    return m.group(1), params


def _rs_server(name: str, params: list[tuple[str, str]]) -> str:
    """The call server's ``main``: each argument decoded into its parameter's type (a reference's target owned), the result encoded."""
    lets, args = [], []
    for i, (_, kind) in enumerate(params):
        kind = re.sub(r"'(?!static\b)\w+\s*", "", kind)  # a lifetime of the signature's own
        ref = re.fullmatch(r"&\s*(mut\s+)?(.+)", kind, re.S)
        if ref is not None and ref.group(2).strip() != "str":
            owned = ref.group(2).strip()
            owned = f"Vec<{owned[1:-1]}>" if owned.startswith("[") and ";" not in owned else owned
            mut = "mut " if ref.group(1) else ""
            lets.append(f"let {mut}a{i}: {owned} = passatk_rpc::Dec::dec(&a[{i}])?;")
            args.append(f"&{mut}a{i}")
        else:
            lets.append(f"let a{i}: {kind} = passatk_rpc::Dec::dec(&a[{i}])?;")
            args.append(f"a{i}")
    body = " ".join([f"passatk_rpc::arity(a, {len(params)})?;", *lets, f"Ok(passatk_rpc::enc(&{name}({', '.join(args)})))"])
    return f"\nfn main() {{\n    passatk_rpc::serve(&mut |a: &[passatk_rpc::J]| {{ {body} }});\n}}\n"


def _rs_proxy(params: list[tuple[str, str]]) -> str:
    return f"\n    passatk_rpc::call(&[{', '.join(f'passatk_rpc::enc(&{n})' for n, _ in params)}])\n"


def _rust_programs(spec: Mapping, completion: str) -> tuple[str, str, dict, dict] | None:
    """(the call server's program, the judge's program, no harness files) of a Rust problem, or None."""
    from passatk.execute.languages import _RS_MAIN, _rust_code, truncate

    if spec["format"] == "humaneval-x":
        head = spec["declaration"] + spec["prompt"]
        entry = _rs_entry(head)
        if entry is None:
            return None
        server = head + completion + "\n" + _rs_server(*entry)
        judge = "\nfn main(){ \n } \n" + head + _rs_proxy(entry[1]) + "}\n" + spec["test"]
    else:
        prompt, tests = spec["prompt"], spec["tests"]
        entry, main = _rs_entry(prompt), _RS_MAIN.search(_rust_code(tests))
        if entry is None or main is None:
            return None
        body = truncate(completion, spec.get("stop_tokens", ()))
        server = prompt + body + "\n" + tests[: main.start()] + _rs_server(*entry)
        judge = prompt + _rs_proxy(entry[1]) + tests
    return server + _RS_LINK, judge + _RS_LINK, {}, {}


_RS_CANDIDATE = re.compile(r"\blet\s+candidate\s*=\s*(\w+)\s*;")
# Only `use` lines of the sample's source reach the judge program, and its entry point's header is rebuilt
# from types of a conservative grammar: no braces, no macros, no attributes, nothing that runs.
_RS_USE = re.compile(r"^[ \t]*(use[ \t]+[\w:]+(?:::\{[\w:, \t]*\}|::\*)?[ \t]*;)[ \t]*$", re.M)
_RS_TYPE = re.compile(r"[\w\s&'<>,()\[\];:]+")


def _rs_code_programs(source: str, tests: str) -> tuple[str, str] | None:
    """(call server, judge) for a whole Rust program and MultiPL-E-style tests (``let candidate = f;`` in ``main``), or None.

    The judge program holds the source's ``use`` lines (those alone), the entry
    point's header rebuilt from its types with the proxy as its body, the tests
    and the channel's module.
    """
    from passatk.execute.languages import _RS_MAIN, _rust_code

    code = _rust_code(tests)
    named, main = _RS_CANDIDATE.search(code), _RS_MAIN.search(code)
    if named is None or main is None:
        return None
    name = named.group(1)
    header = re.compile(r"(?:^|\n)[ \t]*(?:pub\s+)?fn\s+" + name + r"\s*\(((?:[^()]|\([^()]*\))*)\)\s*(?:->\s*([^{};]+?))?\s*\{")
    found = list(header.finditer(_rust_code(source)))
    entry = _rs_entry(source[: found[-1].end()]) if found else None
    ret = source[found[-1].start(2) : found[-1].end(2)].strip() if found and found[-1].group(2) else ""
    if entry is None or not all(_RS_TYPE.fullmatch(t) for t in (ret or "()", *(t for _, t in entry[1]))):
        return None
    params = ", ".join(f"{n}: {t}" for n, t in entry[1])
    head = f"fn {name}({params}){f' -> {ret}' if ret else ''} {{"
    preamble = "".join(m.group(1) + "\n" for m in _RS_USE.finditer(source))
    server = source + "\n" + tests[: main.start()] + _rs_server(*entry) + _RS_LINK
    judge = preamble + head + _rs_proxy(entry[1]) + "}\n" + tests + _RS_LINK
    return server, judge
