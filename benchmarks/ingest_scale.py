"""Benchmark: ingest time per commit as a collection grows past the HNSW threshold.

One ingest of ``--records`` tiny JSONL records (8–12 words drawn from a fixed vocabulary, one
chunk each) into a new index with ``all-minilm-l6-v2``, the ``fixed`` chunker, one commit per
``--batch`` documents and ``--hnsw-threshold`` low enough that most commits meet an HNSW index.
For each commit it records the wall seconds of the whole batch (chunk, embed, commit) and of
the commit alone, per 1,000 documents: both must stay flat as the index grows, since a commit
appends its vectors to the tail beside the main index and, every so often, merges the tail into
it (:func:`ragkit.search.dense.advance`) instead of rebuilding it from SQLite.
``--compare-rewrite`` runs the same ingest again with every commit adding to the main index and
writing it whole (``dense_tail_fraction = 0``, the behaviour before tails);
``--compare-rebuild`` with every commit past the threshold rebuilding the whole index.

``--vectors words`` replaces the encoder's output with cheap vectors: each vocabulary word has a
fixed random 384-d vector and a record's vector is the normalized sum of its words' plus a small
random part of its own (the model still loads; no text is embedded), so 200k records take
minutes, not an hour of embedding on two cores.

Reported: per commit, documents so far, index kind, vectors in the tail, batch and commit seconds
per 1,000 documents; per run, of the HNSW commits' seconds per 1,000 documents, the median
(a commit that appends) and the mean (merges included: what a commit costs on average) of the
first and last quarter and their ratios (1.0 = flat). Command (from the repository root)::

    .venv/bin/python benchmarks/ingest_scale.py [--records 20000] [--batch 1000]
        [--hnsw-threshold 2000] [--vectors model|words] [--compare-rewrite] [--compare-rebuild]

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
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

import numpy as np
from rich.console import Console
from rich.table import Table

from ragkit import Index
from ragkit.embed import Encoder
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


@contextmanager
def word_vectors(enabled: bool) -> Iterator[None]:
    """Cheap structured vectors in place of the encoder's (``--vectors words``)."""
    if not enabled:
        yield
        return
    generator = np.random.default_rng(11)
    table = {word: generator.standard_normal(384).astype(np.float32) for word in VOCABULARY}

    def encode(self: Encoder, texts: Sequence[str]) -> np.ndarray:
        rows = []
        for text in texts:
            words = text.split()
            own = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(384)
            rows.append(sum((table[w] for w in words if w in table), 0.5 * own))
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(texts), 384)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    original = Encoder._encode
    Encoder._encode = encode  # type: ignore[method-assign]
    try:
        yield
    finally:
        Encoder._encode = original  # type: ignore[method-assign]


def run(
    source: Path, folder: Path, batch: int, threshold: int, tail: bool = True
) -> list[dict[str, Any]]:
    """Ingest ``source`` into a new index at ``folder``; one row per commit. ``tail=False``:
    every commit writes the whole main index (``dense_tail_fraction = 0``)."""
    settings: dict[str, Any] = {
        "hnsw_threshold": threshold,
        "commit_every_documents": batch,
        "chunker": "fixed",
    }
    if not tail:
        settings["dense_tail_fraction"] = 0.0
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
                    "tail": int(store.vectors.tail.ntotal),
                    "batch_s_per_1k": round((now - timing["since"]) * 1000 / added, 3),
                    "commit_s_per_1k": round(timing["commit"] * 1000 / added, 4),
                }
            )
            timing.update(since=now, done=done)

        store.commit = timed_commit  # type: ignore[method-assign]
        index.ingest([source], progress=progress)
    return rows


def flatness(rows: list[dict[str, Any]], column: str = "commit_s_per_1k") -> dict[str, float]:
    """Median and mean ``column`` (seconds per 1,000 documents) of the first and last quarter of
    the HNSW commits, and the last quarter's over the first's."""
    hnsw = [row[column] for row in rows if row["kind"] == "hnsw"][1:]  # not the build
    quarter = max(1, len(hnsw) // 4)
    if not hnsw:
        return {}
    first, last = statistics.median(hnsw[:quarter]), statistics.median(hnsw[-quarter:])
    mean_first, mean_last = statistics.mean(hnsw[:quarter]), statistics.mean(hnsw[-quarter:])
    return {
        "first": first,
        "last": last,
        "ratio": round(last / first, 2) if first else 0.0,
        "mean_first": round(mean_first, 4),
        "mean_last": round(mean_last, 4),
        "mean_ratio": round(mean_last / mean_first, 2) if mean_first else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=20_000, help="documents to ingest")
    parser.add_argument("--batch", type=int, default=1_000, help="documents per commit")
    parser.add_argument("--hnsw-threshold", type=int, default=2_000, help="chunks for HNSW")
    parser.add_argument(
        "--vectors", choices=["model", "words"], default="model", help="how records are embedded"
    )
    parser.add_argument(
        "--compare-rewrite",
        action="store_true",
        help="also run with no tail (whole index per commit)",
    )
    parser.add_argument("--compare-rebuild", action="store_true", help="also run the old way")
    args = parser.parse_args()
    runs = {}
    with tempfile.TemporaryDirectory() as scratch, word_vectors(args.vectors == "words"):
        source = Path(scratch) / "records.jsonl"
        write_records(source, args.records)
        runs["tail"] = run(source, Path(scratch) / "a", args.batch, args.hnsw_threshold)
        if args.compare_rewrite:
            runs["rewrite every commit"] = run(
                source, Path(scratch) / "c", args.batch, args.hnsw_threshold, tail=False
            )
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
        "vectors": args.vectors,
        "chunker": "fixed",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f} at the end",
        "runs": {
            name: {
                "flatness": flatness(rows),
                "batch_flatness": flatness(rows, "batch_s_per_1k"),
                "commits": rows,
            }
            for name, rows in runs.items()
        },
    }
    RESULT.parent.mkdir(exist_ok=True)
    RESULT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    console = Console()
    for name, rows in runs.items():
        table = Table(
            "documents", "kind", "tail", "batch s / 1k docs", "commit s / 1k docs",
            title=f"{name}: {args.records} records, {args.batch} per commit",
        )  # fmt: skip
        for row in rows:
            table.add_row(
                str(row["documents"]),
                row["kind"],
                str(row["tail"]),
                f"{row['batch_s_per_1k']:.2f}",
                f"{row['commit_s_per_1k']:.3f}",
            )
        console.print(table)
        for column, what in (("commit_s_per_1k", "commit"), ("batch_s_per_1k", "batch")):
            if flat := flatness(rows, column):
                console.print(
                    f"{name}: HNSW {what} s / 1k docs, first → last quarter: median "
                    f"{flat['first']:.3f} → {flat['last']:.3f} (× {flat['ratio']}), mean "
                    f"{flat['mean_first']:.3f} → {flat['mean_last']:.3f} (× {flat['mean_ratio']})"
                )


if __name__ == "__main__":
    main()
