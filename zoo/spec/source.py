"""Read YAML specs, with the location of every key and value (:mod:`zoo.located_yaml`).

A spec may start with ``extends: other.yaml`` (or a list of files, paths relative to it): the
named files are loaded first and this file's mappings are deep-merged over them (lists and
scalars replace; a component section that sets another ``kind`` than the one it merges over
replaces it, so the options of the old kind are not inherited). Every value keeps the file,
line and column it was written at, so validation errors point at the right file even for
inherited settings. YAML anchors, aliases and merge keys (``<<: *anchor``) are supported.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, SpecError
from ..located_yaml import Key, Source, parse_text
from .schema import PLUGIN_SECTIONS


def read_spec_file(path: str | Path, _seen: tuple[Path, ...] = ()) -> Source:
    """Load ``path`` and everything it ``extends``, merged with locations preserved."""
    path = Path(path)
    shown = str(path)
    if not path.is_file():
        raise InputError(f"{shown}: spec file not found" if not path.exists()
                         else f"{shown}: not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{shown}: cannot read spec: {exc}") from None
    src = parse_text(text, shown)
    parents = src.data.pop("extends", None)
    if parents is None:
        return src
    if isinstance(parents, str):
        parents = [parents]
    if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
        raise SpecError([f"{src.where(('extends',))}: extends: expected a file name or a list "
                         f"of file names"])
    merged = Source({}, {}, {}, src.origin)
    for i, parent in enumerate(parents):
        target = (path.parent / parent).resolve()
        if target in _seen or target == path.resolve():
            raise SpecError([f"{src.where(('extends',))}: extends: '{parent}' is included "
                             f"in a cycle"])
        if not target.is_file():
            where = src.where(("extends", i)) if len(parents) > 1 or ("extends", 0) in \
                src.values else src.where(("extends",))
            raise SpecError([f"{where}: extends: file '{parent}' not found (looked in "
                             f"{target.parent})"])
        merge(merged, read_spec_file(target, _seen + (path.resolve(),)))
    src.values.pop(("extends",), None)
    src.keys.pop(("extends",), None)
    merge(merged, src)
    return merged


def merge(base: Source, over: Source, path: Key = ()) -> None:
    """Deep-merge ``over`` into ``base`` (mappings merge, anything else replaces)."""
    _merge_into(base.data, over.data, path, base, over)


def _merge_into(dst: dict, src: dict, path: Key, base: Source, over: Source) -> None:
    for key, value in src.items():
        p = path + (key,)
        if isinstance(value, dict) and isinstance(dst.get(key), dict) and \
                not _swaps_kind(p, dst[key], value):
            if p in over.keys:
                base.keys[p] = over.keys[p]
            _merge_into(dst[key], value, p, base, over)
            continue
        for table_b, table_o in ((base.values, over.values), (base.keys, over.keys)):
            for k in [k for k in table_b if k[:len(p)] == p]:
                del table_b[k]
            table_b.update({k: v for k, v in table_o.items() if k[:len(p)] == p})
        dst[key] = value


def _swaps_kind(path: Key, old: dict, new: dict) -> bool:
    """Whether ``new`` replaces the component ``old`` by one of another kind (then the old
    kind's options are not inherited)."""
    return path in PLUGIN_SECTIONS and "kind" in old and "kind" in new and \
        old["kind"] != new["kind"]
