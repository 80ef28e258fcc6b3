"""Benchmark: generic (plain torchdiffeq/torchcde) vs fast path, same spec, weights and batch.

Each case and implementation runs in fresh subprocesses, alternating over ``--rounds``, which
time training steps (forward, backward, Adam step; median over ``--repeats`` after one warm-up
step; with an adaptive solver each from the initial weights, so that both solve the same
problem) and the work any implementation must do (``floor.py``), and measure the peak
memory of a step beyond what torch's allocator held before the steps: on CPU the most bytes
the warm-up step held at once, counted from the allocation events of torch's profiler, on CUDA
``torch.cuda.max_memory_allocated``. The results go to
``docs/performance.md`` with the machine they ran on, between the markers of ``--section``
(``<!-- bench:NAME -->`` … ``<!-- /bench:NAME -->``; the rest of the page is kept).

    .venv/bin/python bench/run.py [--quick] [--cases NAME ...] [--threads N] [--device cpu]
                                  [--rounds N] [--section NAME] [--paper-batches] [--no-floor]
                                  [--save FILE]
    .venv/bin/python bench/run.py --from-results FILE --section NAME

``--save`` appends each measurement to a JSON Lines file as it comes (after a line naming the
machine, written when the run starts), so that a run cut short keeps what it measured and a later
run can add cases to the same file; ``--from-results`` writes the section from such a file
(``bench/results/``) instead of measuring: a case measured by several runs counts as its last.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from zoo.fast.solve.adaptive import ADAPTIVE  # noqa: E402
from zoo.training.allocator import keep_freed_blocks  # noqa: E402

#: ``paper_batch``: the recipe's batch size (``--paper-batches``), where it differs from the
#: case's ``batch`` (default 128)
SPEECH = {"channels": 21, "length": 161, "n_out": 10, "control": {"kind": "natural_cubic"},
          "paper_batch": 1024}
RK4 = {"kind": "torchdiffeq", "method": "rk4", "step_size": 1.0}
#: PhysioNet Sepsis without OI (specs/irie2022/_base/sepsis_no_oi.yaml): 35 inputs, 72 hours;
#: ``ends: varied``: each series ends at its own hour (the stays' lengths), so the adjoint
#: solves back segment by segment between the distinct end times the readout reads
SEPSIS = {"channels": 35, "length": 72, "n_out": 2, "control": {"kind": "natural_cubic"},
          "ends": "varied", "paper_batch": 1024}
LTC = {"channels": 8, "length": 32, "n_out": 4, "control": {"kind": "raw_steps"},
       "solver": {"kind": "ltc_fused", "unfolds": 6}}

#: paper c's recipe (specs/jacobian_ncde/_base): 3 channels, 182 steps, 20 classes, natural
#: cubic spline, h(t0) = 0, dopri5 with rtol = atol = 1e-3, backprop direct
CHARACTER_TRAJECTORIES = {"channels": 3, "length": 182, "n_out": 20,
                          "control": {"kind": "natural_cubic"}, "initial": "zeros",
                          "solver": {"kind": "torchdiffeq", "method": "dopri5", "rtol": 1e-3,
                                     "atol": 1e-3}}

#: name -> (data and model options, target fast/generic speed-up or None)
CASES: dict[str, tuple[dict, float | None]] = {
    "fwp-delta-cde": ({**SPEECH, "field": {"kind": "fwp", "rule": "delta", "form": "cde",
                                           "d_model": 80, "heads": 4, "d_ff": 320}}, 8.0),
    "fwp-hebb-cde": ({**SPEECH, "field": {"kind": "fwp", "rule": "hebb", "form": "cde",
                                          "d_model": 128, "heads": 32, "d_ff": 512}}, 20.0),
    "fwp-delta-ode": ({**SPEECH, "field": {"kind": "fwp", "rule": "delta", "form": "ode",
                                           "d_model": 160, "heads": 16, "d_ff": 80}}, 8.0),
    "fwp-oja-cde": ({**SPEECH, "field": {"kind": "fwp", "rule": "oja", "form": "cde",
                                         "d_model": 128, "heads": 32, "d_ff": 512}}, 3.0),
    "fwp-eigenworms-postdelta": (
        {"channels": 7, "length": 17_984, "n_out": 5, "batch": 16, "paper_batch": 181,
         "initial": "first_observation",
         "control": {"kind": "logsig", "depth": 1, "step": 4},
         "field": {"kind": "fwp", "rule": "delta", "delta": "post", "form": "ode",
                   "d_model": 128, "heads": 16, "d_ff": 64}}, 3.0),
    "ncde-speech": ({**SPEECH, "field": {"kind": "ncde", "hidden": 90, "hidden_hidden": 40,
                                         "layers": 4}}, 1.5),
    "ltc-32-b16": ({**LTC, "batch": 16, "field": {"kind": "ltc", "units": 32}}, 2.0),
    "ltc-32-b256": ({**LTC, "batch": 256, "field": {"kind": "ltc", "units": 32}}, 2.0),
    "ctrnn-32-b16": ({**LTC, "batch": 16, "field": {"kind": "ctrnn", "units": 32},
                      "solver": {"kind": "unfold"}}, 5.0),
    "node-32-b16": ({**LTC, "batch": 16, "field": {"kind": "node", "units": 32},
                     "solver": {"kind": "unfold", "method": "rk4"}}, 10.0),
    "ctgru-32-b16": ({**LTC, "batch": 16, "field": {"kind": "ctgru", "units": 32}}, 2.0),
    "lstm-32-b16": ({**LTC, "batch": 16, "field": {"kind": "lstm", "units": 32},
                     "solver": {"kind": "unfold"}}, 2.0),
    "jacobian-ncde": ({"channels": 3, "length": 101, "n_out": 10,
                       "control": {"kind": "hermite_cubic"},
                       "field": {"kind": "jacobian", "hidden": 128}}, None),
    "matrix-ncde": ({"channels": 3, "length": 101, "n_out": 10,
                     "control": {"kind": "hermite_cubic"},
                     "field": {"kind": "matrix_ncde", "hidden": 128}}, None),
    # paper c as shipped (specs/jacobian_ncde): CharacterTrajectories' shape, dopri5
    "jacobian-ncde-dopri5": ({**CHARACTER_TRAJECTORIES,
                              "field": {"kind": "jacobian", "hidden": 128}}, 1.3),
    "matrix-ncde-dopri5": ({**CHARACTER_TRAJECTORIES,
                            "field": {"kind": "matrix_ncde", "hidden": 128}}, None),
}
#: paper a's models as shipped (specs/irie2022): the continuous adjoint (--section shipped)
CASES |= {f"{name}-adjoint": ({**CASES[name][0], "backprop": "adjoint"}, target)
          for name, target in [("fwp-hebb-cde", 10.0), ("fwp-delta-cde", 5.0),
                               ("fwp-delta-ode", 5.0), ("fwp-oja-cde", 3.0),
                               ("fwp-eigenworms-postdelta", 3.0), ("ncde-speech", 1.3)]}
#: paper a's Sepsis specs as shipped (specs/irie2022/table1/sepsis-*): no-OI's Hebb-CDE, and
#: with the observational intensity (69 channels) the Hebb-ODE, the post-delta CDE and the
#: GRU-ODE baseline
CASES |= {
    "fwp-hebb-cde-sepsis-adjoint": (
        {**SEPSIS, "backprop": "adjoint",
         "field": {"kind": "fwp", "rule": "hebb", "form": "cde", "d_model": 160, "heads": 32,
                   "d_ff": 64}}, None),
    "fwp-hebb-ode-sepsis-oi-adjoint": (
        {**SEPSIS, "channels": 69, "backprop": "adjoint",
         "field": {"kind": "fwp", "rule": "hebb", "form": "ode", "d_model": 160, "heads": 32,
                   "d_ff": 64}}, None),
    "fwp-delta-cde-sepsis-oi-adjoint": (
        {**SEPSIS, "channels": 69, "backprop": "adjoint",
         "field": {"kind": "fwp", "rule": "delta", "delta": "post", "form": "cde",
                   "d_model": 80, "heads": 16, "d_ff": 64}}, None),
    "gru-ode-sepsis-oi-adjoint": (
        {**SEPSIS, "channels": 69, "backprop": "adjoint",
         "field": {"kind": "gru_ode", "hidden": 187}}, None),
}
#: paper a's fields outside the rank-one forms: App. C.1's two-layer model and the NRDE, whose
#: fast adjoint steps a ``stage_field`` under autograd (``FieldSteps``), and the GRU-ODE's
#: steps by hand (``GRUODESteps``)
_EIGENWORMS = CASES["fwp-eigenworms-postdelta-adjoint"][0]
CASES |= {
    "fwp-eigenworms-2layer-adjoint": (
        {**_EIGENWORMS, "field": {**_EIGENWORMS["field"], "layers": 2}}, None),
    "gru-ode-speech-adjoint": (
        {**SPEECH, "initial": "zeros", "backprop": "adjoint",
         "field": {"kind": "gru_ode", "hidden": 160}}, None),
    "nrde-eigenworms-adjoint": (
        {**_EIGENWORMS, "control": {"kind": "logsig", "depth": 2, "step": 4},
         "field": {"kind": "nrde", "hidden": 32, "hidden_hidden": 64, "layers": 3,
                   "share_hidden_weights": True, "tanh_position": "before_out"}}, None),
}
#: the cases of the short-sequence table (``--quick``'s default, ``make bench``): fixed steps,
#: backpropagation through the solver
SHORT = [name for name in CASES if not name.endswith(("-adjoint", "-dopri5"))]
#: ``--quick`` divides longer sequences by 4
QUICK_KEEPS = 64
#: the adjoint with the output times the model reads (the default; the authors' gradients)
ADJOINT_SECTION = {"kind": "adjoint", "outputs": "needed"}
#: adjoint-mode memory: (case, sequence-length factor)
ADJOINT = [("ncde-speech", 1), ("ncde-speech", 4)]


def build(case: str, impl: str, quick: bool, backprop: str | None, factor: int,
          dtype: torch.dtype, device: str, paper_batch: bool = False):
    """The case's model and batch; ``backprop`` None: the case's own (default direct);
    ``paper_batch``: the recipe's batch size where the case names one."""
    from zoo.build_context import DataShape
    from zoo.model import ZooModel
    from zoo.series import Batch, TaskInfo
    from zoo.spec.schema import spec_model

    opts = CASES[case][0]
    length = opts["length"] * factor
    if quick and length > QUICK_KEEPS:
        length //= 4
    batch_size = opts.get("batch", 128)
    if paper_batch:
        batch_size = opts.get("paper_batch", batch_size)
    backprop = backprop or opts.get("backprop", "direct")
    backprop_section = ADJOINT_SECTION if backprop == "adjoint" else {"kind": backprop}
    spec = spec_model().model_validate({
        "data": {"kind": "irregular_sines"},
        "model": {"control": opts["control"], "field": opts["field"],
                  "solver": opts.get("solver", RK4), "backprop": backprop_section,
                  "initial": {"kind": opts.get("initial", "auto")},
                  "readout": {"kind": "classify"}, "implementation": impl}})
    shape = DataShape(opts["channels"], 0, length, TaskInfo("multiclass", opts["n_out"]))
    torch.manual_seed(0)
    model = ZooModel(spec, shape).to(device, dtype)
    gen = torch.Generator().manual_seed(0)
    times = torch.arange(length, dtype=dtype)
    values = torch.randn(batch_size, length, opts["channels"], generator=gen, dtype=dtype)
    values[..., 0] = times
    y = torch.randint(0, opts["n_out"], (batch_size,), generator=gen)
    ends = (torch.randint(length // 2, length, (batch_size,), generator=gen)
            if opts.get("ends") == "varied" else torch.full((batch_size,), length - 1))
    batch = Batch(times, spec.model.control.prepare(times, values), y, ends).to(
        torch.device(device), dtype)
    return model, batch, length


def allocated_peak_mb(step) -> float:
    """Run ``step()`` under torch's profiler: the most MiB its CPU allocations held at once,
    net of its frees in time order (the CPU counterpart of ``torch.cuda.max_memory_allocated``
    less the bytes allocated before)."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = sorted((e for e in prof.profiler.kineto_results.events()
                     if e.name() == "[memory]" and e.device_type() == DeviceType.CPU),
                    key=lambda e: e.start_ns())
    held = peak = 0
    for event in events:
        held += event.nbytes()
        peak = max(peak, held)
    return peak / 2**20


def floor_worker(args) -> None:
    """Time :func:`floor.unavoidable_work` of the case (fast build, same weights and batch)."""
    from floor import unavoidable_work

    torch.set_num_threads(args.threads)
    model, batch, length = build(args.case, "fast", args.quick, "direct", 1, torch.float32,
                                 args.device, args.paper_batches)
    work = unavoidable_work(model, batch)
    step = None
    if work is not None:
        unit, count = work
        times = []
        for _ in range(args.repeats + 1):
            start = time.perf_counter()
            unit()
            times.append(time.perf_counter() - start)
        step = statistics.median(times[1:]) * count
    print(json.dumps({"case": args.case, "impl": "floor", "step_s": step}))


def worker(args) -> None:
    keep_freed_blocks()  # as training runs do
    if args.impl == "floor":
        floor_worker(args)
        return
    torch.set_num_threads(args.threads)
    model, batch, length = build(args.case, args.impl, args.quick, args.backprop, args.factor,
                                 torch.float32, args.device, args.paper_batches)
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    # an adaptive solve's steps follow the weights, and rounding-level differences in the
    # gradients grow through Adam's steps (ReLU kinks, step-size decisions), so each step
    # starts from the initial weights: generic and fast then time the same solve
    adaptive = getattr(getattr(model.spec.model.solver, "method", None), "value", None) in ADAPTIVE
    initial = {k: v.clone() for k, v in model.state_dict().items()} if adaptive else None
    cuda = args.device.startswith("cuda")

    def train_step() -> None:
        model.integrator.nfe = 0
        opt.zero_grad(set_to_none=True)
        model.spec.model.readout.loss(model(batch), batch.y).backward()
        opt.step()

    before = torch.cuda.memory_allocated() / 2**20 if cuda else 0.0
    times = []
    for i in range(args.repeats + 1):
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        if i == 0 and not cuda:  # the warm-up step, whose time is not counted, is profiled
            peak = allocated_peak_mb(train_step)
        else:
            train_step()
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        if initial is not None:
            model.load_state_dict(initial)
    if cuda:
        peak = torch.cuda.max_memory_allocated() / 2**20
    step = statistics.median(times[1:])
    print(json.dumps({"case": args.case, "impl": args.impl,
                      "used": getattr(model.body, "implementation_used", "generic"),
                      "length": length, "batch": len(batch.y), "step_s": step,
                      "samples_s": len(batch.y) / step, "peak_mb": peak - before,
                      "nfe": model.integrator.nfe}))


def run_one(args, case: str, impl: str, backprop: str | None = None, factor: int = 1) -> dict:
    cmd = [sys.executable, __file__, "--worker", case, impl, "--repeats", str(args.repeats),
           "--threads", str(args.threads), "--factor", str(factor), "--device", args.device]
    cmd += (["--backprop", backprop] if backprop else []) + (["--quick"] if args.quick else [])
    cmd += ["--paper-batches"] if args.paper_batches else []
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    if backprop == "adjoint":
        result["memory_growth"] = True  # an adjoint-memory row, not a comparison
    print(json.dumps(result), flush=True)
    if args.save:
        with args.save.open("a") as file:
            file.write(json.dumps(result) + "\n")
    return result


def interleaved(args, case: str) -> tuple[dict, dict, dict]:
    """(generic, fast, floor) results of ``--rounds`` alternating worker processes: the median
    step time over the rounds and the largest peak memory, so that a change of the machine's
    load during the run weighs on both paths alike."""
    impls = ("generic", "fast") if args.no_floor else ("generic", "fast", "floor")
    return merge_rounds([[run_one(args, case, impl) for impl in impls]
                         for _ in range(args.rounds)])


def merge_rounds(rounds: list[list[dict]]) -> tuple[dict, dict, dict]:
    """(generic, fast, floor) over the rounds of one case (a missing floor: no bound)."""
    rounds = [results if len(results) == 3 else
              [*results, {"case": results[0]["case"], "impl": "floor", "step_s": None}]
              for results in rounds]
    merged = []
    for results in zip(*rounds):
        result = dict(results[-1])
        if result["step_s"] is not None:
            result["step_s"] = statistics.median(r["step_s"] for r in results)
            if "batch" in result:
                result["samples_s"] = result["batch"] / result["step_s"]
                peaks = [r["peak_mb"] for r in results if r["peak_mb"] is not None]
                result["peak_mb"] = max(peaks) if peaks else None
        merged.append(result)
    return tuple(merged)


def saved(path: Path) -> tuple[dict, list[tuple[dict, dict, dict]], list[dict]]:
    """A ``--save`` file's header, its cases measured by both paths (merged over the rounds, in
    the order measured) and its adjoint-memory rows."""
    headers, results, by_case, run = [], [], {}, 0
    for line in path.read_text().splitlines():
        if not line:
            continue
        entry = json.loads(line)
        if "machine" in entry:
            headers.append(entry)
            run += 1
            continue
        results.append(entry)
        if not entry.get("memory_growth"):
            found = by_case.setdefault(entry["case"], (run, []))
            if found[0] != run:  # measured again by a later run: that one counts
                found = by_case[entry["case"]] = (run, [])
            found[1].append(entry)
    header = _one_header(path, headers)
    # an adjoint row per case and length (a later run's replaces an earlier one's)
    adjoint = {(r["case"], r["length"]): r for r in results if r.get("memory_growth")}
    by_case = {case: found for case, (_, found) in by_case.items()}
    rows = []
    for found in by_case.values():
        impls = [r["impl"] for r in found]
        width = 3 if "floor" in impls else 2
        rounds = [found[i:i + width] for i in range(0, len(found) - len(found) % width, width)]
        if rounds and {"generic", "fast"} <= set(impls):
            rows.append(merge_rounds(rounds))
    return header, rows, list(adjoint.values())


def _one_header(path: Path, headers: list[dict]) -> dict:
    """The runs' common header: their machines joined, their repeats and rounds equal."""
    if not headers:
        raise SystemExit(f"{path}: no line naming the machine; not a --save file")
    settings = {(h["repeats"], h["rounds"]) for h in headers}
    if len(settings) > 1:
        raise SystemExit(f"{path}: its runs measured with different --repeats/--rounds "
                         f"{sorted(settings)}; one section needs one setting")
    machines = list(dict.fromkeys(h["machine"] for h in headers))
    return {**headers[0], "machine": "; and ".join(machines)}


def machine(args) -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
               platform.processor())
    gpu = (f", GPU {torch.cuda.get_device_name()} "
           f"({torch.cuda.get_device_properties(0).total_memory / 2**30:.0f} GiB, CUDA "
           f"{torch.version.cuda})" if args.device.startswith("cuda") else "")
    return (f"{cpu}, {len(__import__('os').sched_getaffinity(0))} cores{gpu}; torch "
            f"{torch.__version__}, {args.threads} thread(s), float32, device {args.device}; "
            f"allocator as in training runs: {keep_freed_blocks()}"
            f"{f'; --quick (sequences over {QUICK_KEEPS} steps ÷ 4)' if args.quick else ''}"
            f"{'; the recipe batch sizes (--paper-batches)' if args.paper_batches else ''}")


def figure(args, rows: list[tuple[dict, dict, dict]]) -> Path:
    """The section's speed-up figure, next to ``--output`` under ``img/``."""
    from figure import speedup_figure

    path = args.output.parent / "img" / f"performance_{args.section}.png"
    speedup_figure([fast["case"] for _, fast, _ in rows],
                   [generic["step_s"] / fast["step_s"] for generic, fast, _ in rows],
                   [CASES[fast["case"]][1] for _, fast, _ in rows],
                   [None if floor["step_s"] is None else generic["step_s"] / floor["step_s"]
                    for generic, _, floor in rows],
                   path, f"{args.section}: {args.threads} thread(s), device {args.device}")
    return path


def report(args, rows: list[tuple[dict, dict, dict]], adjoint: list[dict],
           image: Path, machine_text: str) -> str:
    lines = [f"Machine: {machine_text}. Median of {args.repeats} training steps (forward + "
             f"backward + Adam step) after one warm-up, in each of {args.rounds} alternating "
             "fresh processes per case and implementation (median over the rounds). *bound*: "
             "generic s/step ÷ the time of the work any "
             "implementation of the same numbers must do (`bench/floor.py`). Written by "
             "`bench/run.py`.", "",
             "| case | batch | length | impl | s/step | samples/s | peak MB | NFE/step | "
             "fast/generic speed-up | target | bound |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for generic, fast, floor in rows:
        speedup = generic["step_s"] / fast["step_s"]
        target = CASES[fast["case"]][1]
        verdict = "—" if target is None else (f"≥ {target:g}×: " +
                                              ("met" if speedup >= target else "not met"))
        bound = "—" if floor["step_s"] is None else f"{generic['step_s'] / floor['step_s']:.1f}×"
        for r in (generic, fast):
            tail = f"**{speedup:.1f}×** | {verdict} | {bound}" if r is fast else " | |"
            peak = "—" if r["peak_mb"] is None else f"{r['peak_mb']:.0f}"
            lines.append(f"| {r['case']} | {r['batch']} | {r['length']} | {r['used']} | "
                         f"{r['step_s']:.3f} | {r['samples_s']:.1f} | {peak} | "
                         f"{r['nfe']} | {tail} |")
    image_link = image.relative_to(args.output.parent).as_posix()
    lines += ["", f"![fast over generic per case, with targets and bounds]({image_link})"]
    if adjoint:
        lines += ["", "## Adjoint mode: peak memory against sequence length", "",
                  "| case | length | s/step | peak MB |", "|---|---|---|---|"]
        lines += [f"| {r['case']} | {r['length']} | {r['step_s']:.3f} | {r['peak_mb']:.0f} |"
                  for r in adjoint]
        growth = adjoint[-1]["peak_mb"] / max(adjoint[0]["peak_mb"], 1e-9) - 1
        lines += ["", f"Peak memory growth for a 4× longer sequence: {100 * growth:.0f} % "
                  f"(target ≤ 20 %: {'met' if growth <= 0.2 else 'not met'})."]
    return "\n".join(lines)


def write_section(path: Path, name: str, text: str) -> None:
    """Put ``text`` between the section's markers in ``path`` (appended if they are absent)."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    page = path.read_text() if path.exists() else "# Performance: fast paths vs the generic path\n"
    block = f"{start}\n{text}\n{end}"
    if start in page and end in page:
        head, rest = page.split(start, 1)
        page = head + block + rest.split(end, 1)[1]
    else:
        page = page.rstrip("\n") + "\n\n" + block + "\n"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(page)
    tmp.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"3 repeats, sequences over {QUICK_KEEPS} steps ÷ 4")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=None,
                        help="default: the short-sequence cases with --quick, else all")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=2,
                        help="alternating generic/fast/bound processes per case")
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--no-adjoint", action="store_true", help="skip the adjoint memory runs")
    parser.add_argument("--paper-batches", action="store_true",
                        help="the recipes' batch sizes (Speech 1024, EigenWorms 181) where they "
                             "differ from the cases' own")
    parser.add_argument("--no-floor", action="store_true",
                        help="skip the bound (bench/floor.py): its column shows —")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "performance.md")
    parser.add_argument("--section", default=None,
                        help="the marked section of --output this run replaces "
                             "(default: quick with --quick, else full)")
    parser.add_argument("--save", type=Path,
                        help="append each measurement to this file (created if absent)")
    parser.add_argument("--from-results", type=Path, metavar="FILE",
                        help="write the section from a --save file instead of measuring")
    parser.add_argument("--worker", nargs=2, metavar=("CASE", "IMPL"), help=argparse.SUPPRESS)
    parser.add_argument("--backprop", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--factor", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.repeats = args.repeats or (3 if args.quick else 5)
    args.cases = args.cases or (SHORT if args.quick else list(CASES))
    args.section = args.section or ("quick" if args.quick else "full")
    if args.worker:
        args.case, args.impl = args.worker
        worker(args)
        return
    if args.from_results:
        text, rows, adjoint = saved(args.from_results)
        args.repeats, args.rounds = text["repeats"], text["rounds"]
        machine_text = text["machine"]
    else:
        machine_text = machine(args)
        if args.save:
            with args.save.open("a") as file:
                file.write(json.dumps({"machine": machine_text, "repeats": args.repeats,
                                       "rounds": args.rounds}) + "\n")
        rows = [interleaved(args, case) for case in args.cases]
        adjoint = [] if args.no_adjoint else [run_one(args, case, "fast", "adjoint", factor)
                                              for case, factor in ADJOINT]
    write_section(args.output, args.section,
                  report(args, rows, adjoint, figure(args, rows), machine_text))
    print(f"wrote section '{args.section}' of {args.output}")


if __name__ == "__main__":
    main()
