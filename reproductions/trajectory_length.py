"""Paper b (LTC) Table 2 and Figure 2: solver steps and trajectory length of random networks.

For every spec under specs/hasani2021/table2 (and figure2), including the ``paper-text``
variants, builds the spec's untrained model for the run seeds 1..N (each seed is one draw of
the random weights), integrates it over the circle input with the spec's solver and records,
per draw, the computational depth (attempted dopri5 steps per input sample) and the arc length
of the first two principal components of the hidden states. Each draw is one finished MLflow
run tagged as ``zoo run`` tags a run (resolved spec, spec hash, seed, commit, device; plus
``zoo.trained = false``) with ``test/depth`` and ``test/trajectory_length``, so ``zoo report
hasani2021/table2`` counts it and ``zoo report --export`` records it. Draws already in the
store (same spec hash and seed) are not measured again, so an interrupted run resumes.

    .venv/bin/python reproductions/trajectory_length.py --tries 100 \\
        --tracking-uri sqlite:////tmp/repro/mlruns.db
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch
from tqdm import tqdm

from zoo.build_context import DataShape
from zoo.model import ZooModel
from zoo.results.runs import finished_runs
from zoo.runner import start_tracked
from zoo.spec.identity import spec_hash
from zoo.spec.validate import load_spec
from zoo.tracking.mlflow_run import MlflowRun

ROOT = Path(__file__).resolve().parents[1]
DRAWN = [*sorted((ROOT / "specs/hasani2021/table2").rglob("*.yaml")),
         *sorted((ROOT / "specs/hasani2021/figure2").rglob("*.yaml"))]


def measure(uri: str, spec) -> dict[str, float]:
    """Build ``spec``'s random network, measure it on the test split, log it as a run."""
    bundle = spec.data.load()
    split = bundle.test
    shape = DataShape(bundle.input_channels, bundle.static_channels, split.values.shape[1],
                      bundle.task)
    model = ZooModel(spec, shape)
    path = spec.model.control.path(split.times, spec.model.control.prepare(split.times,
                                                                           split.values))
    start = time.perf_counter()
    out = model.body.trajectory_length(path)
    samples = split.values.shape[1]
    metrics = {"test/depth": out.steps / samples, "test/trajectory_length": out.length[0].item(),
               "test/explained_variance": out.explained[0].item(), "test/nfe": out.nfe,
               "time/measure_seconds": time.perf_counter() - start}
    tracker = MlflowRun(uri)
    start_tracked(tracker, spec, model, bundle, torch.device("cpu"), {
        "zoo.smoke": "false", "zoo.trained": "false", "zoo.implementation": "generic"})
    tracker.log_metrics(metrics, step=0)
    tracker.finish("FINISHED")
    return metrics


def logged_draws(uri: str, spec) -> dict[int, dict[str, float]]:
    """Metrics of the draws of ``spec`` (its spec hash) already in the store, by seed."""
    draws: dict[int, dict[str, float]] = {}
    for run in finished_runs(uri, f"tags.`zoo.spec_hash` = '{spec_hash(spec)}'"):
        seed = int(run.data.tags.get("zoo.seed", "0"))
        if "test/depth" in run.data.metrics:
            draws.setdefault(seed, dict(run.data.metrics))
    return draws


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", type=Path, default=DRAWN)
    ap.add_argument("--tries", type=int, default=100,
                    help="weight draws per Table 2 spec: seeds 1..N (Figure 2: its spec's seeds)")
    ap.add_argument("--tracking-uri", default="sqlite:///mlruns.db")
    args = ap.parse_args()
    torch.set_num_threads(1)  # the lengths of chaotic networks change with float rounding
    for spec_path in args.specs:
        recipe, _ = load_spec(spec_path)
        seeds = (recipe.train.seeds if "figure2" in recipe.reproduces
                 else range(1, args.tries + 1))
        start, depths, lengths = time.perf_counter(), [], []
        logged = logged_draws(args.tracking_uri, recipe)
        label = recipe.reproduces + (f" [{recipe.variant}]" if recipe.variant else "")
        for seed in tqdm(seeds, desc=label, unit="draw", leave=False):
            spec = recipe.model_copy(update={"seed": seed})
            metrics = logged.get(seed) or measure(args.tracking_uri, spec)
            depths.append(metrics["test/depth"])
            lengths.append(metrics["test/trajectory_length"])
        sd = statistics.pstdev(depths) if len(depths) > 1 else 0.0
        print(f"{label}: depth {statistics.mean(depths):.3f} ± {sd:.3f}, "
              f"length {statistics.median(lengths):.1f} (median) over {len(depths)} draws "
              f"({sum(s in logged for s in seeds)} already logged), "
              f"{time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
