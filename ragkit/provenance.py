"""Where a measured figure came from: the command, the code, the machine and its load.

Every result file the benchmarks, the studies and ``ragkit lexnorm train --report`` write
carries :func:`provenance` under ``"provenance"``, so a figure can be traced to the run that
made it and read against how busy the machine was.

Example:
    >>> record = provenance(["ragkit", "lexnorm", "train"])
    >>> record["command"], "OMP_NUM_THREADS" in record["threads"]
    ('ragkit lexnorm train', True)
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragkit.threads import COUNT_VARIABLES, POLICY, THREADS_VARIABLE, available_cpus

SOURCE = Path(__file__).resolve().parent


def git_commit(folder: Path = SOURCE) -> str | None:
    """The commit of the checkout holding ``folder`` (``+dirty`` when tracked files differ
    from it), or None where ``folder`` is not ragkit's source in a git checkout (an installed
    wheel, even inside some other repository)."""
    try:
        tracked = _git(folder, "ls-files", "--error-unmatch", "--", Path(__file__).name)
        commit = _git(folder, "rev-parse", "HEAD")
        if tracked.returncode != 0 or commit.returncode != 0:
            return None
        status = _git(folder, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return None
    return commit.stdout.strip() + ("+dirty" if status.stdout.strip() else "")


def _git(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    command = ["git", *arguments]
    return subprocess.run(
        command, cwd=folder, capture_output=True, text=True, check=False, timeout=30
    )


def command_line(argv: Sequence[str] | None = None) -> str:
    """``argv`` as one shell line; by default this process's command, a module run with
    ``-m`` written ``python -m MODULE ARGS`` (as it was typed, not the module's file path)."""
    if argv is not None:
        return shlex.join(argv)
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name:  # python -m NAME: argv[0] is the module's file
        return shlex.join(["python", "-m", spec.name.removesuffix(".__main__"), *sys.argv[1:]])
    return shlex.join(sys.argv)


def provenance(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The command, ragkit's version and commit, the CPUs, the thread settings (the variables,
    and torch's and FAISS's counts where the run loaded them) and the load.

    ``load_average_1m`` is read when the result is written (after the measurement): on a
    shared machine other work counts too.
    """
    from ragkit import __version__

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    threads: dict[str, Any] = {
        name: os.environ[name]
        for name in (THREADS_VARIABLE, *COUNT_VARIABLES, *POLICY)
        if name in os.environ
    }
    if "torch" in sys.modules:  # what the run set, whatever the environment said
        threads["torch"] = sys.modules["torch"].get_num_threads()
    if "faiss" in sys.modules:
        threads["faiss"] = sys.modules["faiss"].omp_get_max_threads()
    return {
        "command": command_line(argv),
        "commit": git_commit(),
        "ragkit": __version__,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "cpus_available": available_cpus(),
        "threads": threads,
        "load_average_1m": None if load is None else round(load, 2),
        "machine": f"{platform.machine()}, {platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }
