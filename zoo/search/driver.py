"""``zoo search``: open (or resume) the study, take its trials in worker processes, then log
the result on the search's parent run and write the best spec."""

from __future__ import annotations

import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError, ZooError
from ..outputs import check_output_file
from ..sweep.ray_executor import gpus_each, preflight, ray_session
from ..tracking.mlflow_run import MlflowRun, check_store, resolve_uri
from .study import (PARENT_ATTR, SearchJob, counted, default_storage, open_study,
                    take_trials)


@dataclass
class SearchOptions:
    overrides: list[str] = field(default_factory=list)
    tracking_uri: str | None = None
    storage: str | None = None
    workers: int = 1
    executor: str = "local"  # local or ray
    address: str | None = None  # Ray cluster; default: a local Ray instance
    cpus_per_trial: float = 1.0
    gpus_per_trial: float | None = None  # default one per trial where the cluster has GPUs
    best_out: str | None = None
    progress: bool = False


@dataclass
class SearchResult:
    study: str
    storage: str
    parent_run_id: str
    best: Any  # the best optuna FrozenTrial, None when no trial completed
    best_spec: Path | None
    counts: dict[str, int]


def search(spec_path: str, opts: SearchOptions) -> SearchResult:
    """Run the search of ``spec_path`` to its number of trials; see :mod:`.study`."""
    from ..spec.validate import load_spec

    if opts.executor == "ray":
        preflight(opts.address)
    spec, _ = load_spec(spec_path, opts.overrides)
    if spec.search is None:
        raise InputError(f"{spec_path}: no search: section (see docs/search.md)")
    uri = resolve_uri(opts.tracking_uri, spec.tracking.uri)
    check_store(uri)
    storage = default_storage(spec.search, uri, opts.storage)
    name = spec.search.study or spec.name
    best_out = Path(opts.best_out or f"{name}.best.yaml")
    check_output_file(best_out, "--best")
    study = open_study(spec.search, spec, storage, name)
    tracker = _parent_run(study, spec, uri)
    job = SearchJob(str(Path(spec_path).resolve()), tuple(opts.overrides), uri, storage, name,
                    tracker.run_id, spec.search.total_trials())
    try:
        _take(job, opts, job.total - counted(study))
        result = summarise(study, spec, tracker, Path(spec_path), opts, storage, best_out)
    except (KeyboardInterrupt, ZooError):
        tracker.finish("KILLED")
        raise
    except BaseException:
        tracker.finish("FAILED")
        raise
    tracker.finish("FINISHED")
    return result


def _take(job: SearchJob, opts: SearchOptions, missing: int) -> None:
    """The ``missing`` trials of ``job`` taken here, or shared out among worker processes or
    Ray tasks (each takes its share, so that together they take no more)."""
    shares = [missing // opts.workers + (i < missing % opts.workers)
              for i in range(opts.workers)]
    shares = [n for n in shares if n]
    if opts.executor == "ray":
        with ray_session(opts.address, len(shares), opts.cpus_per_trial) as ray:
            gpus = gpus_each(ray, opts.gpus_per_trial, opts.address, "trial")
            task = ray.remote(take_trials).options(num_cpus=opts.cpus_per_trial,
                                                   num_gpus=gpus, max_retries=0)
            ray.get([task.remote(job, n, False, i) for i, n in enumerate(shares)])
    elif len(shares) > 1:
        _take_in_processes(job, shares)
    elif shares:
        take_trials(job, shares[0], opts.progress)


def _take_in_processes(job: SearchJob, shares: list[int]) -> None:
    """Each share taken by a spawned process of its own, so that one that dies (killed, out of
    memory) leaves the others taking theirs; ZooError afterwards if any died."""
    context = get_context("spawn")
    pools = [ProcessPoolExecutor(1, mp_context=context) for _ in shares]
    try:
        futures = [pool.submit(take_trials, job, n, False, i)
                   for i, (pool, n) in enumerate(zip(pools, shares))]
        died = 0
        for done in futures:
            try:
                done.result()
            except BrokenProcessPool:
                died += 1
    finally:
        for pool in pools:
            pool.shutdown()
    if died:
        raise ZooError(f"{died} of {len(shares)} search worker processes died (killed, or out of "
                       f"memory); the others took their trials. Run the same zoo search again: "
                       f"it fails the dead workers' trials once their heartbeat has stopped and "
                       f"takes the trials still missing")


def _parent_run(study, spec: Any, uri: str) -> MlflowRun:
    """The search's parent run: the study's, taken up again on a resume, else a new one."""
    tracker = MlflowRun(uri)
    parent = study.user_attrs.get(PARENT_ATTR)
    if parent is not None:
        tracker.client.update_run(parent, status="RUNNING")
        run = tracker.client.get_run(parent)
        tracker.run_id, tracker.experiment_id = parent, run.info.experiment_id
        return tracker
    tracker.start(spec.tracking.experiment or spec.name or "zoo", f"{spec.name}-search",
                  {"zoo.search": study.study_name})
    study.set_user_attr(PARENT_ATTR, tracker.run_id)
    return tracker


def summarise(study, spec: Any, tracker: MlflowRun, spec_path: Path, opts: SearchOptions,
              storage: str, best_out: Path) -> SearchResult:
    """Log the best value and parameters, the trial counts and the plots on the parent run,
    and write the best spec."""
    states = [t.state.name.lower() for t in study.get_trials(deepcopy=False)]
    counts = {s: states.count(s) for s in ("complete", "pruned", "fail", "running")}
    metric, _ = spec.search.objective(spec)
    tracker.log_metrics({f"trials/{s}": n for s, n in counts.items()}, step=0)
    best, path = None, None
    if counts["complete"]:
        best = study.best_trial
        # tags, not params: a resumed search may find another best (params cannot change)
        tracker.set_tags({f"best.{k}": str(v) for k, v in best.params.items()})
        tracker.log_metrics({f"best/{metric}": best.value, "best/trial": best.number}, step=0)
        path = write_best_spec(spec_path, opts.overrides, best, metric, best_out)
        tracker.log_file(path)
    with tempfile.TemporaryDirectory(prefix="zoo-search-") as tmp:
        for png in plots(study, Path(tmp)):
            tracker.log_file(png, "plots")
    return SearchResult(study.study_name, storage, tracker.run_id, best, path, counts)


def write_best_spec(spec_path: Path, overrides: list[str], best, metric: str, out: Path) -> Path:
    """A spec that extends the searched one with the best trial's values (and the command
    line's overrides but those of the search itself), without its search: ``zoo run`` and
    ``zoo sweep`` take it."""
    from ..located_yaml import Loc, Source
    from ..spec.validate import apply_overrides
    from .study import as_overrides

    trained = [o for o in overrides if o.partition("=")[0].strip().split(".")[0] != "search"]
    src = Source({}, {}, {}, Loc(str(out), 0, 0))
    apply_overrides(src, [*trained, *as_overrides(best.params)])
    relative = os.path.relpath(spec_path.resolve(), out.resolve().parent)
    header = (f"# the best trial ({best.number}) of a search of {spec_path.name}: {metric} "
              f"{best.value:.6g}\n")
    text = header + yaml.safe_dump({"extends": relative, "search": None, **src.data},
                                   sort_keys=False)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, out)
    return out


def plots(study, folder: Path) -> list[Path]:
    """The optimisation history and, with two complete trials or more, the parameters'
    importances, as PNG files."""
    from matplotlib.figure import Figure
    from optuna.importance import get_param_importances

    complete = [t for t in study.get_trials(deepcopy=False) if t.value is not None]
    if not complete:
        return []
    out = []
    figure = Figure(figsize=(7, 4))
    ax = figure.subplots()
    ax.plot([t.number for t in complete], [t.value for t in complete], "o", label="trial")
    best = (max if study.direction.name == "MAXIMIZE" else min)
    running = [best(t.value for t in complete[:i + 1]) for i in range(len(complete))]
    ax.step([t.number for t in complete], running, where="post", label="best so far")
    ax.set(xlabel="trial", ylabel="objective", title=f"search {study.study_name}")
    ax.legend()
    out.append(folder / "optimization_history.png")
    figure.savefig(out[-1], dpi=100)
    if len(complete) >= 2 and len({tuple(t.params.items()) for t in complete}) >= 2:
        try:
            importances = get_param_importances(study)
        except (RuntimeError, ValueError):
            return out
        figure = Figure(figsize=(7, 1 + 0.5 * len(importances)))
        ax = figure.subplots()
        ax.barh(list(importances)[::-1], list(importances.values())[::-1])
        ax.set(xlabel="importance (fANOVA)", title="parameter importances")
        figure.tight_layout()
        out.append(folder / "param_importances.png")
        figure.savefig(out[-1], dpi=100)
    return out
