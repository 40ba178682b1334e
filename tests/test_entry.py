"""The `passatk` script without the `cli` extra says what to install instead of a traceback."""

from __future__ import annotations

import builtins

import pytest

from passatk import _entry


def test_missing_cli_extra_is_one_clear_line(monkeypatch):
    """With typer unimportable, the script exits with an install hint."""
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "passatk.cli" or name == "typer":
            raise ModuleNotFoundError("No module named 'typer'", name="typer")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(
        SystemExit, match=r"needs 'typer'; install it with: pip install 'typer>=[^']+' .*\(passatk's `cli` extra\)"
    ):
        _entry.main()
