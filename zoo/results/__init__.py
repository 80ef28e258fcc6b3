"""The published results that specs reproduce (the top-level ``registry/`` folder)."""

from .published import Entry, Metric, Registry, RegistryError, load_registry

__all__ = ["Entry", "Metric", "Registry", "RegistryError", "load_registry"]
