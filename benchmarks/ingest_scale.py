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

After every ``--probe-every``-th commit, :func:`ragkit.search.dense.search` (main index and tail,
k = 10, one thread, as a query runs) answers ``PROBE_QUERIES`` fixed query vectors: its median
and p95 milliseconds, and the median of the exact scan of the tail alone, show what a tail
costs a query as it grows towards ``dense_tail_max`` and after each merge.

Reported: per commit, documents so far, index kind, vectors in the tail, batch and commit seconds
per 1,000 documents; per run, of the HNSW commits' seconds per 1,000 documents, the median
(a commit that appends) and the mean (merges included: what a commit costs on average) of the
first and last quarter and their ratios (1.0 = flat); wall seconds per 10,000 documents, block
by block (the table prints ``--table-rows`` blocks); the search probes. Command (from the
repository root)::

    .venv/bin/python -m benchmarks.ingest_scale [--records 20000] [--batch 1000]
        [--hnsw-threshold 2000] [--vectors model|words] [--probe-every 1]
        [--compare-rewrite] [--compare-rebuild]

The 1M-record run: ``--records 1000000 --vectors words --probe-every 10``.

Writes ``benchmarks/results/ingest_scale.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
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

from benchmarks.common import write_result
from ragkit import Index
from ragkit.embed import Encoder
from ragkit.search import dense

MODEL = "all-minilm-l6-v2"
PROBE_QUERIES = 50
RECORDS_PER_FILE = 100_000  # about 8 MB of JSONL per file
BLOCK = 10_000  # documents per block of the per-10k wall seconds
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


def write_records(folder: Path, count: int, seed: int = 7) -> Path:
    """``count`` JSONL records of 8–12 words each, ids ``r0`` … (same text for a seed), in
    files of :data:`RECORDS_PER_FILE` records under ``folder`` (each well under the file-size
    limit, ``RAGKIT_MAX_FILE_MB``); returns ``folder``."""
    chosen = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, count, RECORDS_PER_FILE):
        path = folder / f"records-{start // RECORDS_PER_FILE:03d}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for n in range(start, min(count, start + RECORDS_PER_FILE)):
                words = chosen.choices(VOCABULARY, k=chosen.randint(8, 12))
                record = {"id": f"r{n}", "text": f"{n} " + " ".join(words)}
                handle.write(json.dumps(record) + "\n")
    return folder


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


def probe_queries(count: int = PROBE_QUERIES, seed: int = 5) -> np.ndarray:
    """``count`` unit query vectors (384-d; the same for a seed)."""
    vectors = np.random.default_rng(seed).standard_normal((count, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def probe(vectors: dense.DenseVectors, settings: Any, queries: np.ndarray) -> dict[str, float]:
    """Milliseconds per query of :func:`ragkit.search.dense.search` over ``vectors`` (median,
    p95) and of the exact scan of the tail alone (median), k = 10."""
    whole, tail = [], []
    for query in queries:
        clock = time.perf_counter()
        dense.search(vectors, query, 10, settings)
        whole.append((time.perf_counter() - clock) * 1000)
        if vectors.tail.ntotal:
            clock = time.perf_counter()
            dense.search(vectors.tail, query, 10, settings)
            tail.append((time.perf_counter() - clock) * 1000)
    return {
        "search_ms_p50": round(statistics.median(whole), 3),
        "search_ms_p95": round(float(np.percentile(whole, 95)), 3),
        "tail_scan_ms_p50": round(statistics.median(tail), 3) if tail else 0.0,
    }


def run(
    source: Path,
    folder: Path,
    batch: int,
    threshold: int,
    tail: bool = True,
    probe_every: int = 0,
) -> list[dict[str, Any]]:
    """Ingest ``source`` into a new index at ``folder``; one row per commit. ``tail=False``:
    every commit writes the whole main index (``dense_tail_fraction = 0``); ``probe_every``:
    after every that many commits the row also holds the search probe (0: never)."""
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
        queries = probe_queries()

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
                    "batch_s": round(now - timing["since"], 3),
                    "commit_s": round(timing["commit"], 3),
                }
            )
            if probe_every and len(rows) % probe_every == 0:
                rows[-1].update(probe(store.vectors, store.settings, queries))
            timing.update(since=now, done=done)  # the probe's time counts in no batch
            timing["since"] = time.perf_counter()

        store.commit = timed_commit  # type: ignore[method-assign]
        report = index.ingest([source], progress=progress)
    if report.skipped:
        raise SystemExit(f"ingest skipped {source}: {report.skipped[0]}")
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


def blocks(rows: list[dict[str, Any]], size: int = BLOCK) -> list[dict[str, Any]]:
    """Wall seconds of every ``size`` documents (the batches that end in the block), with the
    largest tail, the merges (HNSW commits that left an empty tail) and the slowest search
    probe in it."""
    grouped: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault((row["documents"] - 1) // size, []).append(row)
    summary = []
    for number, members in sorted(grouped.items()):
        probes = [row["search_ms_p50"] for row in members if "search_ms_p50" in row]
        summary.append(
            {
                "documents": min((number + 1) * size, members[-1]["documents"]),
                "seconds": round(sum(row["batch_s"] for row in members), 2),
                "commit_seconds": round(sum(row["commit_s"] for row in members), 2),
                "merges": sum(1 for row in members if row["kind"] == "hnsw" and not row["tail"]),
                "tail_max": max(row["tail"] for row in members),
                "search_ms_p50": max(probes) if probes else None,
            }
        )
    return summary


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
    parser.add_argument(
        "--probe-every", type=int, default=1, help="commits between search probes (0: none)"
    )
    parser.add_argument("--table-rows", type=int, default=25, help="blocks printed per run")
    args = parser.parse_args()
    runs = {}
    with tempfile.TemporaryDirectory() as scratch, word_vectors(args.vectors == "words"):
        source = write_records(Path(scratch) / "records", args.records)
        runs["tail"] = run(
            source, Path(scratch) / "a", args.batch, args.hnsw_threshold,
            probe_every=args.probe_every,
        )  # fmt: skip
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
        "runs": {
            name: {
                "flatness": flatness(rows),
                "batch_flatness": flatness(rows, "batch_s_per_1k"),
                "blocks": blocks(rows),
                "commits": rows,
            }
            for name, rows in runs.items()
        },
    }
    write_result("ingest_scale", result)
    console = Console()
    for name, rows in runs.items():
        if len(rows) <= 50:
            table = Table(
                "documents", "kind", "tail", "batch s / 1k docs", "commit s / 1k docs",
                "search ms p50", title=f"{name}: {args.records} records, {args.batch} per commit",
            )  # fmt: skip
            for row in rows:
                table.add_row(
                    str(row["documents"]),
                    row["kind"],
                    str(row["tail"]),
                    f"{row['batch_s_per_1k']:.2f}",
                    f"{row['commit_s_per_1k']:.3f}",
                    f"{row['search_ms_p50']:.2f}" if "search_ms_p50" in row else "",
                )
            console.print(table)
        console.print(block_table(name, blocks(rows), args.table_rows))
        for column, what in (("commit_s_per_1k", "commit"), ("batch_s_per_1k", "batch")):
            if flat := flatness(rows, column):
                console.print(
                    f"{name}: HNSW {what} s / 1k docs, first → last quarter: median "
                    f"{flat['first']:.3f} → {flat['last']:.3f} (× {flat['ratio']}), mean "
                    f"{flat['mean_first']:.3f} → {flat['mean_last']:.3f} (× {flat['mean_ratio']})"
                )
        probed = [row for row in rows if "search_ms_p50" in row and row["kind"] == "hnsw"]
        if probed:
            worst = max(probed, key=lambda row: row["search_ms_p50"])
            console.print(
                f"{name}: dense search ms (k 10, main + tail), first → last HNSW probe: "
                f"{probed[0]['search_ms_p50']:.2f} → {probed[-1]['search_ms_p50']:.2f}; "
                f"slowest p50 {worst['search_ms_p50']:.2f} (p95 {worst['search_ms_p95']:.2f}) "
                f"at {worst['documents']} documents, tail {worst['tail']} "
                f"(tail scan {worst['tail_scan_ms_p50']:.2f})"
            )


def block_table(name: str, summary: list[dict[str, Any]], shown: int) -> Table:
    """Every n-th block of ``summary`` (and the last), at most about ``shown`` rows."""
    step = max(1, -(-len(summary) // shown))
    table = Table(
        "documents", f"s / {BLOCK // 1000}k docs", "commit s", "merges", "largest tail",
        "search ms p50 (max)", title=f"{name}: wall seconds per {BLOCK:,} documents",
    )  # fmt: skip
    for number, block in enumerate(summary):
        if number % step and number != len(summary) - 1:
            continue
        search = block["search_ms_p50"]
        table.add_row(
            str(block["documents"]),
            f"{block['seconds']:.1f}",
            f"{block['commit_seconds']:.1f}",
            str(block["merges"]),
            str(block["tail_max"]),
            "" if search is None else f"{search:.2f}",
        )
    return table


if __name__ == "__main__":
    main()
