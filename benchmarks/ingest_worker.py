"""One ingest in a fresh process, and what it cost: wall seconds, the ingest report, the
resident set after the model loaded and after every file was read, and the peak.

The benchmarks that compare the current tree with an earlier one (``duplicates``,
``ingest_memory``) run it with an older ``ragkit`` first on ``PYTHONPATH`` (a ``git archive``
copy: :func:`before_tree`), so this module imports nothing but ``ragkit`` and the standard
library — no ``benchmarks.common``, which an older tree cannot serve.

Run (what :func:`run_ingest` does)::

    .venv/bin/python -m benchmarks.ingest_worker FOLDER INDEX [--model all-minilm-l6-v2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODEL = "all-minilm-l6-v2"


def rss_kb() -> int:
    """This process's resident set now (kB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def ingest(folder: Path, index_path: Path, model: str = MODEL) -> dict[str, Any]:
    """Ingest ``folder`` into a new index at ``index_path``; what it cost."""
    import ragkit
    from ragkit import Index

    index = Index.open(index_path, create=True, model=model)
    _ = index.encoder.dimension  # the model loads before the clock starts
    baseline = rss_kb()
    loaded: list[int] = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "documents" and not loaded:
            loaded.append(rss_kb())  # every file read, planned; nothing chunked yet

    clock = time.perf_counter()
    report = index.ingest([folder], progress=progress)
    wall = time.perf_counter() - clock
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "ragkit": ragkit.__file__,
        "wall_seconds": wall,
        "report": report.as_dict() | {"skipped": len(report.skipped)},
        "rss_after_model_mb": baseline / 1024,
        "rss_after_load_mb": (loaded[0] if loaded else 0) / 1024,
        "peak_rss_mb": peak / 1024,
    }


def run_ingest(
    folder: Path, index_path: Path, source: Path | None = None, model: str = MODEL
) -> dict[str, Any]:
    """:func:`ingest` in a fresh process, with the ``ragkit`` of ``source`` (a tree from
    :func:`before_tree`) or, by default, of this checkout."""
    path = [str(source), str(ROOT)] if source is not None else [str(ROOT)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    command = [sys.executable, "-m", "benchmarks.ingest_worker", str(folder), str(index_path)]
    done = subprocess.run(
        [*command, "--model", model],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"ingest failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def before_tree(scratch: Path, commit: str) -> Path:
    """The ``ragkit`` package of ``commit``, unpacked into ``scratch`` (no worktree)."""
    scratch.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "ragkit"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(scratch)], input=archive.stdout, check=True)
    return scratch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the files to ingest")
    parser.add_argument("index", type=Path, help="a new index folder")
    parser.add_argument("--model", default=MODEL)
    args = parser.parse_args()
    print(json.dumps(ingest(args.folder, args.index, args.model)))


if __name__ == "__main__":
    main()
