"""Paper b (LTC): run the authors' own TensorFlow scripts here, to tell a gap in the paper's
numbers from a gap in this package.

The LTC paper's Table 3 and Table 6 numbers come from ``experiments_with_ltcs/<task>.py`` of the
authors' repository (raminmh/liquid_time_constant_networks). This script runs those files as
they are, from a checkout you pass with ``--repo``, in a temporary folder, changing one line of
each: ``import tensorflow as tf`` becomes TensorFlow 2's TF1 interface
(``tensorflow.compat.v1`` with v2 behaviour off), which runs their graph code unchanged. It
needs a Python with ``tensorflow<2.16`` (Keras 2, for ``tf.compat.v1.layers``), numpy<2 and
pandas, given by ``--python``; it puts the dataset files where the scripts read them (from
zoo's cache, the data mirror or the official download, as ``zoo data fetch`` does). The
scripts set no random seed, so each run is one independent draw, as the paper's five runs were.

Each finished run appends one JSON line to ``reproductions/authors/<entry id>.jsonl``: the
script's best-validation test number as the script wrote it, its best epoch, the TensorFlow
version, the repository commit, the date and the wall time. ``--page`` rewrites the marked
section of ``docs/reproduction.md`` from those files, the registry and the zoo records, and
``tests/report/test_records.py`` fails when the section differs from what they give.

    python3 -m venv /tmp/tfenv && /tmp/tfenv/bin/pip install 'tensorflow-cpu==2.15.1' pandas
    .venv/bin/python reproductions/authors_scripts.py --repo PATH/liquid_time_constant_networks \\
        --python /tmp/tfenv/bin/python gesture lstm --runs 5
    .venv/bin/python reproductions/authors_scripts.py --page docs/reproduction.md
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOT = REPO / "reproductions" / "authors"
BEGIN, END = "<!-- authors-scripts:begin -->", "<!-- authors-scripts:end -->"
TF1 = "import tensorflow.compat.v1 as tf; tf.disable_v2_behavior()"
MODELS = ("lstm", "ctrnn", "node", "ctgru", "ltc")


@dataclass(frozen=True)
class Task:
    script: str  # experiments_with_ltcs/<script>.py
    entry: str  # registry id prefix; the model name completes it
    column: int  # column of the script's result CSV holding the reported test number
    dataset: str  # zoo dataset whose files the script reads


TASKS = {
    "gesture": Task("gesture", "hasani2021/table3/gesture", 6, "gesture"),
    "ozone": Task("ozone", "hasani2021/table3/ozone", 6, "ozone"),
    "occupancy": Task("occupancy", "hasani2021/table3/occupancy", 6, "occupancy"),
    "traffic": Task("traffic", "hasani2021/table3/traffic", 5, "traffic"),
    "half-cheetah": Task("cheetah", "hasani2021/table6/half-cheetah", 5, "cheetah"),
}


def _place_data(task: Task, work: Path) -> None:
    """The dataset files where the script opens them: ``data/<script>/``."""
    from zoo.data.fetch import fetch

    if task.dataset == "gesture":
        from zoo.datasets.ltc.gesture import ARCHIVE, FILES, RECORD
        with zipfile.ZipFile(fetch(RECORD, ARCHIVE)) as archive:
            for member in archive.namelist():
                if Path(member).name in FILES:
                    (work / "data/gesture" / Path(member).name).write_bytes(archive.read(member))
    elif task.dataset == "traffic":  # the script reads the CSV the official .csv.gz holds
        from zoo.datasets.ltc.traffic import FILE, RECORD
        (work / "data/traffic" / FILE.removesuffix(".gz")).write_bytes(
            gzip.decompress(fetch(RECORD, FILE).read_bytes()))
    else:
        record = importlib.import_module(f"zoo.datasets.ltc.{task.dataset}").RECORD
        for rf in record.files:
            (work / "data" / task.script / rf.name).write_bytes(fetch(record, rf.name).read_bytes())


def _stage(repo: Path, task: Task, work: Path) -> None:
    """The task's script and the two model files, with TensorFlow's TF1 interface."""
    source = repo / "experiments_with_ltcs"
    for name in (f"{task.script}.py", "ltc_model.py", "ctrnn_model.py"):
        text = (source / name).read_text(encoding="utf-8")
        if "import tensorflow as tf\n" not in text:
            sys.exit(f"error: {source / name} has no line 'import tensorflow as tf'")
        (work / name).write_text(text.replace("import tensorflow as tf\n", TF1 + "\n", 1),
                                 encoding="utf-8")
    (work / "data" / task.script).mkdir(parents=True)
    _place_data(task, work)


def _run_once(python: str, task: Task, model: str, work: Path) -> tuple[float, int]:
    """Run the script once; its reported test number and best epoch (the last CSV line)."""
    log = work / "run.log"
    with log.open("w") as out:
        done = subprocess.run([python, f"{task.script}.py", "--model", model], cwd=work,
                              stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        sys.exit(f"error: {task.script}.py --model {model} exited {done.returncode}:\n"
                 + "\n".join(tail))
    result = next((work / "results" / task.script).glob(f"{model}_32*.csv"))
    last = result.read_text().strip().splitlines()[-1].split(",")
    return float(last[task.column]), int(last[0])


def run(repo: Path, python: str, task_name: str, model: str, runs: int, root: Path) -> None:
    task = TASKS[task_name]
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or None
    version = subprocess.run([python, "-c", "import tensorflow as t; print(t.__version__)"],
                             capture_output=True, text=True).stdout.strip().splitlines()[-1:]
    out = root / f"{task.entry}/{model}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="zoo-authors-") as tmp:
        work = Path(tmp)
        _stage(repo, task, work)
        for i in range(1, runs + 1):
            start, when = time.time(), datetime.now(timezone.utc)
            value, epoch = _run_once(python, task, model, work)
            line = {"id": f"{task.entry}/{model}", "value": value, "best_epoch": epoch,
                    "tensorflow": version[0] if version else None, "repo_commit": commit,
                    "date": when.isoformat(timespec="seconds"),
                    "seconds": round(time.time() - start, 1)}
            with out.open("a", encoding="utf-8") as f:
                f.write(json.dumps(line) + "\n")
            print(f"{task.entry}/{model} run {i}/{runs}: {value} (best epoch {epoch})")


def load(root: Path = ROOT) -> dict[str, list[dict]]:
    """The recorded runs of the authors' scripts, by entry id."""
    found: dict[str, list[dict]] = {}
    for path in sorted(root.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            found.setdefault(row["id"], []).append(row)
    return found


def _stats(values: list[float], places: int) -> str:
    """``mean ± std (n=N)`` over runs (ddof=0), as the results section prints zoo's seeds."""
    from zoo.report.render import stats_text
    from zoo.report.table import summarise

    summary = summarise(values)
    return stats_text(summary.mean, summary.std, summary.n, places)


def section(root: Path = ROOT) -> str:
    """The page section: per entry, the paper, the authors' scripts run here and zoo's records
    (both in the paper's units: the scripts print them so)."""
    from zoo.report.records import load as load_records
    from zoo.report.render import decimals, stats_text
    from zoo.results.published import load_registry

    registry = load_registry().entries
    ours = load_records(REPO / "reproductions" / "results")
    lines = [BEGIN, "",
             "| id | paper | the authors' script here | zoo (its records) | TensorFlow |",
             "|---|---|---|---|---|"]
    for entry_id, rows in load(root).items():
        entry = registry[entry_id]
        places = decimals(entry.mean, entry.std)
        paper = stats_text(entry.mean, entry.std, entry.n, places)
        mine = [r.value * entry.metric.scale for r in ours.get(entry_id, [])]
        lines.append(
            f"| {entry_id} | {paper} | {_stats([r['value'] for r in rows], places)} "
            f"| {_stats(mine, places) if mine else '–'} "
            f"| {', '.join(sorted({str(r['tensorflow']) for r in rows}))} |")
    return "\n".join([*lines, "", END])


def write_page(page: Path, root: Path = ROOT) -> None:
    text = page.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit(f"error: {page} needs a '{BEGIN}' line, then a '{END}' line")
    page.write_text(text[:start] + section(root) + text[end + len(END):], encoding="utf-8")
    print(f"{page}: the authors' scripts section rewritten")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", nargs="?", choices=sorted(TASKS))
    parser.add_argument("model", nargs="?", choices=MODELS)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--repo", type=Path, help="checkout of liquid_time_constant_networks")
    parser.add_argument("--python", help="a Python with tensorflow<2.16, numpy<2 and pandas")
    parser.add_argument("--records", type=Path, default=ROOT)
    parser.add_argument("--page", type=Path, help="rewrite this page's marked section")
    args = parser.parse_args(argv)
    if args.task:
        if not (args.model and args.repo and args.python):
            parser.error("a task needs a model, --repo and --python")
        run(args.repo, args.python, args.task, args.model, args.runs, args.records)
    if args.page:
        write_page(args.page, args.records)
    if not (args.task or args.page):
        parser.error("name a task and model to run, or --page to write")


if __name__ == "__main__":
    main()
