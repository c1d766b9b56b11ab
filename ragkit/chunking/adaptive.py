"""Adaptive chunking: run the candidate chunkers on one document, score each chunking with the
five intrinsic metrics, keep the best.

``score = Σ_m w_m · metric_m / Σ_m w_m`` over SC, BI, ICC, DCC and RC (default weights equal);
the candidate with the highest score wins, ties going to the earlier candidate. All candidates
share one :class:`DocumentContext`, so sentences are split, counted and embedded once per
document, and identical chunkings are scored once. Without an ``embed`` callable the
``semantic`` candidate and the ICC/DCC metrics are left out; when every candidate yields the
same chunks (a document within the budget, say) ICC/DCC are not computed either, since they
could not change the choice — both cases are listed in ``Selection.skipped``.

Example:
    >>> selection = AdaptiveChunker(counter=len, max_tokens=40).chunk("Short text. Two.")
    >>> selection.chosen, [c.text for c in selection.chunks]
    ('fixed-40', ['Short text. Two.'])
    >>> sorted(selection.scores["sentence"])
    ['BI', 'RC', 'SC', 'score']
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragkit.chunking.base import Chunker
from ragkit.chunking.context import DocumentContext, Embed
from ragkit.chunking.fixed import FixedChunker
from ragkit.chunking.metrics import (
    block_integrity,
    contextual_coherence,
    intrachunk_cohesion,
    size_compliance,
)
from ragkit.chunking.recursive import RecursiveChunker
from ragkit.chunking.references import Resolver, reference_pairs, references_completeness
from ragkit.chunking.semantic import SemanticChunker
from ragkit.chunking.sentence import SentenceChunker
from ragkit.chunking.structure import StructureChunker
from ragkit.chunking.types import Chunk, ChunkingRecord, TokenCounter, counter_for
from ragkit.documents import Block, Document
from ragkit.errors import RagkitError

log = logging.getLogger(__name__)

METRICS = ("SC", "BI", "ICC", "DCC", "RC")
EMBEDDING_METRICS = frozenset({"ICC", "DCC"})
DEFAULT_WEIGHTS: Mapping[str, float] = {m: 1.0 for m in METRICS}


@dataclass(frozen=True)
class Selection:
    """The chosen chunking of one document and the scores of every candidate.

    ``scores[label]`` maps each metric (and ``score``, the weighted mean) to its value;
    ``seconds`` is the time spent chunking, embedding and scoring all candidates.
    """

    chunks: list[Chunk]
    chosen: str
    scores: dict[str, dict[str, float]]
    weights: dict[str, float]
    seconds: float
    skipped: tuple[str, ...] = field(default=())

    @property
    def record(self) -> ChunkingRecord:
        """What the index keeps next to the document."""
        return ChunkingRecord(self.chosen, self.scores, self.weights, self.seconds, self.skipped)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready record (:meth:`ChunkingRecord.as_dict`)."""
        return self.record.as_dict()


def score_chunking(
    chunks: Sequence[Chunk],
    context: DocumentContext,
    pairs: Sequence[tuple[int, int]],
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    size_range: tuple[int, int] = (32, 256),
    window_tokens: int = 3000,
    with_embeddings: bool = True,
) -> dict[str, float]:
    """SC, BI, RC (and ICC, DCC ``with_embeddings``) of one chunking, and their weighted mean.

    ``size_range`` is the ``(min_tokens, max_tokens)`` window SC and BI judge against.
    """
    low, high = size_range
    values = {
        "SC": size_compliance(chunks, low, high),
        "BI": block_integrity(chunks, context, high),
        "RC": references_completeness(chunks, pairs),
    }
    if with_embeddings:
        values["ICC"] = intrachunk_cohesion(chunks, context)
        values["DCC"] = contextual_coherence(chunks, context, window_tokens)
    used = {m: w for m, w in weights.items() if m in values}
    total = sum(used.values())
    values["score"] = sum(w * values[m] for m, w in used.items()) / total if total else 0.0
    return {k: round(v, 6) for k, v in values.items()}


def default_candidates(
    max_tokens: int, min_tokens: int | None, embed: Embed | None
) -> list[Chunker]:
    """``fixed``, ``sentence``, ``recursive``, ``structure`` and (with ``embed``) ``semantic``."""
    candidates: list[Chunker] = [
        FixedChunker(max_tokens, min_tokens),
        SentenceChunker(max_tokens, min_tokens),
        RecursiveChunker(max_tokens, min_tokens),
        StructureChunker(max_tokens, min_tokens),
    ]
    if embed is not None:
        candidates.append(SemanticChunker(embed, max_tokens, min_tokens))
    return candidates


class AdaptiveChunker:
    """Per-document choice among candidate chunkers by weighted intrinsic metrics.

    ``embed(texts) -> (n, d) array`` supplies sentence vectors (e.g.
    ``Encoder("all-minilm-l6-v2").encode_passages``); ``counter`` counts tokens (default: the
    document language's tokenizer, regex tokens without models); ``weights`` maps metric names
    to non-negative weights (missing ones count 0 when any is given, all 1 when ``None``).
    """

    def __init__(
        self,
        embed: Embed | None = None,
        counter: TokenCounter | None = None,
        weights: Mapping[str, float] | None = None,
        candidates: Sequence[Chunker] | None = None,
        max_tokens: int = 256,
        min_tokens: int | None = None,
        window_tokens: int = 3000,
        resolver: Resolver | None = None,
    ) -> None:
        chosen = dict(DEFAULT_WEIGHTS if weights is None else weights)
        unknown = set(chosen) - set(METRICS)
        if unknown:
            raise RagkitError(
                f"chunking weights: unknown metric(s) {sorted(unknown)}; use {METRICS}"
            )
        if any(w < 0 for w in chosen.values()) or not any(chosen.values()):
            raise RagkitError("chunking weights must be ≥ 0 with at least one above 0")
        self.embed = embed
        self.counter = counter
        self.weights = {m: float(chosen.get(m, 0.0)) for m in METRICS}
        self.candidates = list(candidates or default_candidates(max_tokens, min_tokens, embed))
        if not self.candidates:
            raise RagkitError("adaptive chunking needs at least one candidate chunker")
        self.max_tokens = max_tokens
        self.min_tokens = self.candidates[0].min_tokens if min_tokens is None else min_tokens
        self.window_tokens = window_tokens
        self.resolver = resolver

    def context(self, text: str, blocks: Sequence[Block] | None, language: str) -> DocumentContext:
        counter = self.counter or counter_for(language)
        return DocumentContext.build(text, blocks, language, counter, embed=self.embed)

    def score(
        self,
        chunks: Sequence[Chunk],
        context: DocumentContext,
        pairs: Sequence[tuple[int, int]],
        with_embeddings: bool | None = None,
    ) -> dict[str, float]:
        """Every metric this chunker can compute for ``chunks``, plus the weighted ``score``.

        ``with_embeddings=False`` leaves ICC and DCC out (default: whenever ``embed`` is set).
        """
        return score_chunking(
            chunks,
            context,
            pairs,
            self.weights,
            (self.min_tokens, self.max_tokens),
            self.window_tokens,
            with_embeddings=self.embed is not None if with_embeddings is None else with_embeddings,
        )

    def chunk(
        self, text: str, blocks: Sequence[Block] | None = None, language: str = ""
    ) -> Selection:
        """Chunk one document with every candidate and keep the best-scoring chunking."""
        clock = time.perf_counter()
        context = self.context(text, blocks, language)
        return self.select(context, time.perf_counter() - clock)

    def chunk_many(self, documents: Sequence[Document]) -> list[Selection]:
        """:meth:`chunk` for each document, with the sentence vectors of every document over
        one budget (those the ``semantic`` candidate and ICC/DCC need) embedded in one call,
        so the encoder sees full, length-sorted batches instead of one small call per document.
        """
        clock = time.perf_counter()
        contexts = [self.context(d.text, d.blocks, d.language) for d in documents]
        needing = [c for c in contexts if len(c.units) > 1 and sum(c.unit_tokens) > self.max_tokens]
        texts = [c.text[s:e] for c in needing for s, e in c.units]
        if self.embed is not None and texts:
            vectors = np.asarray(self.embed(texts), dtype=np.float32)
            position = 0
            for context in needing:
                context.set_unit_vectors(vectors[position : position + len(context.units)])
                position += len(context.units)
        shared = (time.perf_counter() - clock) / max(1, len(contexts))
        return [self.select(c, shared) for c in contexts]

    def select(self, context: DocumentContext, spent: float = 0.0) -> Selection:
        """Run every candidate on a prepared context, score, keep the best (``spent``: seconds
        already spent preparing this document, added to ``Selection.seconds``)."""
        clock = time.perf_counter() - spent
        text, language = context.text, context.language
        pairs = reference_pairs(text, language, self.resolver)
        chunked = [(c.label, c.chunk_context(context)) for c in self.candidates]
        distinct: dict[tuple[tuple[int, int], ...], dict[str, float]] = {}
        for _, chunks in chunked:
            distinct.setdefault(tuple((c.start, c.end) for c in chunks), {})
        # ICC/DCC need embeddings; when every candidate agrees they cannot change the choice.
        embeddings = self.embed is not None and len(distinct) > 1
        skipped = () if embeddings else tuple(sorted(EMBEDDING_METRICS))
        scores: dict[str, dict[str, float]] = {}
        for label, chunks in chunked:
            key = tuple((c.start, c.end) for c in chunks)
            if not distinct[key]:
                distinct[key] = self.score(chunks, context, pairs, embeddings)
            scores[label] = distinct[key]
        best = max(range(len(chunked)), key=lambda k: scores[chunked[k][0]]["score"])
        return Selection(
            chunks=chunked[best][1],
            chosen=chunked[best][0],
            scores=scores,
            weights=dict(self.weights),
            seconds=time.perf_counter() - clock,
            skipped=skipped,
        )


def explain(
    text: str,
    blocks: Sequence[Block] | None = None,
    language: str = "",
    embed: Embed | None = None,
    weights: Mapping[str, float] | None = None,
    max_tokens: int = 256,
) -> Selection:
    """The chunker × metric table and the choice for one text (``ragkit chunk --explain``)."""
    chunker = AdaptiveChunker(embed=embed, weights=weights, max_tokens=max_tokens)
    return chunker.chunk(text, blocks, language)
