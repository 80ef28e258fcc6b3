"""Errors that reach the user as one clear message (no traceback unless ``--debug``)."""

from __future__ import annotations


class ZooError(Exception):
    """A user-facing error. ``exit_code`` 2 means bad input (spec, CLI, plugin); 1 a failed run."""

    exit_code = 1

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InputError(ZooError):
    """Something the user supplied (spec, override, option, file) is wrong."""

    exit_code = 2


class SpecError(InputError):
    """One or more located problems in a spec; each line is
    ``FILE:LINE:COL: dotted.path: message``."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


class PluginError(InputError):
    """A plugin could not be discovered or loaded, or two distributions claim one name."""
