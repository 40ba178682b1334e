"""The members of a zip archive as bytes, zstd-compressed ones (method 93) included.

Python's :mod:`zipfile` reads the archive's directory but, before 3.14, cannot
decompress a member stored with method 93 (zstd), which is what current
inspect_ai writes.  Such members are read here from their local header and
decompressed with ``zstandard`` (the library inspect_ai itself uses), across
frames, with the stored size and CRC-32 checked.  Other methods go through
:mod:`zipfile`.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

from passatk.exceptions import ResultsFormatError

__all__ = ["Archive", "is_zip"]

ZIP_ZSTANDARD = 93
# local file header: signature, version, flags, method, time, date, CRC-32, sizes, name and extra lengths
_LOCAL = struct.Struct("<4s5H3L2H")


def is_zip(path: Path) -> bool:
    """Whether ``path`` starts as a zip archive does (a local file header, or the end record of an empty one)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) in (b"PK\x03\x04", b"PK\x05\x06")
    except OSError:
        return False


class Archive:
    """A zip archive opened for reading; ``members`` maps each name to its last entry, as zip readers resolve names."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            raise ResultsFormatError(f"{path}: not a readable zip archive ({exc}).") from None
        self.members = {info.filename: info for info in self._zip.infolist()}

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc) -> None:
        self._zip.close()

    def read(self, name: str) -> bytes:
        """The decompressed bytes of member ``name``; a damaged member raises naming it."""
        info = self.members[name]
        if info.compress_type == ZIP_ZSTANDARD:
            return self._zstd(info)
        try:
            return self._zip.read(info)
        except (zipfile.BadZipFile, NotImplementedError, zlib.error, EOFError, OSError, RuntimeError) as exc:
            raise ResultsFormatError(f"{self.path}: member {name}: cannot be read ({exc}).") from None

    def _zstd(self, info: zipfile.ZipInfo) -> bytes:
        where = f"{self.path}: member {info.filename}"
        try:
            import zstandard
        except ImportError:
            from passatk._install import install_hint

            raise ResultsFormatError(
                f"{where}: zstd-compressed (as inspect_ai writes its logs); reading it needs the `zstandard` "
                f"package: {install_hint('logs')}."
            ) from None
        with open(self.path, "rb") as fh:
            fh.seek(info.header_offset)
            header = fh.read(_LOCAL.size)
            if len(header) < _LOCAL.size or _LOCAL.unpack(header)[0] != b"PK\x03\x04":
                raise ResultsFormatError(f"{where}: no local file header at offset {info.header_offset}.")
            *_, name_len, extra_len = _LOCAL.unpack(header)
            fh.seek(name_len + extra_len, io.SEEK_CUR)
            raw = fh.read(info.compress_size)
        if len(raw) != info.compress_size:
            raise ResultsFormatError(f"{where}: truncated ({len(raw)} of {info.compress_size} compressed bytes).")
        try:
            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True) as reader:
                data = reader.read(info.file_size + 1)  # one byte more than stored: a longer member is damaged
        except zstandard.ZstdError as exc:
            raise ResultsFormatError(f"{where}: not valid zstd data ({exc}).") from None
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            raise ResultsFormatError(f"{where}: damaged (size or CRC-32 differs from the archive's directory).")
        return data
