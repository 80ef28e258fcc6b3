"""The spec and model commands: ``run``, ``validate``, ``schema``, ``list``."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from .. import registry
from ..errors import InputError, PluginError, SpecError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="train a spec and track it in MLflow")
    p.add_argument("spec", nargs="?", help="spec YAML file")
    p.add_argument("-o", "--override", action="append", default=[], metavar="KEY=VALUE",
                   help="override a spec value, e.g. -o train.epochs=5 (repeatable)")
    p.add_argument("--seed", type=_seed, help="seed (overrides the spec's)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], help="device (default: spec)")
    p.add_argument("--threads", type=thread_count,
                   help="CPU threads of torch's operations and the compiled kernels (default: "
                        "one per core; give 1 per run where several runs share the cores)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI (default: spec, "
                                          "MLFLOW_TRACKING_URI, or sqlite:///mlruns.db here)")
    p.add_argument("--resume", metavar="RUN_ID", help="continue an interrupted run")
    p.add_argument("--data-note", metavar="TEXT",
                   help="label the run's data as not the named dataset's (a modified or "
                        "synthetic copy): tag zoo.partial_data, shown beside its results")
    p.add_argument("--force", action="store_true",
                   help="with --resume: take over a run marked RUNNING whose process zoo cannot "
                        "check (another host); only once that process is gone")
    p.add_argument("--smoke", action="store_true",
                   help="one epoch on a tiny version of the dataset (checks a spec end to end)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("validate", help="check specs without running them (exit 0 or 2)")
    p.add_argument("specs", nargs="+", metavar="SPEC|DIR",
                   help="spec files, or folders (every spec below, shared _bases skipped)")
    p.add_argument("-o", "--override", action="append", default=[], metavar="KEY=VALUE")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("schema", help="print the JSON Schema of a spec (all installed plugins)")
    p.add_argument("--output", type=Path, help="write to this file instead of stdout")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("list", help="list installed components by group")
    p.add_argument("group", nargs="?", help=f"one of: {', '.join(registry.GROUPS)}")
    p.set_defaults(func=cmd_list)


def _seed(text: str) -> int:
    """An argparse type: an integer torch accepts as a seed."""
    from ..limits import seed_in_range

    try:
        return seed_in_range(int(text))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc) if "range" in str(exc)
                                         else f"not an integer: {text!r}") from None


def thread_count(text: str) -> int:
    """An argparse type: a thread count, 1 to :data:`zoo.limits.MAX_THREADS` (torch crashes on
    far larger ones)."""
    from ..limits import MAX_THREADS

    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_THREADS:
        raise argparse.ArgumentTypeError(f"not a thread count from 1 to {MAX_THREADS}: {text!r}")
    return value


def resources(text: str, *, positive: bool) -> float:
    """``text`` as a finite number above 0 (``positive``) or of at least 0: Ray's CPUs or GPUs
    per task."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (math.isfinite(value) and (value > 0 if positive else value >= 0)):
        raise argparse.ArgumentTypeError(f"not a number {'above' if positive else 'of at least'} "
                                         f"0: {text!r}")
    return value


def cmd_run(args: argparse.Namespace) -> int:
    from ..spec.validate import load_spec

    # bad arguments and a bad spec are reported before torch and MLflow are imported (seconds)
    spec = None
    if args.resume:
        if args.spec or args.override or args.seed is not None or args.data_note:
            raise InputError("--resume continues a run with its own spec and data label; do not "
                             "pass a spec, -o overrides, --seed or --data-note with it")
    else:
        if not args.spec:
            raise InputError("zoo run: give a spec file (or --resume RUN_ID)")
        if args.force:
            raise InputError("--force applies to --resume only")
        spec, _ = load_spec(args.spec, args.override)

    import torch

    from .. import runner
    from ..tracking.deferred_interrupt import sigterm_interrupts
    from ..tracking.mlflow_run import run_url, ui_command

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    opts = runner.RunOptions(seed=args.seed, device=args.device, tracking_uri=args.tracking_uri,
                             smoke=args.smoke, progress=not args.no_progress, force=args.force,
                             keep_freed_blocks=True,  # the process is zoo's own
                             data_note=args.data_note)
    with sigterm_interrupts():  # a scheduler's stop ends the run as Ctrl-C does
        result = runner.resume(args.resume, opts) if spec is None else runner.run(spec, opts)
    shown = ", ".join(f"{k} {v:.4f}" for k, v in result.test.items())
    print(f"run {result.run_id} finished (best epoch {result.best_epoch}): {shown}")
    print(f"browse it with: {ui_command(result.uri)}")
    if result.experiment_id is not None:
        print(f"run page: {run_url(result.uri, result.experiment_id, result.run_id)}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from ..spec.files import spec_files
    from ..spec.validate import load_spec

    failed = False
    for path in [f for target in args.specs for f in _expand(target, spec_files)]:
        try:
            load_spec(path, args.override)
        except SpecError as exc:
            failed = True
            print(exc, file=sys.stderr)
        except InputError as exc:
            failed = True
            print(f"error: {exc}", file=sys.stderr)
        else:
            print(f"{path}: ok")
    return 2 if failed else 0


def _expand(target: str, find) -> list:
    """Folders become the specs below them; anything else is kept (and reported if missing)."""
    return find(target) if Path(target).is_dir() else [target]


def cmd_schema(args: argparse.Namespace) -> int:
    from ..spec.schema import json_schema

    text = json.dumps(json_schema(), indent=2)
    if args.output is None:
        print(text)
        return 0
    from ..outputs import atomic_write, check_output_file

    check_output_file(args.output, "--output")
    atomic_write(args.output, lambda tmp: tmp.write_text(text + "\n"))
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _has_fast_path(entry) -> bool:
    try:
        return bool(getattr(entry.load(), "fast_path", False))
    except PluginError:
        return False


def cmd_list(args: argparse.Namespace) -> int:
    groups = [args.group] if args.group else list(registry.GROUPS)
    for group in groups:
        entries = registry.entries(group)
        print(f"{group}:")
        width = max((len(n) for n in entries), default=0)
        for name in sorted(entries):
            e = entries[name]
            fast = " [fast path]" if group == "fields" and _has_fast_path(e) else ""
            print(f"  {name:<{width}}  [{e.distribution}]{fast}  {e.description}")
        if not entries:
            print("  (none installed)")
    return 0
