"""Where a number came from: the version, the input files (sha256, lines) and the options, for every ``--json``."""

from __future__ import annotations

import gzip
import hashlib
import os
from functools import lru_cache

__all__ = ["FORMAT_VERSION", "file_info", "provenance"]

#: Version of the layout of the ``--json`` records; raised when a field changes meaning or goes.
FORMAT_VERSION = 1


@lru_cache(maxsize=64)
def _info(path: str, size: int, mtime_ns: int) -> tuple[str, int]:  # size and mtime: a changed file is read again
    digest, lines = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as fh:  # lines of the content, as the loaders number them
        last = b"\n"
        for block in iter(lambda: fh.read(1 << 20), b""):
            lines += block.count(b"\n")
            last = block[-1:]
        lines += last != b"\n"
    return digest.hexdigest(), lines


def file_info(path: str | os.PathLike) -> dict:
    """``{"path", "sha256", "bytes", "lines"}`` of a file: the digest and size of its bytes as stored, the lines of its content.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.jsonl"
    >>> _ = p.write_text('{"a": 1}\\n{"a": 2}')
    >>> info = file_info(p)
    >>> info["lines"], info["sha256"][:12]
    (2, '2934aab09f29')
    """
    if os.path.isdir(path):  # a directory of per-problem files (MultiPL-E): the digest of its files' names and digests
        files = sorted((e for e in os.scandir(path) if e.is_file()), key=lambda e: e.name)
        infos = [file_info(e.path) for e in files]
        digest = hashlib.sha256("".join(f"{e.name}\0{i['sha256']}\n" for e, i in zip(files, infos)).encode()).hexdigest()
        return {
            "path": os.fspath(path),
            "sha256": digest,
            "bytes": sum(i["bytes"] for i in infos),
            "lines": sum(i["lines"] for i in infos),
        }
    st = os.stat(path)
    sha, lines = _info(os.fspath(path), st.st_size, st.st_mtime_ns)
    return {"path": os.fspath(path), "sha256": sha, "bytes": st.st_size, "lines": lines}


def provenance(paths, options: dict) -> dict:
    """The fields every ``--json`` record starts with (DESIGN.md): format version, passatk version, inputs, options."""
    import passatk

    inputs = [_with_environment(file_info(p)) for p in dict.fromkeys(os.fspath(p) for p in paths if p is not None)]
    return {"format_version": FORMAT_VERSION, "passatk": passatk.__version__, "inputs": inputs, "options": dict(options)}


def _with_environment(info: dict) -> dict:
    """``info`` with the Python environment its samples ran in, when ``passatk evaluate`` recorded one beside the file."""
    import json

    try:
        with open(info["path"] + ".environment.json") as fh:
            env = json.load(fh)
    except (OSError, ValueError):
        return info
    return {**info, "environment": env}
