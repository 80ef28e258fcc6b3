"""Entry point of ``zoo``: argparse sub-commands, one clear message per error, exit codes.

Exit codes: 0 success, 1 a run failed, 2 bad input (spec, option, data, plugin), 130
interrupted (Ctrl-C), 143 terminated (SIGTERM, during ``zoo run``), 141 stdout closed by its
reader (``zoo list | head -1``). ``--debug`` shows the traceback of any error.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from ..errors import ZooError
from ..tracking.deferred_interrupt import exit_code
from ..version import __version__
from . import commands, data, predict, report, search, sweep


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zoo", description="Build, train and compare continuous-time sequence models.")
    parser.add_argument("--version", action="version", version=f"nde-zoo {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.register(sub)
    predict.register(sub)
    data.register(sub)
    sweep.register(sub)
    search.register(sub)
    report.register(sub)
    return parser


def _one_line_warnings(message, category, *_, **__) -> str:
    """A warning as the user sees it: ``warning: <message>``, without Python's source line."""
    return f"warning: {message}\n"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    if not args.debug:
        warnings.formatwarning = _one_line_warnings
    try:
        code = args.func(args) or 0
        sys.stdout.flush()  # a closed stdout fails here, not at exit where it cannot be caught
        return code
    except BrokenPipeError:
        # The reader of stdout is gone (`zoo list | head -1`): stop quietly, with the code of a
        # process ended by SIGPIPE (128 + 13), as cat or grep in its place would; stdout goes to
        # devnull so that flushing it again at exit does not fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except ZooError as exc:
        if args.debug:
            raise
        print(f"error: {exc}" if "\n" not in str(exc) else str(exc), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt as exc:
        if args.debug:
            raise
        code = exit_code(exc)
        print("interrupted" if code == 130 else "terminated", file=sys.stderr)
        return code
    except Exception as exc:  # an unexpected failure: short message, details with --debug
        if args.debug:
            raise
        print(f"error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
              file=sys.stderr)
        return 1
