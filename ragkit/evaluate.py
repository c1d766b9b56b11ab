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
import logging
import math
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragkit.config import DEFAULT_MODEL
from ragkit.errors import RagkitError
from ragkit.index import Index
from ragkit.pipeline import ProgressCallback
from ragkit.search.fusion import FusionMethod, SearchMode

log = logging.getLogger(__name__)


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


QRELS_HEADER = ("query-id", "corpus-id", "score")


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    r"""Relevance judgments of a BEIR ``qrels`` file: query id → document id → grade (> 0 only).

    A missing header, a line without three fields or a grade that is not a whole number is a
    :class:`RagkitError` naming the file and line.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "test.tsv"
        >>> _ = path.write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n")
        >>> load_qrels(path)
        {'q1': {'d1': 2}}
        >>> _ = path.write_text("query-id\tcorpus-id\tscore\nq1\td1\n")
        >>> load_qrels(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: .../test.tsv:2: expected query-id, corpus-id and score ...
    """
    if not path.exists():
        raise RagkitError(f"{path}: missing; a BEIR folder needs qrels/test.tsv")
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8-sig", newline="") as handle:
        rows = csv.reader(handle, delimiter="\t")
        header = [cell.strip() for cell in next(rows, [])]
        if not set(QRELS_HEADER) <= set(header):
            raise RagkitError(
                f"{path}:1: the first line must be the header {chr(9).join(QRELS_HEADER)!r} "
                f"(tab-separated), not {chr(9).join(header)!r}"
            )
        query, document, score = (header.index(name) for name in QRELS_HEADER)
        for row in rows:
            if not any(cell.strip() for cell in row):
                continue
            line = rows.line_num
            if len(row) < len(header):
                raise RagkitError(
                    f"{path}:{line}: expected query-id, corpus-id and score separated by tabs, "
                    f"found {len(row)} field(s)"
                )
            try:
                grade = int(row[score])
            except ValueError:
                raise RagkitError(
                    f"{path}:{line}: score {row[score]!r} is not a whole number"
                ) from None
            if grade > 0:
                qrels.setdefault(row[query], {})[row[document]] = grade
    return qrels


def _json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each non-blank line of a JSON Lines file; a line that is
    not a JSON object is a :class:`RagkitError` naming the file and line."""
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise RagkitError(
                    f"{path}:{number}: not JSON ({error.msg} at character {error.pos + 1})"
                ) from None
            if not isinstance(record, dict):
                raise RagkitError(f"{path}:{number}: expected a JSON object")
            yield number, record


def load_queries(path: Path) -> dict[str, str]:
    """Query id → text of a BEIR ``queries.jsonl`` (objects with ``_id`` and ``text``); a bad
    line is a :class:`RagkitError` naming the file and line."""
    if not path.exists():
        raise RagkitError(f"{path}: missing; a BEIR folder needs queries.jsonl")
    queries: dict[str, str] = {}
    for number, record in _json_lines(path):
        if "_id" not in record or not isinstance(record.get("text"), str):
            raise RagkitError(f'{path}:{number}: a query needs an "_id" and a "text" string')
        queries[str(record["_id"])] = record["text"]
    return queries


def corpus_ids(path: Path) -> set[str]:
    """The ``_id`` of every readable document of a BEIR ``corpus.jsonl`` (ingest reports the
    lines it cannot read)."""
    ids: set[str] = set()
    with path.open(encoding="utf-8-sig") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and record.get("id", record.get("_id")) is not None:
                ids.add(str(record.get("id", record.get("_id"))))
    return ids


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
    """Document ids best first; a document scores as its best chunk. Judgments grade every
    document, so identical passages of several documents are not folded (``collapse`` off):
    each document keeps its own rank."""
    ranked: list[str] = []
    for hit in index.search(query, k=depth * 3, mode=mode, fusion=fusion, collapse=False):
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
    """Read ``corpus.jsonl``'s location, ``queries.jsonl`` and ``qrels/test.tsv``.

    No query with a relevant document is a :class:`RagkitError`; judgments naming a query or a
    document the folder does not have are logged as a warning (an unknown document still
    counts as relevant and unfound, as in BEIR's own scoring).
    """
    corpus = dataset / "corpus.jsonl"
    if not corpus.exists():
        raise RagkitError(f"{corpus}: missing; a BEIR folder needs corpus.jsonl")
    qrels_path = dataset / "qrels" / "test.tsv"
    qrels = load_qrels(qrels_path)
    queries_path = dataset / "queries.jsonl"
    judgments = Judgments(dataset.name, corpus, load_queries(queries_path), qrels)
    if not judgments.judged:
        raise RagkitError(
            f"{dataset}: no query of {queries_path.name} ({len(judgments.queries)} queries) has "
            f"a relevant document in qrels/test.tsv ({len(qrels)} judged query ids); "
            "nothing to score"
        )
    unknown_queries = sorted(set(qrels) - judgments.queries.keys())
    known = corpus_ids(corpus)
    unknown_documents = sorted({d for judged in qrels.values() for d in judged} - known)
    for what, ids, where in (
        ("queries", unknown_queries, queries_path.name),
        ("documents", unknown_documents, corpus.name),
    ):
        if ids:
            log.warning(
                "%s judges %s that %s does not have: %d (%s)",
                qrels_path,
                what,
                where,
                len(ids),
                ", ".join(ids[:5]) + (", …" if len(ids) > 5 else ""),
            )
    return judgments


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
    index_dir: str | Path | None = None,
    modes: Sequence[SearchMode] = ("dense",),
    fusion: FusionMethod | None = None,
    progress: ProgressCallback | None = None,
    **settings: Any,
) -> list[EvalReport]:
    """Evaluate retrieval with ``model`` on the BEIR folder ``dataset``, one report per mode
    (``auto``: the model :func:`ragkit.embed.models.choose_model` picks for the corpus).

    All modes search the same index, built once with ``settings`` (e.g. ``chunker="fixed"``;
    ``index_dir`` keeps it for a later run, which then re-embeds nothing and refuses other
    settings; a folder or a Milvus address, :mod:`ragkit.store.address`). ``fusion`` overrides the index's hybrid fusion for this evaluation.
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
