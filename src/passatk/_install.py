"""How to install what a feature needs, in words that work wherever passatk is installed.

passatk is not on PyPI, so ``pip install 'passatk[plot]'`` fails outside a clone of its
repository.  The packages an extra holds install anywhere: the hints name those.
"""

from __future__ import annotations

import re


def extra_requirements(extra: str) -> list[str]:
    """The requirements of one of passatk's extras, nested extras expanded (``all`` is cli, stats, plot, ...).

    Read from the installed distribution's metadata; empty when passatk is
    not installed as a distribution (run from a source tree).
    """
    from importlib.metadata import PackageNotFoundError, requires

    try:
        declared = requires("passatk") or []
    except PackageNotFoundError:
        return []
    out: list[str] = []

    def add(name: str, seen: set[str]) -> None:
        if name in seen:
            return
        seen.add(name)
        for line in declared:
            requirement, _, marker = line.partition(";")
            if not re.search(rf"""extra\s*==\s*["']{re.escape(name)}["']""", marker):
                continue
            nested = re.fullmatch(r"\s*passatk\s*\[([^\]]*)\]\s*", requirement)
            if nested:
                for inner in nested.group(1).split(","):
                    add(inner.strip(), seen)
            elif requirement.strip() not in out:
                out.append(requirement.strip())

    add(extra, set())
    return out


def install_hint(extra: str) -> str:
    """A pip command that installs passatk's ``extra`` wherever passatk is installed.

    >>> install_hint("plot").startswith("pip install 'matplotlib")
    True
    >>> "passatk[" in install_hint("all")
    False
    """
    requirements = extra_requirements(extra)
    if not requirements:
        return f"pip install -e '.[{extra}]' in passatk's clone"
    return "pip install " + " ".join(f"'{r}'" for r in requirements) + f" (passatk's `{extra}` extra)"
