"""BEIR-layout evaluation: ingest the corpus through the real pipeline, run queries, score.

Metrics: nDCG@10 with graded gain ``2^rel - 1``, Recall@100 (share of judged-relevant documents
in the top 100), MRR@10 (reciprocal rank of the first relevant document in the top 10).

Example:
    >>> ndcg_at_k(["d1", "d2"], {"d2": 1}, k=10)
    0.6309297535714575
"""

from __future__ import annotations

import csv
import json
import math
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragkit.config import DEFAULT_MODEL
from ragkit.errors import RagkitError
from ragkit.index import Index
from ragkit.pipeline import ProgressCallback
from ragkit.search.fusion import FusionMethod, SearchMode


@dataclass
class EvalReport:
    """Mean metrics over judged queries plus wall time per stage (seconds)."""

    dataset: str
    model: str
    mode: str
    queries: int
    ndcg_at_10: float
    recall_at_100: float
    mrr_at_10: float
    seconds: dict[str, float] = field(default_factory=dict)
    fusion: str = ""  # hybrid mode: how the two lists were fused

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    if not path.exists():
        raise RagkitError(f"{path}: missing; a BEIR folder needs qrels/test.tsv")
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            score = int(row["score"])
            if score > 0:
                qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = score
    return qrels


def load_queries(path: Path) -> dict[str, str]:
    if not path.exists():
        raise RagkitError(f"{path}: missing; a BEIR folder needs queries.jsonl")
    with path.open(encoding="utf-8") as handle:
        return {str(r["_id"]): r["text"] for r in map(json.loads, filter(str.strip, handle))}


def ndcg_at_k(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum((2 ** relevant.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at_k(ranked: list[str], relevant: dict[str, int], k: int = 100) -> float:
    return len(set(ranked[:k]) & relevant.keys()) / len(relevant) if relevant else 0.0


def mrr_at_k(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    return next((1.0 / (i + 1) for i, d in enumerate(ranked[:k]) if d in relevant), 0.0)


def rank_documents(
    index: Index,
    query: str,
    depth: int = 100,
    mode: SearchMode = "dense",
    fusion: FusionMethod | None = None,
) -> list[str]:
    """Document ids best first; a document scores as its best chunk."""
    ranked: list[str] = []
    for hit in index.search(query, k=depth * 3, mode=mode, fusion=fusion):
        if hit.document_id not in ranked:
            ranked.append(hit.document_id)
    return ranked[:depth]


@dataclass(frozen=True)
class Judgments:
    """A BEIR folder's corpus file, queries and graded relevance judgments (``qrels``)."""

    dataset: str
    corpus: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]

    @property
    def judged(self) -> list[str]:
        """Ids of the queries that have at least one relevant document."""
        return [q for q in self.queries if q in self.qrels]


def load_judgments(dataset: Path) -> Judgments:
    """Read ``corpus.jsonl``'s location, ``queries.jsonl`` and ``qrels/test.tsv``."""
    corpus = dataset / "corpus.jsonl"
    if not corpus.exists():
        raise RagkitError(f"{corpus}: missing; a BEIR folder needs corpus.jsonl")
    qrels = load_qrels(dataset / "qrels" / "test.tsv")
    return Judgments(dataset.name, corpus, load_queries(dataset / "queries.jsonl"), qrels)


def score(
    index: Index,
    judgments: Judgments,
    mode: SearchMode,
    seconds: dict[str, float] | None = None,
    fusion: FusionMethod | None = None,
    progress: ProgressCallback | None = None,
) -> EvalReport:
    """Search every judged query in ``mode`` and average the metrics (reported with the model
    the index was built with; hybrid fuses by ``fusion``, default the index's setting).
    ``progress`` is called as ``(f"{mode} queries", done, total)`` after each query."""
    judged = judgments.judged
    count = max(len(judged), 1)
    qrels, queries = judgments.qrels, judgments.queries
    clock = time.perf_counter()
    runs = {}
    for done, q in enumerate(judged, start=1):
        runs[q] = rank_documents(index, queries[q], mode=mode, fusion=fusion)
        if progress:
            progress(f"{mode} queries", done, len(judged))
    return EvalReport(
        dataset=judgments.dataset,
        model=index.settings.embedding_model,
        mode=mode,
        queries=len(judged),
        ndcg_at_10=sum(ndcg_at_k(runs[q], qrels[q]) for q in judged) / count,
        recall_at_100=sum(recall_at_k(runs[q], qrels[q]) for q in judged) / count,
        mrr_at_10=sum(mrr_at_k(runs[q], qrels[q]) for q in judged) / count,
        seconds={**(seconds or {}), "search": time.perf_counter() - clock},
        fusion=(fusion or index.settings.fusion) if mode == "hybrid" else "",
    )


def evaluate(
    dataset: Path,
    model: str = DEFAULT_MODEL,
    index_dir: Path | None = None,
    modes: Sequence[SearchMode] = ("dense",),
    fusion: FusionMethod | None = None,
    progress: ProgressCallback | None = None,
    **settings: Any,
) -> list[EvalReport]:
    """Evaluate retrieval with ``model`` on the BEIR folder ``dataset``, one report per mode
    (``auto``: the model :func:`ragkit.embed.models.choose_model` picks for the corpus).

    All modes search the same index, built once with ``settings`` (e.g. ``chunker="fixed"``;
    ``index_dir`` keeps it for a later run, which then re-embeds nothing and refuses other
    settings). ``fusion`` overrides the index's hybrid fusion for this evaluation.
    ``progress`` follows the ingest (:data:`ragkit.pipeline.ProgressCallback`) and the queries.
    """
    judgments = load_judgments(dataset)
    with tempfile.TemporaryDirectory(prefix="ragkit-eval-") as scratch:
        folder = index_dir or Path(scratch) / "index"
        index = Index.open(folder, create=True, model=model, **settings)
        ingest = index.ingest([judgments.corpus], progress=progress)
        ingest_seconds = {f"ingest_{k}": v for k, v in ingest.seconds.items()}
        reports = [
            score(index, judgments, mode, ingest_seconds, fusion, progress) for mode in modes
        ]
        index.close()
    return reports
