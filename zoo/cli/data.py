"""``zoo data``: list dataset records, show one, fetch its files (cache, mirror or download)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data.fetch import (cache_from_mirror, data_home, fetch, is_mirror_copy, locate,
                          mirror_root)
from ..data.records import all_records, record
from ..errors import InputError


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
                     help="copy the files into the cache from this folder, laid out like the "
                          "mirror (<DIR>/<folder>/<file>); files it lacks are an error, not "
                          "downloaded (default: $ZOO_DATA_MIRROR, then the official URLs)")
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
    if args.mirror is not None:
        _check_mirror(rec, Path(args.mirror))
        for f in rec.files:
            path = cache_from_mirror(rec, f.name, args.mirror)
            print(path if not is_mirror_copy(path, args.mirror) else
                  f"{path}  (partial copy, used in place: set ZOO_DATA_MIRROR={args.mirror})")
        return 0
    for f in rec.files:
        path = fetch(rec, f.name, progress=not args.quiet)
        print(path)
    return 0


def _check_mirror(rec, mirror: Path) -> None:
    """With ``--mirror DIR``, every file must be cached or in DIR: else one message saying what
    was looked for where, before anything is written (no download is tried)."""
    if not mirror.is_dir():
        raise InputError(f"zoo data fetch {rec.name} --mirror {mirror}: "
                         f"{'no such folder' if not mirror.exists() else 'not a folder'}")
    missing = [f.name for f in rec.files if locate(rec, f.name, mirror=mirror) is None]
    if missing:
        looked = ", ".join(str(mirror / rec.mirror_subdir / name) for name in missing)
        raise InputError(
            f"dataset '{rec.name}': the mirror {mirror} lacks {len(missing)} of its "
            f"{len(rec.files)} file(s): looked for {looked} (and in the cache "
            f"{data_home() / rec.mirror_subdir}); a mirror keeps each file under "
            f"<mirror>/{rec.mirror_subdir}/ (see `zoo data info {rec.name}`); leave out "
            f"--mirror to download")
