"""Reading source files with errors that name the dataset and the file.

A truncated archive, a file in the wrong format or a missing member surfaces as one
:class:`~zoo.errors.InputError` (no traceback) instead of a parser's exception.
"""

from __future__ import annotations

import csv
import gzip
import io
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import InputError, ZooError


@contextmanager
def reading(dataset: str, path: Path | str, what: str = "") -> Iterator[None]:
    """Turn any parsing failure inside the block into an error naming ``dataset`` and ``path``."""
    try:
        yield
    except ZooError:
        raise
    except Exception as exc:
        inside = f" ({what})" if what else ""
        raise InputError(f"dataset '{dataset}': cannot read {path}{inside}: "
                         f"{type(exc).__name__}: {exc}. Delete the file to fetch it again, or "
                         f"check that it is the official one (zoo data info {dataset})") from None


def zip_member_text(archive: Path, name: str) -> str:
    """Text of the member of ``archive`` whose path ends with ``name``."""
    with zipfile.ZipFile(archive) as zf:
        found = [m for m in zf.namelist() if m == name or m.endswith("/" + name)]
        if not found:
            raise KeyError(f"no member {name} in the archive")
        return zf.read(found[0]).decode()


def text_of(path: Path) -> str:
    """Text of a plain or gzip-compressed file."""
    with open(path, "rb") as fh:
        raw = fh.read()
    return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()


def csv_columns(text: str, names: list[str]) -> dict[str, list[str]]:
    """The named columns of a CSV with a header row; rows with one more leading field than the
    header (an unnamed row index, as in UCI Occupancy) are aligned on the right like pandas."""
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], [r for r in rows[1:] if r]
    missing = [n for n in names if n not in header]
    if missing:
        raise KeyError(f"columns {missing} not in the header {header}")
    out = {n: [] for n in names}
    for number, row in enumerate(body, start=2):
        shift = len(row) - len(header)
        if shift not in (0, 1):
            raise ValueError(f"line {number} has {len(row)} fields, the header {len(header)}")
        for n in names:
            out[n].append(row[header.index(n) + shift])
    return out
