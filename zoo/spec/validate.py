"""Load, override and validate a spec; every problem becomes ``FILE:LINE:COL: path: message``."""

from __future__ import annotations

import copy
import re
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .. import registry
from ..errors import InputError, PluginError, SpecError
from ..suggest import did_you_mean
from .schema import PLUGIN_SECTIONS, spec_model
from .source import Key, Loc, Source, read_spec_file


def apply_overrides(src: Source, overrides: list[str]) -> None:
    """Apply ``dotted.key=value`` overrides (values parsed as YAML) in place."""
    for text in overrides:
        key, sep, raw = text.partition("=")
        if not sep or not key.strip() or any(not part for part in key.split(".")):
            raise InputError(f"bad override '{text}': expected dotted.key=value, "
                             f"e.g. -o train.epochs=5")
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError as exc:
            raise InputError(f"bad override '{text}': value is not valid YAML: {exc}") from None
        path = tuple(key.strip().split("."))
        node = src.data
        for depth, part in enumerate(path[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise InputError(f"bad override '{text}': '{'.'.join(path[:depth + 1])}' is "
                                 f"not a mapping")
            node = child
        node[path[-1]] = value
        loc = Loc(f"override '-o {text}'", 0, 0)
        for table in (src.values, src.keys):
            for k in [k for k in table if k[:len(path)] == path]:
                del table[k]
        src.values[path] = src.keys[path] = loc


def _data_path(loc: tuple, data: Any) -> Key:
    """Drop the union-tag elements Pydantic inserts into error locations."""
    out: list = []
    node = data
    for part in loc:
        if isinstance(node, dict) and part in node:
            out.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            out.append(part)
            node = node[part]
        elif isinstance(node, dict) and node.get("kind") == part:
            continue  # the discriminator tag of a union member
        elif isinstance(part, str) and not part.startswith(("function-", "tagged-union")):
            out.append(part)
            node = None
    return tuple(out)


def _model_at(path: Key, data: dict) -> type[BaseModel] | None:
    """The Pydantic model class that validates the mapping at ``path`` (for valid-key lists)."""
    cls: Any = spec_model()
    node: Any = data
    for part in path:
        cls = _pick(cls, node)
        if isinstance(part, int) and typing.get_origin(cls) is list:  # an item of a list
            cls = typing.get_args(cls)[0]
            node = node[part] if isinstance(node, list) and part < len(node) else None
            continue
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
            return None
        info = cls.model_fields.get(part)
        if info is None:
            return None
        cls, node = info.annotation, node.get(part) if isinstance(node, dict) else None
    cls = _pick(cls, node)
    return cls if isinstance(cls, type) and issubclass(cls, BaseModel) else None


def _pick(annotation: Any, node: Any) -> Any:
    """Resolve Annotated/Optional/union annotations to the member that ``node`` selects."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    members = typing.get_args(annotation) if typing.get_origin(annotation) in (
        typing.Union, getattr(__import__("types"), "UnionType", None)) else ()
    if members:
        models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
        kind = node.get("kind") if isinstance(node, dict) else None
        for m in models:
            if "kind" in m.model_fields and m.model_fields["kind"].default == kind:
                return m
        if len(models) == 1:
            return models[0]
        present = [m for m in members if m is not type(None)]
        return present[0] if len(present) == 1 else None  # e.g. list[Model] | None
    return annotation


def _plugin_group(path: Key) -> str | None:
    return PLUGIN_SECTIONS.get(tuple(path))


def _format(err: dict, src: Source) -> str:
    path = _data_path(err["loc"], src.data)
    dotted = ".".join(map(str, path)) or "<spec>"
    kind, ctx = err["type"], err.get("ctx", {})
    if kind == "extra_forbidden":
        parent = path[:-1]
        model = _model_at(parent, src.data)
        valid = [f.alias or k for k, f in (model.model_fields if model else {}).items()
                 if k != "kind"]
        hint = did_you_mean(path[-1], valid)
        tail = f"; valid keys: {', '.join(valid)}" if valid else ""
        return f"{src.where(path, key=True)}: {dotted}: unknown key '{path[-1]}'{hint}{tail}"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        group = _plugin_group(path)
        choices = sorted(registry.loadable(group)) if group else \
            re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
        if kind == "union_tag_not_found":
            return (f"{src.where(path)}: {dotted}: missing 'kind'; choose one of: "
                    f"{', '.join(choices)}")
        tag = ctx.get("tag")
        if group and tag in registry.broken(group):
            entry = registry.broken(group)[tag]
            return (f"{src.where(path + ('kind',))}: {dotted}.kind: plugin '{tag}' from "
                    f"distribution '{entry.distribution}' failed to load: {entry.error}")
        return (f"{src.where(path + ('kind',))}: {dotted}.kind: '{tag}' is not one of "
                f"{', '.join(choices)}{did_you_mean(tag, choices)}")
    if kind in ("literal_error", "enum"):
        choices = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        value = err.get("input")
        return (f"{src.where(path)}: {dotted}: {value!r} is not one of "
                f"{', '.join(choices)}{did_you_mean(value, choices)}")
    if kind == "missing":
        return f"{src.where(path[:-1])}: {dotted}: required key is missing"
    message = re.sub(r"^(Value|Assertion) error, ", "", err["msg"])
    return f"{src.where(path)}: {dotted}: {message}"


def _check_installed(src: Source) -> list[str]:
    """Plugin sections whose group has no installed component at all."""
    problems = []
    for path, group in PLUGIN_SECTIONS.items():
        if not registry.loadable(group):
            problems.append(f"{src.where(path)}: {'.'.join(path)}: no {group} plugin is "
                            f"installed")
    return problems


def compatibility(spec: Any) -> list[tuple[str, str]]:
    """Generic constraints between control, field, solver, backprop, initial state and readout."""
    m = spec.model
    out = []
    missing = m.field.requires - m.control.provides
    if missing:
        out.append(("model.control.kind", (
            f"field '{m.field.kind}' needs a control that provides {', '.join(sorted(missing))}, "
            f"but '{m.control.kind}' provides {', '.join(sorted(m.control.provides)) or 'nothing'}"
            f"; use one of: {', '.join(_controls_providing(m.field.requires))}")))
    if m.solver.kind not in m.field.solvers:
        out.append(("model.solver.kind", f"field '{m.field.kind}' is integrated with solver kind "
                    f"{' or '.join(m.field.solvers)}, not '{m.solver.kind}'"))
    if m.initial.kind != "auto" and m.initial.kind not in m.field.initials:
        out.append(("model.initial.kind", f"field '{m.field.kind}' supports initial states "
                    f"{', '.join(m.field.initials)}, not '{m.initial.kind}'"))
    if m.backprop.kind == "adjoint" and not m.solver.supports_adjoint:
        out.append(("model.backprop.kind", f"solver '{m.solver.kind}' cannot run the continuous "
                    f"adjoint; use backprop kind 'direct'"))
    task = spec.data.task()
    if task.kind not in m.readout.tasks:
        out.append(("model.readout.kind", f"dataset '{spec.data.kind}' is a {task.kind} task; "
                    f"readout '{m.readout.kind}' serves {', '.join(m.readout.tasks)}"))
    return out


def _controls_providing(needed: frozenset[str]) -> list[str]:
    return sorted(n for n, c in registry.loadable("controls").items() if needed <= c.provides)


def _check_reproduces(spec: Any, src: Source) -> list[str]:
    """``reproduces`` must name an entry of the published-results registry; ``variant`` needs it."""
    if spec.reproduces is None:
        if spec.variant is not None:
            return [f"{src.where(('variant',))}: variant: a variant reads the protocol of a "
                    f"published number; set reproduces: too"]
        return []
    from ..results.registry import DEFAULT_ROOT, load_registry

    if not DEFAULT_ROOT.is_dir():  # an installed copy without the repository's registry/
        return []
    known = load_registry().entries
    if spec.reproduces in known:
        return []
    return [f"{src.where(('reproduces',))}: reproduces: '{spec.reproduces}' is not an entry of "
            f"the results registry{did_you_mean(spec.reproduces, known)}"]


def validate_source(src: Source) -> BaseModel:
    """Validate parsed data, then the cross-section constraints of each component."""
    try:
        # the context tells options which file wrote them (own data: paths relative to it)
        spec = spec_model().model_validate(copy.deepcopy(src.data), context={"source": src})
    except ValidationError as exc:
        problems = _check_installed(src) or [_format(e, src) for e in exc.errors()]
        raise SpecError(list(dict.fromkeys(problems))) from None
    except PluginError as exc:
        raise SpecError([f"{src.origin}: {exc}"]) from None
    problems = [f"{src.where(tuple(d.split('.')))}: {d}: {m}" for d, m in compatibility(spec)]
    problems += _check_reproduces(spec, src)
    for component in (spec.data, spec.model.control, spec.model.field, spec.model.solver,
                      spec.model.backprop, spec.model.readout):
        for dotted, message in component.check(spec):
            problems.append(f"{src.where(tuple(dotted.split('.')))}: {dotted}: {message}")
    if problems:
        raise SpecError(problems)
    return spec


def load_spec(path: str | Path, overrides: list[str] | None = None) -> tuple[BaseModel, Source]:
    """Read, override and validate the spec at ``path``; the name defaults to the file stem."""
    src = read_spec_file(path)
    apply_overrides(src, overrides or [])
    src.data.setdefault("name", Path(path).stem)
    return validate_source(src), src
