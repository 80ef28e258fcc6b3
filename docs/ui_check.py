"""The MLflow UI hand-off in a real browser: train a tiny run, start the UI with the command
``zoo run`` prints, open the run page it prints in headless Chromium, and keep what the browser
rendered (a screenshot and the page's text).

    .venv/bin/python docs/ui_check.py OUT_DIR      # needs chromium (Debian: apt install chromium)

Writes ``OUT_DIR/run_page.png`` and ``OUT_DIR/run_page.txt`` and prints the run page URL; exits
1 with the reason when the page does not show the run (its name, its ``best_epoch`` and test
metrics). ``tests/test_ui_browser.py`` runs it.
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

SPEC = {"name": "ui-check", "data": {"kind": "spirals", "n_train": 32, "n_val": 16, "n_test": 16,
                                     "length": 20},
        "model": {"control": {"kind": "natural_cubic"},
                  "field": {"kind": "ncde", "hidden": 8, "hidden_hidden": 8, "layers": 1},
                  "solver": {"kind": "torchdiffeq", "method": "rk4", "step_size": 1.0},
                  "readout": {"kind": "classify"}},
        "train": {"epochs": 3, "batch_size": 16}}


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
    (work / "spec.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
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
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
    visible = re.sub(r"<[^>]+>", " ", text)
    (out / "run_page.txt").write_text(re.sub(r"\s+", " ", visible))
    print(page)
    missing = [w for w in ("ui-check-seed0", "best_epoch", "test/accuracy") if w not in visible]
    if missing:
        print(f"the run page does not show {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "ui-check")))
