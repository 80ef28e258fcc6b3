"""Any group of runs summarised per configuration: ``zoo report --runs EXPERIMENT|RUN_ID``.

The group is an experiment's finished runs, or the trials of a search (the runs nested under
its parent run). Runs with the same parameters (the resolved spec, logged flat) apart from the
seed and the names (``name``, ``tracking.run_name``: a search names each trial's run) are one
configuration; each row shows what sets it apart from the others (the parameters that
differ), its number of runs and epochs, and each test metric as mean ± std over its runs
(population std; none for one run).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from ..errors import InputError
from ..results.runs import paged_runs

SKIPPED_PARAMS = ("seed", "name", "tracking.run_name", "model.n_parameters")


@dataclass(frozen=True)
class Group:
    label: str  # the parameters that set it apart: key=value, ...
    runs: int
    epochs: str
    metrics: dict[str, tuple[float, float | None]]  # test metric -> (mean, std)


def runs_of(client, target: str) -> tuple[str, list]:
    """The title and finished runs of ``target``: an experiment's name, or a run id whose
    nested runs (a search's trials) form the group."""
    from mlflow.exceptions import MlflowException

    experiment = client.get_experiment_by_name(target)
    if experiment is not None:
        runs = paged_runs(client, [experiment.experiment_id], "attributes.status = 'FINISHED'")
        return f"experiment {target}", [r for r in runs if "zoo.search" not in r.data.tags]
    try:
        parent = client.get_run(target)
    except MlflowException:
        names = [e.name for e in client.search_experiments()]
        from ..suggest import did_you_mean

        raise InputError(f"--runs {target}: neither an experiment nor a run of this store"
                         f"{did_you_mean(target, names)}") from None
    runs = paged_runs(client, [parent.info.experiment_id],
                      f"tags.mlflow.parentRunId = '{target}' and attributes.status = 'FINISHED'")
    return f"runs under {parent.info.run_name} ({target})", list(runs)


def groups(runs: list) -> list[Group]:
    """One :class:`Group` per configuration, in order of first appearance."""
    by_config: dict[object, list] = defaultdict(list)
    for run in runs:
        params = frozenset((k, v) for k, v in run.data.params.items()
                           if k not in SKIPPED_PARAMS)
        by_config[params or run.info.run_id].append(run)
    params = [{k: v for k, v in rs[0].data.params.items() if k not in SKIPPED_PARAMS}
              for rs in by_config.values()]
    varying = sorted(k for k in set().union(*params) if len({p.get(k) for p in params}) > 1)
    out = []
    for members, p in zip(by_config.values(), params):
        label = ", ".join(f"{k}={p.get(k, '-')}" for k in varying) or "(one configuration)"
        keys = sorted({k for r in members for k in r.data.metrics if k.startswith("test/")})
        metrics = {}
        for key in keys:
            values = [r.data.metrics[key] for r in members if key in r.data.metrics]
            std = statistics.pstdev(values) if len(values) > 1 else None
            metrics[key] = (statistics.fmean(values), std)
        epochs = sorted({r.data.params.get("train.epochs", "?") for r in members})
        out.append(Group(label, len(members), "/".join(epochs), metrics))
    return out


def as_text(title: str, rows: list[Group]) -> str:
    """A Markdown table: configuration, runs, epochs, one column per test metric."""
    keys = sorted({k for g in rows for k in g.metrics})
    head = ["configuration", "runs", "epochs", *keys]
    lines = [f"{title}: {sum(g.runs for g in rows)} finished runs, {len(rows)} configurations",
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g in rows:
        cells = [_stat(*g.metrics[k]) if k in g.metrics else "–" for k in keys]
        lines.append("| " + " | ".join([g.label, str(g.runs), g.epochs, *cells]) + " |")
    return "\n".join(lines)


def _stat(mean: float, std: float | None) -> str:
    return f"{mean:.4g}" if std is None else f"{mean:.4g} ± {std:.2g}"
