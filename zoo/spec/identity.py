"""Which configuration a resolved spec is: the hash that groups its runs across seeds (the
``zoo.spec_hash`` tag of every run, by which a sweep finds what already ran)."""

from __future__ import annotations

import hashlib
from typing import Any

import yaml


def spec_hash(spec: Any) -> str:
    """Hash of the resolved spec without its seed: identifies a configuration across seeds."""
    data = spec.model_dump(mode="json")
    data.pop("seed", None)
    data.pop("search", None)  # how to tune the spec, not what is trained
    for key in ("log_model", "register_model"):  # what is logged, not what is trained
        data["tracking"].pop(key, None)
    return hashlib.sha256(yaml.safe_dump(data, sort_keys=True).encode()).hexdigest()[:16]
