"""Execution environments: which Python, and which installed packages, the samples run with.

A sample's verdict depends on what it can import: a CodeGen sample that
imports ``requests`` or ``sklearn`` passes or fails with the packages of the
environment it runs in.  So the environment is declared, never inherited by
accident from passatk's own, and every results file records it.

:class:`Environment` is an interpreter and the site-packages directories the
samples see (bound read-only into the sandbox), with its Python version and
its installed distributions (``name==version``) asked of *that* interpreter,
and a digest of both, so that two runs can be compared and a difference
explained.  :func:`resolve_environment` makes one from what the user gave:

``None`` (the default)
    passatk's interpreter with the standard library and numpy only (numpy's
    own directories, linked into a cache directory), whatever else passatk's
    virtual environment holds;
a path
    an interpreter (``.../bin/python``) or the prefix of a virtual or conda
    environment (``.../envs/bigcodebench``): its site-packages, as it sees them;
a name
    an environment made by :func:`create_environment` (``passatk env create``)
    in the cache (``<cache>/envs/<name>``).

:func:`create_environment` builds the environment a dataset declares (its
requirements file, with the changes this Python needs, see
:data:`DATASET_REQUIREMENTS`) with pip, into the cache directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DATASET_REQUIREMENTS",
    "Environment",
    "EnvironmentError_",
    "create_environment",
    "default_environment",
    "environment_path",
    "environments_dir",
    "read_environment",
    "resolve_environment",
    "write_environment",
]

_MIN_PYTHON = (3, 10)  # the worker needs sys.stdlib_module_names
_PROBE_TIMEOUT = 120.0


class EnvironmentError_(ValueError):  # noqa: N801 (a ValueError: the CLI prints it as a user error)
    """An environment that is not usable: not a Python, too old, or a requirements file that does not install."""


# What the probe prints, run by the environment's own interpreter (never passatk's): its version,
# where it lives, its site-packages and the distributions installed there.
_PROBE = r"""
import json, os, site, sys, sysconfig
from importlib import metadata
paths = []
for p in list(getattr(site, "getsitepackages", lambda: [])()) + [sysconfig.get_paths()[k] for k in ("purelib", "platlib")]:
    p = os.path.realpath(p)
    if os.path.isdir(p) and p not in paths:
        paths.append(p)
dists = {}
for d in metadata.distributions(path=paths):
    name = d.metadata["Name"]
    if name:
        dists.setdefault(name.lower().replace("_", "-").replace(".", "-"), name + "==" + d.version)
print(json.dumps({
    "executable": os.path.realpath(sys.executable),
    "version": sys.version,
    "version_info": list(sys.version_info[:3]),
    "prefixes": sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}),
    "site_packages": paths,
    "distributions": sorted(dists.values(), key=str.lower),
}))
"""


@dataclass(frozen=True)
class Environment:
    """A Python environment samples run in.

    Attributes
    ----------
    name : str
        ``"base"`` (the default), the name of a created environment, or the path given.
    python : str
        The interpreter that runs the worker, its zygote and the samples (a real path).
    version : str
        That interpreter's ``sys.version``.
    import_paths : tuple of str
        Directories on the samples' ``sys.path`` after the standard library (read-only in the sandbox).
    distributions : tuple of str
        ``name==version`` of every distribution importable from ``import_paths``.
    binds : tuple of str
        Host paths the sandbox binds read-only for this environment (the
        interpreter's prefixes, the import paths and what they link to).
    """

    name: str
    python: str
    version: str
    import_paths: tuple[str, ...]
    distributions: tuple[str, ...]
    binds: tuple[str, ...] = ()
    version_info: tuple[int, ...] = field(default=(), repr=False)

    @property
    def digest(self) -> str:
        """sha256 of the Python version and the distributions: equal digests, equal environments."""
        blob = json.dumps([self.version.split()[0], sorted(self.distributions, key=str.lower)])
        return hashlib.sha256(blob.encode()).hexdigest()

    def record(self) -> dict:
        """What results files and ``--json`` records carry: ``{name, python, version, sha256, distributions}``."""
        return {
            "name": self.name,
            "python": self.python,
            "version": self.version.split()[0],
            "sha256": self.digest,
            "distributions": list(self.distributions),
        }

    @property
    def preload(self) -> tuple[str, ...]:
        """Modules the warm worker and zygote import before any job: the data-science stack where it is installed.

        Empty unless pandas is installed (the default environment preloads
        nothing beyond passatk's usual standard-library modules).
        """
        if not self.has("pandas"):
            return ()
        wanted = (("numpy", "numpy"), ("pandas", "pandas"), ("matplotlib", "matplotlib"), ("matplotlib", "matplotlib.pyplot"))
        return tuple(module for dist, module in wanted if self.has(dist))

    @property
    def variables(self) -> tuple[tuple[str, str], ...]:
        """Environment variables the programs run with: BigCodeBench's harness's where matplotlib is installed.

        (``MPLBACKEND=Agg``, one OpenMP/BLAS thread, TensorFlow's logging off,
        ``TZ=UTC``, as ``bigcodebench.eval.utils.reliability_guard`` sets them.)
        """
        if not self.has("matplotlib"):
            return ()
        return (
            ("MPLBACKEND", "Agg"),
            ("MPLCONFIGDIR", "/tmp/.matplotlib"),
            ("OMP_NUM_THREADS", "1"),
            ("OPENBLAS_NUM_THREADS", "1"),
            ("MKL_NUM_THREADS", "1"),
            ("TF_CPP_MIN_LOG_LEVEL", "3"),
            ("TF_ENABLE_ONEDNN_OPTS", "0"),
            ("TZ", "UTC"),
        )

    def has(self, distribution: str) -> bool:
        """Whether ``distribution`` (a name, any case) is installed here."""
        want = _canonical(distribution)
        return any(_canonical(d.split("==")[0]) == want for d in self.distributions)

    def without_packages(self) -> Environment:
        """The same interpreter with the standard library only."""
        return Environment(
            name=f"{self.name} (standard library only)",
            python=self.python,
            version=self.version,
            import_paths=(),
            distributions=(),
            binds=self._prefixes(),
            version_info=self.version_info,
        )

    def _prefixes(self) -> tuple[str, ...]:
        return tuple(b for b in self.binds if b not in self.import_paths)


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def environments_dir() -> Path:
    """Where :func:`create_environment` puts environments: ``<passatk cache>/envs``."""
    from passatk.execute.languages import cache_dir

    return cache_dir() / "envs"


def _probe(python: str, given: str) -> dict:
    """Ask ``python`` about itself (in a subprocess of that interpreter, isolated from ours)."""
    if not os.path.isfile(python) or not os.access(python, os.X_OK):
        raise EnvironmentError_(
            f"`python` must be a Python interpreter or an environment's prefix; got {given!r} (not an executable)."
        )
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": tempfile.gettempdir()}
    try:
        done = subprocess.run(
            [python, "-I", "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EnvironmentError_(f"`python` must be a Python interpreter; {given!r} could not be run ({exc}).") from None
    try:
        info = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (ValueError, IndexError):
        info = None
    if not isinstance(info, dict) or "version_info" not in info:
        raise EnvironmentError_(
            f"`python` must be a Python interpreter; {given!r} is not one (run as one, it exited with status "
            f"{done.returncode} without describing itself)."
        )
    if tuple(info["version_info"][:2]) < _MIN_PYTHON:
        raise EnvironmentError_(
            f"`python` must be Python {_MIN_PYTHON[0]}.{_MIN_PYTHON[1]} or later; {given!r} is Python {info['version'].split()[0]}."
        )
    return info


def _interpreter(given: str) -> str:
    """The interpreter of a path that is one, or of an environment prefix, or of a created environment's name."""
    path = Path(given).expanduser()
    if path.is_dir():
        for candidate in ("bin/python3", "bin/python", "python.exe"):
            if (path / candidate).exists():
                return str(path / candidate)
        raise EnvironmentError_(f"`python` {given!r} is a directory without bin/python: not a Python environment.")
    if path.exists() or os.sep in given:
        return str(path)
    named = environments_dir() / given
    if re.fullmatch(r"[A-Za-z0-9._-]+", given) and (named / "bin" / "python").exists():
        return str(named / "bin" / "python")
    found = shutil.which(given)
    if found:
        return found
    raise EnvironmentError_(
        f"`python` must be an interpreter, an environment's prefix or the name of one made by `passatk env create`; "
        f"got {given!r}, which is none of these (environments here: {', '.join(_created()) or 'none'})."
    )


def _created() -> list[str]:
    root = environments_dir()
    return sorted(p.name for p in root.iterdir() if (p / "bin" / "python").exists()) if root.is_dir() else []


_RESOLVED: dict[tuple, Environment] = {}


def resolve_environment(python: str | os.PathLike | Environment | None = None, *, site_packages: bool = True) -> Environment:
    """The :class:`Environment` samples run in (see the module's note for what ``python`` may be).

    ``site_packages=False`` leaves the samples the standard library only.

    Raises
    ------
    ValueError
        (:class:`EnvironmentError_`) ``python`` is not a Python 3.10+ interpreter, an
        environment's prefix or a created environment's name; the message says which.
    """
    if isinstance(python, Environment):
        env = python
    else:
        key = (None if python is None else os.fspath(python),)
        env = _RESOLVED.get(key)
        if env is None:
            env = _RESOLVED[key] = default_environment() if python is None else _from_interpreter(os.fspath(python))
    return env if site_packages else env.without_packages()


def _from_interpreter(given: str) -> Environment:
    info = _probe(_interpreter(given), given)
    paths = tuple(info["site_packages"])
    binds = tuple(dict.fromkeys([*(p for p in info["prefixes"] if not p.startswith("/usr/") and p != "/usr"), *paths]))
    return Environment(
        name=given,
        python=info["executable"],
        version=info["version"],
        import_paths=paths,
        distributions=tuple(info["distributions"]),
        binds=binds,
        version_info=tuple(info["version_info"]),
    )


def default_environment() -> Environment:
    """passatk's interpreter with the standard library and numpy only.

    numpy's directories (the package, its bundled libraries, its metadata) are
    linked into ``<cache>/envs/base-<digest>/site``, the only import path;
    nothing else of passatk's virtual environment is visible to samples.
    """
    from importlib import metadata

    dist = metadata.distribution("numpy")
    root = Path(dist.locate_file("")).resolve()
    tops = sorted({Path(str(f)).parts[0] for f in dist.files or () if not str(f).startswith("..")})
    entries = [root / t for t in tops if (root / t).exists() and not (root / t).name.endswith(".py")]
    python = os.path.realpath(sys.executable)
    distributions = (f"numpy=={dist.version}",)
    tag = hashlib.sha256(json.dumps([python, [str(e) for e in entries]]).encode()).hexdigest()[:16]
    site = environments_dir() / f"base-{tag}" / "site"
    if not site.is_dir():
        site.parent.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".base.", dir=site.parent.parent))
        try:
            (tmp / "site").mkdir()
            for entry in entries:
                os.symlink(entry, tmp / "site" / entry.name)
            try:
                os.rename(tmp, site.parent)
            except OSError:
                if not site.is_dir():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    prefixes = {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix)}
    binds = (*sorted(p for p in prefixes if not p.startswith("/usr/")), str(site), *map(str, entries))
    return Environment(
        name="base",
        python=python,
        version=sys.version,
        import_paths=(str(site),),
        distributions=distributions,
        binds=binds,
        version_info=tuple(sys.version_info[:3]),
    )


# --------------------------------------------------------------------------- #
# creating the environment a dataset declares
# --------------------------------------------------------------------------- #
#: The requirements of the datasets passatk can build an environment for, and how each pin is
#: changed where it does not install on this Python (BigCodeBench pins its evaluation
#: environment for Python 3.10: numpy 1.21 and tensorflow 2.11 have no wheels for 3.11).
#: ``None`` drops a line; every change is recorded in the environment's ``passatk-env.json``.
DATASET_REQUIREMENTS = {
    "bigcodebench": {
        "file": "requirements-eval.txt",
        "changes": {
            "numpy": "numpy>=1.23,<2",  # 1.21.2: no wheel for 3.11
            "numba": "numba>=0.57,<0.61",  # 0.55.0: Python < 3.11
            # 1.7.2: no wheel for 3.11. 1.10 is the last release whose stats.mode keeps the axis as 1.7 did
            # (the shape tasks 115, 245, 634 and 736 expect), and it has wheels for 3.11 and scipy.linalg.triu (gensim)
            "scipy": "scipy>=1.10,<1.11",
            "tensorflow": "tensorflow-cpu>=2.12,<2.16",  # 2.11.1: Python < 3.11; 2.16 brings Keras 3
            "keras": "keras>=2.12,<2.16",  # follows tensorflow, Keras 2 as pinned
            "scikit-image": "scikit-image>=0.20,<0.23",  # 0.18.0: no wheel for 3.11
            "networkx": "networkx>=2.8,<3",  # 2.6.3: too old for that scikit-image
            "selenium": "selenium==4.15.2",  # the pin "4.15." is not a version
            "wikipedia": "wikipedia==1.4.0",  # the line is the version glued to a commit hash
            "python-levenshtein-wheels": None,  # an old fork without wheels for 3.11; Levenshtein is installed
            "wheels": None,  # not a package (a split line of the original file)
        },
    },
}


def _requirement_name(line: str) -> str:
    return _canonical(re.split(r"[<>=!~;\[ ]", line, maxsplit=1)[0])


def _adapted_requirements(path: Path, changes: dict) -> tuple[list[str], list[dict]]:
    """The lines to install and what was changed, ``[{"requested", "installed_as"}]``."""
    lines, changed, seen = [], [], set()
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name = _requirement_name(line)
        if name in changes:
            new = changes[name]
            changed.append({"requested": line, "installed_as": new})
            if new is None:
                continue
            line = new
            name = _requirement_name(new)
        if name in seen:
            continue
        seen.add(name)
        lines.append(line)
    return lines, changed


def create_environment(
    name: str,
    requirements: str | os.PathLike | None = None,
    *,
    python: str | None = None,
    data: str | os.PathLike | None = None,
    force: bool = False,
    quiet: bool = False,
) -> Environment:
    """Build the environment ``name`` with pip into ``<cache>/envs/<name>`` and return it.

    ``name`` a dataset of :data:`DATASET_REQUIREMENTS` (``"bigcodebench"``)
    takes that dataset's requirements file (from ``data``, the folder holding
    it) with the changes listed there for pins that do not install on this
    Python; otherwise ``requirements`` is a requirements file, installed as it
    is.  ``python`` is the interpreter the virtual environment is made from
    (default: passatk's).  What was asked, what was changed and what got
    installed are written to ``passatk-env.json`` in the environment.

    Raises
    ------
    ValueError
        (:class:`EnvironmentError_`) A name that is not a plain name, no
        requirements, or pip failing (its last lines are in the message).
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name or ""):
        raise EnvironmentError_(f"`name` must be a plain name (letters, digits, . _ -); got {name!r}.")
    recipe = DATASET_REQUIREMENTS.get(name, {})
    if requirements is None:
        if not recipe:
            raise EnvironmentError_(
                f"environment {name!r} needs a requirements file (--requirements); datasets with their own: {', '.join(DATASET_REQUIREMENTS)}."
            )
        if data is None:
            raise EnvironmentError_(
                f"environment {name!r} is built from the dataset's {recipe['file']}: give the folder holding it (--data)."
            )
        requirements = Path(data) / recipe["file"]
    requirements = Path(requirements)
    if not requirements.is_file():
        raise EnvironmentError_(
            f"`requirements` must be a requirements file; got {os.fspath(requirements)!r}, which does not exist."
        )
    lines, changed = _adapted_requirements(requirements, recipe.get("changes", {}))
    target = environments_dir() / name
    if target.exists():
        if not force and (target / "passatk-env.json").exists():
            return resolve_environment(str(target))
        shutil.rmtree(target)
    base = os.path.realpath(python or sys.executable)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    try:
        shutil.rmtree(tmp)
        _check([base, "-m", "venv", str(tmp)], "making the virtual environment", quiet)
        os.rename(tmp, target)  # pip writes absolute paths (scripts' shebangs): install where it will live
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        reqs = target / "requirements-passatk.txt"
        reqs.write_text("\n".join(lines) + "\n")
        pip = [str(target / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--prefer-binary"]
        _check([*pip, "-r", str(reqs)], f"installing {requirements}", quiet)
        env = _from_interpreter(str(target))
        (target / "passatk-env.json").write_text(
            json.dumps(
                {"requirements": os.fspath(requirements), "installed_from": lines, "changed": changed, **env.record()}, indent=1
            )
        )
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    _RESOLVED.pop((str(target),), None)
    return resolve_environment(str(target))


def _check(argv: list[str], what: str, quiet: bool) -> None:
    out = None if not quiet else subprocess.PIPE
    done = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        tail = " | ".join(line.strip() for line in done.stderr.strip().splitlines()[-4:])
        raise EnvironmentError_(f"{what} failed (exit status {done.returncode}): {tail}")


# --------------------------------------------------------------------------- #
# the record beside a results file
# --------------------------------------------------------------------------- #
def environment_path(results: str | os.PathLike) -> Path:
    """Where the environment of a results file is recorded: ``<results>.environment.json``."""
    return Path(os.fspath(results) + ".environment.json")


def write_environment(results: str | os.PathLike, environment: Environment) -> Path:
    """Write ``environment.record()`` beside the results file ``results`` (atomically)."""
    path = environment_path(results)
    from passatk._files import user_file_mode

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.fchmod(fd, user_file_mode())  # as the results file beside it, not mkstemp's 0600
    with os.fdopen(fd, "w") as fh:
        json.dump(environment.record(), fh, indent=1)
    os.replace(tmp, path)
    return path


def read_environment(results: str | os.PathLike) -> dict | None:
    """The environment recorded beside the results file ``results``, or None when there is none."""
    try:
        return json.loads(environment_path(results).read_text())
    except (OSError, ValueError):
        return None
