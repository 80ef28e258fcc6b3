"""Files a command writes: checked before any work (:func:`check_output_file`), so that a bad
path is one message at the start instead of a failure after training or predicting, and
written atomically (:func:`atomic_write`), so that an interrupted command never leaves a
partial file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .errors import InputError
from .filemodes import give_normal_mode


def check_output_file(out: Path, option: str, inputs: tuple[Path, ...] = ()) -> None:
    """``out`` can be written: its folder exists and is writable, it is not a folder, and it is
    none of the ``inputs`` the command reads (writing it would destroy them)."""
    folder = out.resolve().parent
    if out.is_dir():
        raise InputError(f"{option} {out}: is a folder; name a file")
    try:  # a real write: permissions alone do not tell (/proc refuses new files even to root)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        raise InputError(f"{option} {out}: {folder} is not a writable folder") from None
    if out.exists() and not os.access(out, os.W_OK):
        raise InputError(f"{option} {out}: the file is not writable")
    for given in inputs:
        if Path(given).exists() and out.exists() and out.samefile(given):
            raise InputError(f"{option} {out}: is the input {given}; writing it would destroy "
                             f"the data: name another file")


def atomic_write(path: Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then move it into place with the
    mode a plain ``open()`` gives; the temporary file is removed if anything fails."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        write(Path(tmp))
        give_normal_mode(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
