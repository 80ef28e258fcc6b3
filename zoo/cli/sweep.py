"""``zoo sweep``: run specs × seeds locally or on a Ray cluster; finished runs are skipped,
interrupted ones resumed."""

from __future__ import annotations

import argparse
import sys
from functools import partial

from ..errors import InputError
from .commands import thread_count, resources


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="run specs over seeds (local processes or Ray); "
                                     "runs that already finished are skipped, interrupted "
                                     "ones resumed")
    p.add_argument("specs", nargs="+", metavar="SPEC|DIR",
                   help="spec files or folders of specs (files named _*.yaml are skipped)")
    p.add_argument("--seeds", help="e.g. 1-5 or 1,3,5 (default: each spec's train.seeds)")
    p.add_argument("-o", "--override", action="append", default=[], metavar="KEY=VALUE",
                   help="override a value in every spec (repeatable)")
    p.add_argument("--workers", type=int, help="parallel runs on this machine (default: one "
                   "per CPU core, at most one per run); with --address the cluster decides")
    p.add_argument("--threads", type=thread_count, help="CPU threads per run on this machine "
                   "(default: cores ÷ workers); fewer where other work shares the cores")
    add_executor_options(p, "run")
    p.add_argument("--tracking-uri", help="MLflow store of every run (default: the specs', "
                                          "MLFLOW_TRACKING_URI, or sqlite:///mlruns.db here)")
    p.add_argument("--smoke", action="store_true",
                   help="one epoch on tiny data per run (never skipped, not a result)")
    p.add_argument("--restart", action="store_true",
                   help="start interrupted runs again from the first epoch (default: resume "
                        "each from its last checkpoint, in the same MLflow run)")
    p.set_defaults(func=cmd_sweep)


def add_executor_options(p: argparse.ArgumentParser, unit: str) -> None:
    """``--executor``, ``--address`` and Ray's resources per ``unit`` (a run, a trial)."""
    p.add_argument("--executor", choices=["local", "ray"], default="local")
    p.add_argument("--address", help="Ray cluster address (HOST:PORT, ray://HOST:PORT, auto); "
                   "default: start a local Ray instance")
    p.add_argument(f"--cpus-per-{unit}", type=partial(resources, positive=True), default=1.0,
                   help=f"Ray CPUs per {unit} (above 0)")
    p.add_argument(f"--gpus-per-{unit}", type=partial(resources, positive=False), default=None,
                   help=f"Ray GPUs per {unit} (a fraction shares a GPU; default: 1 where the "
                        f"cluster has GPUs, so one {unit} per GPU, else 0)")


def check_executor_options(args: argparse.Namespace) -> None:
    """``--workers`` below 1, or options of :func:`add_executor_options` that contradict each
    other: one message, before anything runs."""
    if args.workers is not None and args.workers < 1:
        raise InputError("--workers must be at least 1")
    if args.address and args.executor != "ray":
        raise InputError("--address needs --executor ray")


def cmd_sweep(args: argparse.Namespace) -> int:
    from ..sweep.plan import parse_seeds, plan

    check_executor_options(args)
    if args.threads and args.executor == "ray":
        raise InputError("--threads is for local runs; a Ray run has --cpus-per-run threads")
    seeds = parse_seeds(args.seeds) if args.seeds is not None else None
    # the specs are validated before torch and MLflow are imported: a bad one is reported at once
    jobs, spec_uris = plan(args.specs, seeds, args.override, args.smoke)

    from ..sweep.driver import SweepOptions, run_jobs
    from ..sweep.summary import progress_line, summary

    opts = SweepOptions(seeds=seeds, overrides=args.override, executor=args.executor,
                        workers=args.workers, threads=args.threads, address=args.address,
                        cpus_per_run=args.cpus_per_run, gpus_per_run=args.gpus_per_run,
                        tracking_uri=args.tracking_uri, smoke=args.smoke, restart=args.restart)
    outcomes = run_jobs(jobs, spec_uris, opts,
                        progress=lambda o: print(progress_line(o), file=sys.stderr))
    print(summary(outcomes))
    codes = {o.code for o in outcomes if o.code}
    if codes:  # SIGTERM or Ctrl-C: every run in progress is marked KILLED
        code = 143 if 143 in codes else max(codes)
        print(f"{'terminated' if code == 143 else 'interrupted'}; running the same zoo sweep "
              f"again resumes the interrupted runs and runs the seeds that did not start",
              file=sys.stderr)
        return code
    return 1 if any(o.status == "failed" for o in outcomes) else 0
