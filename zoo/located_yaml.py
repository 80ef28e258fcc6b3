"""YAML read with the file, line and column of every key and value, so that an error about a
value can point where it was written. Anchors, aliases and merge keys (``<<: *anchor``) are
supported; syntax errors become ``FILE:LINE:COL: message``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from .errors import SpecError

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


MERGE_TAG = "tag:yaml.org,2002:merge"


def _convert(node: yaml.Node, file: str, path: Key, src: Source,
             active: tuple[int, ...] = ()) -> Any:
    src.values[path] = _mark(file, node)
    if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        if id(node) in active:
            raise SpecError([f"{_mark(file, node)}: {'.'.join(map(str, path)) or '<spec>'}: "
                             f"an alias refers to the collection that contains it (a recursive "
                             f"anchor); write the values out instead"])
        active = active + (id(node),)
    if isinstance(node, yaml.MappingNode):
        out: dict = {}
        written: set = set()
        for knode, vnode, explicit in _pairs(node, file, path):
            if not isinstance(knode, yaml.ScalarNode):
                raise SpecError([f"{_mark(file, knode)}: {'.'.join(map(str, path)) or '<spec>'}: "
                                 f"a key must be a plain name, not {_node_kind(knode)}"])
            key = _scalar(knode, file)
            p = path + (key,)
            if explicit and key in written:
                raise SpecError([f"{_mark(file, knode)}: {'.'.join(map(str, p))}: "
                                 f"duplicate key '{key}'"])
            if explicit:
                written.add(key)
            if key in out:  # a merged (<<) value overridden: forget where it came from
                _forget(src, p)
            src.keys[p] = _mark(file, knode)
            out[key] = _convert(vnode, file, p, src, active)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(v, file, path + (i,), src, active) for i, v in enumerate(node.value)]
    return _scalar(node, file)


def _pairs(node: yaml.MappingNode, file: str, path: Key, depth: int = 0
           ) -> list[tuple[yaml.Node, yaml.Node, bool]]:
    """The ``(key, value, explicit)`` node pairs of a mapping with its merge keys resolved, as
    YAML defines them: ``<<: *a`` (or ``<<: [*a, *b]``, the earlier mapping winning) inserts
    the keys of the aliased mappings that the mapping does not set itself. Merged pairs come
    first, so the mapping's own keys override them."""
    if depth > 100:
        raise SpecError([f"{_mark(file, node)}: {'.'.join(map(str, path)) or '<spec>'}: merge "
                         f"keys (<<) nested too deeply (a recursive anchor?)"])
    merged: list[tuple[yaml.Node, yaml.Node, bool]] = []
    own: list[tuple[yaml.Node, yaml.Node, bool]] = []
    for knode, vnode in node.value:
        if knode.tag != MERGE_TAG:
            own.append((knode, vnode, True))
            continue
        sources = vnode.value if isinstance(vnode, yaml.SequenceNode) else [vnode]
        for source in reversed(sources):  # the first listed mapping wins: merge it last
            if not isinstance(source, yaml.MappingNode):
                raise SpecError([f"{_mark(file, source)}: "
                                 f"{'.'.join(map(str, path)) or '<spec>'}: the merge key '<<' "
                                 f"takes a mapping (<<: *anchor) or a list of mappings "
                                 f"(<<: [*a, *b]), not {_node_kind(source)}"])
            merged += [(k, v, False) for k, v, _ in _pairs(source, file, path, depth + 1)]
    return merged + own


def _node_kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    value = node.value if isinstance(node, yaml.ScalarNode) else None
    return f"the value '{value}'" if value not in (None, "") else "an empty value"


def _forget(src: Source, path: Key) -> None:
    """Drop the recorded locations of ``path`` and everything below it."""
    for table in (src.values, src.keys):
        for k in [k for k in table if k[:len(path)] == path]:
            del table[k]


def _scalar(node: yaml.Node, file: str) -> Any:
    try:
        return yaml.constructor.SafeConstructor().construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SpecError([f"{_mark(file, node)}: cannot read value: {problem}"]) from None


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
