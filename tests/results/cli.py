"""Run the ``zoo`` command in-process with the ``sweep`` and ``report`` sub-commands present."""

from __future__ import annotations

import argparse

from zoo.cli import main as cli_main
from zoo.cli import report, sweep


def _parser() -> argparse.ArgumentParser:
    parser = _build_parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for module in (sweep, report):
        name = module.__name__.rsplit(".", 1)[-1]
        if name not in sub.choices:
            module.register(sub)
    return parser


_build_parser = cli_main.build_parser


def zoo(argv: list[str], monkeypatch) -> int:
    """Exit code of ``zoo ARGV`` (output goes to the captured stdout/stderr)."""
    monkeypatch.setattr(cli_main, "build_parser", _parser)
    return cli_main.main([str(a) for a in argv])
