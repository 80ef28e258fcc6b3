"""Shared wording of the UCI records (the checksums of the mirror copies are not official)."""

from __future__ import annotations

UCI_LICENCE = "CC BY 4.0 (UCI Machine Learning Repository)"
LEGACY = "https://archive.ics.uci.edu/ml/machine-learning-databases/"


def copy_note(sha256: str) -> str:
    """Checksum note for a file whose only known copy could not be compared with UCI's."""
    return (f"UCI publishes no checksum; a public copy (used as the local mirror) has sha256 "
            f"{sha256}, but its byte-identity with the UCI file could not be checked")
