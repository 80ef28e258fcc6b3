"""Load, override and validate a spec; every problem becomes ``FILE:LINE:COL: path: message``."""

from __future__ import annotations

import copy
import re
import signal
import threading
import time
import typing
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from .. import registry
from ..errors import InputError, PluginError, SpecError, ZooError
from ..limits import MAX_PARAMETERS, numpy_seed_in_range, seed_in_range
from ..suggest import did_you_mean
from .schema import PLUGIN_SECTIONS, spec_model
from .sections import EPOCH_METRICS, TRAIN_EVAL
from ..located_yaml import Key, Loc, Source
from .source import read_spec_file


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
    if err.get("input", ...) is None and kind in ("model_attributes_type", "dict_type",
                                                  "model_type") and _plugin_group(path):
        return (f"{src.where(path)}: {dotted}: is empty (null); it needs a mapping with a kind"
                f"{_missing_hint(path, src)}")
    if isinstance(err.get("input"), bool) and kind in _NUMBER_CONSTRAINTS:
        return (f"{src.where(path)}: {dotted}: expects a number, got the boolean "
                f"{str(err['input']).lower()}{_YAML_BOOLEANS}")
    if kind == "missing":
        items = _node(src.data, path)
        if isinstance(err["loc"][-1], int) and isinstance(items, list):  # a tuple too short
            return (f"{src.where(path)}: {dotted}: expects {_tuple_length(path, src)} values, "
                    f"got {len(items)}")
        return (f"{src.where(path[:-1])}: {dotted}: required key is missing"
                f"{_missing_hint(path, src)}")
    if kind == "too_long" and isinstance(_node(src.data, path), list):
        most = "" if ctx.get("field_type") == "Tuple" else "at most "
        return (f"{src.where(path)}: {dotted}: expects {most}{ctx.get('max_length', '?')} "
                f"values, got {ctx.get('actual_length', len(_node(src.data, path)))}")
    message = re.sub(r"^(Value|Assertion) error, ", "", err["msg"])
    return f"{src.where(path)}: {dotted}: {message}"


#: Pydantic error types of a number's constraints (a boolean read as 0 or 1 can fail them)
_NUMBER_CONSTRAINTS = ("greater_than", "greater_than_equal", "less_than", "less_than_equal",
                       "multiple_of", "finite_number")
_YAML_BOOLEANS = " (YAML reads yes/no, on/off and true/false as booleans)"


def _missing_hint(path: Key, src: Source) -> str:
    """What to write for a missing ``model.solver``, and which fields need none."""
    if tuple(path) != ("model", "solver"):
        return ""
    kind = _node(src.data, ("model", "field", "kind"))
    family = registry.loadable("fields").get(kind) if isinstance(kind, str) else None
    if family is None:
        return ""
    example = ", ".join(f"{k}: {v}" for k, v in family.example_solver.items())
    solverless = sorted(n for n, c in registry.loadable("fields").items()
                        if not getattr(c, "needs_solver", True))
    none = f"; only {', '.join(solverless)} need none" if solverless else ""
    return f" (field '{kind}' needs one, e.g. solver: {{{example}}}{none})"


def _node(data: Any, path: Key) -> Any:
    """The raw value at ``path`` (``None`` where there is none)."""
    for part in path:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        else:
            return None
    return data


def _tuple_length(path: Key, src: Source) -> int | str:
    """How many values the tuple option at ``path`` takes (``?`` when it cannot be told)."""
    model = _model_at(path[:-1], src.data)
    info = model.model_fields.get(path[-1]) if model else None
    annotation = _pick(info.annotation, None) if info else None
    args = typing.get_args(annotation) if typing.get_origin(annotation) is tuple else ()
    return len(args) if args and Ellipsis not in args else "?"


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
    if m.solver.kind not in m.field.solvers and not getattr(m.field, "needs_solver", True):
        out.append(("model.solver.kind", f"field '{m.field.kind}' needs no solver: leave "
                    f"model.solver out (set it to null to drop an inherited one), not "
                    f"'{m.solver.kind}'"))
    elif m.solver.kind not in m.field.solvers:
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
    out += watched_metrics(spec)
    return out


def watched_metrics(spec: Any) -> list[tuple[str, str]]:
    """``train.select``, the stopping monitors and the schedule's monitor must name metrics the
    run records: the per-epoch ones, and the readout's under ``val/`` (and ``train_eval/``)."""
    readout = spec.model.readout
    reported = getattr(readout, "reported_metrics", lambda: None)()
    recorded = spec.train.recorded_metrics(reported)
    out = []
    for dotted, metric in spec.train.watched_metrics():
        prefix, _, name = metric.partition("/")
        if metric in recorded or (reported is None and name and prefix in ("val", TRAIN_EVAL)):
            continue  # recorded, or a readout that does not declare its metric names
        if prefix == "test" and name:
            message = (f"'{metric}' is measured once, after training, so it cannot be watched"
                       f"{did_you_mean(f'val/{name}', recorded)}")
        else:
            also = " and train_eval/<metric>" if spec.train.evaluate_train else ""
            evaluated = (f"readout '{readout.kind}' reports {', '.join(reported)}, recorded as "
                         f"val/<metric>{also}" if reported
                         else f"readout '{readout.kind}' does not declare its metrics")
            message = (f"'{metric}' is not a metric the run records"
                       f"{did_you_mean(metric, recorded)}; {evaluated}; every epoch records "
                       f"{', '.join(EPOCH_METRICS)}")
        out.append((dotted, message))
    return out


def _booleans(value: Any, raw: Any, path: Key) -> list[tuple[Key, bool, str]]:
    """Where the spec wrote a boolean (``yes``, ``on``, ``true``, ...) that validation turned
    into a number: ``(path, the boolean, "an integer" or "a number")``."""
    if isinstance(raw, bool):
        return [(path, raw, "an integer" if type(value) is int else "a number")] \
            if type(value) in (int, float) else []
    if isinstance(value, BaseModel) and isinstance(raw, dict):
        fields = type(value).model_fields
        names = {(f.alias or n): n for n, f in fields.items()}
        return [hit for key, r in raw.items() if key in names
                for hit in _booleans(getattr(value, names[key]), r, path + (key,))]
    if isinstance(value, dict) and isinstance(raw, dict):
        return [hit for key, r in raw.items() if key in value
                for hit in _booleans(value[key], r, path + (key,))]
    if isinstance(value, (list, tuple)) and isinstance(raw, list) and len(value) == len(raw):
        return [hit for i, (v, r) in enumerate(zip(value, raw))
                for hit in _booleans(v, r, path + (i,))]
    return []


def _check_booleans(spec: BaseModel, src: Source) -> list[str]:
    """Integer and number options refuse booleans, which Pydantic would read as 1 and 0."""
    return [f"{src.where(path)}: {'.'.join(map(str, path))}: expects {what}, got the boolean "
            f"{str(value).lower()}{_YAML_BOOLEANS}" for path, value, what in
            _booleans(spec, src.data, ())]


class _TooSlow(BaseException):
    """The parameter estimate ran out of time (a BaseException: plugin code does not catch it)."""


@contextmanager
def _time_limit(seconds: float) -> Iterator[bool]:
    """Interrupt the block after ``seconds`` (yields False where no timer can be set: off the
    main thread, or without ``setitimer``); an outer timer is restored afterwards."""
    if threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "setitimer"):
        yield False
        return

    def expire(signum, frame):
        raise _TooSlow

    handler = signal.signal(signal.SIGALRM, expire)
    outer, interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.monotonic()
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
        if outer:
            signal.setitimer(signal.ITIMER_REAL,
                             max(outer - (time.monotonic() - start), 1e-3), interval)


def estimate_parameters(spec: Any, seconds: float = 5.0) -> int | None:
    """Parameters of the spec's model, counted by building it on PyTorch's ``meta`` device (no
    memory is allocated) for one input channel: a lower bound for more channels. ``None`` where
    it cannot be built that way or the build takes longer than ``seconds``."""
    import torch
    import torchdiffeq  # noqa: F401  (its tableaux, made at import, must not land on ``meta``)

    from ..build_context import DataShape
    from ..model import ZooModel, count_parameters

    try:
        with _time_limit(seconds) as limited:
            if not limited:
                return None
            with warnings.catch_warnings(), torch.device("meta"):
                warnings.simplefilter("ignore")
                model = ZooModel(spec, DataShape(1, 1, 16, spec.data.task()))
            return count_parameters(model)
    except (_TooSlow, Exception):
        return None


#: the parameters are counted (building the model imports torch) only for a spec with an integer
#: model option above this: a network's parameter count grows as a product of at most three of
#: its sizes (layers × width², heads × width², hidden³), so with every option at most 512 it stays
#: below 512³ = MAX_PARAMETERS / 8, and validating such a spec needs no torch
SMALL_OPTION = 512


def _integer_options(config: BaseModel) -> Iterator[int]:
    """The integer options of ``config`` and of the configs in it, seeds left out."""
    for name, info in type(config).model_fields.items():
        value = getattr(config, name)
        if isinstance(value, BaseModel):
            yield from _integer_options(value)
        elif isinstance(value, int) and not isinstance(value, bool) and not _is_seed(info):
            yield value


def _is_seed(info: Any) -> bool:
    """Whether a field is typed :data:`zoo.limits.Seed` or :data:`zoo.limits.NumpySeed` (or
    either ``| None``)."""
    def marks(tp: Any) -> list:
        args = typing.get_args(tp)
        return [*getattr(tp, "__metadata__", ()), *(m for a in args for m in marks(a))]

    return any(getattr(m, "func", None) in (seed_in_range, numpy_seed_in_range)
               for m in [*info.metadata, *marks(info.annotation)])


def _check_size(spec: Any, src: Source) -> list[str]:
    """Refuse models with more than :data:`MAX_PARAMETERS` parameters before anything is built."""
    if max(_integer_options(spec.model), default=0) <= SMALL_OPTION:
        return []
    n = estimate_parameters(spec)
    if n is None or n <= MAX_PARAMETERS:
        return []
    gib = n * 4 / 2**30
    return [f"{src.where(('model', 'field'))}: model.field: the model would have about {n:,} "
            f"parameters (estimated for one input channel: {gib:,.0f} GiB of float32 weights, "
            f"several times that to train), more than the limit of {MAX_PARAMETERS:,}; make it "
            f"smaller"]


def _controls_providing(needed: frozenset[str]) -> list[str]:
    return sorted(n for n, c in registry.loadable("controls").items() if needed <= c.provides)


def _check_reproduces(spec: Any, src: Source) -> list[str]:
    """``reproduces`` must name an entry of the published-results registry; ``variant`` needs it."""
    if spec.reproduces is None:
        if spec.variant is not None:
            return [f"{src.where(('variant',))}: variant: a variant reads the protocol of a "
                    f"published number; set reproduces: too"]
        return []
    from ..results.published import DEFAULT_ROOT, load_registry

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
    except ZooError:
        raise
    except Exception as exc:  # a component's validator raising what pydantic does not collect
        component = _raising_component(exc)
        if component is None:
            raise
        group, kind = registry.group_of(component), component.model_fields["kind"].default
        raise registry.component_failure(group, kind,
                                         f"its validator raised {registry.failure_text(exc)}",
                                         _section_of(src, group, kind)) from exc
    problems = _check_booleans(spec, src)
    problems += [f"{src.where(_key(d))}: {d}: {m}" for d, m in compatibility(spec)]
    problems += _check_reproduces(spec, src)
    if spec.search is not None:
        problems += [f"{src.where(path)}: {'.'.join(path)}: {message}"
                     for path, message in spec.search.problems(spec, src)]
    for section in PLUGIN_SECTIONS:
        component = _component(spec, section)
        for dotted, message in _checked(component, spec, src, section):
            problems.append(f"{src.where(_key(dotted))}: {dotted}: {message}")
    if not problems:
        problems = _check_size(spec, src)
    if problems:
        raise SpecError(problems)
    return spec


def _raising_component(exc: BaseException) -> type | None:
    """The component config class whose validator raised ``exc``: the innermost frame of its
    traceback whose ``cls`` or ``self`` is one (None: no component's code raised it)."""
    found, tb = None, exc.__traceback__
    while tb is not None:
        for name in ("cls", "self"):
            obj = tb.tb_frame.f_locals.get(name)
            if registry.group_of(obj if isinstance(obj, type) else type(obj)) is not None:
                found = obj if isinstance(obj, type) else type(obj)
        tb = tb.tb_next
    return found


def _component(spec: BaseModel, section: tuple[str, ...]) -> Any:
    """The component config at ``section`` of the spec (``("model", "field")``)."""
    for name in section:
        spec = getattr(spec, name)
    return spec


def _section_of(src: Source, group: str, kind: str) -> str:
    """``FILE:LINE:COL: model.field``: where the spec names component ``kind`` of ``group``."""
    for section, section_group in PLUGIN_SECTIONS.items():
        node: Any = src.data
        for name in section:
            node = node.get(name) if isinstance(node, dict) else None
        if section_group == group and isinstance(node, dict) and node.get("kind") == kind:
            return f"{src.where(section)}: {'.'.join(section)}"
    return str(src.origin)


def _checked(component: Any, spec: BaseModel, src: Source, section: tuple[str, ...]
             ) -> list[tuple[str, str]]:
    """``component.check(spec)``; an exception in it is the component's failure, named."""
    try:
        return component.check(spec)
    except ZooError:
        raise
    except Exception as exc:
        raise registry.component_failure(
            PLUGIN_SECTIONS[section], component.kind,
            f"check() raised {registry.failure_text(exc)}",
            f"{src.where(section)}: {'.'.join(section)}") from exc


def spec_value_problem(src: Source, dotted: str, value: Any) -> str | None:
    """Why the spec of ``src`` refuses ``value`` at ``dotted`` (its first validation error), or
    None when it takes it."""
    data = copy.deepcopy(src.data)
    node = data
    *parents, last = dotted.split(".")
    for part in parents:
        node = node.setdefault(part, {}) if isinstance(node, dict) else node[int(part)]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    try:
        spec_model().model_validate(data, context={"source": src})
    except ValidationError as exc:
        return exc.errors()[0]["msg"]
    return None


def _key(dotted: str) -> Key:
    """``train.stopping.monitors.1.metric`` -> ``("train", "stopping", "monitors", 1,
    "metric")``: list indices become integers, as in :class:`Source`'s locations."""
    return tuple(int(p) if p.isdigit() else p for p in dotted.split("."))


def load_spec(path: str | Path, overrides: list[str] | None = None) -> tuple[BaseModel, Source]:
    """Read, override and validate the spec at ``path``; the name defaults to the file stem."""
    src = read_spec_file(path)
    apply_overrides(src, overrides or [])
    src.data.setdefault("name", Path(path).stem)
    return validate_source(src), src
