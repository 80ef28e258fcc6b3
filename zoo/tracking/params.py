"""Flatten a resolved spec into MLflow params (dotted keys, MLflow's size limits)."""

from __future__ import annotations

from typing import Any

from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH, MAX_PARAMS_TAGS_PER_BATCH


def flatten(data: Any, prefix: str = "") -> dict[str, str]:
    """``{"model": {"field": {"kind": "ncde"}}}`` -> ``{"model.field.kind": "ncde"}``."""
    if isinstance(data, dict) and data:
        out: dict[str, str] = {}
        for key, value in data.items():
            out.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
        return out
    text = "null" if data is None else str(data)
    if len(text) > MAX_PARAM_VAL_LENGTH:
        text = text[:MAX_PARAM_VAL_LENGTH - 3] + "..."
    return {prefix: text}


def chunks(params: dict[str, str], size: int = MAX_PARAMS_TAGS_PER_BATCH):
    """Split params into batches MLflow accepts in one call."""
    items = list(params.items())
    for start in range(0, len(items), size):
        yield dict(items[start:start + size])
