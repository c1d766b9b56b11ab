"""A real messy folder end to end: the system's documentation tree through ``ragkit ingest``
with the defaults.

``/usr/share/doc`` on a Debian system holds a few thousand files per installed package set:
READMEs, HTML and Markdown manuals, one ``copyright`` file per package (the same licence texts
hundreds of times), ``changelog.Debian.gz`` and upstream ``changelog.gz`` files (some in
Latin-1 or cp1252), symbolic links, images and scripts. ``ragkit ingest ROOT --index IDX
--quiet`` runs on it in a child process, nothing but the defaults (model ``auto``, adaptive
chunking, per-query fusion, ``auto`` precision); reported: wall seconds, the child's peak
resident set, and from the run log the index keeps (``runs`` in ``ragkit.sqlite``) files seen,
documents added and copied (exact duplicates: stored once, not chunked or embedded again),
chunks added and embedded, chunks per second of wall, near-duplicate groups, files skipped by
reason, seconds per stage, the model chosen and why; from the documents, how many were read
through a guessed legacy encoding (metadata ``encoding``).

Run::

    .venv/bin/python -m benchmarks.doc_tree                     # /usr/share/doc
    .venv/bin/python -m benchmarks.doc_tree --root /some/folder --keep /tmp/doc-index

Writes ``benchmarks/results/doc_tree.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from benchmarks.common import RAGKIT, run_child, write_result


def source_size(root: Path) -> dict[str, int]:
    """Files and bytes on disk under ``root`` (links not followed), before any reading."""
    files = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]
    return {"files_on_disk": len(files), "bytes_on_disk": sum(p.stat().st_size for p in files)}


def run_log(index: Path) -> tuple[dict[str, Any], Counter[str]]:
    """The last run's summary the index keeps, and the legacy encodings its documents were
    read through (document count per encoding)."""
    with sqlite3.connect(index / "ragkit.sqlite") as database:
        (summary,) = database.execute(
            "SELECT summary FROM runs ORDER BY id DESC LIMIT 1"
        ).fetchone()
        encodings = Counter(
            row[0]
            for row in database.execute(
                "SELECT json_extract(metadata, '$.encoding') FROM documents "
                "WHERE json_extract(metadata, '$.encoding') IS NOT NULL"
            )
        )
    return json.loads(summary), encodings


def measure(root: Path, index: Path) -> dict[str, Any]:
    """``ragkit ingest root --index index`` with the defaults, and what it did."""
    clock = time.perf_counter()
    code, _, err, peak = run_child([RAGKIT, "ingest", str(root), "--index", str(index), "--quiet"])
    wall = time.perf_counter() - clock
    if code not in (0, 1):  # 1: some files failed to load, the rest committed
        raise SystemExit(f"ragkit ingest {root}: exit {code}\n{err[-3000:]}")
    summary, encodings = run_log(index)
    skipped = Counter(s["reason"].split(":")[0][:60] for s in summary.pop("skipped"))
    return {
        "exit_code": code,
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(peak, 1),
        "chunks_per_s": round(summary["chunks_added"] / wall, 1),
        "skipped_files": sum(skipped.values()),
        "skipped_by_reason": dict(skipped.most_common(12)),
        "legacy_encodings": dict(encodings),
        "summary": summary,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=Path("/usr/share/doc"))
    parser.add_argument("--keep", type=Path, help="build the index here and keep it")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ragkit-doc-tree-"))
    index = args.keep or scratch / "index"
    try:
        result = {"root": str(args.root), **source_size(args.root), **measure(args.root, index)}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    path = write_result("doc_tree", result)
    show(result)
    Console().print(f"wrote {path}")


def show(result: dict[str, Any]) -> None:
    summary = result["summary"]
    table = Table("figure", "value", title=f"ragkit ingest {result['root']} (defaults)")
    rows = {
        "files on disk / seen": f"{result['files_on_disk']:,} / {summary['files_seen']:,}",
        "documents added / exact copies": (
            f"{summary['documents_added']:,} / {summary['documents_copied']:,}"
        ),
        "chunks added / embedded": f"{summary['chunks_added']:,} / {summary['chunks_embedded']:,}",
        "wall s": f"{result['wall_s']:,.1f}",
        "chunks per s (wall)": f"{result['chunks_per_s']:.1f}",
        "peak RSS MB": f"{result['peak_rss_mb']:,.0f}",
        "near-duplicate groups": f"{summary['near_duplicate_groups']:,}",
        "files skipped": f"{result['skipped_files']:,}",
        "legacy encodings": ", ".join(f"{k} {v}" for k, v in result["legacy_encodings"].items()),
        "model": summary["model_choice"],
    }
    for name, value in rows.items():
        table.add_row(name, value)
    Console().print(table)


if __name__ == "__main__":
    main()
