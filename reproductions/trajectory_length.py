"""Paper b (LTC) Table 2 and Figure 2: solver steps and trajectory length of random networks.

For every spec under specs/hasani2021/table2 (and figure2), builds the spec's untrained model
for the weight seeds 1..N (``model.field.seed``), integrates it over the circle input with the
spec's solver and records, per draw, the computational depth (attempted dopri5 steps per input
sample) and the arc length of the first two principal components of the hidden states. Each
draw is logged as a finished MLflow run tagged like a ``zoo run`` (``zoo.reproduces``,
``zoo.seed``) with ``test/depth`` and ``test/trajectory_length``, so ``zoo report
hasani2021/table2`` compares them with the paper. Draws already logged in the store (same
``zoo.reproduces`` and seed) are not measured again, so an interrupted run resumes where it
stopped.

    .venv/bin/python reproductions/trajectory_length.py --tries 100 \
        --tracking-uri sqlite:////tmp/repro/mlruns.db
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import mlflow
import torch
from tqdm import tqdm

from zoo.build_context import DataShape
from zoo.model import ZooModel
from zoo.results.runs import finished_runs
from zoo.spec.validate import load_spec

ROOT = Path(__file__).resolve().parents[1]


def measure(spec_path: Path, seed: int) -> dict[str, float]:
    spec, _ = load_spec(spec_path, [f"model.field.seed={seed}"])
    bundle = spec.data.load()
    split = bundle.test
    shape = DataShape(bundle.input_channels, bundle.static_channels, split.values.shape[1],
                      bundle.task)
    model = ZooModel(spec, shape)
    path = spec.model.control.path(split.times, spec.model.control.prepare(split.times,
                                                                           split.values))
    out = model.body.trajectory_length(path)
    samples = split.values.shape[1]
    return {"test/depth": out.steps / samples, "test/trajectory_length": out.length[0].item(),
            "test/explained_variance": out.explained[0].item(), "test/nfe": out.nfe}


def logged_draws(uri: str, reproduces: str) -> dict[int, dict[str, float]]:
    """Metrics of the draws of ``reproduces`` already in the store, by seed (newest wins)."""
    draws: dict[int, dict[str, float]] = {}
    for run in finished_runs(uri, f"tags.`zoo.reproduces` = '{reproduces}'"):
        seed = int(run.data.tags.get("zoo.seed", "0"))
        if seed and "test/depth" in run.data.metrics:
            draws.setdefault(seed, dict(run.data.metrics))
    return draws


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", type=Path,
                    default=sorted((ROOT / "specs/hasani2021/table2").rglob("*.yaml"))
                    + sorted((ROOT / "specs/hasani2021/figure2").rglob("*.yaml")))
    ap.add_argument("--tries", type=int, default=100, help="weight draws (seeds 1..N)")
    ap.add_argument("--tracking-uri", default="sqlite:///mlruns.db")
    args = ap.parse_args()
    mlflow.set_tracking_uri(args.tracking_uri)
    torch.set_num_threads(1)
    for spec_path in args.specs:
        spec, _ = load_spec(spec_path)
        tries = 1 if "figure2" in spec.reproduces else args.tries
        mlflow.set_experiment(spec.tracking.experiment or spec.name)
        start, depths, lengths = time.perf_counter(), [], []
        logged = logged_draws(args.tracking_uri, spec.reproduces)
        for seed in tqdm(range(1, tries + 1), desc=spec.reproduces, unit="draw", leave=False):
            metrics = logged.get(seed) or measure(spec_path, seed)
            depths.append(metrics["test/depth"])
            lengths.append(metrics["test/trajectory_length"])
            if seed in logged:
                continue
            with mlflow.start_run(run_name=f"{spec.name}-seed{seed}"):
                mlflow.set_tags({"zoo.reproduces": spec.reproduces, "zoo.seed": str(seed),
                                 "zoo.spec": str(spec_path.resolve().relative_to(ROOT))})
                mlflow.log_params({"model.field.seed": seed,
                                   "model.field.model": spec.model.field.model,
                                   "model.field.activation": spec.model.field.activation,
                                   "model.field.width": spec.model.field.width})
                mlflow.log_metrics(metrics)
        sd = statistics.pstdev(depths) if len(depths) > 1 else 0.0
        print(f"{spec.reproduces}: depth {statistics.mean(depths):.3f} ± {sd:.3f}, "
              f"length {statistics.median(lengths):.1f} (median) over {tries} draws "
              f"({sum(s <= tries for s in logged)} already logged), "
              f"{time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
