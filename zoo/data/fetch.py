"""Obtain a dataset file: from the cache, a mirror folder, or the official URLs.

Lookup order for ``record``'s file ``name``:

1. the cache, ``$ZOO_DATA_HOME/<mirror_subdir>/<name>`` (default home: ``$XDG_CACHE_HOME/nde-zoo``
   or ``~/.cache/nde-zoo``); a file whose record gives its sha256 enters it verified, with a
   stamp ``.<name>.verified`` of its sha256, size and mtime. Such a cached file whose size or
   mtime differ from its stamp (or that has none: put there by hand, or changed since) is hashed
   again; one that does not match is moved aside to ``<name>.bad`` and fetched again from 2 or
   3. A file without a known sha256 is accepted as it is;
2. a mirror folder (the ``mirror`` argument, else ``$ZOO_DATA_MIRROR``) with the same
   ``<mirror_subdir>/<name>`` layout; its copy is used in place and verified (once per process);
3. the official URLs, tried in order until one gives the file: the download streams into
   ``<name>.part`` (``<name>.archive.part`` for a file inside an archive) with a progress bar,
   resumes an unfinished ``.part`` from the URL it came from with an HTTP ``Range`` request, is
   checked against the record's sha256 (a mismatch moves it aside to ``<name>.bad``) and is
   renamed into place. An archive that lacks the file passes to the next URL; the other files
   of the record (of the same part) that the archive holds are taken from it too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from tqdm import tqdm

from ..errors import InputError, ZooError
from ..filemodes import give_normal_mode
from .records import DatasetRecord, RemoteFile

CHUNK = 1 << 20
TIMEOUT_S = 30
_digests: dict[tuple[str, int, int], str] = {}


def data_home(home: str | os.PathLike | None = None) -> Path:
    """The cache root: ``home``, else ``$ZOO_DATA_HOME``, else the user cache folder."""
    if home is not None:
        return Path(home)
    if os.environ.get("ZOO_DATA_HOME"):
        return Path(os.environ["ZOO_DATA_HOME"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "nde-zoo"


def mirror_root(mirror: str | os.PathLike | None = None) -> Path | None:
    """The mirror folder: ``mirror``, else ``$ZOO_DATA_MIRROR``, else none."""
    if mirror is not None:
        return Path(mirror)
    env = os.environ.get("ZOO_DATA_MIRROR")
    return Path(env) if env else None


def sha256_of(path: str | os.PathLike) -> str:
    """Hex sha256 of a file, remembered in this process while its size and mtime are unchanged."""
    stat = os.stat(path)
    key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _digests:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(CHUNK):
                digest.update(chunk)
        _digests[key] = digest.hexdigest()
    return _digests[key]


def locate(record: DatasetRecord, name: str, *, mirror=None, home=None) -> tuple[Path, str] | None:
    """``(path, "cache" | "mirror")`` where ``name`` is available without downloading, else None."""
    rf = record.file(name)
    cached = data_home(home) / record.mirror_subdir / rf.name
    if cached.is_file():
        return cached, "cache"
    root = mirror_root(mirror)
    if root is not None and (root / record.mirror_subdir / rf.name).is_file():
        return root / record.mirror_subdir / rf.name, "mirror"
    return None


def best_located(record: DatasetRecord, files=None, *, mirror=None, home=None
                 ) -> RemoteFile | None:
    """The first of ``files`` (default: the record's, best first) that is available without
    downloading, or None."""
    return next((f for f in (files or record.files)
                 if locate(record, f.name, mirror=mirror, home=home) is not None), None)


def is_mirror_copy(path: Path, mirror=None) -> bool:
    """Whether ``path`` (as returned by :func:`fetch`) lies in the mirror folder."""
    root = mirror_root(mirror)
    return root is not None and Path(path).resolve().is_relative_to(root.resolve())


def partial_note(record: DatasetRecord, paths, mirror=None) -> str | None:
    """What the mirror's copies among ``paths`` lack (their files' ``partial_in_mirror``, joined),
    or None when none of them is an incomplete mirror copy."""
    by_name = {f.name: f for f in record.files}
    notes = [by_name[Path(p).name].partial_in_mirror for p in paths
             if Path(p).name in by_name and is_mirror_copy(p, mirror)]
    return "; ".join(dict.fromkeys(n for n in notes if n)) or None


def fetch(record: DatasetRecord, file_name: str, *, mirror=None, home=None,
          progress: bool = True) -> Path:
    """A verified local path of ``record``'s file ``file_name`` (see the module docstring)."""
    rf = record.file(file_name)
    found = locate(record, file_name, mirror=mirror, home=home)
    if found is not None and found[1] == "cache" and not _cached_copy_holds(record, rf, found[0]):
        found = locate(record, file_name, mirror=mirror, home=home)
    if found is not None:
        path, where = found
        if where == "mirror":
            _verify_mirror_copy(record, rf, path)
        return path
    target = data_home(home) / record.mirror_subdir / rf.name
    target.parent.mkdir(parents=True, exist_ok=True)
    _download(record, rf, target, mirror_root(mirror), progress)
    return target


def cache_from_mirror(record: DatasetRecord, file_name: str, mirror, *, home=None) -> Path:
    """``zoo data fetch NAME --mirror DIR``: the cached file, copied there from ``mirror`` (and
    verified) if it is not cached yet, so later runs find it without the mirror. A record whose
    mirror copy is partial keeps it in place (its runs must keep saying so); the mirror path is
    returned then. The copy is atomic, with a plain file's mode (0644 under umask 022)."""
    rf = record.file(file_name)
    found = locate(record, file_name, mirror=mirror, home=home)
    if found is None:
        raise InputError(f"dataset '{record.name}': {rf.name} is neither in the mirror "
                         f"({Path(mirror) / record.mirror_subdir / rf.name}) nor in the cache "
                         f"({data_home(home) / record.mirror_subdir / rf.name})")
    path, where = found
    if where == "cache" and _cached_copy_holds(record, rf, path):
        return path
    if where == "cache":
        return cache_from_mirror(record, file_name, mirror, home=home)
    _verify_mirror_copy(record, rf, path)
    if rf.partial_in_mirror:
        return path
    target = data_home(home) / record.mirror_subdir / rf.name
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{rf.name}.", suffix=".part")
    os.close(fd)
    try:
        shutil.copyfile(path, tmp)
        give_normal_mode(tmp)
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)
    _stamp(rf, target)
    return target


def _stamp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.verified")


def _stamp_text(rf: RemoteFile, path: Path) -> str:
    stat = os.stat(path)
    return f"{rf.sha256} {stat.st_size} {stat.st_mtime_ns}\n"


def _stamp(rf: RemoteFile, path: Path) -> None:
    """Record that the cached ``path`` matched ``rf.sha256`` at its present size and mtime (not
    written into a cache this process may only read)."""
    if rf.sha256 is None:
        return
    stamp = _stamp_path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=stamp.name, suffix=".part")
        with os.fdopen(fd, "w") as out:
            out.write(_stamp_text(rf, path))
        give_normal_mode(tmp)
        os.replace(tmp, stamp)
    except OSError:
        pass


def _cached_copy_holds(record: DatasetRecord, rf: RemoteFile, path: Path) -> bool:
    """Whether the cached ``path`` is ``rf``'s file: its stamp says so, or its sha256 does (then
    stamped). A file that fails is moved aside to ``<name>.bad``, with a warning."""
    if rf.sha256 is None:
        return True
    try:
        if _stamp_path(path).read_text() == _stamp_text(rf, path):
            return True
    except OSError:
        pass
    got = sha256_of(path)
    if got == rf.sha256:
        _stamp(rf, path)
        return True
    bad = path.with_name(rf.name + ".bad")
    os.replace(path, bad)
    _stamp_path(path).unlink(missing_ok=True)
    print(f"WARNING: dataset '{record.name}': the cached {path} has sha256 {got}, expected "
          f"{rf.sha256}; moved aside to {bad}, fetching it again", file=sys.stderr)
    return False


def _verify_mirror_copy(record: DatasetRecord, rf: RemoteFile, path: Path) -> None:
    if rf.sha256 is not None and (got := sha256_of(path)) != rf.sha256:
        raise InputError(f"dataset '{record.name}': the mirror copy {path} of {rf.name} has "
                         f"sha256 {got}, expected {rf.sha256}; replace it with the official file")


class _Unusable(Exception):
    """A download that arrived but does not hold the file (an archive without the member)."""


def _download(record: DatasetRecord, rf: RemoteFile, target: Path, mirror: Path | None,
              progress: bool) -> None:
    """Try the URLs in order (the one an unfinished ``.part`` came from first) until one gives
    the file; a URL that fails, or whose archive lacks the member, passes to the next. The
    archive's other members that the record needs (of the same part) are taken from the same
    download, so one archive is downloaded once."""
    raw = target.with_name(rf.name + (".archive" if rf.member else ""))
    part = raw.with_name(raw.name + ".part")
    source = _source_path(part)
    begun = source.read_text() if source.is_file() and part.exists() else None
    errors = []
    for url in sorted(rf.urls, key=lambda u: u != begun):
        try:
            _stream(url, part, rf.name, progress)
            got = {rf.name: part}
            if rf.member:
                got = _extract([rf, *_siblings(record, rf, url, target.parent)], part,
                               target.parent)
                part.unlink()
            break
        except (urllib.error.URLError, OSError, ValueError, _Unusable) as exc:
            errors.append(f"{url}: {getattr(exc, 'reason', None) or exc}")
            if not part.exists():  # nothing left to resume (an unusable archive moved aside)
                source.unlink(missing_ok=True)
    else:
        where = (f"{mirror / record.mirror_subdir / rf.name} is not there either" if mirror
                 else "no mirror folder is set")
        tried = "; ".join(errors) or "the record lists no URL for it"
        raise ZooError(
            f"dataset '{record.name}': could not download {rf.name} ({tried}), and {where}. "
            f"Without internet, set ZOO_DATA_MIRROR to a folder holding "
            f"{record.mirror_subdir}/{rf.name}, or copy the files into the cache with "
            f"`zoo data fetch {record.name}{' ' + rf.part if rf.part else ''} --mirror DIR`")
    source.unlink(missing_ok=True)
    wanted = got.pop(rf.name)
    for name, path in got.items():
        try:
            _accept(record, record.file(name), path, target.with_name(name))
        except ZooError as exc:  # not the file asked for: fetched again when it is asked for
            print(f"WARNING: {exc}", file=sys.stderr)
    _accept(record, rf, wanted, target)


def _siblings(record: DatasetRecord, rf: RemoteFile, url: str, folder: Path) -> list[RemoteFile]:
    """The record's other files of ``rf``'s part that the archive at ``url`` may hold and that
    are not in the cache ``folder`` yet."""
    return [f for f in record.files if f is not rf and f.member and url in f.urls
            and f.part == rf.part and not (folder / f.name).is_file()]


def _source_path(part: Path) -> Path:
    """Where the URL that an unfinished ``part`` streams from is written."""
    return part.with_name(part.name + ".url")


def _stream(url: str, part: Path, label: str, progress: bool) -> None:
    """Download ``url`` into ``part``, resuming from its current size when the server allows
    and ``part`` came from the same URL (two hosts' bytes are never spliced)."""
    source = _source_path(part)
    if part.exists() and (not source.is_file() or source.read_text() != url):
        part.unlink()
    source.write_text(url)
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": "nde-zoo"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    try:
        response = urllib.request.urlopen(request, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as exc:
        if exc.code != 416 or not have:
            raise
        part.unlink()  # the range is past the end: the partial file is not this one; start over
        return _stream(url, part, label, progress)
    with response:
        resumed = have and response.status == 206
        length = response.headers.get("Content-Length")
        total = (int(length) + (have if resumed else 0)) if length else None
        with open(part, "ab" if resumed else "wb") as out, tqdm(
                total=total, initial=have if resumed else 0, unit="B", unit_scale=True,
                desc=label, disable=not progress, file=sys.stderr) as bar:
            while chunk := response.read(CHUNK):
                out.write(chunk)
                bar.update(len(chunk))
    if total is not None and part.stat().st_size != total:
        raise OSError(f"connection closed after {part.stat().st_size} of {total} bytes")


def _member_matches(member: str, wanted: str) -> bool:
    return member == wanted or member.endswith("/" + wanted)


@contextlib.contextmanager
def _opened(archive: Path):
    """``(member names, open(name))`` of a zip or tar archive."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            yield zf.namelist(), zf.open
    else:
        with tarfile.open(archive) as tf:
            yield [m.name for m in tf.getmembers() if m.isfile()], tf.extractfile


def _extract(files: list[RemoteFile], archive: Path, folder: Path) -> dict[str, Path]:
    """Copy the ``member`` of each of ``files`` out of the downloaded zip/tar ``archive`` into
    ``folder/<name>.extract`` (returned by name). Those the archive lacks are left out, except
    the first (the file asked for): an archive that is unreadable or lacks it is moved aside to
    ``<name>.archive.bad``."""
    out: dict[str, Path] = {}
    try:
        with _opened(archive) as (names, open_member):
            for f in files:
                found = next((n for n in names if _member_matches(n, f.member)), None)
                if found is None and f is files[0]:
                    raise KeyError("no such member")
                if found is not None:
                    out[f.name] = folder / f"{f.name}.extract"
                    with open_member(found) as src, open(out[f.name], "wb") as dst:
                        shutil.copyfileobj(src, dst, CHUNK)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, KeyError) as exc:
        bad = archive.with_name(archive.name.removesuffix(".part") + ".bad")
        os.replace(archive, bad)
        for path in out.values():
            path.unlink(missing_ok=True)
        raise _Unusable(f"the archive downloaded for {files[0].name} is unreadable or lacks it "
                        f"({exc}); moved aside to {bad}") from None
    return out


def _accept(record: DatasetRecord, rf: RemoteFile, part: Path, target: Path) -> None:
    """Verify ``part`` and move it atomically to ``target``; a bad file goes to ``<name>.bad``."""
    if rf.sha256 is not None:
        got = sha256_of(part)
        if got != rf.sha256:
            bad = target.with_name(rf.name + ".bad")
            os.replace(part, bad)
            raise ZooError(f"dataset '{record.name}': {rf.name} failed verification: sha256 "
                           f"expected {rf.sha256}, got {got}; the file was moved aside to {bad}")
    os.replace(part, target)
    _stamp(rf, target)
