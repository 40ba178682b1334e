"""Shared fixtures: the real data beside the project (never copied into it)."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` from the project root; tests using it skip when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA} (see docs/development.md, 'Tests on real data')")
    return SHARED_DATA


@pytest.fixture(scope="module", autouse=True)
def _close_shared_verifiers():
    """After each module, the Verifiers reward functions keep warm for the process (``shared_verifier``) are closed.

    A trainer keeps them for its whole run; a test module that used one must not
    leave its workers to the modules after it, which count their processes.
    """
    yield
    import sys

    verifier = sys.modules.get("passatk.execute.verifier")
    if verifier is not None:
        for shared in list(verifier._SHARED.values()):
            shared.close()
