"""Read PhysioNet/CinC 2019 ``.psv`` ICU stays the way the FWP/NCDE sepsis code does
(docs/sources.md#sepsis).

A ``.psv`` file has a header line and one ``|``-separated row per hour: 34 time-varying
features, then Age, Gender, Unit1, Unit2, HospAdmTime, ICULOS, SepsisLabel (41 columns).
Per stay: rows are read until the first one with ICULOS > 72; hours missing between ICULOS
values become all-NaN rows; the label is the largest SepsisLabel of the kept rows; the static
features come from the last row read (the one that stopped the reading, if any); stays with at
most 2 kept rows are dropped.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import InputError

N_COLUMNS = 41
N_FEATURES = 34
MAX_HOURS = 72
MIN_ROWS = 3


@dataclass
class Stay:
    """One kept ICU stay: ``rows`` (hours × 34, NaN-filled gaps), static features, label."""

    rows: list[list[float]]
    static: list[float]
    label: float


def read_stay(lines: Iterable[str], where: str, dataset: str, flags: bool) -> Stay | None:
    """Parse one stay; ``None`` when it has fewer than 3 kept rows.

    ``static`` is [Age, Gender, Unit1, Unit2, HospAdmTime] with NaN Unit1/Unit2/HospAdmTime set
    to 0, followed with ``flags`` by "Unit1 observed" and "Unit2 observed" (1.0 / 0.0).
    """
    lines = iter(lines)
    next(lines, None)  # header
    rows: list[list[float]] = []
    label, prev_iculos, last = 0.0, 0, None
    for number, line in enumerate(lines, start=2):
        fields = line.rstrip("\r\n").split("|")
        if fields == [""]:
            continue
        if len(fields) != N_COLUMNS:
            raise InputError(f"dataset '{dataset}': {where}, line {number}: expected "
                             f"{N_COLUMNS} '|'-separated columns, found {len(fields)}")
        try:
            last = [float(v) for v in fields[N_FEATURES:N_FEATURES + 5]]
            iculos = int(fields[-2])
            if iculos > MAX_HOURS:
                break
            rows.extend([[math.nan] * N_FEATURES for _ in range(prev_iculos + 1, iculos)])
            prev_iculos = iculos
            rows.append([float(v) for v in fields[:N_FEATURES]])
            label = max(label, float(fields[-1]))
        except ValueError as exc:
            raise InputError(f"dataset '{dataset}': {where}, line {number}: {exc}") from None
    if last is None:
        raise InputError(f"dataset '{dataset}': {where} has no data rows (a zero-length stay)")
    age, gender, unit1, unit2, adm = last
    static = [age, gender] + [0.0 if math.isnan(v) else v for v in (unit1, unit2, adm)]
    if flags:
        static += [float(not math.isnan(unit1)), float(not math.isnan(unit2))]
    return Stay(rows, static, label) if len(rows) >= MIN_ROWS else None


def psv_members(archive: Path, dataset: str) -> list[tuple[str, str]]:
    """``(file name, member path)`` of every ``.psv`` file in the zip ``archive``."""
    try:
        with zipfile.ZipFile(archive) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputError(f"dataset '{dataset}': {archive} is not a readable zip archive "
                         f"({exc})") from None
    return [(PurePosixPath(n).name, n) for n in names if n.endswith(".psv")]


def read_stays(archives: list[Path], dataset: str, flags: bool,
               limit: int | None = None) -> Iterator[tuple[str, Stay]]:
    """``(file name, stay)`` of the kept stays of all ``archives``, in file-name order (the
    original code's directory order is not reproducible); ``limit`` stops after that many
    files."""
    members = sorted((name, path, archive) for archive in archives
                     for name, path in psv_members(archive, dataset))
    names = [m[0] for m in members]
    if len(set(names)) != len(names):
        raise InputError(f"dataset '{dataset}': a .psv file name occurs twice in "
                         f"{', '.join(map(str, archives))}")
    opened: dict[Path, zipfile.ZipFile] = {}
    try:
        for name, path, archive in members[:limit]:
            if archive not in opened:
                opened[archive] = zipfile.ZipFile(archive)
            zf = opened[archive]
            text = zf.read(path).decode("utf-8", errors="replace")
            stay = read_stay(text.splitlines(), f"{archive}:{path}", dataset, flags)
            if stay is not None:
                yield name, stay
    finally:
        for zf in opened.values():
            zf.close()
