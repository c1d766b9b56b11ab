"""Benchmark: ingest time per commit as a collection grows past the HNSW threshold.

One ingest of ``--records`` tiny JSONL records (8–12 words drawn from a fixed vocabulary, one
chunk each) into a new index with ``all-minilm-l6-v2``, the ``fixed`` chunker, one commit per
``--batch`` documents and ``--hnsw-threshold`` low enough that most commits meet an HNSW index.
For each commit it records the wall seconds of the whole batch (chunk, embed, commit) and of
the commit alone, per 1,000 documents: both must stay flat as the index grows, since a commit
adds its vectors to the graph (:func:`ragkit.search.dense.carry`) instead of rebuilding it from
SQLite. ``--compare-rebuild`` runs the same ingest again with the earlier behaviour forced (every
commit past the threshold rebuilds the whole index) to show what it grew like.

Reported: per commit, documents so far, index kind, batch and commit seconds per 1,000
documents; per run, the commit seconds per 1,000 documents of the first and last quarter of the
HNSW commits and their ratio (1.0 = flat). Command (from the repository root)::

    .venv/bin/python benchmarks/ingest_scale.py [--records 20000] [--batch 1000]
        [--hnsw-threshold 2000] [--compare-rebuild]

Writes ``benchmarks/results/ingest_scale.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

from rich.console import Console
from rich.table import Table

from ragkit import Index
from ragkit.search import dense

RESULT = Path(__file__).parent / "results" / "ingest_scale.json"
MODEL = "all-minilm-l6-v2"
VOCABULARY = [
    "river",
    "stone",
    "light",
    "engine",
    "market",
    "garden",
    "winter",
    "signal",
    "copper",
    "forest",
    "harbor",
    "lantern",
    "mirror",
    "orbit",
    "pepper",
    "quarry",
    "saddle",
    "timber",
    "valley",
    "whistle",
    "anchor",
    "basket",
    "candle",
    "desert",
]


def write_records(path: Path, count: int, seed: int = 7) -> None:
    """``count`` JSONL records of 8–12 words each, ids ``r0`` … (same text for a seed)."""
    chosen = random.Random(seed)
    with path.open("w", encoding="utf-8") as handle:
        for n in range(count):
            words = chosen.choices(VOCABULARY, k=chosen.randint(8, 12))
            handle.write(json.dumps({"id": f"r{n}", "text": f"{n} " + " ".join(words)}) + "\n")


@contextmanager
def rebuilding_every_commit() -> Iterator[None]:
    """The behaviour before incremental commits: past the flat kind, every commit rebuilds."""
    carry = dense.carry

    def rebuild(index: Any, total: int, settings: Any, *rest: Any) -> Any:
        return (
            None
            if dense.dense_kind(total, settings) != "flat"
            else carry(index, total, settings, *rest)
        )

    dense.carry = rebuild  # type: ignore[assignment]
    try:
        yield
    finally:
        dense.carry = carry  # type: ignore[assignment]


def run(source: Path, folder: Path, batch: int, threshold: int) -> list[dict[str, Any]]:
    """Ingest ``source`` into a new index at ``folder``; one row per commit."""
    settings = {"hnsw_threshold": threshold, "commit_every_documents": batch, "chunker": "fixed"}
    rows: list[dict[str, Any]] = []
    with Index.open(folder, create=True, model=MODEL, **settings) as index:
        store = index.store
        commit = store.commit
        timing = {"commit": 0.0, "since": time.perf_counter(), "done": 0}

        def timed_commit(*args: Any, **kwargs: Any) -> int:
            clock = time.perf_counter()
            try:
                return commit(*args, **kwargs)
            finally:
                timing["commit"] = time.perf_counter() - clock

        def progress(stage: str, done: int, total: int) -> None:
            if stage != "documents":
                return
            if done == 0:  # documents read and planned: the first batch starts
                timing["since"] = time.perf_counter()
                return
            now, added = time.perf_counter(), done - int(timing["done"])
            rows.append(
                {
                    "documents": done,
                    "vectors": int(store.vectors.ntotal),
                    "kind": dense.kind_of(store.vectors),
                    "batch_s_per_1k": round((now - timing["since"]) * 1000 / added, 3),
                    "commit_s_per_1k": round(timing["commit"] * 1000 / added, 4),
                }
            )
            timing.update(since=now, done=done)

        store.commit = timed_commit  # type: ignore[method-assign]
        index.ingest([source], progress=progress)
    return rows


def flatness(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Median commit seconds per 1,000 documents of the first and last quarter of HNSW commits."""
    hnsw = [row["commit_s_per_1k"] for row in rows if row["kind"] == "hnsw"][1:]  # not the build
    quarter = max(1, len(hnsw) // 4)
    if not hnsw:
        return {}
    first, last = statistics.median(hnsw[:quarter]), statistics.median(hnsw[-quarter:])
    return {"first": first, "last": last, "ratio": round(last / first, 2) if first else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=20_000, help="documents to ingest")
    parser.add_argument("--batch", type=int, default=1_000, help="documents per commit")
    parser.add_argument("--hnsw-threshold", type=int, default=2_000, help="chunks for HNSW")
    parser.add_argument("--compare-rebuild", action="store_true", help="also run the old way")
    args = parser.parse_args()
    runs = {}
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "records.jsonl"
        write_records(source, args.records)
        runs["incremental"] = run(source, Path(scratch) / "a", args.batch, args.hnsw_threshold)
        if args.compare_rebuild:
            with rebuilding_every_commit():
                runs["rebuild every commit"] = run(
                    source, Path(scratch) / "b", args.batch, args.hnsw_threshold
                )
    result = {
        "records": args.records,
        "batch": args.batch,
        "hnsw_threshold": args.hnsw_threshold,
        "model": MODEL,
        "chunker": "fixed",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} at the end",
        "runs": {
            name: {"flatness": flatness(rows), "commits": rows} for name, rows in runs.items()
        },
    }
    RESULT.parent.mkdir(exist_ok=True)
    RESULT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    console = Console()
    for name, rows in runs.items():
        table = Table(
            "documents", "kind", "batch s / 1k docs", "commit s / 1k docs",
            title=f"{name}: {args.records} records, {args.batch} per commit",
        )  # fmt: skip
        for row in rows:
            table.add_row(
                str(row["documents"]),
                row["kind"],
                f"{row['batch_s_per_1k']:.2f}",
                f"{row['commit_s_per_1k']:.3f}",
            )
        console.print(table)
        flat = flatness(rows)
        if flat:
            console.print(
                f"{name}: HNSW commit s / 1k docs, first quarter {flat['first']:.3f}, last "
                f"quarter {flat['last']:.3f} (× {flat['ratio']})"
            )


if __name__ == "__main__":
    main()
