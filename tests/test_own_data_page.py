"""docs/own-data.md's "Walk-through" runs as printed.

Every command of the section's bash block(s) runs in order in an empty folder, with
``.venv/bin/`` and ``docs/examples/`` pointing into this checkout and ``RUN_ID`` the id that
``zoo run`` printed; each must exit 0. The ``mlflow ui`` line runs on a free port until it
answers HTTP, then is stopped. Takes about half a minute on a CPU.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "own-data.md"
VENV_BIN = (REPO / ".venv" / "bin" if (REPO / ".venv" / "bin").is_dir()
            else Path(sys.executable).parent)
HEADING = "## Walk-through"


def walkthrough_commands(text: str) -> list[str]:
    """The lines of the bash blocks between the section's heading and the next heading."""
    lines = text.splitlines()
    assert lines.count(HEADING) == 1, f"{PAGE.name} needs one '{HEADING}' section"
    commands, fence = [], None
    for line in lines[lines.index(HEADING) + 1:]:
        if fence is None and line.startswith("#"):
            break  # the next heading (outside a code block)
        if line.startswith("```"):
            fence = line[3:].strip() if fence is None else None
            continue
        if fence == "bash" and line.strip() and not line.lstrip().startswith("#"):
            commands.append(line.strip())
    return commands


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def localise(command: str, run_id: str | None) -> list[str]:
    if "RUN_ID" in command:
        assert run_id, f"RUN_ID used before `zoo run` printed it: {command}"
        command = command.replace("RUN_ID", run_id)
    command = command.replace(".venv/bin/", f"{VENV_BIN}/")
    command = command.replace("docs/examples/", f"{REPO}/docs/examples/")
    return shlex.split(command, comments=True)


def serve_briefly(argv: list[str], cwd: Path, env: dict) -> None:
    """Start ``mlflow ui`` on a free port, wait until it answers, stop it."""
    assert "--port" in argv
    port = free_port()
    argv = [*argv]
    argv[argv.index("--port") + 1] = str(port)
    log = cwd / "mlflow_ui.log"
    with open(log, "w") as out:
        server = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, \
                f"mlflow ui exited {server.returncode}:\n{log.read_text()}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as answer:
                    assert answer.status == 200
                break
            except OSError:
                assert time.monotonic() < deadline, f"mlflow ui did not answer:\n{log.read_text()}"
                time.sleep(0.5)
        # the UI reads the run from the store the page's command names
        api = f"http://127.0.0.1:{port}/api/2.0/mlflow/experiments/search"
        request = urllib.request.Request(api, data=b'{"max_results": 10}', method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200
    finally:
        os.killpg(server.pid, 15)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()


@pytest.mark.slow
def test_the_walkthrough_runs_as_printed(tmp_path):
    commands = walkthrough_commands(PAGE.read_text())
    words = [" ".join(c.split()[:2]) for c in commands]
    for needed in (".venv/bin/zoo validate", ".venv/bin/zoo run", ".venv/bin/zoo predict",
                   ".venv/bin/zoo evaluate", ".venv/bin/mlflow ui"):
        assert needed in words, f"the walk-through lost `{needed}`: {commands}"
    assert words.index(".venv/bin/zoo run") < words.index(".venv/bin/zoo predict")

    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    # the example spec is there even if the page stops copying it (its own `cp` then overwrites)
    (tmp_path / "vitals.yaml").write_bytes((REPO / "docs/examples/vitals.yaml").read_bytes())

    run_id, outputs = None, {}
    for command in commands:
        argv = localise(command, run_id)
        if Path(argv[0]).name == "mlflow" and argv[1:2] == ["ui"]:
            serve_briefly(argv, tmp_path, env)
            continue
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, (f"`{command}` exited {done.returncode}\n"
                                      f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}")
        outputs[" ".join(command.split()[:2])] = done.stdout
        if command.split()[:2] == [".venv/bin/zoo", "run"]:
            found = re.search(r"^run ([0-9a-f]{32}) finished", done.stdout, re.M)
            assert found, f"no 'run RUN_ID finished' line:\n{done.stdout}"
            run_id = found.group(1)

    assert "vitals.yaml: ok" in outputs[".venv/bin/zoo validate"]
    # one row per new patient, probabilities summing to 1, a predicted class
    new = pd.read_csv(tmp_path / "new.csv")
    predictions = pd.read_csv(tmp_path / "predictions.csv")
    assert predictions["patient"].tolist() == list(dict.fromkeys(new["patient"]))
    assert len(predictions) == 10
    assert list(predictions.columns) == ["patient", "prob_well", "prob_sick", "predicted"]
    assert (predictions[["prob_well", "prob_sick"]].sum(axis=1) - 1).abs().max() < 1e-6
    assert set(predictions["predicted"]) <= {"well", "sick"}
    # evaluate prints the accuracy on the labelled patients
    found = re.search(r"^accuracy\s+([0-9.]+)", outputs[".venv/bin/zoo evaluate"], re.M)
    assert found, outputs[".venv/bin/zoo evaluate"]
    assert 0 <= float(found.group(1)) <= 1


@pytest.mark.parametrize("text, expected", [
    ("## Walk-through\n\n```bash\na  # x\n# c\n```\n```python\nb\n```\n## Next\n```bash\nc\n```\n",
     ["a  # x"]),
    ("## Walk-through\n```bash\n# not a heading\na\n```\ntext\n```bash\nb\n```\n# Top\n",
     ["a", "b"]),
])
def test_the_section_is_parsed_between_its_heading_and_the_next(text, expected):
    assert walkthrough_commands(text) == expected
