"""``zoo report``: reproduced results beside the published ones (text, Markdown, CSV, PNG)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="compare tracked runs with the published numbers")
    p.add_argument("table", nargs="?", metavar="PAPER/TABLE",
                   help="e.g. irie2022/table1, or a paper (default: every table)")
    p.add_argument("--tracking-uri", help="MLflow store to read (default: MLFLOW_TRACKING_URI "
                                          "or sqlite:///mlruns.db here)")
    p.add_argument("--output-dir", type=Path, default=Path("reports"),
                   help="folder for PAPER_TABLE.md/.csv/.png (default: reports)")
    p.add_argument("--registry", type=Path, help="registry folder (default: the shipped one)")
    p.add_argument("--specs", type=Path, help="folder of the specs whose runs count, the recipe "
                                              "of each entry (default: the shipped specs/)")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from ..report.collect import collect, open_store
    from ..report.recipes import load_recipes
    from ..report.render import as_text, write_files
    from ..report.table import compare
    from ..results.registry import load_registry
    from ..tracking.mlflow_run import resolve_uri

    registry = load_registry(args.registry)
    entries = registry.select(args.table)
    uri = resolve_uri(args.tracking_uri, None)
    open_store(uri)
    folder = args.output_dir
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--output-dir {folder}: cannot create it ({exc.strerror})") from None
    if not os.access(folder, os.W_OK):
        raise InputError(f"--output-dir {folder} is not writable")
    recipes = load_recipes((e.id for e in entries), args.specs)
    rows = compare(entries, collect(uri, entries, recipes), recipes)
    for key in dict.fromkeys(r.entry.key for r in rows):
        table_rows = [r for r in rows if r.entry.key == key]
        title = f"{key}: {registry.captions[key]}"
        print(as_text(table_rows, title))
        written = write_files(table_rows, title, folder, key.replace("/", "_"))
        print("wrote " + ", ".join(map(str, written)) + "\n")
    return 0
