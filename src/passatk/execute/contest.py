"""Contest problems: every language's stdin/stdout judged as contest judges judge it.

A contest problem is a set of cases (an input and the judge's answer each),
per-case limits (CPU seconds, memory, output), and how an output is judged:
the default output validator's token rules (case, whitespace, float
tolerance), a problem's own output validator (the Kattis/ICPC convention:
``validator input answer feedback_dir [args] < output``, exit 42 accepted, 43
wrong answer), a testlib checker (``checker input output answer``, exit 0
accepted), or an interactive validator talking to the program.  Each
submission is built once and each case is a fresh run of what was built, in
the sample's sandbox; the worker reads the output and decides (see
:mod:`passatk.execute._worker.cases`).

:func:`cases_job` is the one conversion of such a task into a worker job; the
Verifier (``stdio`` and ``input_output`` tasks in a language other than
Python, or any task with ``checker``), ``passatk serve``'s ``/verify``,
:func:`passatk.evaluate` (kind ``contest`` problems) and ``passatk judge``
all call it.

Readers:

* :func:`load_package`: a problem package (ICPC/Kattis/DOMjudge layout:
  ``problem.yaml``, ``data/sample`` and ``data/secret`` with ``*.in``/``*.ans``,
  ``output_validators/`` or ``output_validator/``, ``submissions/<verdict>/``);
* :func:`problem_from_record`: a CodeContests record (``public_tests``,
  ``private_tests``, ``generated_tests``, ``time_limit``, ``memory_limit_bytes``)
  or a Codeforces-style one (``tests`` or ``official_tests`` and a ``checker``);
* :func:`load_problems`: a folder of packages, or a JSON Lines file of such
  records, as problems for :func:`passatk.evaluate` (keyed by the package's
  folder name or the record's ``name``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from passatk.execute import languages
from passatk.execute._worker.cases import STATUS, VERDICTS  # noqa: F401  (re-exported)
from passatk.execute.languages import _JAVA, _JAVAC, SANDBOX_PATH, _build, _runs

__all__ = [
    "EXTENSIONS",
    "ContestProblem",
    "JudgeError",
    "Submission",
    "build_checker",
    "cases_job",
    "derived_time_limit",
    "detect_language",
    "agrees",
    "expected_verdicts",
    "extract_program",
    "judge",
    "load_package",
    "load_problems",
    "problem_from_record",
    "submissions",
    "task_of",
    "time_multipliers_iv",
    "with_time_multipliers",
]

DEFAULT_TIME_LIMIT = 1.0  # CPU seconds a case, when the problem says nothing (DOMjudge's default)
DEFAULT_MEMORY_MB = 2048  # the ICPC package format's default
DEFAULT_OUTPUT_MB = 8
TIME_MULTIPLIER = 5.0  # problemtools: the time limit is this times the slowest accepted submission's slowest case
DERIVING_LIMIT = 60.0  # CPU seconds a case for the accepted submissions a time limit is derived from


class JudgeError(ValueError):
    """A problem that cannot be judged (no data, a validator that does not build); the message names the file."""


# --------------------------------------------------------------------------- #
# languages: a submission's files -> build and run steps
# --------------------------------------------------------------------------- #
EXTENSIONS = {
    "c": "c",
    "cc": "cpp",
    "cpp": "cpp",
    "cxx": "cpp",
    "c++": "cpp",
    "java": "java",
    "py": "python",
    "py3": "python",
    "js": "nodejs",
    "mjs": "nodejs",
    "ts": "typescript",
    "go": "go",
    "rs": "rust",
    "cs": "csharp",
    "hs": "haskell",
    "ml": "ocaml",
    "rb": "ruby",
    "php": "php",
    "pl": "perl",
    "lua": "lua",
    "r": "R",
    "sh": "bash",
    "bash": "bash",
    "d": "D_ut",
    "ex": "elixir",
    "exs": "elixir",
    "rkt": "racket",
}
_SOURCE_EXT = {"c": ("c",), "cpp": ("cc", "cpp", "cxx", "c++", "C"), "java": ("java",)}
_ENV = {"PATH": SANDBOX_PATH, "HOME": "{dir}", "TMPDIR": "{dir}/.tmp", "LANG": "C.UTF-8"}
_CODE_LANGUAGES = {  # CodeContests' language codes
    1: "python",  # Python 2 in CodeContests; run as Python 3 here (most such solutions need 2: see the docs)
    2: "cpp",
    3: "python",
    4: "java",
}


def detect_language(name: str, text: str = "") -> str | None:
    """The language of a submission's file, from its extension (``None`` for one passatk cannot run).

    >>> detect_language("test-hello.cc"), detect_language("a.PY"), detect_language("x.f95")
    ('cpp', 'python', None)
    """
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    if ext == "C":
        return "cpp"
    return EXTENSIONS.get(ext.lower())


def _fence_language(text: str) -> tuple[str | None, str]:
    """A model's answer: the language of its last fenced code block (if tagged) and that block's code."""
    blocks = re.findall(r"```([\w+#-]*)[^\n]*\n(.*?)```", text, re.S)
    if not blocks:
        return None, text
    tag, code = blocks[-1]
    tag = tag.lower()
    lang = {"c++": "cpp", "cpp": "cpp", "python": "python", "python3": "python", "py": "python"}.get(tag)
    if lang is None and tag:
        lang = detect_language("x." + tag) or _resolvable(tag)
    return lang, code


def _resolvable(tag):
    try:
        return languages.resolve(tag).name
    except ValueError:
        return "python" if languages.is_python(tag) else None


def extract_program(text: str, language: str | None = None) -> str:
    """The program in a model's response: its last fenced block in ``language`` (or untagged), else its last
    fenced block, else the whole response.

    >>> extract_program("Idea...\\n```cpp\\nint main() {}\\n```\\nDone.", "cpp")
    'int main() {}\\n'
    """
    blocks = re.findall(r"```([\w+#-]*)[^\n]*\n(.*?)```", text, re.S)
    if not blocks:
        return text
    if language is not None:
        want = _resolvable(language) or language
        for tag, code in reversed(blocks):
            if not tag or (_resolvable(tag.lower()) or detect_language("x." + tag.lower())) == want:
                return code
    return blocks[-1][1]


def guess_language(code: str) -> str:
    """A best guess at the language of a program with no name (a model's answer without a fence tag)."""
    if re.search(r"#include\s*<", code):
        return "cpp"
    if re.search(r"public\s+static\s+void\s+main", code):
        return "java"
    if re.search(r"^\s*package\s+main\b", code, re.M):
        return "go"
    if re.search(r"\bfn\s+main\s*\(", code):
        return "rust"
    return "python"


def _java_main(files: Mapping[str, str]) -> str | None:
    """The class whose ``main`` runs (DOMjudge looks for it too): the class declared last before the first ``main``."""
    for text in files.values():
        at = re.search(r"static\s+(?:public\s+)?void\s+main\s*\(", text)
        if at is None:
            continue
        classes = list(re.finditer(r"\b(?:class|interface|enum|record)\s+(\w+)", text[: at.start()]))
        package = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
        if classes:
            return (package.group(1) + "." if package else "") + classes[-1].group(1)
    return None


def _step(argv, phase="build", **env):
    if phase == "build":
        return {**_build(*argv), "env": {**_ENV, **env}}
    return {**_runs(*argv), "env": {**_ENV, **env}}


def recipe(language: str, main: str, files: Sequence[str], source: Mapping[str, str] | None = None) -> list[dict]:
    """The build steps and the run step (last) for a submission in ``language`` whose entry file is ``main``.

    Build and run commands follow DOMjudge's defaults where passatk has the
    toolchain (``gcc -x c -O2 -static ... -lm``, ``g++ -x c++ -O2 -std=gnu++17
    -static``, ``javac`` then the class with ``main``, ``python3 -m py_compile``
    as Python's syntax check, ``rustc -O``, ``go build``, ...).

    Raises
    ------
    ValueError
        For a language with no recipe here.
    """
    every = [main, *[f for f in files if f != main]]
    if language in ("c", "cpp"):
        srcs = [f for f in every if f.rsplit(".", 1)[-1] in _SOURCE_EXT[language] or f == main]
        srcs += [f for f in every if f.endswith((".o", ".a")) and f not in srcs]  # compiled as source, as DOMjudge does
        if language == "c":
            build = ["gcc", "-x", "c", "-Wall", "-O2", "-static", "-pipe", "-DONLINE_JUDGE", "-o", "main", *srcs, "-lm"]
        else:
            build = [
                "g++",
                "-x",
                "c++",
                "-Wall",
                "-O2",
                "-std=gnu++17",
                "-static",
                "-pipe",
                "-DONLINE_JUDGE",
                "-o",
                "main",
                *srcs,
            ]
        return [_step(build), _step(["./main"], "run")]
    if language == "java":
        klass = _java_main(source or {})
        srcs = [f for f in every if f.endswith(".java")]
        build = _step([*_JAVAC, "-encoding", "UTF-8", "-d", ".", *srcs])
        if klass is None:
            return [build, _step(["sh", "-c", "echo 'error: no class with a main method' >&2; exit 1"]), _step(["true"], "run")]
        # the JVM reserves far more address space than it uses: its heap is half the case's memory, its address space 2 GiB more
        return [build, {**_step([*_JAVA, "-cp", ".", klass], "run"), "startup": 1.0, "min_memory_mb": 4096}]
    if language == "python":
        return [
            _step(["python3", "-m", "py_compile", main], PYTHONPYCACHEPREFIX="{dir}/.tmp"),
            {**_step(["python3", main], "run", PYTHONDONTWRITEBYTECODE="1"), "startup": 0.1},
        ]
    if language == "nodejs":  # every file's syntax checked, as DOMjudge does (an unused file that does not parse fails)
        scripts = [f for f in every if f.endswith((".js", ".mjs", ".cjs"))] or [main]
        check = _step(["sh", "-c", 'for f in "$@"; do node --check "$f" || exit 1; done', "check", *scripts])
        return [check, {**_runs("node", "--max-old-space-size={heap_mb}", main, startup=0.3), "env": dict(_ENV)}]
    if language == "typescript":
        out = main.rsplit(".", 1)[0] + ".js"
        return [
            _step(["tsc", "--target", "esnext", "--module", "commonjs", main]),
            {**_runs("node", "--max-old-space-size={heap_mb}", out, startup=0.3), "env": dict(_ENV)},
        ]
    if language == "go":
        cache = str(languages.go_cache())
        env = {"GOCACHE": "{dir}/.tmp/gocache", "GOPATH": "{dir}/gopath", "GOPROXY": "off", "GO111MODULE": "off"}
        build = _step(["sh", "-c", f'cp -r "{cache}" "$GOCACHE" && chmod -R u+w "$GOCACHE" && go build -o main {main}'], **env)
        return [build, {**_step(["./main"], "run", GOMEMLIMIT="{heap_mb}MiB")}]
    if language == "rust":
        return [_step(["rustc", "--edition", "2021", "-O", main, "-o", "main"]), _step(["./main"], "run")]
    if language == "csharp":
        srcs = [f for f in every if f.endswith(".cs")]
        return [_step(["mcs", "-optimize+", "-out:main.exe", *srcs]), {**_step(["mono", "main.exe"], "run"), "startup": 0.5}]
    if language == "haskell":
        return [_step(["ghc", "-O", "-outputdir", "{dir}/.tmp", "-o", "main", main]), _step(["./main"], "run")]
    if language == "ocaml":
        return [_step(["ocamlopt", "str.cmxa", "-o", "main", main]), _step(["./main"], "run")]
    if language == "D_ut":
        return [_step(["ldc2", "-O", main, "-of=main"]), _step(["./main"], "run")]
    checks = {
        "ruby": (["ruby", "-c", main], ["ruby", main], 0.3),
        "php": (["php", "-l", main], ["php", main], 0.3),
        "perl": (["perl", "-c", main], ["perl", main], 0.2),
        "lua": (["luac5.3", "-p", main], ["lua5.3", main], 0.1),
        "R": (["Rscript", "-e", f"invisible(parse('{main}'))"], ["Rscript", main], 1.0),
        "bash": (["bash", "-n", main], ["bash", main], 0.0),
        "elixir": (None, ["elixir", main], 3.0),
        "racket": (None, ["racket", main], 3.0),
    }
    if language in checks:
        check, run, startup = checks[language]
        env = {"ERL_FLAGS": "+MIscs 128"} if language == "elixir" else {}
        steps = [_step(check)] if check else []
        return [*steps, {**_step(run, "run", **env), "startup": startup}]
    raise ValueError(f"no contest recipe for language {language!r}.")


def _require(language: str) -> str:
    if language == "python":
        return "python"
    return languages.require(language).name


# --------------------------------------------------------------------------- #
# checkers: built once per problem, from trusted sources, into the cache
# --------------------------------------------------------------------------- #
def build_checker(
    path: str | os.PathLike | None = None,
    *,
    source: str | None = None,
    kind: str = "kattis",
    interactive: bool = False,
    args: Sequence[str] = (),
    include: Sequence[str | os.PathLike] = (),
    name: str | None = None,
    passes: int = 1,
) -> dict:
    """A checker ready to run in the sandbox: built once (by its sources' digest) into passatk's cache.

    ``path`` is a source file or a validator's folder: every ``*.c``/``*.cc``/
    ``*.cpp`` in it compiled together, else its Python file run with
    ``python3``, or, the package format's way for a validator in any
    language, a folder with a ``build`` script (run in a copy of the folder,
    it must leave an executable ``run``) and/or a ``run`` script, which is
    then the validator; or give ``source``, a C++ or Python text.  ``kind``
    is ``"kattis"`` (exit 42/43, ``input answer feedback_dir [args] <
    output``) or ``"testlib"`` (``input output answer``, exit 0 accepted);
    ``include`` folders are searched for headers (``testlib.h`` from your
    copy: ``include=["/path/to/testlib"]``); ``passes`` above 1 makes a
    multi-pass validator (a case runs again while it writes ``nextpass.in``,
    at most ``passes`` times).

    Examples
    --------
    >>> build_checker(source="import sys; sys.exit(42)", passes=3)["passes"]
    3

    Raises
    ------
    JudgeError
        A checker that does not build, or a ``build`` that leaves no ``run``
        (the message names the file and the first error).
    """
    if kind not in ("kattis", "testlib"):
        raise ValueError(f"`kind` must be kattis or testlib; got {kind!r}.")
    if isinstance(passes, bool) or not isinstance(passes, int) or passes < 1:
        raise ValueError(f"`passes` must be a positive integer; got passes={passes!r}.")
    files: dict[str, bytes] = {}
    if source is not None:
        is_py = not re.search(r"#include", source)
        files["checker.py" if is_py else "checker.cpp"] = source.encode()
        where = name or "the checker's source"
    else:
        root = Path(path)
        where = str(root)
        if root.is_dir():
            for f in sorted(root.rglob("*")):
                if f.is_file():
                    files[str(f.relative_to(root))] = f.read_bytes()
        elif root.is_file():
            files[root.name] = root.read_bytes()
        else:
            raise JudgeError(f"{root}: no such checker file or folder.")
    scripts = source is None and Path(path).is_dir() and ("build" in files or "run" in files)
    cpp = [] if scripts else [n for n in files if n.rsplit(".", 1)[-1] in ("cc", "cpp", "cxx", "c++", "c")]
    py = [n for n in files if n.endswith(".py")]
    if not scripts and not cpp and not py:
        raise JudgeError(f"{where}: no C, C++ or Python source, nor a build or run script, in the checker.")
    for extra in include:
        for h in sorted(Path(extra).glob("*.h")):
            files.setdefault(h.name, h.read_bytes())
    digest = hashlib.sha256()
    for n in sorted(files):
        digest.update(n.encode() + b"\0" + files[n] + b"\0")
    compiler = "none" if not cpp and not scripts else languages._tool_version(["g++", "--version"])

    def build(tmp: Path) -> None:
        for n, data in files.items():
            (tmp / n).parent.mkdir(parents=True, exist_ok=True)
            (tmp / n).write_bytes(data)
        if scripts:
            _run_build_script(tmp, where)
        elif cpp:
            gcc = "gcc" if all(n.endswith(".c") for n in cpp) else "g++"
            argv = [gcc, "-O2", "-pipe", "-o", "checker", *cpp] + (["-std=gnu++17"] if gcc == "g++" else ["-lm"])
            proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=300, env=languages._clean_env(str(tmp)))
            if proc.returncode != 0:
                from passatk.execute._worker.compiled import first_error

                raise JudgeError(f"{where}: the checker does not build: {first_error(proc.stderr or proc.stdout)}")

    try:
        root = languages._build_once(f"checker-{digest.hexdigest()[:16]}-{compiler}", build)
    except subprocess.TimeoutExpired:
        raise JudgeError(f"{where}: the checker's build timed out.") from None
    if scripts:
        argv = [str(root / "run")]
    elif cpp:
        argv = [str(root / "checker")]
    else:
        main = next((p for p in py if Path(p).stem in ("validate", "checker", "validator", "main")), py[0])
        argv = ["python3", str(root / main)]
    checker = {"type": kind, "argv": argv, "args": list(args), "interactive": bool(interactive), "name": where}
    if passes > 1:
        checker["passes"] = passes
    return checker


def _run_build_script(folder: Path, where: str) -> None:
    """The package format's program folder: run its ``build`` (if any) there; it must leave an executable ``run``."""
    from passatk.execute._worker.compiled import first_error

    build, run = folder / "build", folder / "run"
    if build.exists():
        build.chmod(0o755)  # a copy of a package may have lost the executable bit
        proc = subprocess.run(
            [str(build)], cwd=folder, capture_output=True, text=True, timeout=300, env=languages._clean_env(str(folder))
        )
        if proc.returncode != 0:
            raise JudgeError(f"{where}/build: the checker does not build: {first_error(proc.stderr or proc.stdout)}")
    if not run.is_file():
        raise JudgeError(f"{where}: its build script left no run file.")
    run.chmod(run.stat().st_mode | 0o755)


# --------------------------------------------------------------------------- #
# the one conversion: a contest task -> a worker job
# --------------------------------------------------------------------------- #
_FLAG_KEYS = (
    "case_sensitive",
    "space_change_sensitive",
    "float_tolerance",
    "float_absolute_tolerance",
    "float_relative_tolerance",
)


def parse_flags(flags: str | Sequence[str] | None) -> dict:
    """``validator_flags`` of ``problem.yaml`` as the default validator's options.

    >>> parse_flags("float_tolerance 1E-6 case_sensitive")
    {'float_tolerance': 1e-06, 'case_sensitive': True}
    """
    words = flags.split() if isinstance(flags, str) else list(flags or ())
    out: dict = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("case_sensitive", "space_change_sensitive"):
            out[word] = True
        elif word in ("float_tolerance", "float_absolute_tolerance", "float_relative_tolerance") and i + 1 < len(words):
            out[word] = float(words[i + 1])
            i += 1
        i += 1
    return out


def cases_job(
    language: str,
    source: str,
    cases: Sequence[Sequence],
    *,
    files: Mapping[str, str] | None = None,
    main: str | None = None,
    names: Sequence[str] | None = None,
    time_limit: float | None = None,
    memory_mb: int | None = None,
    output_mb: int | None = None,
    compare: Mapping | None = None,
    checker: Mapping | None = None,
    all_cases: bool = False,
    time_multipliers: Mapping[str, float] | None = None,
) -> dict:
    """The worker job that judges ``source`` in ``language`` on ``cases`` as a contest judge does.

    Every door calls this one function (the Verifier's stdio tasks in other
    languages, ``/verify``, ``evaluate``'s contest problems, ``passatk judge``).

    Parameters
    ----------
    language : str
        Any name :func:`passatk.execute.languages.resolve` knows, ``python`` or ``c``.
    source : str
        The entry file's text.
    cases : sequence of [input, answer]
    files : dict of str to str, optional
        The submission's other files, by name.
    main : str, optional
        The entry file's name (default ``main.<ext>``; Java: the class's file).
    names : sequence of str, optional
        The cases' names (``sample/1``, ``secret/03``), for per-case results.
    time_limit : float, optional
        CPU seconds a case (before ``time_multipliers``).
    memory_mb, output_mb : int, optional
        A case's memory and output limits.
    compare : dict, optional
        The default validator's options (:func:`parse_flags`), or ``{"rule": "lines"}``.
    checker : dict, optional
        From :func:`build_checker`.
    all_cases : bool, default False
        Run every case (``pass_fraction``) rather than stop at the first failure.
    time_multipliers : dict of str to float, optional
        A factor on ``time_limit`` per language (``{"java": 2.0}``).

    Raises
    ------
    ToolchainMissing
        The language's toolchain is not installed here.
    ValueError
        No cases, or a language with no recipe.
    """
    lang = _require(language) if not languages.is_python(language) else "python"
    if not cases:
        raise ValueError("a contest task needs at least one case.")
    files = dict(files or {})
    if main is None:
        ext = {"cpp": "cpp", "python": "py", "nodejs": "js", "typescript": "ts", "rust": "rs", "csharp": "cs", "haskell": "hs"}
        ext.update({"D_ut": "d", "ocaml": "ml", "ruby": "rb", "perl": "pl", "bash": "sh", "elixir": "exs", "racket": "rkt"})
        if lang == "java":
            klass = _java_main({"x": source})
            main = (klass.rsplit(".", 1)[-1] if klass else "Main") + ".java"
        else:
            main = f"main.{ext.get(lang, lang)}"
    steps = recipe(lang, main, list(files), {main: source, **files})
    limit = float(time_limit or DEFAULT_TIME_LIMIT) * time_multipliers_iv(time_multipliers).get(lang, 1.0)
    job = {
        "kind": "cases",
        "language": lang,
        "source": source,
        "file": main,
        "steps": steps,
        "cases": [[_text(a), _text(b)] for a, b in cases],
        "time_limit": limit,
        "output_mb": int(output_mb or DEFAULT_OUTPUT_MB),
        "compare": dict(compare or {}),
    }
    if files:
        job["files"] = files
    if names:
        job["names"] = [str(n) for n in names]
    if memory_mb:
        job["memory_mb"] = int(memory_mb)
    if checker:
        job["checker"] = dict(checker)
    if all_cases:
        job["all_cases"] = True
    return job


def time_multipliers_iv(multipliers: Mapping[str, float] | None, where: str = "time_multipliers") -> dict[str, float]:
    """``multipliers`` keyed by passatk's own language names (``c++`` -> ``cpp``), each a positive finite factor.

    >>> time_multipliers_iv({"Java": 2, "c++": 1.5, "py": 3})
    {'java': 2.0, 'cpp': 1.5, 'python': 3.0}

    Raises
    ------
    TypeError
        ``multipliers`` not a mapping.
    ValueError
        A language passatk does not know, or a factor that is not a positive number (the message names it).
    """
    if not multipliers:
        return {}
    if not isinstance(multipliers, Mapping):
        raise TypeError(f"`{where}` must be a dict of language to factor ({{'java': 2}}); got {type(multipliers).__name__}.")
    out = {}
    for name, factor in multipliers.items():
        key = str(name).lower()
        lang = "python" if languages.is_python(key) else (EXTENSIONS.get(key) or _resolvable(key))
        if lang is None:
            raise ValueError(f"`{where}` names {name!r}, which is not a language passatk knows (c, cpp, java, python, ...).")
        try:
            value = float(factor)
        except (TypeError, ValueError):
            value = float("nan")
        if isinstance(factor, bool) or not (0 < value < float("inf")):
            raise ValueError(f"`{where}['{name}']` must be a positive number; got {factor!r}.")
        out[lang] = value
    return out


def with_time_multipliers(problems: Mapping, multipliers: Mapping[str, float]) -> dict:
    """``problems`` (``{name: Problem}``) with every contest problem's time limit scaled per language.

    The other problems are unchanged; ``multipliers`` as for :func:`cases_job`.

    >>> from passatk.execute.tasks import Problem
    >>> prob = ContestProblem("sum", [["1 2\\n", "3\\n"]], ["1"], time_limit=1.0)
    >>> scaled = with_time_multipliers({"sum": Problem("sum", "contest", {"problem": prob})}, {"python": 2})
    >>> scaled["sum"].spec["problem"].job("python", "print(3)")["time_limit"]
    2.0

    Raises
    ------
    ValueError
        Bad multipliers (:func:`time_multipliers_iv`), or no contest problem among ``problems``.
    """
    factors = time_multipliers_iv(multipliers)
    out = dict(problems)
    scaled = 0
    for name, problem in problems.items():
        if getattr(problem, "kind", None) == "contest":
            out[name] = replace(
                problem, spec={**problem.spec, "problem": replace(problem.spec["problem"], time_multipliers=factors)}
            )
            scaled += 1
    if factors and not scaled:
        raise ValueError(
            "`time_multipliers` apply to contest problems (packages, CodeContests or Codeforces records); there are none here."
        )
    return out


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, list):
        return "\n".join(map(str, value))
    return str(value)


# --------------------------------------------------------------------------- #
# problem packages
# --------------------------------------------------------------------------- #
@dataclass(frozen=True)
class Submission:
    """One submission of a package: its files, language and the verdicts its judges expect."""

    path: Path
    language: str | None
    main: str
    files: dict
    expected: tuple[str, ...] = ()
    folder: str | None = None


@dataclass(frozen=True)
class ContestProblem:
    """A contest problem as :func:`cases_job` takes it.

    Attributes
    ----------
    name : str
    cases : list of [input, answer]
    names : list of str
    time_limit : float
        CPU seconds a case.
    memory_mb, output_mb : int
    compare : dict
        The default validator's options.
    checker : dict or None
    path : Path or None
        The package's folder.
    time_limit_stated : bool
        False when the package gives no time limit: :func:`judge` then derives
        one from its accepted submissions (:func:`derived_time_limit`), as
        Kattis's problemtools does, and ``time_limit`` is only a placeholder.
    time_multiplier : float
        ``limits.time_multiplier`` of ``problem.yaml`` (default 5), the factor of that derivation.
    time_multipliers : dict of str to float
        A factor on ``time_limit`` per language for the jobs made by :meth:`job`
        (:func:`with_time_multipliers`; empty: none).
    """

    name: str
    cases: list
    names: list
    time_limit: float = DEFAULT_TIME_LIMIT
    memory_mb: int = DEFAULT_MEMORY_MB
    output_mb: int = DEFAULT_OUTPUT_MB
    compare: dict = field(default_factory=dict)
    checker: dict | None = None
    path: Path | None = None
    time_limit_stated: bool = True
    time_multiplier: float = TIME_MULTIPLIER
    time_multipliers: dict = field(default_factory=dict)

    def job(self, language: str, source: str, *, files=None, main=None, all_cases=False, time_multipliers=None) -> dict:
        """:func:`cases_job` of a submission to this problem (``time_multipliers`` default: the problem's own)."""
        return cases_job(
            language, source, self.cases, files=files, main=main, names=self.names, time_limit=self.time_limit,
            memory_mb=self.memory_mb, output_mb=self.output_mb, compare=self.compare, checker=self.checker,
            all_cases=all_cases, time_multipliers=self.time_multipliers if time_multipliers is None else time_multipliers,
        )  # fmt: skip

    def task(self, language: str, source: str, *, files=None, main=None, time_multipliers=None) -> dict:
        """The Verifier task of a submission to this problem (see :func:`task_of`)."""
        task = {"language": language, "source": source, "stdio": [list(c) for c in self.cases], "timeout": self.time_limit}
        task["contest"] = {"names": self.names, "output_mb": self.output_mb, "compare": self.compare, "memory_mb": self.memory_mb}
        if self.checker:
            task["checker"] = self.checker
        if files:
            task["contest"]["files"] = dict(files)
        if main:
            task["contest"]["main"] = main
        if time_multipliers:
            task["contest"]["time_multipliers"] = dict(time_multipliers)
        return task


def _yaml(path: Path) -> dict:
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    try:
        import yaml
    except ImportError:  # PyYAML is not a dependency: problem.yaml's simple mappings are read here
        return _simple_yaml(text, path)
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise JudgeError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise JudgeError(f"{path}: expected a mapping at the top level.")
    return data


def _scalar(text: str):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _simple_yaml(text: str, path: Path) -> dict:
    """The mappings (two levels) and scalars of a ``problem.yaml``, without PyYAML (tested in tests/test_contest.py)."""
    out: dict = {}
    parent = None
    for raw in text.splitlines():
        line = re.sub(r"\s+#.*$", "", raw) if not raw.lstrip().startswith("#") else ""
        if not line.strip() or ":" not in line:
            continue
        key, _, value = line.strip().partition(":")
        if raw[0] in " \t" and parent is not None:
            out[parent][key.strip()] = _scalar(value)
        elif value.strip():
            out[key.strip()], parent = _scalar(value), None
        else:
            out[key.strip()], parent = {}, key.strip()
    return out


def _contest_time_limit(root: Path) -> float | None:
    """A DOMjudge contest archive's ``problems.yaml`` (beside the package) may give the problem's time limit."""
    for name in ("problems.yaml", "problemset.yaml"):
        data = root.parent / name
        if not data.exists():
            continue
        try:
            import yaml

            entries = yaml.safe_load(data.read_text(encoding="utf-8"))
        except Exception:
            continue
        if isinstance(entries, dict):
            entries = entries.get("problems")
        for entry in entries or ():
            if (
                isinstance(entry, dict)
                and entry.get("id") in (root.name, None)
                and entry.get("short-name", root.name) == root.name
            ):
                if entry.get("time_limit") is not None and entry.get("id") == root.name:
                    return float(entry["time_limit"])
    return None


def load_package(path: str | os.PathLike, *, time_limit: float | None = None, include: Sequence = ()) -> ContestProblem:
    """A problem package (ICPC/Kattis/DOMjudge) as a :class:`ContestProblem`; its validator built once.

    Cases are ``data/sample`` then ``data/secret`` (sub-folders included), each
    ``X.in`` with its ``X.ans``, in name order.  The time limit: ``time_limit``
    given here, else ``problem.yaml``'s ``limits.time_limit`` (or DOMjudge's
    ``.timelimit`` file, or the contest's ``problems.yaml`` beside the
    package), else none is stated (``time_limit_stated`` False: :func:`judge`
    derives it from the accepted submissions; other uses take 1 s).  ``validation: custom`` (or ``type`` naming it) uses
    ``output_validators/*`` or ``output_validator/``; ``custom interactive``
    (or ``type: interactive``) makes the validator interactive; ``custom
    multi-pass`` (or ``type`` naming it) runs a case again for as long as the
    validator writes ``nextpass.in``, at most ``limits.validation_passes``
    (default 2) runs.

    Raises
    ------
    JudgeError
        No such folder, no test data, a validator missing or failing to build
        (naming the file), or a ``validation_passes`` below 2.
    """
    root = Path(path)
    if not root.is_dir():
        raise JudgeError(f"{root}: not a problem package (no such folder).")
    meta = _yaml(root / "problem.yaml")
    limits = meta.get("limits") or {}
    validation = str(meta.get("validation") or "default")
    kind = meta.get("type") or ""
    kinds = set(kind.split() if isinstance(kind, str) else kind) | set(validation.split())
    cases, names = [], []
    for part in ("sample", "secret"):
        folder = root / "data" / part
        for inp in sorted(folder.rglob("*.in")) if folder.is_dir() else ():
            ans = inp.with_suffix(".ans")
            if not ans.exists():
                raise JudgeError(f"{inp}: no answer file {ans.name} beside it.")
            cases.append([_read_text(inp), _read_text(ans)])
            names.append(str(inp.relative_to(root / "data").with_suffix("")))
    if not cases:
        raise JudgeError(f"{root}: no test data (no data/sample/*.in or data/secret/*.in with its .ans).")
    if time_limit is None:
        time_limit = limits.get("time_limit")
        if time_limit is None and (root / ".timelimit").exists():
            time_limit = float((root / ".timelimit").read_text().split()[0])
        if time_limit is None:
            time_limit = _contest_time_limit(root)
    checker = None
    interactive = "interactive" in kinds
    if kinds & {"custom", "interactive", "multi-pass"}:
        found = [p for p in (root / "output_validators", root / "output_validator") if p.is_dir()]
        if not found:
            raise JudgeError(f"{root / 'problem.yaml'}: validation is custom but there is no output_validators/ folder.")
        base = found[0]
        subs = [p for p in sorted(base.iterdir()) if p.is_dir()]
        target = subs[0] if subs and base.name == "output_validators" else base
        args = parse_args(meta.get("validator_flags"))
        passes = _passes(limits.get("validation_passes", 2), root / "problem.yaml") if "multi-pass" in kinds else 1
        checker = build_checker(target, kind="kattis", interactive=interactive, args=args, include=include, passes=passes)
    compare = parse_flags(meta.get("validator_flags")) if checker is None else {}
    return ContestProblem(
        name=root.name,
        cases=cases,
        names=names,
        time_limit=float(time_limit or DEFAULT_TIME_LIMIT),
        time_limit_stated=time_limit is not None,
        time_multiplier=float(limits.get("time_multiplier") or TIME_MULTIPLIER),
        memory_mb=int(limits.get("memory") or DEFAULT_MEMORY_MB),
        output_mb=int(limits.get("output") or DEFAULT_OUTPUT_MB),
        compare=compare,
        checker=checker,
        path=root,
    )


def _passes(value, where) -> int:
    """``limits.validation_passes`` as an int of at least 2 (the package format's rule), else an error naming the file."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise JudgeError(f"{where}: limits.validation_passes must be an integer of at least 2; got {value!r}.")
    return value


def parse_args(flags) -> list[str]:
    return flags.split() if isinstance(flags, str) else [str(f) for f in (flags or ())]


_RESULTS = {
    "CORRECT": "accepted",
    "ACCEPTED": "accepted",
    "WRONG-ANSWER": "wrong_answer",
    "WRONG_ANSWER": "wrong_answer",
    "TIMELIMIT": "time_limit_exceeded",
    "TIME_LIMIT_EXCEEDED": "time_limit_exceeded",
    "RUN-ERROR": "run_time_error",
    "RUN_TIME_ERROR": "run_time_error",
    "RUN-TIME-ERROR": "run_time_error",
    "COMPILER-ERROR": "compile_error",
    "COMPILE-ERROR": "compile_error",
    "NO-OUTPUT": "no_output",
    "OUTPUT-LIMIT": "output_limit_exceeded",
    "MEMORY-LIMIT": "memory_limit_exceeded",
}
_FOLDERS = {
    "accepted": ("accepted",),
    "slow_accepted": ("accepted", "time_limit_exceeded"),
    "wrong_answer": ("wrong_answer",),
    "time_limit_exceeded": ("time_limit_exceeded",),
    "run_time_error": ("run_time_error",),
    "compiler_error": ("compile_error",),
    "compile_error": ("compile_error",),
    "no_output": ("no_output",),
    "output_limit": ("output_limit_exceeded",),
    "output_limit_exceeded": ("output_limit_exceeded",),
    "memory_limit_exceeded": ("memory_limit_exceeded",),
    "partially_accepted": ("wrong_answer",),
}


def expected_verdicts(folder: str | None, texts: Sequence[str] = ()) -> tuple[str, ...]:
    """The verdicts a submission may get: its ``@EXPECTED_RESULTS@:`` line if it has one, else its folder's.

    >>> expected_verdicts("accepted", ["// @EXPECTED_RESULTS@: CORRECT, NO-OUTPUT"])
    ('accepted', 'no_output')
    >>> expected_verdicts("wrong_answer")
    ('wrong_answer',)
    """
    for text in texts:
        m = re.search(r"@EXPECTED_RESULTS@:\s*([A-Za-z_,\s-]+)", text)
        if m:
            said = [w.strip().upper() for w in m.group(1).replace(",", " ").split()]
            out = tuple(dict.fromkeys(_RESULTS[w] for w in said if w in _RESULTS))
            if out:
                return out
    return _FOLDERS.get(folder or "", ())


def agrees(verdict: str, expected: Sequence[str]) -> bool:
    """Whether ``verdict`` is one the judges expect; a memory limit counts as the run-time error both suites file it as.

    >>> agrees("memory_limit_exceeded", ["run_time_error"]), agrees("wrong_answer", ["accepted"])
    (True, False)
    """
    return verdict in expected or (verdict == "memory_limit_exceeded" and "run_time_error" in expected)


def _read_bytes(path: Path) -> bytes:
    """A file's bytes; a symbolic link that a copy turned into a file holding its target's path is followed."""
    data = path.read_bytes()
    if 0 < len(data) < 256 and b"\n" not in data.rstrip(b"\n") and b"\0" not in data:
        try:
            target = (path.parent / data.decode().strip()).resolve()
        except (UnicodeDecodeError, OSError, ValueError):
            return data
        if target != path.resolve() and target.is_file() and target.suffix == path.suffix:
            return target.read_bytes()
    return data


def _read_text(path: Path) -> str:
    return _read_bytes(path).decode("utf-8", "surrogateescape")


def submissions(package: str | os.PathLike) -> list[Submission]:
    """Every submission of a package (``submissions/<verdict>/``), a file or a folder each, sorted by path."""
    root = Path(package)
    entry = {}
    meta = root / "submissions.json"
    if meta.exists():
        for key, value in json.loads(meta.read_text()).items():
            entry[key.rstrip("/")] = value.get("entry_point")
    found = []
    base = root / "submissions"
    for folder in sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else ():
        for item in sorted(folder.iterdir()):
            found.append(submission(item, folder.name, entry.get(str(item.relative_to(root)))))
    return found


def _folder_of(path: Path) -> str | None:
    """The verdict folder a submission given by path sits in (``submissions/<verdict>/``), if any."""
    parent = path.resolve().parent
    return parent.name if parent.parent.name == "submissions" or parent.name in _FOLDERS else None


def submission(path: str | os.PathLike, folder: str | None = None, entry: str | None = None) -> Submission:
    """One submission: a source file, or a folder of files (its entry point the one file in a known language, or ``main.*``)."""
    path = Path(path)
    if path.is_dir():
        files = {str(p.relative_to(path)): _read_text(p) for p in sorted(path.rglob("*")) if p.is_file()}
        known = [n for n in files if detect_language(n)]
        main = entry or next((n for n in known if n.split("/")[-1].startswith("main.")), None) or (known[0] if known else "")
    else:
        files = {path.name: _read_text(path)}
        main = path.name
    language = detect_language(main) if main else None
    return Submission(path, language, main, files, expected_verdicts(folder, list(files.values())), folder)


# --------------------------------------------------------------------------- #
# records: CodeContests, Codeforces-style
# --------------------------------------------------------------------------- #
def _seconds(value) -> float | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return float(value.get("seconds") or 0) + float(value.get("nanos") or 0) / 1e9 or None
    if isinstance(value, str):
        m = re.match(r"\s*([\d.]+)", value)
        return float(m.group(1)) if m else None
    return float(value) or None


def _tests(rec, *keys):
    cases = []
    for key in keys:
        tests = rec.get(key)
        if isinstance(tests, Mapping):  # CodeContests: {"input": [...], "output": [...]}
            cases += [[a, b] for a, b in zip(tests.get("input") or [], tests.get("output") or [])]
        elif isinstance(tests, list):  # [{"input", "output"}] (Codeforces-style)
            cases += [[t["input"], t.get("output", t.get("answer", ""))] for t in tests if isinstance(t, Mapping)]
    return cases


def is_record(rec: Mapping) -> bool:
    """Whether ``rec`` is a CodeContests or Codeforces-style problem record."""
    return any(k in rec for k in ("public_tests", "private_tests", "generated_tests", "official_tests")) or (
        "tests" in rec and isinstance(rec["tests"], list) and ("checker" in rec or "time_limit" in rec)
    )


def problem_from_record(rec: Mapping, *, include: Sequence = (), generated: bool = True) -> ContestProblem:
    """A CodeContests record (``public_tests``/``private_tests``/``generated_tests``, ``time_limit``,
    ``memory_limit_bytes``) or a Codeforces-style one (``tests`` or ``official_tests``, ``time_limit``
    in seconds, ``memory_limit`` in MB, ``checker``: a testlib C++ or Python source) as a problem.
    """
    name = str(rec.get("name") or rec.get("task_id") or rec.get("id") or rec.get("problem_id") or "problem")
    keys = ["public_tests", "private_tests"] + (["generated_tests"] if generated else []) + ["official_tests", "tests"]
    cases = _tests(rec, *keys)
    if not cases:
        raise JudgeError(f"problem {name!r}: no tests (public_tests, private_tests, generated_tests, official_tests or tests).")
    memory = rec.get("memory_limit_bytes")
    memory_mb = int(memory) >> 20 if memory else (int(rec["memory_limit"]) if rec.get("memory_limit") else DEFAULT_MEMORY_MB)
    checker = None
    if rec.get("checker"):
        checker = build_checker(source=rec["checker"], kind="testlib", include=include, name=f"problem {name!r}'s checker")
    return ContestProblem(
        name=name,
        cases=[[_text(a), _text(b)] for a, b in cases],
        names=[str(i + 1) for i in range(len(cases))],
        time_limit=_seconds(rec.get("time_limit")) or DEFAULT_TIME_LIMIT,
        memory_mb=memory_mb or DEFAULT_MEMORY_MB,
        checker=checker,
    )


def record_solutions(rec: Mapping) -> list[tuple[str, str, bool]]:
    """A CodeContests record's ``solutions`` and ``incorrect_solutions`` as ``(language, source, correct)``."""
    out = []
    for key, correct in (("solutions", True), ("incorrect_solutions", False)):
        sols = rec.get(key) or {}
        for code, text in zip(sols.get("language") or [], sols.get("solution") or []):
            lang = _CODE_LANGUAGES.get(int(code))
            if lang:
                out.append((lang, text, correct))
    return out


def load_problems(path: str | os.PathLike) -> dict:
    """Contest problems for :func:`passatk.evaluate`: a package, a folder of packages, or a JSON Lines file of records.

    Returns ``{name: Problem}`` of kind ``contest`` (see :mod:`passatk.execute.tasks`).
    """
    from passatk.execute.tasks import Problem

    root = Path(path)
    problems: dict[str, ContestProblem] = {}
    if root.is_dir():
        packages = [root] if (root / "data").is_dir() else [p for p in sorted(root.iterdir()) if (p / "data").is_dir()]
        if not packages:
            raise JudgeError(f"{root}: neither a problem package nor a folder of them (no data/ folder).")
        for pkg in packages:
            problems[pkg.name] = load_package(pkg)
    else:
        from passatk.loaders import read_jsonl

        for lineno, rec in read_jsonl(root, what="problems file"):
            prob = problem_from_record(rec)
            if prob.name in problems:
                raise ValueError(f"{root}:{lineno}: problem {prob.name!r} appears twice.")
            problems[prob.name] = prob
    return {name: Problem(name, "contest", {"problem": prob}) for name, prob in problems.items()}


def completion_job(problem: ContestProblem, completion: str, *, all_cases: bool = False) -> dict:
    """The job of a model's answer to a contest problem: its last fenced block, in the fence's language (else guessed)."""
    lang, code = _fence_language(completion)
    lang = lang or guess_language(code)
    return problem.job(lang, code, all_cases=all_cases)


# --------------------------------------------------------------------------- #
# the Verifier's task form
# --------------------------------------------------------------------------- #
def task_of(task: Mapping, timeout: float, all_cases: bool, where: str) -> dict:
    """The job of a Verifier task judged as a contest judges: ``stdio`` or ``input_output`` in any language, or a ``checker``.

    ``contest`` (optional) holds ``names``, ``output_mb``, ``memory_mb`` (a
    case's memory; else the task's ``memory_mb``), ``compare``, ``files``,
    ``main`` and ``time_multipliers``.
    """
    extra = task.get("contest") or {}
    if not isinstance(extra, Mapping):
        raise TypeError(f"{where}['contest'] must be a dict.")
    unknown = set(extra) - {"names", "output_mb", "memory_mb", "compare", "files", "main", "time_multipliers"}
    if unknown:
        raise ValueError(f"{where}['contest'] has unknown key(s) {sorted(unknown)}.")
    if task.get("stdio") is not None:
        cases = task["stdio"]
        rule = task.get("rule")
    else:
        io_ = task["input_output"]
        io_ = json.loads(io_) if isinstance(io_, str) else io_
        if not isinstance(io_, Mapping) or io_.get("fn_name"):
            raise ValueError(f"{where}['input_output'] in another language than Python must be stdin/stdout cases (no fn_name).")
        cases = list(zip(io_.get("inputs") or [], io_.get("outputs") or []))
        rule = task.get("rule") or "apps"
    if not isinstance(cases, (list, tuple)) or not cases or not all(isinstance(c, (list, tuple)) and len(c) == 2 for c in cases):
        raise ValueError(f"{where} must have a non-empty list of [stdin, expected stdout] pairs.")
    checker = task.get("checker")
    if checker is not None:
        if not isinstance(checker, Mapping):
            raise TypeError(
                f"{where}['checker'] must be a dict (passatk.execute.contest.build_checker's, or {{'source', 'type'}})."
            )
        if "argv" not in checker:
            checker = build_checker(
                source=checker.get("source"),
                kind=checker.get("type", "testlib"),
                interactive=bool(checker.get("interactive")),
                args=checker.get("args", ()),
                include=checker.get("include", ()),
                name=f"{where}['checker']",
                passes=checker.get("passes", 1),
            ) | {k: checker[k] for k in ("cpu", "memory_mb") if checker.get(k) is not None}
    compare = extra.get("compare")
    if compare is None and checker is None:
        compare = {"rule": rule or "lines"} if (rule or task.get("stdio") is not None) else {}
    return cases_job(
        task.get("language") or "python",
        task["source"],
        cases,
        files=extra.get("files"),
        main=extra.get("main"),
        names=extra.get("names"),
        time_limit=task.get("timeout") or timeout,
        memory_mb=extra.get("memory_mb") or task.get("memory_mb"),
        output_mb=extra.get("output_mb"),
        compare=compare,
        checker=checker,
        all_cases=all_cases,
        time_multipliers=extra.get("time_multipliers"),
    )


# --------------------------------------------------------------------------- #
# judging submissions
# --------------------------------------------------------------------------- #
def derived_time_limit(slowest: float, multiplier: float = TIME_MULTIPLIER) -> float:
    """The time limit Kattis's problemtools gives a problem whose package states none.

    ``max(1, round(multiplier * slowest))`` whole seconds, where ``slowest`` is
    the largest CPU time of one case over the problem's accepted submissions
    (problemtools' ``verifyproblem``; ``limits.time_multiplier`` of
    ``problem.yaml``, 5 by default).

    Examples
    --------
    >>> derived_time_limit(0.94)
    5.0
    >>> derived_time_limit(0.05)
    1.0
    """
    return float(max(1, int(0.5 + multiplier * slowest)))


def judge(
    problem: ContestProblem | str | os.PathLike,
    paths: Sequence[str | os.PathLike] | None = None,
    *,
    workers: int | None = None,
    sandbox="auto",
    all_cases: bool = False,
    time_multipliers: Mapping[str, float] | None = None,
    verifier=None,
) -> list[dict]:
    """Judge submissions of a problem; a record per submission.

    ``paths`` default to every submission in the package's ``submissions/``.
    Each record: ``submission`` (its path), ``language``, ``verdict`` (one of
    :data:`~passatk.execute._worker.cases.VERDICTS`, or ``skipped`` for a
    language passatk cannot run, with ``reason``), ``status`` (passatk's),
    ``detail``, ``expected`` (the verdicts its folder or ``@EXPECTED_RESULTS@``
    allow; absent when none), ``agrees``, ``cpu``, ``wall``, ``cases`` and
    ``time_limit`` (CPU seconds a case).

    A package that states no time limit (``time_limit_stated`` False) gets one
    as Kattis's problemtools gives it: the submissions in ``accepted/`` are
    judged first, with :data:`DERIVING_LIMIT` seconds a case, and the limit
    is :func:`derived_time_limit` of their slowest accepted case; the others
    are judged with it.
    """
    from passatk.execute.verifier import Verifier

    prob = problem if isinstance(problem, ContestProblem) else load_package(problem)
    subs = submissions(prob.path) if paths is None else [submission(p, _folder_of(Path(p))) for p in paths]
    records, runnable = [], []
    for sub in subs:
        rec = {"submission": str(sub.path), "language": sub.language}
        if sub.expected:
            rec["expected"] = list(sub.expected)
        if sub.language is None:
            rec.update(verdict="skipped", reason=f"no language passatk can run for {sub.main or sub.path.name!r}")
        else:
            try:
                _require(sub.language)
                runnable.append((len(records), sub))
            except languages.ToolchainMissing as exc:
                rec.update(verdict="skipped", reason=str(exc))
        records.append(rec)
    deriving = not prob.time_limit_stated
    own = verifier is None
    if own:
        longest = DERIVING_LIMIT if deriving else prob.time_limit
        verifier = Verifier(workers=workers, sandbox=sandbox, pass_fractions=all_cases, max_timeout=max(60.0, longest * 4))
    try:
        if deriving:
            prob, runnable = _derive_limit(prob, records, runnable, paths is None, verifier, time_multipliers)
        _judge_into(records, runnable, prob, verifier, time_multipliers)
    finally:
        if own:
            verifier.close()
    for rec in records:
        if rec["verdict"] != "skipped":
            rec["time_limit"] = prob.time_limit
            if "expected" in rec:
                rec["agrees"] = agrees(rec["verdict"], rec["expected"])
    return records


def _derive_limit(prob, records, runnable, all_of_them, verifier, time_multipliers):
    """Judge the package's accepted submissions with :data:`DERIVING_LIMIT` and derive the time limit from them.

    Returns the problem with that limit and the submissions still to judge:
    when ``all_of_them`` (every submission of the package is being judged)
    the accepted ones' records are filled here; otherwise they are judged
    aside, only for the limit.
    """
    if all_of_them:
        accepted, into = [(i, s) for i, s in runnable if s.expected == ("accepted",)], records
    else:
        found = [s for s in (submissions(prob.path) if prob.path else []) if s.expected == ("accepted",) and s.language]
        accepted = list(enumerate(s for s in found if _can_run(s.language)))
        into = [{} for _ in accepted]
    _judge_into(into, accepted, replace(prob, time_limit=DERIVING_LIMIT), verifier, time_multipliers)
    times = [c.get("cpu") or 0.0 for i, _ in accepted if into[i]["verdict"] == "accepted" for c in into[i]["cases"]]
    limit = derived_time_limit(max(times), prob.time_multiplier) if times else DEFAULT_TIME_LIMIT
    done = {i for i, _ in accepted} if all_of_them else set()
    return replace(prob, time_limit=limit), [(i, s) for i, s in runnable if i not in done]


def _can_run(language: str) -> bool:
    """Whether this machine has ``language``'s toolchain."""
    try:
        _require(language)
    except languages.ToolchainMissing:
        return False
    return True


def _judge_into(records: list, which: list, prob: ContestProblem, verifier, time_multipliers) -> None:
    """Judge the submissions ``which`` (pairs of a record's index and its :class:`Submission`) into ``records``."""
    tasks = []
    for _, sub in which:
        others = {k: v for k, v in sub.files.items() if k != sub.main}
        tasks.append(prob.task(sub.language, sub.files[sub.main], files=others, main=sub.main, time_multipliers=time_multipliers))
    for (i, _), v in zip(which, verifier.verify(tasks) if tasks else []):
        out = v.output or {}
        verdict = out.get("verdict") or ("judge_error" if v.status == "sandbox_error" else v.status)
        records[i].update(verdict=verdict, status=v.status, detail=v.detail, cpu=v.cpu, wall=v.wall, cases=out.get("cases", []))
