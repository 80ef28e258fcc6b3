"""``zoo data``: list dataset records, show one, fetch its files (cache, mirror or download)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data.fetch import (best_located, cache_from_mirror, data_home, fetch, is_mirror_copy,
                          locate, mirror_root)
from ..data.records import all_records, record
from ..errors import InputError, ZooError
from ..suggest import did_you_mean


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``data list | info NAME | fetch NAME [--mirror DIR]`` to the ``zoo`` parser."""
    data = sub.add_parser("data", help="dataset sources: list, inspect, fetch")
    verbs = data.add_subparsers(dest="data_command", metavar="SUBCOMMAND", required=True)
    verbs.add_parser("list", help="datasets that read files, and whether they are available"
                     ).set_defaults(func=cmd_list)
    info = verbs.add_parser("info", help="source, licence, files and checksums of a dataset")
    info.add_argument("name", help="a dataset record (`zoo data list`)")
    info.set_defaults(func=cmd_info)
    get = verbs.add_parser("fetch", help="make a dataset's files available locally")
    get.add_argument("name", help="a dataset record (`zoo data list`)")
    get.add_argument("parts", nargs="*", metavar="PART",
                     help="only these parts of a collection (uea: dataset names such as "
                          "BasicMotions; `zoo data info NAME` lists them)")
    get.add_argument("--mirror", metavar="DIR",
                     help="copy the files into the cache from this folder, laid out like the "
                          "mirror (<DIR>/<folder>/<file>); files it lacks are an error, not "
                          "downloaded (default: $ZOO_DATA_MIRROR, then the official URLs)")
    get.add_argument("--quiet", action="store_true", help="no progress bar")
    get.set_defaults(func=cmd_fetch)


def _status(rec, mirror=None) -> tuple[str, str]:
    """(cached, mirror, cached/mirror or missing; or how many parts of a collection are there)
    and, for alternative files, which one is used."""
    where = {f.name: locate(rec, f.name, mirror=mirror) for f in rec.files}
    if rec.alternatives:
        best = best_located(rec, mirror=mirror)
        return ("missing", "") if best is None else (where[best.name][1], f" ({best.name})")
    if len(rec.parts) > 1:
        whole = [p for p in rec.parts if all(where[f.name] for f in rec.files if f.part == p)]
        return f"{len(whole)}/{len(rec.parts)} parts", ""
    found = [w for w in where.values() if w]
    if len(found) == len(where):
        kinds = {w[1] for w in found}
        return ("cached/mirror" if len(kinds) > 1 else kinds.pop()), ""
    return ("missing" if not found else f"{len(found)}/{len(where)} files"), ""


def cmd_list(args: argparse.Namespace) -> int:
    records = all_records()
    width = max((len(n) for n in records), default=4)
    for name, rec in records.items():
        status, which = _status(rec)
        partial = " (partial in mirror)" if rec.partial_in_mirror else ""
        print(f"{name:<{width}}  {status:<13}  {rec.title}{partial}{which}")
    print(f"\ncache: {data_home()}   mirror: {mirror_root() or '(none; set ZOO_DATA_MIRROR)'}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    rec = record(args.name)
    print(f"{rec.name}: {rec.title}\n  homepage: {rec.homepage}\n  licence:  {rec.licence}\n"
          f"  citation: {rec.citation}\n  mirror/cache folder: {rec.mirror_subdir}/")
    if rec.notes:
        print(f"  notes: {rec.notes}")
    if rec.alternatives:
        print("  files: alternatives, best first (a run needs one of them)")
    if rec.parts:
        print(f"  parts ({len(rec.parts)}; `zoo data fetch {rec.name} PART` fetches one): "
              f"{', '.join(rec.parts)}")
    for f in rec.files:
        found = locate(rec, f.name)
        size = f"{f.size:,} bytes" if f.size is not None else "size not known"
        print(f"  - {f.name} ({size}; {'in ' + found[1] if found else 'not available locally'})")
        print(f"      sha256: {f.sha256 or 'not known (the file is accepted unverified)'}")
        for url in f.urls:
            print(f"      url: {url}" + (f"  [member {f.member}]" if f.member else ""))
        if not f.urls:
            print("      url: none (mirror only)")
        if f.part:
            print(f"      part: {f.part}")
        if f.partial_in_mirror:
            print(f"      partial in mirror: {f.partial_in_mirror}")
        if f.note:
            print(f"      note: {f.note}")
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    rec = record(args.name)
    files = _chosen(rec, args.parts)
    if args.mirror is not None:
        files = _check_mirror(rec, files, Path(args.mirror))
        for f in files:
            path = cache_from_mirror(rec, f.name, args.mirror)
            print(path if not is_mirror_copy(path, args.mirror) else
                  f"{path}  (partial copy, used in place: set ZOO_DATA_MIRROR={args.mirror})")
        return 0
    if rec.alternatives:
        print(_fetch_one_of(rec, files, not args.quiet))
        return 0
    for f in files:
        print(fetch(rec, f.name, progress=not args.quiet))
    return 0


def _chosen(rec, parts: list[str]) -> list:
    """The files of the named ``parts`` (all files when none is named)."""
    if not parts:
        return list(rec.files)
    if not rec.parts:
        raise InputError(f"dataset '{rec.name}' is not a collection of parts: give no PART "
                         f"(`zoo data fetch {rec.name}`)")
    for part in parts:
        if part not in rec.parts:
            raise InputError(f"dataset '{rec.name}' has no part '{part}'"
                             f"{did_you_mean(part, rec.parts)}; parts: {', '.join(rec.parts)}")
    return [f for f in rec.files if f.part in parts]


def _fetch_one_of(rec, files: list, progress: bool) -> Path:
    """Alternative files: the best one that is cached or in the mirror, else the first that
    downloads."""
    best = best_located(rec, files)
    if best is not None:
        return fetch(rec, best.name, progress=progress)
    errors = []
    for f in files:
        if not f.urls:
            continue
        try:
            return fetch(rec, f.name, progress=progress)
        except ZooError as exc:
            errors.append(str(exc))
    raise ZooError(" | ".join(errors) or f"dataset '{rec.name}': none of its files has a URL")


def _check_mirror(rec, files: list, mirror: Path) -> list:
    """With ``--mirror DIR``: the files to take, each cached or in DIR (alternatives: the best
    one there); else one message saying what was looked for where, before anything is written
    (no download is tried)."""
    if not mirror.is_dir():
        raise InputError(f"zoo data fetch {rec.name} --mirror {mirror}: "
                         f"{'no such folder' if not mirror.exists() else 'not a folder'}")
    if rec.alternatives and (best := best_located(rec, files, mirror=mirror)) is not None:
        return [best]
    missing = [f.name for f in files if locate(rec, f.name, mirror=mirror) is None]
    if missing:
        looked = ", ".join(str(mirror / rec.mirror_subdir / name) for name in missing[:4])
        looked += f" and {len(missing) - 4} more" if len(missing) > 4 else ""
        how = ("every one of its alternative files:" if rec.alternatives else
               f"{len(missing)} of the {len(files)} file(s) asked for:")
        hint = (f"; or name the parts you need (`zoo data fetch {rec.name} PART ... --mirror "
                f"DIR`; parts: `zoo data info {rec.name}`)" if rec.parts and len(missing) > 1
                else "")
        raise InputError(
            f"dataset '{rec.name}': the mirror {mirror} lacks {how} looked for {looked} (and "
            f"in the cache {data_home() / rec.mirror_subdir}); a mirror keeps each file under "
            f"<mirror>/{rec.mirror_subdir}/ (see `zoo data info {rec.name}`); leave out "
            f"--mirror to download{hint}")
    return files
