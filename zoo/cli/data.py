"""``zoo data``: list dataset records, show one, fetch its files (cache, mirror or download)."""

from __future__ import annotations

import argparse

from ..data.fetch import data_home, fetch, locate, mirror_root
from ..data.records import all_records, record


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``data list | info NAME | fetch NAME [--mirror DIR]`` to the ``zoo`` parser."""
    data = sub.add_parser("data", help="dataset sources: list, inspect, fetch")
    verbs = data.add_subparsers(dest="data_command", metavar="SUBCOMMAND", required=True)
    verbs.add_parser("list", help="datasets that read files, and whether they are available"
                     ).set_defaults(func=cmd_list)
    info = verbs.add_parser("info", help="source, licence, files and checksums of a dataset")
    info.add_argument("name")
    info.set_defaults(func=cmd_info)
    get = verbs.add_parser("fetch", help="make a dataset's files available locally")
    get.add_argument("name")
    get.add_argument("--mirror", metavar="DIR",
                     help="folder laid out like the mirror (default: $ZOO_DATA_MIRROR)")
    get.add_argument("--quiet", action="store_true", help="no progress bar")
    get.set_defaults(func=cmd_fetch)


def _status(rec, mirror=None) -> str:
    where = [locate(rec, f.name, mirror=mirror) for f in rec.files]
    if all(w and w[1] == "cache" for w in where):
        return "cached"
    if all(where):
        return "cached/mirror" if any(w[1] == "cache" for w in where) else "mirror"
    return "missing" if not any(where) else f"{sum(map(bool, where))}/{len(where)} files"


def cmd_list(args: argparse.Namespace) -> int:
    records = all_records()
    width = max((len(n) for n in records), default=4)
    for name, rec in records.items():
        partial = " (partial in mirror)" if rec.partial_in_mirror else ""
        print(f"{name:<{width}}  {_status(rec):<13}  {rec.title}{partial}")
    print(f"\ncache: {data_home()}   mirror: {mirror_root() or '(none; set ZOO_DATA_MIRROR)'}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    rec = record(args.name)
    print(f"{rec.name}: {rec.title}\n  homepage: {rec.homepage}\n  licence:  {rec.licence}\n"
          f"  citation: {rec.citation}\n  mirror/cache folder: {rec.mirror_subdir}/")
    if rec.partial_in_mirror:
        print(f"  partial in mirror: {rec.partial_in_mirror}")
    if rec.notes:
        print(f"  notes: {rec.notes}")
    for f in rec.files:
        found = locate(rec, f.name)
        size = f"{f.size:,} bytes" if f.size is not None else "size not known"
        print(f"  - {f.name} ({size}; {'in ' + found[1] if found else 'not available locally'})")
        print(f"      sha256: {f.sha256 or 'not known (the file is accepted unverified)'}")
        for url in f.urls:
            print(f"      url: {url}" + (f"  [member {f.member}]" if f.member else ""))
        if not f.urls:
            print("      url: none (mirror only)")
        if f.note:
            print(f"      note: {f.note}")
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    rec = record(args.name)
    for f in rec.files:
        path = fetch(rec, f.name, mirror=args.mirror, progress=not args.quiet)
        print(path)
    return 0
