"""``zoo predict`` and ``zoo evaluate``: a trained model (run id or checkpoint) on a new file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import InputError
from ..outputs import check_output_file

OUTPUT_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")
SHOWN_ROWS = 20


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("predict", help="predict every series of a table or arrays file with a "
                                       "trained model")
    _common(p)
    p.add_argument("--output", type=Path, metavar="FILE",
                   help="write the predictions to a .csv, .tsv or .parquet file (default: print "
                        "a short table)")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("evaluate", help="the readout's metrics of a trained model on a "
                                        "labelled file")
    _common(p)
    p.set_defaults(func=cmd_evaluate)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", metavar="RUN_ID|CHECKPOINT.pt",
                   help="an MLflow run id (its checkpoints/best.pt) or a checkpoint file")
    p.add_argument("--data", required=True, metavar="FILE",
                   help="file read with the run's data options (kind table or arrays)")
    p.add_argument("--tracking-uri", help="MLflow tracking URI of the run (default: "
                                          "MLFLOW_TRACKING_URI, or sqlite:///mlruns.db here)")
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], help="device (default: spec)")
    p.add_argument("--batch-size", type=int, help="series per batch (default: the spec's "
                                                  "eval_batch_size or batch_size)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _load(args: argparse.Namespace):
    from ..predict import load_model

    model = load_model(args.model, tracking_uri=args.tracking_uri, device=args.device)
    model.check_readable()
    return model


def cmd_predict(args: argparse.Namespace) -> int:
    out = args.output
    if out is not None:
        if out.suffix.lower() not in OUTPUT_SUFFIXES:
            raise InputError(f"--output {out}: give a .csv, .tsv or .parquet file")
        check_output_file(out, "--output", (Path(args.data),))
    model = _load(args)
    frame = model.predict(args.data, batch_size=args.batch_size, progress=not args.no_progress)
    if out is None:
        import pandas as pd

        with pd.option_context("display.width", 120, "display.max_columns", 12):
            print(frame.to_string(index=False, max_rows=SHOWN_ROWS, float_format="{:.4f}".format))
        if len(frame) > SHOWN_ROWS:
            print(f"{len(frame)} rows; --output FILE writes them all", file=sys.stderr)
        return 0
    from ..predict import write_table

    write_table(frame, out)
    print(f"wrote {len(frame)} rows to {out}", file=sys.stderr)
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    model = _load(args)
    metrics = model.evaluate(args.data, batch_size=args.batch_size,
                             progress=not args.no_progress)
    width = max(map(len, metrics), default=0)
    for name, value in metrics.items():
        print(f"{name:<{width}}  {value:.6g}")
    return 0
