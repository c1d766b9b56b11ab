"""**The** query sequence, beside ingest's: :class:`Search` is the only place that orders the
query stages.

route (the languages the query is analyzed as) → analyze (matching keys, sparse terms, query
vector: :mod:`ragkit.query.analyze`) → first-stage lists and their fusion → feedback (a second
pass with the query learned from the first pass's top chunks) → document evidence → phrase
evidence (:mod:`ragkit.query.passes`) → collapse (distinct passages, the candidate pool widened
while copies fill it: :mod:`ragkit.search.collapse`) → rerank (the groupwise reranker over the
first stage's top ``rerank_depth``) → hits (:mod:`ragkit.query.hits`).

Example:
    >>> search = Search(index.store, index.settings, lambda: index.encoder,  # doctest: +SKIP
    ...                 lambda: index.reranker)
    >>> [hit.key for hit, _ in search.run("boiling water", SearchOptions(k=2))]  # doctest: +SKIP
    ['/docs/water.md', '/docs/ice.md']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ragkit.config import Settings
from ragkit.embed import Encoder
from ragkit.pipeline.near_duplicates import THRESHOLD as NEAR_DUPLICATE_THRESHOLD
from ragkit.query.analyze import Analyzed, analyze, route
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
from ragkit.search.collapse import MAX_COLLAPSE_DEPTH, distinct
from ragkit.search.contributions import Contribution
from ragkit.search.evidence import uses_evidence
from ragkit.search.feedback import levers
from ragkit.search.fusion import Ranking
from ragkit.search.phrase import uses_phrase
from ragkit.store import IndexReader

if TYPE_CHECKING:
    from ragkit.rerank.reranker import Reranker

Found = list[tuple[Hit, Contribution | None]]


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
        """The hits for ``query`` (checked options: :meth:`SearchOptions.of`), best first,
        each with its contribution when ``explain`` (else None)."""
        if options.rerank:
            return self.reranked(query, options, explain)
        allowed = self.store.filtered_chunk_ids(options.filters) if options.filters else None
        languages = route(query, options.language, self.store)
        analyzed = analyze(query, languages, options.mode, self.settings, self.encoder)
        depth = max(options.k, self.settings.fusion_depth)
        return self.first_stage(analyzed, allowed, options, explain, depth)

    def reranked(self, query: str, options: SearchOptions, explain: bool) -> Found:
        """The first stage's top ``rerank_depth`` reordered by the groupwise reranker."""
        depth = max(options.k, self.settings.rerank_depth)
        first = options.model_copy(update={"k": depth, "rerank": False})
        candidates = self.run(query, first, explain)
        parts = {(hit.key, hit.start, hit.end): part for hit, part in candidates}
        reranked = self.reranker().rerank_hits(query, [hit for hit, _ in candidates], options.k)
        return [(hit, parts[hit.key, hit.start, hit.end]) for hit in reranked]

    def first_stage(
        self,
        analyzed: Analyzed,
        allowed: np.ndarray | None,
        options: SearchOptions,
        explain: bool,
        depth: int,
    ) -> Found:
        """The lists and the evidence stages over the ``allowed`` chunks (None: all), then
        collapse: ``depth`` candidates from each list, widened (×4) while copies leave fewer
        than k passages."""
        settings = self.settings
        mode, method = options.mode, options.fusion or settings.fusion
        languages = analyzed.languages
        vector, terms = analyzed.vector, analyzed.terms
        lists = first_stage(
            self.store, settings, mode, method, vector, terms, depth, allowed, languages
        )
        sparse_feedback, dense_feedback = levers(options.feedback or settings.feedback, languages)
        sparse_feedback &= mode != "dense"
        dense_feedback &= mode != "sparse"
        if sparse_feedback or dense_feedback:
            vector, terms = second_pass_query(
                self.store, lists.scored, vector, terms, sparse_feedback, dense_feedback
            )
            lists = first_stage(
                self.store, settings, mode, method, vector, terms, depth, allowed, languages
            )
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
            return [(hit_of(rows[i], s), parts.get(i)) for i, s in scored[: options.k] if i in rows]
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
    ) -> Found:
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
            (hit_of(row, score, copies), parts.get(row.chunk_id))
            for row, score, copies in found.passages
        ]
