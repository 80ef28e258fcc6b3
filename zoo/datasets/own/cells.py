"""Cells of a user's file as numbers or label texts, and class lists.

A missing cell is empty, NaN or ``None``. Labels become text: ``1``, ``1.0`` and ``"1"`` are
all the class ``"1"``; strings are stripped.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from ...errors import InputError
from ...series import IGNORE_LABEL as IGNORE
from ...suggest import did_you_mean


def label_text(value) -> str:
    """One cell as a label: '' when missing, integral numbers without a decimal point."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isfinite(number) and number == int(number) and text.lower() not in ("nan", "inf"):
        return str(int(number))
    return text


def label_texts(cells) -> np.ndarray:
    """:func:`label_text` of every cell (an object array of str)."""
    arr = np.asarray(cells)
    if arr.dtype.kind in "iu":
        return arr.astype(str).astype(object)
    text = pd.Series(arr.ravel(), dtype=object).map(_plain)
    number = pd.to_numeric(text.where(text != ""), errors="coerce")
    integral = (np.isfinite(number) & (number == np.floor(number))).to_numpy()
    out = text.to_numpy(dtype=object, copy=True)  # an empty one is read-only otherwise
    out[integral] = number[integral].astype(np.int64).astype(str).to_numpy(dtype=object)
    out[text.str.lower().isin(["nan"]).to_numpy()] = ""
    return out.reshape(arr.shape)


def _plain(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


#: the largest magnitude a value may have: the models compute in float32 at least
LARGEST = float(np.finfo(np.float32).max)


def numbers(cells) -> tuple[np.ndarray, int | None]:
    """Cells as float64 (missing: NaN) and the index of the first cell that is not a number
    float32 can hold (infinite, or beyond ±3.4e38)."""
    arr = np.asarray(cells)
    if arr.dtype.kind in "iufb":
        values = arr.astype(np.float64)
        bad = np.isinf(values)
    else:
        text = pd.Series(arr.ravel(), dtype=object).map(_plain)
        values = pd.to_numeric(text.where(text != ""), errors="coerce").to_numpy(np.float64)
        bad = (text != "").to_numpy() & ~np.isfinite(values) & \
            ~text.str.lower().isin(["nan"]).to_numpy()
        values = values.reshape(arr.shape)
        bad = bad.reshape(arr.shape)
    with np.errstate(invalid="ignore"):
        bad = bad | (np.abs(values) > LARGEST)
    hit = np.flatnonzero(bad)
    return values, int(hit[0]) if hit.size else None


def shown(cells, index: int) -> str:
    """The cell at flat ``index`` as it appears in the file."""
    return repr(_plain(np.asarray(cells, dtype=object).ravel()[index]))


def derive_classes(labels, source: str) -> list[str]:
    """Sorted distinct labels (numerically when all are numbers)."""
    found = sorted({t for t in np.asarray(labels, dtype=object).ravel() if t != ""})
    if not found:
        raise InputError(f"{source}: no label found (every label cell is empty)")
    try:
        return sorted(found, key=float)
    except ValueError:
        return found


def encode(labels, classes: list[str], where: Callable[[int], str], source: str) -> np.ndarray:
    """Labels (text) as class indices; '' becomes :data:`IGNORE`; others must be classes."""
    labels = np.asarray(labels, dtype=object)
    index = {c: i for i, c in enumerate(classes)}
    codes = np.fromiter((index.get(t, -1) if t != "" else IGNORE for t in labels.ravel()),
                        dtype=np.int64, count=labels.size)
    unknown = np.flatnonzero(codes == -1)
    if unknown.size:
        i = int(unknown[0])
        label = labels.ravel()[i]
        raise InputError(f"{source}: label {label!r} at {where(i)} is not one of the classes "
                         f"{', '.join(classes)} (data.classes){did_you_mean(label, classes)}")
    return codes.reshape(labels.shape)
