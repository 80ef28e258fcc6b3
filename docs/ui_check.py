"""The MLflow UI hand-off in a real browser: train a tiny run on a CSV of irregular series,
start the UI with the command ``zoo run`` prints, open the run page it prints in headless
Chromium, then the experiment's Models tab, and keep what the browser rendered (a screenshot
and each page's text).

    .venv/bin/python docs/ui_check.py OUT_DIR      # needs chromium (Debian: apt install chromium)

Writes ``OUT_DIR/run_page.png``, ``OUT_DIR/run_page.txt`` and ``OUT_DIR/models_page.txt`` and
prints the run page URL; exits 1 with the reason when the run page does not show the run (its
name, its ``best_epoch`` and test metrics) in the UI's model-training workflow, or the Models
tab does not list the run's logged model. ``tests/test_ui_browser.py`` runs it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests
import yaml

EXAMPLES = Path(__file__).with_name("examples")  # the own-data walk-through's spec and data


def browser() -> str | None:
    return next(filter(None, map(shutil.which, ("chromium", "chromium-browser",
                                                "google-chrome"))), None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def headless(chrome: str, *args: str) -> subprocess.CompletedProcess:
    """Chromium without a display, waiting up to 20 s of page time for the UI's scripts."""
    return subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--window-size=1400,1000",
                           "--virtual-time-budget=20000", *args],
                          capture_output=True, text=True, timeout=180)


def main(out: Path) -> int:
    chrome = browser()
    if chrome is None:
        print("no chromium on PATH (Debian: apt install chromium)", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="zoo-ui-check-"))
    spec = {"name": "ui-check", **yaml.safe_load((EXAMPLES / "vitals.yaml").read_text())}
    (work / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    subprocess.run([sys.executable, str(EXAMPLES / "make_vitals.py"), str(work)], check=True,
                   capture_output=True)
    zoo = Path(sys.executable).parent / "zoo"
    ran = subprocess.run([str(zoo), "run", "spec.yaml", "--no-progress"], cwd=work,
                         capture_output=True, text=True, timeout=600)
    if ran.returncode:
        print(ran.stderr, file=sys.stderr)
        return 1
    command = re.search(r"browse it with: (.+)", ran.stdout).group(1)
    page = re.search(r"run page: (\S+)", ran.stdout).group(1)
    port = free_port()
    args = shlex.split(command)
    args[args.index("--port") + 1] = str(port)
    page = page.replace(":5000/", f":{port}/")
    server = subprocess.Popen(args, cwd=work, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if requests.get(f"http://127.0.0.1:{port}/health", timeout=2).ok:
                    break
            except requests.RequestException:
                time.sleep(1)
        text = headless(chrome, "--dump-dom", page).stdout
        headless(chrome, f"--screenshot={out / 'run_page.png'}", page)
        models = re.sub(r"/runs/\w+", "/models", page)
        models_text = headless(chrome, "--dump-dom", models).stdout
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
    print(page)
    # the model-training workflow's side bar: Runs, Models, Model registry (not GenAI's)
    wanted = {"run_page": ("ui-check-seed0", "best_epoch", "test/accuracy", "Model registry"),
              "models_page": ("Model registry", "model Ready", "ui-check-seed0")}
    for name, dom in (("run_page", text), ("models_page", models_text)):
        visible = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom))
        (out / f"{name}.txt").write_text(visible)
        if missing := [w for w in wanted[name] if w not in visible]:
            print(f"the {name.replace('_', ' ')} does not show {', '.join(missing)}",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "ui-check")))
