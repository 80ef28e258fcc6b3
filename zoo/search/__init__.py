"""Hyperparameter search over a spec's ``search:`` space with Optuna (``zoo search``)."""

from .driver import SearchOptions, SearchResult, search

__all__ = ["SearchOptions", "SearchResult", "search"]
