"""Which process writes a run, and whether ``zoo run --resume`` may take it over.

Every run records its writer in the tag ``zoo.owner`` as ``host:pid``. A RUNNING run is taken
over only when its writer is known to be gone (a process of this host that no longer exists),
or with ``--force`` when zoo cannot tell (another host, or no tag); a writer alive on this host is
never overridden. So two processes never write one run, which would log its epochs twice.
"""

from __future__ import annotations

import os
import socket

from ..errors import InputError

TAG = "zoo.owner"


def describe(pid: int | None = None) -> str:
    """``host:pid`` of process ``pid`` of this host (default: this process)."""
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


def alive(owner: str | None) -> bool | None:
    """Whether the process ``owner`` names exists; ``None`` when that cannot be told here."""
    host, _, pid = (owner or "").rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def check_resumable(run_id: str, status: str, owner: str | None, force: bool) -> str | None:
    """Refuse to resume ``run_id`` (InputError) if it finished or may still be written; else
    a note for the user, or None."""
    if status == "FINISHED":
        raise InputError(f"run {run_id} already finished; nothing to resume")
    if status != "RUNNING":
        return None
    host, _, pid = (owner or "").rpartition(":")
    state = alive(owner)
    if state is False:
        return f"run {run_id} was left RUNNING by process {pid}, which has ended; resuming it"
    if state:
        unforced = " (--force takes over only a run whose writer zoo cannot check)" if force else ""
        raise InputError(
            f"run {run_id} is RUNNING: process {pid} on this host is still training it (see "
            f"`ps -p {pid}`); wait for it to end, or stop it with `kill {pid}` (the run is then "
            f"marked KILLED) and resume again{unforced}")
    if force:
        return f"--force: taking over run {run_id} from {owner or 'an unrecorded process'}"
    who = f"process {pid} on host {host}" if owner else "a process zoo did not record"
    raise InputError(
        f"run {run_id} is RUNNING, written by {who}, which zoo cannot check from here; if that "
        f"process is gone (its job was cancelled, its node lost), resume with --force; if it "
        f"still runs, resuming would log the same epochs twice")
