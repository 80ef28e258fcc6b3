"""Read YAML specs while remembering where every key and value came from.

A spec may start with ``extends: other.yaml`` (or a list of files, paths relative to it): the
named files are loaded first and this file's mappings are deep-merged over them (lists and
scalars replace). Every value keeps the file, line and column it was written at, so validation
errors point at the right file even for inherited settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError, SpecError

Key = tuple[str | int, ...]


@dataclass(frozen=True)
class Loc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.line else self.file


@dataclass
class Source:
    """Plain data plus the location of each value (``values``) and mapping key (``keys``)."""

    data: dict
    values: dict[Key, Loc]
    keys: dict[Key, Loc]
    origin: Loc

    def where(self, path: Key, key: bool = False) -> Loc:
        """Best location for ``path``: its key or value, else the closest located ancestor."""
        table = (self.keys, self.values) if key else (self.values, self.keys)
        for p in (path[:i] for i in range(len(path), -1, -1)):
            for t in table:
                if p in t:
                    return t[p]
        return self.origin


def _mark(file: str, node: yaml.Node) -> Loc:
    return Loc(file, node.start_mark.line + 1, node.start_mark.column + 1)


def _convert(node: yaml.Node, file: str, path: Key, src: Source) -> Any:
    src.values[path] = _mark(file, node)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for knode, vnode in node.value:
            key = _scalar(knode, file)
            if key in out:
                raise SpecError([f"{_mark(file, knode)}: {'.'.join(map(str, path + (key,)))}: "
                                 f"duplicate key '{key}'"])
            src.keys[path + (key,)] = _mark(file, knode)
            out[key] = _convert(vnode, file, path + (key,), src)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(v, file, path + (i,), src) for i, v in enumerate(node.value)]
    return _scalar(node, file)


def _scalar(node: yaml.Node, file: str) -> Any:
    try:
        return yaml.constructor.SafeConstructor().construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        raise SpecError([f"{_mark(file, node)}: cannot read value: {exc}"]) from None


def parse_text(text: str, file: str) -> Source:
    """Parse one YAML document; syntax errors become ``FILE:LINE:COL: message``."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{file}:{mark.line + 1}:{mark.column + 1}" if mark else file
        raise SpecError([f"{where}: YAML syntax error: {exc.problem or exc}"]) from None
    origin = Loc(file, 1, 1)
    src = Source({}, {}, {}, origin)
    if node is None:
        return src
    if not isinstance(node, yaml.MappingNode):
        raise SpecError([f"{_mark(file, node)}: a spec must be a mapping of sections "
                         f"(data, model, train, ...)"])
    src.data = _convert(node, file, (), src)
    return src


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
        if isinstance(value, dict) and isinstance(dst.get(key), dict):
            if p in over.keys:
                base.keys[p] = over.keys[p]
            _merge_into(dst[key], value, p, base, over)
            continue
        for table_b, table_o in ((base.values, over.values), (base.keys, over.keys)):
            for k in [k for k in table_b if k[:len(p)] == p]:
                del table_b[k]
            table_b.update({k: v for k, v in table_o.items() if k[:len(p)] == p})
        dst[key] = value
