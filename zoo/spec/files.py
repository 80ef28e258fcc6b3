"""Finding spec files: a file, or every ``*.yaml`` below a folder except shared bases."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError


def spec_files(target: str | Path) -> list[Path]:
    """A spec file, or every ``*.yaml`` under a folder except shared bases: files and folders
    whose name starts with ``_`` (e.g. ``_base/``) hold settings that specs ``extends:``."""
    path = Path(target)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(f"{target}: no such spec file or folder")
    found = sorted(p for p in path.rglob("*.yaml")
                   if not any(part.startswith("_") for part in p.relative_to(path).parts))
    if not found:
        raise InputError(f"{target}: no spec files (*.yaml) in this folder")
    return found
