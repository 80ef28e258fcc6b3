"""Readers for the UEA/UCR archive file formats: ``.ts`` (sktime/aeon) and ``.arff`` (Weka).

``.ts``: ``@``-tags (``@problemName``, ``@dimensions``, ``@equalLength``, ``@seriesLength``,
``@classLabel true <labels>``, …), then after ``@data`` one case per line: channels separated by
``:``, values by ``,``, the class label last; ``?`` marks a missing value.

``.arff``: a multivariate file has one relational attribute whose value is a quoted string of
channels separated by the two characters ``\\n``, followed by the nominal class attribute; a
univariate file has one numeric attribute per time step, then the class attribute (the archive
also ships multivariate datasets as one such file per dimension, ``<name>Dimension<k>_<split>``,
assembled by :mod:`zoo.data.uea_archive`). ARFF rows have a fixed width, so the archive pads
shorter series with ``?``: trailing time steps missing in every channel are dropped, giving the
series the length its ``.ts`` twin has.

Both return a :class:`UEASeries`; every error is an :class:`InputError` naming the dataset and
file (and the line where it applies).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError

if TYPE_CHECKING:
    import torch


@dataclass
class UEASeries:
    """Cases of one file: ``series[i]`` is (channels, length_i) float64; ``labels[i]`` a string;
    ``class_labels`` the labels the header declares."""

    series: list[np.ndarray]
    labels: list[str]
    class_labels: tuple[str, ...]


def _values(text: str, fail) -> np.ndarray:
    parts = text.strip().split(",")
    if parts == [""]:
        fail("a zero-length series")
    try:
        return np.array([p.strip().replace("?", "nan") for p in parts], dtype=np.float64)
    except ValueError as exc:
        fail(f"not a number ({exc})")


def _case(channels: list[np.ndarray], label: str, classes: tuple[str, ...], fail) -> np.ndarray:
    if label not in classes:
        fail(f"label '{label}' is not one of the declared classes {', '.join(classes)}")
    if len({len(c) for c in channels}) != 1:
        fail(f"channels of unequal length {[len(c) for c in channels]}")
    return np.stack(channels)


def _check_classes(classes, where: str, dataset: str) -> None:
    if not classes:
        raise InputError(f"dataset '{dataset}': {where}: no class labels are declared (not a "
                         f"classification file)")


def _check(cases: list[np.ndarray], classes, where: str, dataset: str) -> None:
    _check_classes(classes, where, dataset)
    if not cases:
        raise InputError(f"dataset '{dataset}': {where}: no data rows")
    if len({c.shape[0] for c in cases}) != 1:
        raise InputError(f"dataset '{dataset}': {where}: cases have different numbers of "
                         f"channels {sorted({c.shape[0] for c in cases})}")


def _lines(path: Path, dataset: str) -> list[str]:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise InputError(f"dataset '{dataset}': cannot read {path} ({exc})") from None


def read_ts(path: Path, dataset: str, header_only: bool = False) -> UEASeries:
    """Parse a ``.ts`` classification file (``header_only``: stop at ``@data``, no cases)."""
    header: dict[str, list[str]] = {}
    cases, labels, in_data = [], [], False
    for number, raw in enumerate(_lines(path, dataset), start=1):
        line = raw.strip()

        def fail(message: str, number=number):
            raise InputError(f"dataset '{dataset}': {path}, line {number}: {message}")

        if not line or line.startswith("#"):
            continue
        if not in_data:
            if not line.startswith("@"):
                fail("expected an @tag or @data before the series")
            tag, *words = line.split()
            tag = tag.lower()
            header[tag] = words
            if tag == "@data":
                in_data = True
                classes = tuple(header.get("@classlabel", ["false"])[1:])
                _check_classes(classes, str(path), dataset)
                if header_only:
                    return UEASeries([], [], classes)
            if tag == "@timestamps" and words[:1] == ["true"]:
                fail("time-stamped .ts files are not supported")
            continue
        *channels, label = line.split(":")
        if not channels:
            fail("expected '<values>:…:<label>'")
        cases.append(_case([_values(c, fail) for c in channels], label.strip(), classes, fail))
        labels.append(label.strip())
    if not in_data:
        raise InputError(f"dataset '{dataset}': {path} has no @data section (not a .ts file)")
    _check(cases, classes, str(path), dataset)
    if "@dimensions" in header and int(header["@dimensions"][0]) != cases[0].shape[0]:
        raise InputError(f"dataset '{dataset}': {path}: @dimensions says "
                         f"{header['@dimensions'][0]}, the cases have {cases[0].shape[0]}")
    return UEASeries(cases, labels, classes)


_NOMINAL = re.compile(r"\{(.*)\}")


def _trim_padding(case: np.ndarray, fail) -> np.ndarray:
    """Drop trailing time steps missing in every channel (the ARFF padding of shorter series)."""
    observed = np.flatnonzero(~np.isnan(case).all(axis=0))
    if not len(observed):
        fail("a series with no observed value")
    return case[:, :observed[-1] + 1]


def read_arff(path: Path, dataset: str, header_only: bool = False) -> UEASeries:
    """Parse a UEA/UCR ``.arff`` classification file (multivariate relational or univariate;
    ``header_only``: stop at ``@data``, no cases)."""
    attributes: list[str] = []
    classes: tuple[str, ...] = ()
    relational = in_relational = in_data = False
    cases, labels = [], []
    for number, raw in enumerate(_lines(path, dataset), start=1):
        line = raw.strip()

        def fail(message: str, number=number):
            raise InputError(f"dataset '{dataset}': {path}, line {number}: {message}")

        if not line or line.startswith("%"):
            continue
        lower = line.lower()
        if not in_data:
            if lower.startswith("@attribute"):
                nominal = _NOMINAL.search(line)
                if "relational" in lower.split()[2:3]:
                    relational = in_relational = True
                elif nominal and not in_relational:
                    classes = tuple(v.strip().strip("'\"") for v in nominal.group(1).split(","))
                elif not in_relational:
                    attributes.append(line)
            elif lower.startswith("@end"):
                in_relational = False
            elif lower.startswith("@data"):
                in_data = True
                if header_only:
                    _check_classes(classes, str(path), dataset)
                    return UEASeries([], [], classes)
            elif not lower.startswith("@relation"):
                fail("expected an @attribute, @relation or @data line")
            continue
        body, _, label = line.rpartition(",")
        label = label.strip().strip("'\"")
        if relational:
            channels = [_values(c, fail) for c in body.strip().strip("'\"").split("\\n")]
        else:
            channels = [_values(body, fail)]
        cases.append(_trim_padding(_case(channels, label, classes, fail), fail))
        labels.append(label)
    if not in_data:
        raise InputError(f"dataset '{dataset}': {path} has no @data section (not an .arff file)")
    _check(cases, classes, str(path), dataset)
    return UEASeries(cases, labels, classes)


def read_uea(path: Path, dataset: str, header_only: bool = False) -> UEASeries:
    """Parse ``path`` by its suffix (``.ts`` or ``.arff``)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".ts":
        return read_ts(path, dataset, header_only)
    if suffix == ".arff":
        return read_arff(path, dataset, header_only)
    raise InputError(f"dataset '{dataset}': {path}: unknown format '{suffix}' (.ts or .arff)")


def padded(series: list[np.ndarray], fill: str = "nan") -> tuple[torch.Tensor, torch.Tensor]:
    """Stack cases as (N, max length, channels) float32 and their lengths (N,).

    ``fill="nan"`` pads with NaN; ``fill="last"`` repeats each channel's last value, as Kidger
    et al.'s UEA code does.
    """
    import torch

    lengths = torch.tensor([s.shape[1] for s in series])
    out = np.full((len(series), int(lengths.max()), series[0].shape[0]), np.nan)
    for i, s in enumerate(series):
        out[i, :s.shape[1]] = s.T
        if fill == "last":
            out[i, s.shape[1]:] = s[:, -1]
    return torch.from_numpy(out).float(), lengths
