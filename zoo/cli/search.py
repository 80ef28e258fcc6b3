"""``zoo search``: run (or resume) a spec's hyperparameter search; write the best spec."""

from __future__ import annotations

import argparse
import sys

from .sweep import add_executor_options, check_executor_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="tune a spec over its search: space with Optuna (each "
                                      "trial an MLflow run); resumes a stopped search")
    p.add_argument("spec", help="spec file with a search: section")
    p.add_argument("-o", "--override", action="append", default=[], metavar="KEY=VALUE",
                   help="override a value of the spec (repeatable)")
    p.add_argument("--workers", type=int, default=1,
                   help="trials at once: processes on this machine, or Ray tasks (default 1)")
    add_executor_options(p, "trial")
    p.add_argument("--storage", help="SQLAlchemy URL of the study's database (default: "
                                     "search.storage, else optuna.db beside the run store)")
    p.add_argument("--best", metavar="FILE", help="where to write the best spec (default: "
                                                  "STUDY.best.yaml here)")
    p.add_argument("--tracking-uri", help="MLflow store of the runs (default: the spec's, "
                                          "MLFLOW_TRACKING_URI, or sqlite:///mlruns.db here)")
    p.set_defaults(func=cmd_search)


def cmd_search(args: argparse.Namespace) -> int:
    from ..spec.validate import load_spec

    check_executor_options(args)
    load_spec(args.spec, args.override)  # a bad spec is reported before torch and MLflow load

    from ..search.driver import SearchOptions, search
    from ..tracking.deferred_interrupt import sigterm_interrupts

    try:
        with sigterm_interrupts():  # a scheduler's stop ends the trial as Ctrl-C does
            result = search(args.spec, SearchOptions(
                args.override, args.tracking_uri, args.storage, args.workers, args.executor,
                args.address, args.cpus_per_trial, args.gpus_per_trial, args.best,
                progress=args.workers == 1 and args.executor == "local"
                and sys.stderr.isatty()))
    except KeyboardInterrupt:
        print("the trial in progress failed; running the same zoo search again resumes the "
              "study", file=sys.stderr)
        raise
    counts = ", ".join(f"{n} {state}" for state, n in result.counts.items() if n)
    print(f"study {result.study} ({result.storage}): {counts}")
    print(f"parent run {result.parent_run_id}")
    if result.best is None:
        print("no trial completed")
        return 1
    values = ", ".join(f"{k}={v}" for k, v in result.best.params.items())
    print(f"best: trial {result.best.number}, value {result.best.value:.6g} ({values})")
    print(f"best spec: {result.best_spec}  (zoo run {result.best_spec})")
    return 0
