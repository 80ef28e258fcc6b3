"""The published results that specs reproduce (the top-level ``registry/`` folder)."""

from .registry import Entry, Metric, Registry, RegistryError, load_registry

__all__ = ["Entry", "Metric", "Registry", "RegistryError", "load_registry"]
