"""The full spec model, assembled from the installed plugins of each group.

Each plugin section (``data``, ``model.control``, ``model.field``, ...) is a discriminated union
over the config classes registered in its entry-point group, so ``zoo schema`` shows every
installed plugin's options and validation needs no per-plugin code.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from .. import registry
from ..limits import Seed
from .search import SearchSpec
from .sections import InitialSpec, TrackingSpec, TrainSpec

#: spec location of each plugin section -> registry group
PLUGIN_SECTIONS: dict[tuple[str, ...], str] = {
    ("data",): "datasets",
    ("model", "control"): "controls",
    ("model", "field"): "fields",
    ("model", "solver"): "solvers",
    ("model", "backprop"): "backprop",
    ("model", "readout"): "readouts",
}


def _union(group: str) -> Any:
    classes = tuple(registry.loadable(group).values())
    if not classes:
        return dict  # nothing installed: validated later with a clear message
    if len(classes) == 1:
        return classes[0]
    return Annotated[Union[classes], Field(discriminator="kind")]  # noqa: UP007


def _solverless_fields() -> list[str]:
    """Field kinds that declare they need no solver (``FieldConfig.needs_solver``)."""
    return sorted(name for name, cls in registry.loadable("fields").items()
                  if not getattr(cls, "needs_solver", True))


class _ModelSection(BaseModel):
    """``model``: a field that needs no solver gets its ``example_solver`` when none is given."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _default_solver(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("solver") is not None:
            return data
        field = data.get("field")
        kind = field.get("kind") if isinstance(field, dict) else None
        family = registry.loadable("fields").get(kind) if isinstance(kind, str) else None
        if family is not None and not getattr(family, "needs_solver", True):
            return {**data, "solver": dict(family.example_solver)}
        return data


@cache
def spec_model() -> type[BaseModel]:
    """The Pydantic model of a whole spec with the currently installed plugins."""
    forbid = ConfigDict(extra="forbid", frozen=True)
    model_section = create_model(
        "ModelSpec",
        __base__=_ModelSection,
        control=(_union("controls"), ...),
        field=(_union("fields"), ...),
        solver=(_union("solvers"), ...),
        backprop=(_union("backprop"), Field({"kind": "direct"}, validate_default=True)),
        initial=(InitialSpec, InitialSpec()),
        readout=(_union("readouts"), ...),
        implementation=(Literal["fast", "generic"], Field(
            "fast", description="fast path where one exists, or the plain torchdiffeq path")),
    )
    return create_model(
        "Spec",
        __config__=forbid,
        name=(str | None, Field(None, description="run name (default: the spec file's stem)")),
        description=(str | None, None),
        reproduces=(str | None, Field(None, description="registry entry this spec reproduces")),
        variant=(str | None, Field(
            None, pattern=r"^[a-z0-9][a-z0-9-]*$",
            description="with reproduces: another reading of the paper's protocol for the same "
                        "entry (e.g. paper-text), reported in a row of its own; none: the "
                        "authors' code")),
        seed=(Seed, Field(0, description="seed of the run (torch accepts -2**63 to 2**64 - 1)")),
        device=(Literal["auto", "cpu", "cuda"], "auto"),
        data=(_union("datasets"), ...),
        model=(model_section, ...),
        train=(TrainSpec, TrainSpec()),
        tracking=(TrackingSpec, TrackingSpec()),
        search=(SearchSpec | None, Field(None, description="a hyperparameter search over this "
                                                           "spec's keys (zoo search)")),
    )


#: ``extends:`` in the JSON schema (the loader takes it out before validation)
EXTENDS_SCHEMA = {
    "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "minItems": 1}],
    "title": "Extends",
    "description": "a spec file, or a list of them (paths relative to this file), that this "
                   "spec inherits from: mappings merge key by key, anything else (lists, "
                   "values) replaces; a component section (data, model.control, model.field, "
                   "model.solver, model.backprop, model.readout) that sets another kind than "
                   "the inherited one replaces it whole",
}


def json_schema() -> dict:
    """The JSON Schema of a spec, for editors: a file with ``extends:`` is checked as a partial
    spec (nothing required; the files it extends complete it), any other as a whole one."""
    full = spec_model().model_json_schema()
    defs = full.pop("$defs", {})
    model = defs.get("ModelSpec", {})
    solverless = _solverless_fields()
    if solverless and "solver" in model.get("required", []):
        model["required"] = [r for r in model["required"] if r != "solver"]
        model["if"] = {"properties": {"field": {"properties": {"kind": {"enum": solverless}},
                                                "required": ["kind"]}},
                       "required": ["field"]}
        model["else"] = {"required": ["solver"]}
        model["properties"]["solver"]["description"] = (
            f"required unless the field needs no solver ({', '.join(solverless)})")
    full["properties"] = {"extends": EXTENDS_SCHEMA, **full["properties"]}
    full.pop("title", None)
    partial_defs = {f"{name}Partial": _partial(d) for name, d in defs.items()}
    defs = {**defs, "Spec": full, **partial_defs, "SpecPartial": _partial(full)}
    defs["SpecPartial"]["required"] = ["extends"]
    return {
        "title": "nde-zoo spec",
        "description": "A zoo spec (docs/spec.md). A spec with extends: is completed by the "
                       "files it extends, so none of its keys is required.",
        "if": {"type": "object", "required": ["extends"]},
        "then": {"$ref": "#/$defs/SpecPartial"},
        "else": {"$ref": "#/$defs/Spec"},
        "$defs": defs,
    }


def _partial(schema: Any) -> Any:
    """A copy of ``schema`` where nothing is required (and union members are told apart by
    their keys, not by a ``kind`` that a partial spec may leave to the file it extends)."""
    if isinstance(schema, list):
        return [_partial(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in ("required", "discriminator", "if", "then", "else"):
            continue
        if key == "properties":
            out[key] = {name: _partial(v) for name, v in value.items()}
        elif key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
            out[key] = f"{value}Partial"
        elif key == "oneOf":
            out["anyOf"] = _partial(value)
        else:
            out[key] = _partial(copy.deepcopy(value))
    return out


def reset() -> None:
    """Rebuild the model on next use (after plugins were installed)."""
    spec_model.cache_clear()
    registry.refresh()
