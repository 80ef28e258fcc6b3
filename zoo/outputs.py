"""Checks of a file a command will write, made before any work, so that a bad path is one
message at the start instead of a failure after training or predicting."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import InputError


def check_output_file(out: Path, option: str, inputs: tuple[Path, ...] = ()) -> None:
    """``out`` can be written: its folder exists and is writable, it is not a folder, and it is
    none of the ``inputs`` the command reads (writing it would destroy them)."""
    folder = out.resolve().parent
    if out.is_dir():
        raise InputError(f"{option} {out}: is a folder; name a file")
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise InputError(f"{option} {out}: {folder} is not a writable folder")
    if out.exists() and not os.access(out, os.W_OK):
        raise InputError(f"{option} {out}: the file is not writable")
    for given in inputs:
        if Path(given).exists() and out.exists() and out.samefile(given):
            raise InputError(f"{option} {out}: is the input {given}; writing it would destroy "
                             f"the data: name another file")
