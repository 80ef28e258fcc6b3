"""MLflow runs of a store by status, across every experiment and result page."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_PAGE = 1000


def finished_runs(uri: str, where: str = "") -> Iterator[Any]:
    """FINISHED runs (newest first) matching the MLflow filter ``where`` (may be empty)."""
    return store_runs(uri, where, "FINISHED")


def store_runs(uri: str, where: str = "", status: str | None = None) -> Iterator[Any]:
    """Runs (newest first) matching the MLflow filter ``where`` (may be empty), of any status
    or of ``status`` only."""
    from mlflow.entities import ViewType

    from ..tracking.mlflow_run import open_client

    client = open_client(uri)
    experiments, token = [], None
    while True:
        page = client.search_experiments(view_type=ViewType.ACTIVE_ONLY, max_results=_PAGE,
                                         page_token=token)
        experiments += [e.experiment_id for e in page]
        token = page.token
        if not token:
            break
    if not experiments:
        return
    query = " and ".join(q for q in (status and f"attributes.status = '{status}'", where) if q)
    yield from paged_runs(client, experiments, query)


def paged_runs(client, experiments: list[str], query: str) -> Iterator[Any]:
    """Every run (newest first) of ``experiments`` matching the MLflow filter ``query``, read
    page by page (one ``search_runs`` call returns at most a page)."""
    token = None
    while True:
        page = client.search_runs(experiments, query, max_results=_PAGE, page_token=token,
                                  order_by=["attributes.start_time DESC"])
        yield from page
        token = page.token
        if not token:
            break
