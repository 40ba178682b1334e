"""Languages beyond Python: toolchains, recipes, and the HumanEval-X and MultiPL-E problem formats.

A *recipe* says how a program in a language is assembled, built and run, and
how its run is read, the way the benchmark's reference harness does it
(CodeGeeX's ``evaluate_humaneval_x.py``/``execution.py`` for HumanEval-X,
MultiPL-E's ``eval_<lang>.py``; see ``../shared/data/*/README.md``).  It
becomes a worker job of kind ``program`` (:mod:`passatk.execute._worker.compiled`):
the program, its build steps with their own CPU and memory limits, the run
step, and the harness's rule.  Build and run both happen in the sample's
sandbox: the toolchain bound read-only (``/usr``, plus the few paths in
:attr:`Language.binds`), the build directory in the sandbox's tmpfs, no
network.  What must be prepared once (Rust's crates from Debian's registry,
Go's vendored test module and a warm build cache) is built here, from trusted
sources only, into a cache directory bound read-only into the sandbox.

Language names are SandboxFusion's where it has one (``cpp``, ``java``,
``nodejs``, ``typescript``, ``go``, ``go_test``, ``rust``, ``php``, ``ruby``,
``lua``, ``perl``, ``R``, ``bash``, ``csharp``, ``racket``, ``D_ut``), else the
language's own (``haskell``, ``ocaml``, ``elixir``); MultiPL-E's keys
(``js``, ``ts``, ``rs``, ``go_test.go``, ``rb``, ``pl``, ``r``, ``sh``, ``cs``,
``rkt``, ``hs``, ``ml``, ``d``, ``ex``) and common names are aliases
(:func:`resolve`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from passatk.execute.sandbox import SandboxError

__all__ = [
    "FORMATS",
    "LANGUAGES",
    "Language",
    "ToolchainMissing",
    "cache_dir",
    "code_job",
    "code_tests_job",
    "detect_problem",
    "is_python",
    "program_job",
    "require",
    "resolve",
    "runtime_binds",
    "sandbox_binds",
]

SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"  # what the steps see (and where toolchains are looked for)
FORMATS = ("humaneval-x", "multipl-e", "code")


class ToolchainMissing(SandboxError):
    """A language's compiler or interpreter is not installed here; the message names the package."""


@dataclass(frozen=True)
class Language:
    """One language: what it needs installed and where its toolchain lives.

    Attributes
    ----------
    name : str
        SandboxFusion's name where it has one (``cpp``, ``nodejs``, ...).
    title : str
        For people ("C++").
    needs : tuple of (binary, package)
        Binaries looked up on the sandbox's ``PATH`` and the Debian (or npm) package
        that provides each.
    aliases : tuple of str
        Other names accepted by :func:`resolve` (MultiPL-E's keys among them).
    binds : tuple of str
        Host paths outside ``/usr`` the toolchain reads (bound read-only where they exist).
    files : tuple of (path, package)
        Files that must exist (a library, a jar), with their package.
    """

    name: str
    title: str
    needs: tuple[tuple[str, str], ...]
    aliases: tuple[str, ...] = ()
    binds: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = field(default=())


_L = Language
LANGUAGES: dict[str, Language] = {
    lang.name: lang
    for lang in (
        _L("cpp", "C++", (("g++", "g++"),), ("c++", "cxx")),
        _L("c", "C", (("gcc", "gcc"),)),  # contest tasks only (passatk.execute.contest)
        _L(
            "java",
            "Java",
            (("javac", "openjdk-17-jdk-headless"), ("java", "openjdk-17-jdk-headless")),
            ("jav",),
            ("/etc/java-17-openjdk", "/etc/ssl/certs/java"),
            (("/usr/share/java/javatuples.jar", "libjavatuples-java"),),
        ),
        _L("nodejs", "JavaScript", (("node", "nodejs"),), ("js", "javascript", "node")),
        _L("typescript", "TypeScript", (("tsc", "node-typescript (or npm install -g typescript)"), ("node", "nodejs")), ("ts",)),
        _L("go", "Go", (("go", "golang-go"),), ("golang", "go_test", "go_test.go")),
        _L("rust", "Rust", (("rustc", "rustc"),), ("rs",)),
        _L("php", "PHP", (("php", "php-cli"),), (), ("/etc/php",)),
        _L("ruby", "Ruby", (("ruby", "ruby"),), ("rb",)),
        _L("lua", "Lua", (("lua5.3", "lua5.3"),), (), (), (("/usr/share/lua/5.3/luaunit.lua", "lua-unit"),)),
        _L("perl", "Perl", (("perl", "perl"),), ("pl",), (), (("/usr/share/perl5/Test/Deep.pm", "libtest-deep-perl"),)),
        _L("R", "R", (("Rscript", "r-base-core"),), ("r",), ("/etc/R",)),
        _L("bash", "Bash", (("bash", "bash"),), ("sh", "shell")),
        _L("csharp", "C#", (("mcs", "mono-mcs"), ("mono", "mono-runtime")), ("cs", "c#"), ("/etc/mono",)),
        _L("racket", "Racket", (("racket", "racket"),), ("rkt",), ("/etc/racket",)),
        _L("haskell", "Haskell", (("runghc", "ghc"),), ("hs",), ("/var/lib/ghc",)),
        _L("ocaml", "OCaml", (("ocaml", "ocaml-nox"),), ("ml",)),
        _L("D_ut", "D", (("ldc2", "ldc"),), ("d",), ("/etc/ldc2.conf",)),
        _L("elixir", "Elixir", (("elixir", "elixir"),), ("ex", "exs")),
    )
}
_ALIASES = {alias.lower(): lang.name for lang in LANGUAGES.values() for alias in (lang.name, *lang.aliases)}


def is_python(name: str) -> bool:
    """Whether ``name`` means Python, which runs as a judged Python task rather than through a recipe."""
    return str(name).lower() in ("python", "py", "python3")


def resolve(name: str) -> Language:
    """The language called ``name`` (SandboxFusion's name, MultiPL-E's key or a common name; any case).

    >>> resolve("js").name, resolve("go_test.go").name, resolve("C++").title
    ('nodejs', 'go', 'C++')

    Raises
    ------
    ValueError
        For a language passatk has no recipe for (the message lists them).
    """
    key = str(name).lower()
    if is_python(key):
        raise ValueError("`language` python runs as a Python task (the judge process), not through a language recipe.")
    if key not in _ALIASES:
        raise ValueError(f"`language` must be one of python, {', '.join(LANGUAGES)} (or an alias); got {name!r}.")
    return LANGUAGES[_ALIASES[key]]


def require(language: str | Language) -> Language:
    """The language, after checking that its toolchain is installed; else :class:`ToolchainMissing` naming the package."""
    lang = language if isinstance(language, Language) else resolve(language)
    missing = [pkg for binary, pkg in lang.needs if shutil.which(binary, path=SANDBOX_PATH) is None]
    missing += [pkg for path, pkg in lang.files if not os.path.exists(path)]
    if missing:
        names = ", ".join(dict.fromkeys(missing))
        raise ToolchainMissing(
            f"{lang.title} ({lang.name}) needs {names}, not installed here (looked in {SANDBOX_PATH}); "
            f"on Debian 12: apt-get install {' '.join(p.split(' ')[0] for p in dict.fromkeys(missing))}."
        )
    return lang


# --------------------------------------------------------------------------- #
# the cache of prepared dependencies (trusted sources only, built once)
# --------------------------------------------------------------------------- #
def cache_dir() -> Path:
    """Where prepared dependencies live: ``$PASSATK_CACHE``, else ``$XDG_CACHE_HOME/passatk``, else ``~/.cache/passatk``."""
    base = os.environ.get("PASSATK_CACHE")
    if base:
        return Path(base)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "passatk"


def _clean_env(home: str, **extra: str) -> dict[str, str]:
    return {"PATH": SANDBOX_PATH, "HOME": home, "LANG": "C.UTF-8", **extra}


def _build_once(name: str, build) -> Path:
    """``cache_dir()/name``, made by ``build(tmp_dir)`` the first time (atomically: concurrent runs agree)."""
    final = cache_dir() / name
    if final.is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=final.parent))
    try:
        print(f"passatk: preparing {name} in {final} (once)", file=sys.stderr)
        build(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _run(argv, cwd, env, what):
    proc = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SandboxError(f"preparing {what} failed: {' '.join(argv)}: {(proc.stderr or proc.stdout).strip()[-400:]}")
    return proc


def _tool_version(argv) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, env=_clean_env("/tmp"), timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "none"
    return hashlib.sha256((out.stdout + out.stderr).encode()).hexdigest()[:12]


_RUST_CRATES = {"rand": "0.8", "regex": "1", "md5": "0.7"}  # HumanEval-X's (rand "0.4" upstream; Debian ships 0.8)
# The crates Cargo needs from Debian's registry, and the package that brings each: regex's
# default features need aho-corasick and memchr, which come with its "+default" package (a
# Recommends, so ``--no-install-recommends`` leaves them out).
_RUST_PACKAGES = {
    **{crate: f"librust-{crate}-dev" for crate in _RUST_CRATES},
    "aho-corasick": "librust-regex+default-dev",
    "memchr": "librust-regex+default-dev",
}
_RUST_REGISTRY = Path("/usr/share/cargo/registry")


def rust_crates() -> tuple[Path, dict[str, str]]:
    """HumanEval-X's crates (rand, regex, md5) built once by Cargo, offline, from Debian's registry.

    Returns the directory of their rlibs and ``{crate: rlib path}`` for ``--extern``.
    """
    require("rust")
    if shutil.which("cargo", path=SANDBOX_PATH) is None:
        raise ToolchainMissing("HumanEval-X's Rust tests need cargo, not installed here; on Debian 12: apt-get install cargo.")
    missing = [c for c in _RUST_PACKAGES if not any(_RUST_REGISTRY.glob(f"{c}-[0-9]*"))]
    if missing:
        packages = " ".join(dict.fromkeys(_RUST_PACKAGES[c] for c in missing))
        raise ToolchainMissing(
            f"HumanEval-X's Rust tests need the crates {', '.join(missing)} from Debian's registry; "
            f"on Debian 12: apt-get install {packages}."
        )

    def build(tmp: Path) -> None:
        (tmp / "src").mkdir()
        (tmp / "src" / "lib.rs").write_text("")
        deps = "".join(f'{c} = "{v}"\n' for c, v in _RUST_CRATES.items())
        (tmp / "Cargo.toml").write_text(
            f'[package]\nname = "passatk_deps"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n{deps}'
        )
        (tmp / ".cargo").mkdir()
        (tmp / ".cargo" / "config.toml").write_text(
            f'[source.crates-io]\nreplace-with = "debian"\n\n[source.debian]\ndirectory = "{_RUST_REGISTRY}"\n\n[net]\noffline = true\n'
        )
        env = _clean_env(str(tmp), CARGO_HOME=str(tmp / ".cargo"), RUSTC="/usr/bin/rustc")
        _run(["cargo", "build", "--offline"], tmp, env, "the Rust crates")
        shutil.rmtree(tmp / "target" / "debug" / "build", ignore_errors=True)
        shutil.rmtree(tmp / "target" / "debug" / "incremental", ignore_errors=True)

    root = _build_once(f"rust-crates-{_tool_version(['rustc', '--version'])}", build)
    deps = root / "target" / "debug" / "deps"
    externs = {}
    for crate in _RUST_CRATES:
        found = sorted(deps.glob(f"lib{crate}-*.rlib"))
        if not found:
            raise SandboxError(f"the prepared Rust crates in {root} lack {crate}; remove that directory and run again.")
        externs[crate] = str(found[0])
    return deps, externs


_GO_WARM = """package main

import (
    "testing"
    "bytes"
    "crypto/md5"
    "fmt"
    "math"
    "math/rand"
    "reflect"
    "regexp"
    "sort"
    "strconv"
    "strings"
    "time"
    "unicode"
%s)

var _ = []interface{}{bytes.Compare, md5.Sum, fmt.Sprint, math.Abs, rand.Int, reflect.DeepEqual, regexp.MustCompile,
    sort.Ints, strconv.Itoa, strings.Split, time.Now, unicode.IsUpper%s}

func TestWarm(t *testing.T) {}
"""


def _go_env(home: str, cache: str, **extra: str) -> dict[str, str]:
    return _clean_env(
        home, GOCACHE=cache, GOPATH=f"{home}/gopath", GOPROXY="off", GOTOOLCHAIN="local", GOTELEMETRY="off", **extra
    )


def go_cache() -> Path:
    """A warm Go build cache for the standard library and ``testing`` (vet facts, test mains), made once.

    Runs read it read-only: Debian's standard library is precompiled, and what
    a run compiles of its own is not kept.
    """
    require("go")

    def build(tmp: Path) -> None:
        work = tmp / "warm"
        work.mkdir()
        (work / "warm_test.go").write_text(_GO_WARM % ("", ""))
        env = _go_env(str(tmp), str(tmp / "gocache"), GO111MODULE="off")
        _run(["go", "test", "-c", "-o", "warm.test", "warm_test.go"], work, env, "the Go build cache")
        shutil.rmtree(work)
        shutil.rmtree(tmp / "gopath", ignore_errors=True)

    return _build_once(f"go-std-{_tool_version(['go', 'version'])}", build) / "gocache"


GO_WORKDIR = "/tmp/passatk-go-module"  # where HumanEval-X's Go programs are built, inside the sandbox


def go_module(module: Path) -> Path:
    """HumanEval-X's Go test module (``go.mod``, ``go.sum``, the vendored packages) copied once, its packages cached.

    ``module`` is a directory with ``go.mod``, ``go.sum`` and ``vendor/`` (or
    ``go-vendor.tar.gz``/``vendor.tar.gz``), as CodeGeeX ships it.  Go's
    cache keys for vendored packages include their directory, so the
    packages are compiled once, in a throwaway bubblewrap sandbox, at
    :data:`GO_WORKDIR`; every run builds there too (in its own sandbox's
    private ``/tmp``) and copies the module's files in first (750 KB: Go
    follows neither a linked ``go.mod`` nor a linked ``vendor/``).  This
    recipe therefore needs bubblewrap.
    """
    require("go")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise ToolchainMissing(
            "HumanEval-X's Go recipe builds in a fixed sandbox directory and needs bubblewrap: apt-get install bubblewrap."
        )
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "go-vendor.tar.gz", "vendor.tar.gz"):
        if (module / name).exists():
            digest.update(name.encode() + (module / name).read_bytes())

    def build(tmp: Path) -> None:
        mod = tmp / "module"
        mod.mkdir()
        for name in ("go.mod", "go.sum"):
            shutil.copy(module / name, mod / name)
        if (module / "vendor").is_dir():
            shutil.copytree(module / "vendor", mod / "vendor")
        else:
            archive = next(p for p in (module / "go-vendor.tar.gz", module / "vendor.tar.gz") if p.exists())
            with tarfile.open(archive) as tar:
                kw = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                tar.extractall(mod, **kw)
        listed = (mod / "vendor" / "modules.txt").read_text().splitlines()
        imports = "".join(f'    _ "{pkg.strip()}"\n' for pkg in listed if pkg.strip() and not pkg.startswith("#"))
        (tmp / "warm_test.go").write_text(_GO_WARM % (imports, ""))
        (tmp / "gocache").mkdir()
        env = _go_env(GO_WORKDIR, str(tmp / "gocache"), GOFLAGS="-mod=vendor")
        argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-net"]
        argv += ["--bind", str(mod), GO_WORKDIR, "--ro-bind", str(tmp / "warm_test.go"), f"{GO_WORKDIR}/warm_test.go"]
        argv += ["--bind", str(tmp / "gocache"), str(tmp / "gocache"), "--chdir", GO_WORKDIR, "--clearenv"]
        for key, value in env.items():
            argv += ["--setenv", key, value]
        _run([*argv, "go", "test", "-c", "-o", "/tmp/warm.test", "warm_test.go"], tmp, None, "HumanEval-X's Go module")
        (tmp / "warm_test.go").unlink()

    return _build_once(f"go-module-{digest.hexdigest()[:12]}-{_tool_version(['go', 'version'])}", build)


def _go_module_dir(problems_path: Path) -> Path | None:
    """HumanEval-X's Go module beside the problems file (``go.mod``, ``go.sum`` and the vendored packages)."""
    here = problems_path.parent
    if (here / "go.mod").exists() and any((here / n).exists() for n in ("vendor", "go-vendor.tar.gz", "vendor.tar.gz")):
        return here
    return None


# --------------------------------------------------------------------------- #
# problem formats
# --------------------------------------------------------------------------- #
_HX_PREFIX = {"CPP": "cpp", "Go": "go", "Java": "java", "JavaScript": "nodejs", "Rust": "rust"}
_CPP_INCLUDES = (
    "#include<stdlib.h>",
    "#include<algorithm>",
    "#include<math.h>",
    "#include<stdio.h>",
    "#include<vector>",
    "#include<string>",
    "#include<climits>",
    "#include<cstring>",
    "#include<iostream>",
)
_GO_HELPERS = ("math", "strings", "fmt", "strconv", "time", "bytes", "regexp", "sort", "math/rand", "crypto/md5")
_MULTIPLE_KEYS = {
    "cpp": "cpp",
    "java": "java",
    "js": "nodejs",
    "ts": "typescript",
    "go_test.go": "go",
    "rs": "rust",
    "php": "php",
    "rb": "ruby",
    "lua": "lua",
    "pl": "perl",
    "r": "R",
    "sh": "bash",
    "cs": "csharp",
    "rkt": "racket",
    "hs": "haskell",
    "ml": "ocaml",
    "d": "D_ut",
    "elixir": "elixir",
    "ex": "elixir",
    "exs": "elixir",
}


def detect_problem(path: Path, lineno: int, rec: Mapping):
    """A HumanEval-X or MultiPL-E record as a :class:`~passatk.execute.tasks.Problem` of kind ``program``, else None.

    HumanEval-X: ``task_id`` ``<Language>/<n>`` with ``prompt``, ``declaration``
    and ``test``.  MultiPL-E: ``name``, ``language`` (its key), ``prompt`` and
    ``tests``.  The problem's ``spec`` keeps what assembling a program needs.
    """
    from passatk.execute.tasks import Problem

    tid = rec.get("task_id")
    if isinstance(tid, str) and "/" in tid and {"prompt", "declaration", "test"} <= set(rec):
        prefix = tid.split("/", 1)[0]
        if prefix in _HX_PREFIX:
            lang = _HX_PREFIX[prefix]
            spec = {"format": "humaneval-x", "language": lang, "task_id": tid}
            for key in ("prompt", "declaration", "test", "import", "test_setup"):
                if rec.get(key) is not None:
                    spec[key] = rec[key]
            if lang == "go":
                module = _go_module_dir(Path(path))
                if module is None:
                    raise ValueError(
                        f"{path}:{lineno}: HumanEval-X's Go tests need its Go module (go.mod, go.sum and go-vendor.tar.gz "
                        "or vendor/) in the problems file's folder, as CodeGeeX ships it in humaneval-x/go/evaluation/."
                    )
                spec["module"] = str(module)
            return Problem(tid, "program", spec)
    if isinstance(rec.get("name"), str) and {"language", "prompt", "tests"} <= set(rec) and "task_id" not in rec:
        key = str(rec["language"]).lower()
        if key not in _MULTIPLE_KEYS:
            raise ValueError(
                f"{path}:{lineno}: MultiPL-E language {rec['language']!r} has no recipe here; known: {', '.join(_MULTIPLE_KEYS)}."
            )
        spec = {
            "format": "multipl-e",
            "language": _MULTIPLE_KEYS[key],
            "task_id": rec["name"],
            "prompt": rec["prompt"],
            "tests": rec["tests"],
            "stop_tokens": list(rec.get("stop_tokens") or []),
        }
        return Problem(rec["name"], "program", spec)
    return None


def truncate(completion: str, stop_tokens: Iterable[str]) -> str:
    """The completion cut at the first stop token, as MultiPL-E cuts it.

    >>> truncate("    return 1;\\n}\\nint main() {}", ["\\n}"])
    '    return 1;'
    """
    cut = len(completion)
    for token in stop_tokens:
        at = completion.find(token)
        if at != -1:
            cut = min(cut, at)
    return completion[:cut]


def go_parts(spec: Mapping, completion: str) -> tuple[str, str, str]:
    """A HumanEval-X Go program's head as CodeGeeX assembles it: (test_setup, the completion's imports, the prompt).

    The prompt loses its own ``import``; the packages of a short list that the
    completion names (``strings.``) and the setup does not import get an
    import block of their own.

    >>> go_parts({"test_setup": 'package main\\nimport "testing"\\n', "prompt": "func F() int {\\n"}, "return len(strings.Fields(fmt.Sprint(1)))")[1]
    'import (\\n"strings"\\n    "fmt"\\n)\\n'
    """
    setup = spec.get("test_setup", "")
    prompt = spec["prompt"].replace(spec.get("import", ""), "")
    other = [f'"{pkg}"' for pkg in _GO_HELPERS if pkg not in setup and pkg.split("/")[-1] + "." in completion]
    imports = ("import (\n" + "    ".join(p + "\n" for p in other) + ")\n") if other else ""
    return setup, imports, prompt


def _humaneval_x_program(lang: str, spec: Mapping, completion: str) -> str:
    """The program text as CodeGeeX's ``process_humaneval_test`` assembles it."""
    prompt, test = spec["prompt"], spec["test"]
    if lang == "cpp":
        setup = "".join(s + "\n" for s in _CPP_INCLUDES if s not in prompt)
        return setup + "\n" + prompt + completion + "\n" + test
    if lang in ("java", "nodejs"):
        return prompt + completion + "\n" + test
    if lang == "go":
        setup, imports, prompt = go_parts(spec, completion)
        return setup + "\n" + imports + prompt + completion + "\n" + test
    if lang == "rust":
        return "\nfn main(){ \n } \n" + spec["declaration"] + prompt + completion + _rust_tests(test)[0]
    raise ValueError(f"HumanEval-X has no language {lang!r}.")


# --------------------------------------------------------------------------- #
# recipes: steps and rules
# --------------------------------------------------------------------------- #
_BUILD_CPU = 60.0  # CPU seconds of a build step (MultiPL-E: 15 s of wall time)
_BUILD_MB = 4096  # address space of a build step, MiB
_JVM_FLAGS = (
    "-XX:+UseSerialGC",
    "-XX:CompressedClassSpaceSize=64m",
    "-XX:ReservedCodeCacheSize=64m",
    "-XX:MaxMetaspaceSize=256m",
    "-Xshare:auto",
)
_JAVAC = ("javac", "-J-Xmx1g", "-J-XX:TieredStopAtLevel=1", *(f"-J{f}" for f in _JVM_FLAGS))
_JAVA = ("java", "-Xmx{heap_mb}m", *_JVM_FLAGS)
_JAVATUPLES = "/usr/share/java/javatuples.jar"
_NODE_PATH = "/usr/lib/node_modules:/usr/local/lib/node_modules:/usr/share/nodejs"


def _env(**extra: str) -> dict[str, str]:
    """A step's whole environment: ``{dir}`` (the run's directory) is its home, ``{dir}/.tmp`` its temporary directory."""
    return {"PATH": SANDBOX_PATH, "HOME": "{dir}", "TMPDIR": "{dir}/.tmp", "LANG": "C.UTF-8", **extra}


def _build(*argv: str, **env: str) -> dict:
    return {"argv": list(argv), "env": _env(**env), "phase": "build", "cpu": _BUILD_CPU, "memory_mb": _BUILD_MB}


def _runs(*argv: str, startup: float = 0.0, proof: bool = False, **env: str) -> dict:
    step = {"argv": list(argv), "env": _env(**env), "phase": "run", "startup": startup}
    if proof:  # descriptor 3: a pipe the sample's process reads (see GO_HARNESS)
        step["proof"] = True
    if argv[0] == "node":  # V8 reserves ~700 MiB of address space first; its heap is bounded by --max-old-space-size
        step["min_memory_mb"] = 1024
    return step


_ASSERT_C = ("Assertion", "assert")
_ASSERT_JS = ("AssertionError", "ERR_ASSERTION", "Assertion failed")
_ASSERT_RS = ("panicked at", "assertion")


@dataclass(frozen=True)
class Recipe:
    """How one program is built, run and read: the parts of a ``program`` job."""

    file: str
    steps: tuple[dict, ...]
    rule: dict
    links: dict = field(default_factory=dict)
    dirs: tuple[str, ...] = ()
    copies: dict = field(default_factory=dict)  # {name: file or directory copied into the run's directory}
    workdir: str | None = None  # a fixed build directory in the sandbox's /tmp instead of the run's
    binds: tuple[str, ...] = ()  # prepared caches this recipe reads
    harness: dict = field(default_factory=dict)  # {name: text}: the harness's own files, written beside the program


# --------------------------------------------------------------------------- #
# proof that the tests ran to their end, on a descriptor of its own
# --------------------------------------------------------------------------- #
# The tests are compiled into the sample's program, so whatever the program can print, a
# sample can print too, then end the process with status 0 before (or while) the tests run.
# Go and Rust runs therefore also need the harness's lines on descriptor 3 (a pipe read by
# the sample's process, never stdout), written only once the tests have returned:
#
# * Go: passatk's own TestMain, in a test file of its own, runs m.Run() and writes its line
#   when m.Run() returned 0.  A sample's TestMain does not build ("multiple definitions of
#   TestMain"), and since imports belong to one file, the sample's file (which cannot add an
#   import after the prompt's) has no os, syscall or unsafe to write on descriptor 3 with.
# * Rust: each of HumanEval-X's #[test] functions, and MultiPL-E's main, is wrapped so that it
#   writes its line once the benchmark's body has returned.  A Rust sample can write on any
#   descriptor, so this stops an exit that prints markers, not a sample that forges the lines.
GO_HARNESS = "passatk_main_test.go"
_GO_PROOF = "passatk: m.Run returned 0"
_GO_TEST_MAIN = """package {package}

// passatk's TestMain (a sample that defines its own does not build): it writes its line on
// descriptor 3 once the tests have run and passed.

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {{
	code := m.Run()
	if code == 0 {{
		os.NewFile(3, "passatk-proof").WriteString("{proof}\\n")
	}}
	os.Exit(code)
}}
"""
_RS_PROOF = (
    "{{ use ::std::io::Write; let mut proof = ::std::mem::ManuallyDrop::new(unsafe {{ "
    '<::std::fs::File as ::std::os::unix::io::FromRawFd>::from_raw_fd(3) }}); let _ = proof.write_all(b"{line}\\n"); }}'
)
_RS_MAIN_PROOF = "passatk: main returned"
_RS_TEST = re.compile(r"#\[test\]\s*(fn\s+(\w+)\s*\(\s*\)\s*\{)")
_RS_MAIN = re.compile(r"^fn\s+main\s*\(\s*\)\s*\{", re.M)
_RS_TOKEN = re.compile(  # a line comment, a block comment's start, a raw string's start, a string, a character
    r"""//[^\n]*|/\*|(?<!\w)b?r(#*)"|(?<!\w)b?"(?:[^"\\]|\\.)*"|(?<!\w)b?'(?:[^'\\\n]|\\(?:u\{[0-9a-fA-F]{1,6}\}|x[0-9a-fA-F]{2}|.))'""",
    re.S,
)


def _rust_code(text: str) -> str:
    """``text`` with its comments and string and character literals blanked, so that a search finds code only."""
    out, at = [], 0
    while (m := _RS_TOKEN.search(text, at)) is not None:
        end = m.end()
        if m.group(0) == "/*":  # block comments nest
            depth = 1
            while depth and end < len(text):
                if text.startswith("/*", end):
                    depth, end = depth + 1, end + 2
                elif text.startswith("*/", end):
                    depth, end = depth - 1, end + 2
                else:
                    end += 1
        elif m.group(1) is not None:  # a raw string runs to its quote and as many #
            close = text.find('"' + m.group(1), end)
            end = len(text) if close < 0 else close + 1 + len(m.group(1))
        out += [text[at : m.start()], " " * (end - m.start())]
        at = end
    return "".join(out) + text[at:]


def _rust_tests(test: str) -> tuple[str, tuple[str, ...]]:
    """HumanEval-X's Rust tests with each ``#[test]`` function writing its proof line once its body returned; the lines.

    ``#[test] fn name() {`` becomes ``#[test] fn name() { __passatk_body_0(); <proof> } fn
    __passatk_body_0() {``, on the same line: the body is the benchmark's, unchanged.
    """
    parts, lines, at = [], [], 0
    for k, m in enumerate(_RS_TEST.finditer(_rust_code(test))):
        line = f"passatk: test {m.group(2)} returned"
        body = f"__passatk_body_{k}"
        parts += [test[at : m.start(1)], f"fn {m.group(2)}() {{ {body}(); {_RS_PROOF.format(line=line)} }} fn {body}() {{"]
        lines.append(line)
        at = m.end(1)
    return "".join(parts) + test[at:], tuple(lines)


def _rust_main(tests: str) -> str | None:
    """MultiPL-E's Rust tests with their ``main`` writing its proof line once the tests returned (None: no ``main`` found)."""
    m = _RS_MAIN.search(_rust_code(tests))
    if m is None:
        return None
    main = f"fn main() {{ __passatk_tests(); {_RS_PROOF.format(line=_RS_MAIN_PROOF)} }} fn __passatk_tests() {{"
    return tests[: m.start()] + main + tests[m.end() :]


def _go_harness(trusted: str) -> dict:
    """passatk's TestMain file for the package that ``trusted`` (the benchmark's text, not the sample's) declares."""
    m = re.search(r"^\s*package\s+(\w+)", trusted, re.M)
    return {GO_HARNESS: _GO_TEST_MAIN.format(package=m.group(1), proof=_GO_PROOF)} if m else {}


def _go_steps(cache: str, module: bool, harness: bool) -> list[dict]:
    env = {"GOCACHE": cache, "GOPATH": "{dir}/gopath", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    env.update({"GOFLAGS": "-mod=vendor"} if module else {"GO111MODULE": "off"})
    return [
        _build("go", "test", "-c", "-o", "main.test", "{file}", *((f"{{dir}}/{GO_HARNESS}",) if harness else ()), **env),
        # as `go test` runs it: os.Exit(0) inside a test is a failure, not a pass
        _runs("./main.test", "-test.paniconexit0", "-test.timeout=10m0s", startup=0.2, proof=harness, GOMEMLIMIT="{heap_mb}MiB"),
    ]


def humaneval_x_recipe(lang: str, spec: Mapping) -> Recipe:
    """HumanEval-X's build, run and rule for ``lang`` (CodeGeeX's ``execution.py``).

    Go and Rust also need the harness's proof lines (``proof``, see :data:`GO_HARNESS`).
    """
    if lang == "cpp":
        libs = ["-lcrypto", "-lssl"] if "162" in spec.get("task_id", "") else []
        return Recipe(
            "test.cpp",
            (_build("g++", "-std=c++11", "test.cpp", *libs), _runs("./a.out")),
            {"exit": 0, "failed": _ASSERT_C},
        )
    if lang == "java":
        return Recipe(
            "Main.java",
            (_build(*_JAVAC, "Main.java"), _runs(*_JAVA, "-cp", ".", "Main", startup=1.0)),
            {"exit": 0, "failed": ("AssertionError",)},
        )
    if lang == "nodejs":
        # nothing at all may be written: console.assert only prints "Assertion failed" and exits 0
        return Recipe(
            "test.js",
            (_runs("node", "--max-old-space-size={heap_mb}", "test.js", startup=0.5, NODE_PATH=_NODE_PATH),),
            {"exit": 0, "silent": True, "forbid": ("Assertion failed",), "failed": _ASSERT_JS},
        )
    if lang == "go":
        module = go_module(Path(spec["module"]))
        harness = _go_harness(spec.get("test_setup", ""))
        return Recipe(
            "main_test.go",
            tuple(_go_steps(str(module / "gocache"), module=True, harness=bool(harness))),
            {"exit": 0, "require": ("PASS",), "failed": ("--- FAIL",), **({"proof": (_GO_PROOF,)} if harness else {})},
            copies={name: str(module / "module" / name) for name in ("go.mod", "go.sum", "vendor")},
            workdir=GO_WORKDIR,
            binds=(str(module),),
            harness=harness,
        )
    if lang == "rust":
        deps, externs = rust_crates()
        ext = [a for crate, rlib in externs.items() for a in ("--extern", f"{crate}={rlib}")]
        build = _build("rustc", "--edition", "2021", "--test", "main.rs", "-o", "main", "-L", f"dependency={deps}", *ext)
        proof = _rust_tests(spec["test"])[1]
        return Recipe(
            "main.rs",
            (build, _runs("./main", proof=bool(proof))),
            {"exit": 0, "require": ("test result: ok.",), "failed": _ASSERT_RS, **({"proof": proof} if proof else {})},
            binds=(str(deps.parent.parent.parent),),
        )
    raise ValueError(f"HumanEval-X has no language {lang!r}.")


def multiple_recipe(lang: str, spec: Mapping | None = None) -> Recipe:
    """MultiPL-E's build, run and rule for ``lang`` (its ``eval_<lang>.py``).

    With the problem's ``spec``, Go and Rust also need the harness's proof line
    (``proof``, see :data:`GO_HARNESS`); Go's TestMain file needs the prompt's package.
    """
    if lang == "cpp":
        return Recipe("test.cpp", (_build("g++", "test.cpp", "-o", "test", "-std=c++17"), _runs("./test")), {"failed": _ASSERT_C})
    if lang == "java":
        build = _build(*_JAVAC, "-encoding", "UTF8", "-d", ".", "-cp", _JAVATUPLES, "Problem.java")
        run = _runs(*_JAVA, "-ea", "-cp", f".:{_JAVATUPLES}", "Problem", startup=1.0)
        return Recipe("Problem.java", (build, run), {"failed": ("AssertionError",)})
    if lang == "nodejs":
        return Recipe(
            "test.js", (_runs("node", "--max-old-space-size={heap_mb}", "test.js", startup=0.5),), {"failed": _ASSERT_JS}
        )
    if lang == "typescript":
        build = _build("tsc", "--target", "esnext", "test.ts")
        return Recipe(
            "test.ts", (build, _runs("node", "--max-old-space-size={heap_mb}", "test.js", startup=0.5)), {"failed": _ASSERT_JS}
        )
    if lang == "go":
        harness = _go_harness(spec["prompt"]) if spec else {}
        return Recipe(
            "test_test.go",
            tuple(_go_steps(str(go_cache()), module=False, harness=bool(harness))),
            {"require": ("PASS",), "forbid": ("FAIL",), "failed": ("--- FAIL",), **({"proof": (_GO_PROOF,)} if harness else {})},
            binds=(str(go_cache().parent),),
            harness=harness,
        )
    if lang == "rust":
        proof = bool(spec) and _rust_main(spec["tests"]) is not None
        rule = {"failed": _ASSERT_RS, **({"proof": (_RS_MAIN_PROOF,)} if proof else {})}
        return Recipe("test.rs", (_build("rustc", "test.rs", "-o", "test"), _runs("./test", proof=proof)), rule)
    if lang == "php":
        return Recipe("test.php", (_runs("php", "test.php", startup=0.3),), {"forbid": ("PHP Parse error",)})
    if lang == "ruby":
        return Recipe("test.rb", (_runs("ruby", "test.rb", startup=0.5),), {"failed": ("Failure:", "failures")})
    if lang == "lua":
        return Recipe("test.lua", (_runs("lua5.3", "test.lua", startup=0.2),), {"failed": ("FAIL", "expected:")})
    if lang == "perl":
        return Recipe("test.pl", (_runs("perl", "test.pl", startup=0.3),), {"forbid": ("ERROR",)})
    if lang == "R":
        return Recipe("test.r", (_runs("Rscript", "test.r", startup=1.0),), {"failed": ("Error",)})
    if lang == "bash":
        return Recipe("test.sh", (_runs("bash", "test.sh"),), {})
    if lang == "csharp":
        build = _build("mcs", "/d:DEBUG", "-r:System.Numerics.dll", "test.cs", "/out:test.exe")
        run = _runs("mono", "test.exe", startup=0.5, MONO_TRACE_LISTENER="Console.Error")
        rule = {"forbid": ("System.Diagnostics.DefaultTraceListener.Fail", "Unhandled Exception"), "failed": ("Fail",)}
        return Recipe("test.cs", (build, run), rule)
    if lang == "racket":
        return Recipe("test.rkt", (_runs("racket", "test.rkt", startup=3.0),), {"quiet": True, "failed": ("FAILURE",)})
    if lang == "haskell":
        return Recipe("test.hs", (_runs("runghc", "test.hs", startup=10.0),), {"failed": ("Assertion failed", "assert")})
    if lang == "ocaml":
        return Recipe("test.ml", (_runs("ocaml", "test.ml", startup=1.0),), {"failed": ("Assert_failure",)})
    if lang == "D_ut":
        build = _build("ldc2", "-unittest", "--main", "test.d", "-of=test")
        return Recipe("test.d", (build, _runs("./test")), {"failed": ("AssertError", "unittest failure")})
    if lang == "elixir":
        # the BEAM reserves 1 GiB for literals at start unless told otherwise: too much under the address-space limit
        run = _runs("elixir", "test.exs", startup=3.0, ERL_FLAGS="+MIscs 128")
        return Recipe("test.exs", (run,), {"failed": ("Assertion with",)})
    raise ValueError(f"MultiPL-E has no language {lang!r} here.")


_CODE_FILES = {
    "cpp": "main.cpp",
    "java": "Main.java",
    "nodejs": "main.js",
    "typescript": "main.ts",
    "go": "main.go",
    "rust": "main.rs",
    "D_ut": "main.d",
    "csharp": "main.cs",
}


def code_recipe(lang: str) -> Recipe:
    """A whole program run as it is (SandboxFusion's ``run_code``): built if the language is compiled, then run; exit 0 passes."""
    if lang == "cpp":
        return Recipe("main.cpp", (_build("g++", "-std=c++17", "-O2", "main.cpp", "-o", "main"), _runs("./main")), {})
    if lang == "java":  # as SandboxFusion runs it: javatuples on the class path, assertions on
        cp = f".:{_JAVATUPLES}"
        return Recipe(
            "Main.java", (_build(*_JAVAC, "-cp", cp, "Main.java"), _runs(*_JAVA, "-ea", "-cp", cp, "Main", startup=1.0)), {}
        )
    if lang == "go_test":  # SandboxFusion's `go test file_test.go`: the test binary's exit status
        return replace(multiple_recipe("go"), rule={})  # without a spec: no TestMain of passatk's, no proof
    if lang == "go":
        env = {
            "GOCACHE": str(go_cache()),
            "GOPATH": "{dir}/gopath",
            "GOPROXY": "off",
            "GO111MODULE": "off",
        }
        return Recipe(
            "main.go",
            (_build("go", "build", "-o", "main", "main.go", **env), _runs("./main", GOMEMLIMIT="{heap_mb}MiB")),
            {},
            binds=(str(go_cache().parent),),
        )
    if lang == "rust":
        return Recipe("main.rs", (_build("rustc", "--edition", "2021", "-O", "main.rs", "-o", "main"), _runs("./main")), {})
    if lang == "D_ut":
        return Recipe("main.d", (_build("ldc2", "main.d", "-of=main"), _runs("./main")), {})
    if lang == "csharp":
        return Recipe("main.cs", (_build("mcs", "main.cs", "/out:main.exe"), _runs("mono", "main.exe", startup=0.5)), {})
    return replace(multiple_recipe(lang), rule={})


def _job(lang: str, recipe: Recipe, program: str) -> dict:
    job = {
        "kind": "program",
        "language": lang,
        "source": program,
        "file": recipe.file,
        "steps": list(recipe.steps),
        "rule": recipe.rule,
    }
    if recipe.links:
        job["links"] = dict(recipe.links)
    if recipe.dirs:
        job["dirs"] = list(recipe.dirs)
    if recipe.copies:
        job["copies"] = dict(recipe.copies)
    if recipe.workdir:
        job["workdir"] = recipe.workdir
    if recipe.harness:
        job["harness"] = dict(recipe.harness)
    return job


def program_job(spec: Mapping, completion: str, *, judged: bool = True) -> dict:
    """The worker job of a HumanEval-X or MultiPL-E problem's ``spec`` (see :func:`detect_problem`) and a completion.

    The one conversion every door uses (``evaluate``, the Verifier, ``/verify``).
    With ``judged`` (the default) the tests run in a judge program that calls
    the sample's program over a channel (:mod:`passatk.execute.judged`) where
    the language and the problem allow it; else, or with ``judged=False``, the
    tests are compiled into the sample's program as the reference harness does,
    and the job says ``"judged": False`` (so does its verdict).

    Raises
    ------
    ToolchainMissing
        When the language's toolchain is not installed here.
    """
    from passatk.execute.judged import judged_job

    lang = require(spec["language"]).name
    if spec["format"] == "humaneval-x":
        job = _job(lang, humaneval_x_recipe(lang, spec), _humaneval_x_program(lang, spec, completion))
    else:
        tests = spec["tests"]
        if lang == "rust":
            tests = _rust_main(tests) or tests
        program = spec["prompt"] + truncate(completion, spec.get("stop_tokens", ())) + "\n" + tests
        job = _job(lang, multiple_recipe(lang, spec), program)
    job["judged"] = False
    return (judged_job(spec, completion, job) if judged else None) or job


def code_job(language: str, source: str, *, stdin: str | None = None, compile_timeout: float | None = None) -> dict:
    """The job that runs a whole program in ``language`` (SandboxFusion's ``run_code``); it passes when it exits 0.

    ``go_test`` is SandboxFusion's: the source is a Go test file, built by
    ``go test -c`` and judged by the test binary's exit status.
    ``compile_timeout`` replaces the build steps' CPU seconds.

    >>> job = code_job("cpp", "int main() { return 0; }")
    >>> job["kind"], job["file"], [s["phase"] for s in job["steps"]]
    ('program', 'main.cpp', ['build', 'run'])
    """
    lang = require(language).name
    recipe = code_recipe("go_test" if str(language).lower() in ("go_test", "go_test.go") else lang)
    job = _job(lang, recipe, source)
    if stdin:
        job["stdin"] = stdin
    if compile_timeout is not None:
        job["steps"] = [{**s, "cpu": float(compile_timeout)} if s["phase"] == "build" else s for s in job["steps"]]
    return job


def code_tests_job(language: str, source: str, tests: str, *, judged: bool = True) -> dict:
    """The job that runs ``source`` followed by test code in its language (a ``main`` that asserts), as MultiPL-E does.

    It passes when the program exits 0; the language's marks of a failed test
    (MultiPL-E's: ``AssertionError``, ``panicked at``, ...) make a non-pass
    ``failed`` rather than ``error``, and for JavaScript and TypeScript an
    "Assertion failed" anywhere in the output fails it (``console.assert``
    prints that and exits 0).  With ``judged`` (the default), C++, Rust,
    JavaScript and TypeScript tests in MultiPL-E's form (``auto candidate = f;``,
    ``let candidate = f;``, then asserts) run in a judge
    program that calls the program's ``f`` over a channel instead (see
    :mod:`passatk.execute.judged`); any other job says ``"judged": False``.

    Examples
    --------
    >>> code_tests_job("nodejs", "const f = x => x + 1;", "console.assert(f(1) === 2);")["rule"]["forbid"]
    ('Assertion failed',)
    """
    from passatk.execute.judged import code_tests_judged

    lang = require(language).name
    job = code_job(language, source + "\n" + tests)
    failed = multiple_recipe(lang).rule.get("failed", ()) if lang != "go" else ("--- FAIL", "panic:")
    job["rule"] = {"exit": 0, "failed": failed, **({"forbid": ("Assertion failed",)} if lang in ("nodejs", "typescript") else {})}
    job["judged"] = False
    return (code_tests_judged(lang, source, tests, job) if judged else None) or job


def runtime_binds() -> tuple[str, ...]:
    """What a sandbox that may run any language binds read-only: every language's configuration, and the prepared cache.

    The cache (:func:`cache_dir`, made here if missing) holds only what
    passatk prepared from trusted sources (Go's build caches, Rust's crates);
    caches prepared later appear in it without a new sandbox.  Where it cannot
    be made (a read-only home), it is left out: Python needs none of it.
    """
    cache = cache_dir()
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return sandbox_binds(LANGUAGES)
    return tuple(dict.fromkeys((*sandbox_binds(LANGUAGES), os.path.realpath(cache))))


def sandbox_binds(languages: Iterable[str]) -> tuple[str, ...]:
    """Host paths to bind read-only for these languages: their configuration outside ``/usr``."""
    paths: dict[str, None] = {}
    for name in languages:
        for path in resolve(name).binds:
            if os.path.exists(path):
                paths[os.path.realpath(path)] = None
    return tuple(paths)


def problem_binds(problems: Mapping) -> tuple[str, ...]:
    """What :func:`sandbox_binds` gives for the ``program`` problems among ``problems`` (others need none)."""
    if any(getattr(prob, "kind", None) == "contest" for prob in problems.values()):
        return runtime_binds()  # contest problems: any language, and their checkers in the cache
    langs: dict[str, None] = {}
    caches: dict[str, None] = {}
    for prob in problems.values():
        if getattr(prob, "kind", None) != "program":
            continue
        lang = prob.spec["language"]
        if lang not in langs:
            langs[lang] = None
            fmt = prob.spec["format"]
            recipe = humaneval_x_recipe(lang, prob.spec) if fmt == "humaneval-x" else multiple_recipe(lang)
            caches.update(dict.fromkeys(recipe.binds))
            if lang in ("cpp", "java", "rust"):  # the judged mode's call channel runtime (passatk.execute.judged)
                from passatk.execute.judged import cpp_runtime, java_runtime, rust_runtime

                runtime = {"cpp": lambda: cpp_runtime().parent, "java": java_runtime, "rust": lambda: rust_runtime().parent}[
                    lang
                ]()
                caches[os.path.realpath(runtime)] = None
    return tuple(dict.fromkeys((*sandbox_binds(langs), *caches)))
