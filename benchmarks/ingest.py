"""Ingest ratio: the wall of an ingest with the defaults over the wall of embedding exactly the
same final chunk texts with the same model through sentence-transformers, and how often
adaptive selection on static vectors chooses what the full encoder chooses.

Run::

    .venv/bin/python -m benchmarks.ingest                      # 500 Cranfield abstracts, 300 stitched
    .venv/bin/python -m benchmarks.ingest --cranfield 1400 --stitched 1400   # everything

Two collections, each written to files in a scratch folder:

- **cranfield**: a seeded sample of ``--cranfield`` records of the Cranfield corpus
  (``../shared/data/beir/cranfield``) as one ``corpus.jsonl`` file (what ``ragkit eval``
  ingests: one document per record, title and text);
- **stitched**: ``benchmarks/chunking.py``'s long documents (``--stitched`` shuffled abstracts,
  30–60 per document, each as ``# title`` + text), one Markdown file per document.

In one process, for each collection, back to back: (1) ``Index.ingest`` into a new index with
the defaults (``auto`` model → all-MiniLM-L6-v2 for English, adaptive chunking,
``chunk_vectors = static``); (2) ``SentenceTransformer.encode`` of exactly the texts that ingest
embedded (recorded at its embed stage; batch size 32, normalized, as the index's encoder);
(3) the same ingest with ``chunk_vectors = encoder`` (the behaviour before static vectors).
**ratio** = wall (1) / wall (2); **ratio before** = wall (3) / wall (2). **agreement**: share of
the documents that needed a choice (more than one distinct candidate chunking) for which (1)
and (3) chose the same chunker. Warm start: the encoder, the static vectors (distilled first
when missing; that one-time cost is reported apart) and the language and tokenizer models are
loaded by a small warm-up ingest before anything is timed.

Writes ``benchmarks/results/ingest.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ragkit  # noqa: F401  (thread policy before torch/faiss load)

# isort: split

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.chunking import cranfield_documents  # the stitched long documents
from benchmarks.common import BEIR, write_result
from ragkit import Index
from ragkit.config import Settings
from ragkit.documents import Document
from ragkit.embed import Encoder
from ragkit.embed.models import ENGLISH_MODEL
from ragkit.embed.static import StaticEncoder, static_folder
from ragkit.pipeline import LocalStages, PreparedDocument
from ragkit.pipeline.scheduling import EncoderSource

DATA = BEIR / "cranfield"


class RecordingStages(LocalStages):
    """The default in-process stages, remembering what the embed stage embedded and which
    chunker each document got."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.chosen: dict[str, tuple[str, bool]] = {}  # key → (chunker, needed a choice)

    def prepare(
        self,
        documents: list[Document],
        settings: Settings,
        encoder: EncoderSource,
        seconds: dict[str, float],
    ) -> list[PreparedDocument]:
        prepared = super().prepare(documents, settings, encoder, seconds)
        for item in prepared:
            distinct = {json.dumps(s, sort_keys=True) for s in item.chunking.scores.values()}
            self.chosen[item.document.key] = (item.chunking.chosen, len(distinct) > 1)
        return prepared

    def embed(
        self,
        texts: list[str],
        settings: Settings,
        encoder: EncoderSource,
        progress: Callable[[int], None] | None,
    ) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed(texts, settings, encoder, progress)


def cranfield_files(folder: Path, count: int, seed: int) -> list[Path]:
    rows = [json.loads(line) for line in (DATA / "corpus.jsonl").open(encoding="utf-8")]
    rows = random.Random(seed).sample(rows, min(count, len(rows)))
    path = folder / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return [path]


def stitched_files(folder: Path, count: int, seed: int) -> list[Path]:
    paths = []
    for number, document in enumerate(cranfield_documents(count, seed)):
        path = folder / f"stitched-{number:03d}.md"
        path.write_text(document.text, encoding="utf-8")
        paths.append(path)
    return paths


def timed_ingest(folder: Path, paths: list[Path], **settings: Any) -> tuple[float, Any, Any]:
    index = Index.open(folder, create=True, **settings)
    stages = RecordingStages()
    clock = time.perf_counter()
    report = index.ingest(paths, stages=stages)
    return time.perf_counter() - clock, report, stages


def measure(name: str, paths: list[Path], scratch: Path, console: Console) -> dict[str, Any]:
    wall, report, stages = timed_ingest(scratch / f"{name}-static", paths)
    console.log(f"{name}: ingest (static) {wall:.1f} s, {len(stages.texts)} chunks")
    model = Encoder(ENGLISH_MODEL).model
    clock = time.perf_counter()
    model.encode(stages.texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
    embed_wall = time.perf_counter() - clock
    console.log(f"{name}: sentence-transformers on the same texts {embed_wall:.1f} s")
    before_wall, before_report, before = timed_ingest(
        scratch / f"{name}-encoder", paths, chunk_vectors="encoder"
    )
    console.log(f"{name}: ingest (encoder) {before_wall:.1f} s")
    chosen = {k: c for k, (c, needed) in stages.chosen.items() if needed}
    same = sum(before.chosen.get(k, ("",))[0] == c for k, c in chosen.items())
    return {
        "documents": len(stages.chosen),
        "chunks": len(stages.texts),
        "chunks_before": len(before.texts),
        "ingest_seconds": wall,
        "embed_seconds": embed_wall,
        "ingest_seconds_before": before_wall,
        "ratio": wall / embed_wall,
        "ratio_before": before_wall / embed_wall,
        "stage_seconds": report.seconds,
        "stage_seconds_before": before_report.seconds,
        "documents_choosing": len(chosen),
        "same_choice": same,
        "agreement": same / len(chosen) if chosen else 1.0,
        "chosen": _counts(c for c, _ in stages.chosen.values()),
        "chosen_before": _counts(c for c, _ in before.chosen.values()),
    }


def _counts(labels: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def warm_up(scratch: Path, console: Console) -> float:
    """Load the encoder, the static vectors (distilling them when missing: returns those
    seconds) and the language and tokenizer models, so that no timed run pays for them."""
    encoder = Encoder(ENGLISH_MODEL)
    distilled = 0.0
    if not (static_folder(encoder.spec.name, encoder.spec.location) / "config.json").exists():
        clock = time.perf_counter()
        StaticEncoder.for_encoder(encoder)
        distilled = time.perf_counter() - clock
        console.log(f"static vectors distilled in {distilled:.1f} s (once per machine)")
    folder = scratch / "warm"
    folder.mkdir()
    paths = stitched_files(folder, 40, 99)[:1] + cranfield_files(folder, 5, 99)
    for vectors in ("static", "encoder"):
        Index.open(scratch / f"warm-{vectors}", create=True, chunk_vectors=vectors).ingest(paths)
    return distilled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cranfield", type=int, default=500, help="Cranfield records sampled")
    parser.add_argument(
        "--stitched", type=int, default=300, help="abstracts stitched into long documents"
    )
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    console = Console(width=150)
    started = time.perf_counter()
    scratch = Path(tempfile.mkdtemp(prefix="ragkit-ingest-bench-"))
    try:
        distilled = warm_up(scratch, console)
        results: dict[str, Any] = {}
        for name, make, count in (
            ("cranfield", cranfield_files, args.cranfield),
            ("stitched", stitched_files, args.stitched),
        ):
            folder = scratch / f"{name}-files"
            folder.mkdir()
            results[name] = measure(name, make(folder, count, args.seed), scratch, console)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result = {
        "model": ENGLISH_MODEL,
        "settings": vars(args),
        "distill_seconds": distilled,
        "collections": results,
        "seconds": time.perf_counter() - started,
    }
    write_result("ingest", result)
    print_table(console, result)


def print_table(console: Console, result: dict[str, Any]) -> None:
    table = Table(title=f"Ingest ratio ({result['model']}; goal ≤ 1.2)")
    for column in (
        "collection",
        "documents",
        "chunks",
        "ingest s",
        "embed s",
        "ratio",
        "ingest s (encoder)",
        "ratio (encoder)",
        "chunk s / before",
        "agreement",
    ):
        table.add_column(column, justify="right")
    for name, row in result["collections"].items():
        table.add_row(
            name,
            str(row["documents"]),
            str(row["chunks"]),
            f"{row['ingest_seconds']:.1f}",
            f"{row['embed_seconds']:.1f}",
            f"{row['ratio']:.2f}",
            f"{row['ingest_seconds_before']:.1f}",
            f"{row['ratio_before']:.2f}",
            f"{row['stage_seconds']['chunk']:.1f} / {row['stage_seconds_before']['chunk']:.1f}",
            f"{row['same_choice']}/{row['documents_choosing']} ({row['agreement']:.0%})",
        )
    console.print(table)


if __name__ == "__main__":
    main()
