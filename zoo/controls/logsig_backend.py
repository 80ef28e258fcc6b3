"""Log-signatures of a batch of paths in the "words" basis (docs/sources.md#eigenworms-data).

The "words" basis keeps, of the tensor logarithm of the truncated signature, the coefficients of
the Lyndon words (signatory's default ``mode="words"``; pysiglib's ``method=1``). ``pysiglib``
is the default backend; ``signatory`` (what the authors of paper (a) used) is optional and gives
the same numbers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Literal

from ..errors import InputError

if TYPE_CHECKING:
    import torch

Backend = Literal["pysiglib", "signatory"]

#: pysiglib's method number for the Lyndon-word coefficients of the log-signature
_WORDS = 1


def logsignature_channels(channels: int, depth: int) -> int:
    """Dimension of the depth-``depth`` log-signature of a ``channels``-dimensional path."""
    import pysiglib

    return pysiglib.log_sig_length(channels, depth)


def _signatory():
    try:
        return importlib.import_module("signatory")
    except ImportError:
        raise InputError("log-signature backend 'signatory' is not installed (it needs a build "
                         "matching your torch version); use backend: pysiglib, which gives the "
                         "same numbers") from None


def check_backend(backend: Backend) -> None:
    """Raise :class:`InputError` if ``backend`` cannot be used here."""
    if backend == "signatory":
        _signatory()


def logsignature(paths: torch.Tensor, depth: int, backend: Backend = "pysiglib") -> torch.Tensor:
    """Log-signatures (B, D) of the piecewise-linear paths ``paths`` (B, L, C)."""
    if backend == "signatory":
        return _signatory().logsignature(paths, depth, mode="words")
    import pysiglib

    pysiglib.prepare_log_sig(paths.shape[-1], depth, method=_WORDS,
                              device="cuda" if paths.is_cuda else "cpu")
    return pysiglib.log_sig(paths.contiguous(), depth, method=_WORDS, n_jobs=-1)
