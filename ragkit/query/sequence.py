"""**The** query sequence, beside ingest's: :class:`Search` is the only place that orders the
query stages.

route (the languages the query is analyzed as) → analyze (matching keys, sparse terms, query
vector: :mod:`ragkit.query.analyze`) → first-stage lists and their fusion → feedback (a second
pass with the query learned from the first pass's top chunks) → document evidence → phrase
evidence (:mod:`ragkit.query.passes`) → collapse (distinct passages, the candidate pool widened
while copies fill it: :mod:`ragkit.search.collapse`) → rerank (the groupwise reranker over the
first stage's top ``rerank_depth``) → MMR (``mmr_lambda``: the hits picked from the best
``mmr_candidates`` for relevance and novelty, :mod:`ragkit.search.mmr`) → hits with their
relevance (:mod:`ragkit.query.relevance`, :mod:`ragkit.query.hits`). A search by vector
(:meth:`Search.run_vector`) enters at the lists, with the vector as the query's.

Example:
    >>> search = Search(index.store, index.settings, lambda: index.encoder,  # doctest: +SKIP
    ...                 lambda: index.reranker)
    >>> [hit.key for hit, _ in search.run("boiling water", SearchOptions(k=2))]  # doctest: +SKIP
    ['/docs/water.md', '/docs/ice.md']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ragkit.config import Settings
from ragkit.embed import Encoder
from ragkit.embed.models import AUTO_MODEL
from ragkit.errors import InvalidArgumentError
from ragkit.pipeline.near_duplicates import THRESHOLD as NEAR_DUPLICATE_THRESHOLD
from ragkit.query.analyze import Analyzed, analyze, query_vector, route
from ragkit.query.hits import Hit, hit_of
from ragkit.query.options import SearchOptions
from ragkit.query.passes import (
    Parts,
    explained,
    first_stage,
    second_pass_query,
    with_document_evidence,
    with_phrase_evidence,
)
from ragkit.query.relevance import Evidence, calibrations, evidence
from ragkit.query.vectors import Vector, checked_vector
from ragkit.search.collapse import MAX_COLLAPSE_DEPTH, distinct
from ragkit.search.contributions import Contribution
from ragkit.search.evidence import uses_evidence
from ragkit.search.feedback import levers
from ragkit.search.fusion import Ranking
from ragkit.search.mmr import maximal_marginal_relevance
from ragkit.search.phrase import uses_phrase
from ragkit.search.query import check_query
from ragkit.store import IndexReader, StoredChunk

if TYPE_CHECKING:
    from ragkit.rerank.reranker import Reranker

Found = list[tuple[Hit, Contribution | None, Evidence]]
"""Hits best first, each with its contribution (when explained, else None) and the evidence
its relevance was calibrated from."""


@dataclass(frozen=True)
class Candidate:
    """A passage on its way to a hit: the chunk, its score, the keys of its copies and, when
    explained, its contribution (a frozen dataclass with ``text`` and ``score``, as the
    reranker takes)."""

    row: StoredChunk
    score: float
    copies: list[str]
    part: Contribution | None

    @property
    def text(self) -> str:
        return self.row.text


class Search:
    """The query sequence over one store, with the index's settings; the encoder and the
    reranker are loaded on first use (``encoder()``, ``reranker()``)."""

    def __init__(
        self,
        store: IndexReader,
        settings: Settings,
        encoder: Callable[[], Encoder],
        reranker: Callable[[], Reranker],
    ) -> None:
        self.store = store
        self.settings = settings
        self.encoder = encoder
        self.reranker = reranker

    def run(self, query: str, options: SearchOptions, explain: bool = False) -> Found:
        """The hits for ``query`` (checked options: :meth:`SearchOptions.of`), best first
        (none before the first ingest of an ``auto`` index chose its model)."""
        check_query(query)
        if self.settings.embedding_model == AUTO_MODEL:
            return []
        languages = route(query, options.language, self.store)
        analyzed = analyze(query, languages, options.mode, self.settings, self.encoder)
        return self.ranked(query, analyzed, options, explain)

    def run_vector(self, vector: Any, options: SearchOptions, explain: bool = False) -> Found:
        """The hits nearest ``vector`` (:func:`~ragkit.query.vectors.checked_vector`: of the
        index's dimension, finite), best first: the dense list, then the stages as for a
        query in dense mode (no reranking: the reranker reads query text)."""
        if options.rerank:
            raise InvalidArgumentError("rerank: the reranker reads query text; search by text")
        if "mode" in options.model_fields_set and options.mode != "dense":
            raise InvalidArgumentError(
                f"mode={options.mode!r}: a search by vector is dense; leave mode out"
            )
        if self.settings.embedding_model == AUTO_MODEL:
            return []
        unit = checked_vector(vector, self.store.dimension)
        dense = options.model_copy(update={"mode": "dense"})
        return self.ranked(None, Analyzed([], [], [], unit), dense, explain)

    def query_vector(self, query: str) -> Vector:
        """``query``'s vector, as :meth:`run` embeds it in the languages it is routed to."""
        check_query(query)
        languages = route(query, None, self.store)
        return query_vector(query, languages, self.settings, self.encoder)

    def ranked(
        self, query: str | None, analyzed: Analyzed, options: SearchOptions, explain: bool
    ) -> Found:
        """The stages after analysis: the lists and evidence, collapse, rerank (``query``:
        the text the reranker reads), MMR, and each hit's relevance."""
        allowed = self.store.filtered_chunk_ids(options.filters) if options.filters else None
        pool = options.mmr_pool if options.mmr_lambda is not None else options.k
        wanted = max(pool, self.settings.rerank_depth) if options.rerank else pool
        depth = max(wanted, self.settings.fusion_depth)
        first = options.model_copy(update={"k": wanted})
        found = self.first_stage(analyzed, allowed, first, explain, depth)
        if options.rerank and query is not None:
            found = self.reranker().rerank_hits(query, found, pool)
        vectors: dict[int, np.ndarray] = {}
        if options.mmr_lambda is not None and found:
            vectors = self.store.vectors_by_id([c.row.chunk_id for c in found])
            found = diversified(found, vectors, options.k, options.mmr_lambda)
        found = found[: options.k]
        ids = [c.row.chunk_id for c in found]
        seen = evidence(self.store, ids, analyzed.vector, analyzed.terms, vectors)
        model = calibrations(self.settings.embedding_model)
        return [
            (
                hit_of(c.row, c.score, c.copies, model.relevance(seen[c.row.chunk_id])),
                c.part,
                seen[c.row.chunk_id],
            )
            for c in found
        ]

    def first_stage(
        self,
        analyzed: Analyzed,
        allowed: np.ndarray | None,
        options: SearchOptions,
        explain: bool,
        depth: int,
    ) -> list[Candidate]:
        """The lists and the evidence stages over the ``allowed`` chunks (None: all), then
        collapse: ``depth`` candidates from each list, widened (×4) while copies leave fewer
        than k passages."""
        settings = self.settings
        mode, method = options.mode, options.fusion or settings.fusion
        if options.dense_weight is not None:  # this query's weights: weighted fusion
            settings = settings.model_copy(update={"dense_weight": options.dense_weight})
            method = "weighted"
        languages = analyzed.languages
        vector, terms = analyzed.vector, analyzed.terms
        lists = first_stage(
            self.store, settings, mode, method, vector, terms, depth, allowed, languages
        )
        feedback = options.feedback or settings.feedback
        if feedback == "auto" and lists.choice is not None:  # per-query fusion chose
            sparse_feedback, dense_feedback = False, lists.choice.feedback
        else:
            sparse_feedback, dense_feedback = levers(feedback, languages)
            sparse_feedback &= mode != "dense"
            dense_feedback &= mode != "sparse"
        if sparse_feedback or dense_feedback:
            vector, terms = second_pass_query(
                self.store, lists.scored, vector, terms, sparse_feedback, dense_feedback
            )
            lists = first_stage(
                self.store, settings, mode, method, vector, terms, depth, allowed, languages,
                lists.choice,
            )  # fmt: skip
        scored = lists.scored
        parts: Parts = explained(lists, mode, method, settings) if explain else {}
        if uses_evidence(options.document_evidence or settings.document_evidence, languages):
            scored, parts = with_document_evidence(self.store, scored, parts)
        phrase = options.phrase_evidence or settings.phrase_evidence
        chosen = lists.choice is not None and lists.choice.phrase and phrase == "auto"
        if uses_phrase(phrase, languages) or chosen:
            same = lists.choice is not None and terms == analyzed.terms
            scored, parts = with_phrase_evidence(
                self.store, scored, parts, analyzed.terms, lists.sparse,
                set(lists.phrase) if same else None,
            )  # fmt: skip
        folding = settings.collapse if options.collapse is None else options.collapse
        if not folding:
            rows = self.store.chunks_by_id(i for i, _ in scored[: options.k])
            return [
                Candidate(rows[i], s, [], parts.get(i)) for i, s in scored[: options.k] if i in rows
            ]
        return self.collapsed(analyzed, allowed, options, explain, depth, scored, parts)

    def collapsed(
        self,
        analyzed: Analyzed,
        allowed: np.ndarray | None,
        options: SearchOptions,
        explain: bool,
        depth: int,
        scored: Ranking,
        parts: Parts,
    ) -> list[Candidate]:
        """The first k distinct passages of ``scored``; when copies filled the candidates,
        the first stage again (the query analyzed once) with a pool four times as deep (up to
        :data:`~ragkit.search.collapse.MAX_COLLAPSE_DEPTH`), so that k distinct passages come
        back whenever the index holds them and each lists all of its copies."""
        found = distinct(
            scored,
            options.k,
            self.store.chunks_by_id,
            lambda row: row.text,
            lambda row: row.document_key,
            self.store.near_duplicate_groups,
            NEAR_DUPLICATE_THRESHOLD,
        )
        short = len(found.passages) < options.k or found.runs_on
        if short and len(scored) >= depth and depth < MAX_COLLAPSE_DEPTH:
            return self.first_stage(analyzed, allowed, options, explain, depth * 4)
        return [
            Candidate(row, score, copies, parts.get(row.chunk_id))
            for row, score, copies in found.passages
        ]


def diversified(
    found: list[Candidate], vectors: dict[int, np.ndarray], k: int, lambda_mult: float
) -> list[Candidate]:
    """``k`` of ``found`` in the order maximal marginal relevance picks them over their
    stored ``vectors`` (:func:`ragkit.search.mmr.maximal_marginal_relevance`)."""
    ranking = [(position, c.score) for position, c in enumerate(found)]
    by_position = {
        position: vectors[c.row.chunk_id]
        for position, c in enumerate(found)
        if c.row.chunk_id in vectors
    }
    picked = maximal_marginal_relevance(ranking, by_position, k, lambda_mult)
    return [found[position] for position, _ in picked]
