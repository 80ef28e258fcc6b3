"""``zoo report``: reproduced results beside the published ones (text, Markdown, CSV, PNG).

``--export`` writes the per-seed records of the runs that count into the repository instead;
``--from-records`` regenerates the results section of a page from those records alone.
"""

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
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--export", type=Path, metavar="DIR",
                      help="instead of writing reports, merge per-seed records of the runs that "
                           "count into DIR (e.g. reproductions/results), one JSON Lines file "
                           "per entry")
    mode.add_argument("--runs", metavar="EXPERIMENT|RUN_ID",
                      help="instead of a paper's table, summarise a group of runs per "
                           "configuration: an experiment's finished runs, or the trials of a "
                           "search (the runs under its parent run)")
    mode.add_argument("--from-records", type=Path, metavar="DIR",
                      help="build the results section from the records in DIR alone (no "
                           "MLflow): print it, or rewrite it in --page")
    p.add_argument("--timings", type=Path, metavar="DIR",
                   help="with --export: also record the runs that only shortened the recipe "
                        "(-o train.epochs=N) in DIR, for their cost per epoch; with "
                        "--from-records: add the cost table from DIR (e.g. reproductions/timings)")
    p.add_argument("--page", type=Path, help="with --from-records: the page whose section "
                                             "between the results markers is replaced, e.g. "
                                             "docs/reproduction.md")
    p.set_defaults(func=cmd_report)


def _writable(folder: Path, option: str) -> Path:
    """``folder``, created if need be; an :class:`InputError` if it cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{option} {folder}: cannot create it ({exc.strerror})") from None
    if not os.access(folder, os.W_OK):
        raise InputError(f"{option} {folder} is not writable")
    return folder


def _from_records(args: argparse.Namespace, registry) -> int:
    """Rebuild the results section from the records alone (and the recipes' epochs for the cost
    table): print it, or rewrite ``--page``."""
    from ..report import page
    from ..outputs import atomic_write
    from ..report.recipes import recipes_of
    from ..report.records import load

    if args.table:
        raise InputError("--from-records rebuilds the whole section: give no PAPER/TABLE")
    root = args.from_records
    if not root.is_dir():
        raise InputError(f"--from-records {root}: no such folder")
    records = load(root)
    timings = recipes = None
    if args.timings is not None:
        if not args.timings.is_dir():
            raise InputError(f"--timings {args.timings}: no such folder")
        timings = load(args.timings, per_device=True)
        recipes = recipes_of(records.keys() | timings.keys(), args.specs)
    if args.page is None:
        print(page.section(registry, records, root.as_posix(), timings, recipes))
        return 0
    try:
        old = args.page.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"--page {args.page}: {exc.strerror}") from None
    try:
        new = page.replace(old, page.section(registry, records, page.link(args.page, root),
                                             timings, recipes))
    except InputError as exc:
        raise InputError(f"--page {args.page}: {exc}") from None
    for path in page.write_plots(registry, records, root):
        print(f"wrote {path}")
    if new == old:
        print(f"{args.page}: results section unchanged")
    else:
        atomic_write(args.page, lambda p: p.write_text(new, encoding="utf-8"))
        print(f"{args.page}: results section rewritten from "
              f"{sum(map(len, records.values()))} records of {len(records)} recipes and "
              "variants")
    return 0


def _group(args: argparse.Namespace) -> int:
    """``--runs``: the group's configurations, each as mean ± std over its runs."""
    from ..report.collect import open_store
    from ..report.groups import as_text, groups, runs_of
    from ..tracking.mlflow_run import open_client, resolve_uri

    if args.table or args.timings is not None:
        raise InputError("--runs summarises the group it names: give no PAPER/TABLE or --timings")
    uri = resolve_uri(args.tracking_uri, None)
    open_store(uri)
    title, runs = runs_of(open_client(uri), args.runs)
    if not runs:
        raise InputError(f"--runs {args.runs}: no finished run in the group")
    print(as_text(title, groups(runs)))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from ..report.collect import collect, open_store, unfinished
    from ..report.export import export
    from ..report.recipes import load_recipes
    from ..report.render import as_text, write_files
    from ..report.table import compare
    from ..results.published import load_registry
    from ..tracking.mlflow_run import resolve_uri

    if args.page is not None and args.from_records is None:
        raise InputError("--page goes with --from-records")
    if args.timings is not None and args.export is None and args.from_records is None:
        raise InputError("--timings goes with --export or --from-records")
    if args.runs is not None:
        return _group(args)
    registry = load_registry(args.registry)
    if args.from_records is not None:
        return _from_records(args, registry)
    entries = registry.select(args.table)
    uri = resolve_uri(args.tracking_uri, None)
    open_store(uri)
    recipes = load_recipes((e.id for e in entries), args.specs)
    if args.export is not None:
        _writable(args.export, "--export")
        if args.timings is not None:
            _writable(args.timings, "--timings")
        print("\n".join(export(uri, entries, recipes, args.export, args.timings)))
        return 0
    folder = _writable(args.output_dir, "--output-dir")
    rows = compare(entries, collect(uri, entries, recipes), recipes,
                   unfinished(uri, entries, recipes))
    for key in dict.fromkeys(r.entry.key for r in rows):
        table_rows = [r for r in rows if r.entry.key == key]
        title = f"{key}: {registry.captions[key]}"
        print(as_text(table_rows, title))
        written = write_files(table_rows, title, folder, key.replace("/", "_"))
        print("wrote " + ", ".join(map(str, written)) + "\n")
    return 0
