"""The retrieval stages of the query sequence over one store: the first-stage lists and their
fusion, the feedback second pass, document evidence and phrase evidence.

Each takes and returns rankings (``[(chunk_id, score)]``, best first) and, when a search is
explained, each hit's :class:`~ragkit.search.contributions.Contribution` updated with what the
stage added.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ragkit.config import Settings
from ragkit.search.contributions import Contribution, contributions, single_list
from ragkit.search.evidence import document_evidence
from ragkit.search.feedback import FeedbackParams, looks_up, repeated, rm3, rocchio
from ragkit.search.fusion import FusionMethod, Ranking, SearchMode, fuse
from ragkit.search.listing import HEAD, demoted, is_listing
from ragkit.search.per_query import FusionChoice, default_model, query_evidence
from ragkit.search.phrase import CANDIDATES, MIN_TERMS, holds_phrase, phrase_first, phrase_words
from ragkit.store import IndexReader

Parts = dict[int, Contribution]


@dataclass(frozen=True)
class Lists:
    """The first stage's dense and sparse lists and the ranking made of them (the fused one
    in hybrid mode, else the one list), fused with ``weights`` (dense, sparse); with
    per-query fusion the ``choice`` made for the query and the chunks of the sparse list's
    head holding it as a phrase (``phrase``)."""

    dense: Ranking
    sparse: Ranking
    scored: Ranking
    weights: tuple[float, float] = (0.5, 0.5)
    choice: FusionChoice | None = None
    phrase: frozenset[int] = frozenset()


def first_stage(
    store: IndexReader,
    settings: Settings,
    mode: SearchMode,
    method: FusionMethod,
    vector: np.ndarray | None,
    terms: list[str],
    depth: int,
    allowed: np.ndarray | None,
    languages: list[str],
    chosen: FusionChoice | None = None,
) -> Lists:
    """The dense list, the sparse list and the ranking a search makes of them, ``depth``
    candidates from each, within the ``allowed`` chunks (None: all); ``per-query`` fusion
    weighs them as :mod:`ragkit.search.per_query` chooses from the lists (and from
    ``terms`` and ``languages``), or as ``chosen`` (the first pass's choice, for the
    feedback pass)."""
    dense: Ranking = []
    if vector is not None:
        dense = store.search_vectors(vector, depth, allowed)
    if mode == "dense":
        return Lists(dense, [], dense)
    # Weighted fusion compares scores, so each list scores the other's candidates too
    # (not 0 for "below this list's depth").
    complete = mode == "hybrid" and method != "rrf"
    include = [i for i, _ in dense] if complete else []
    sparse = store.search_terms(terms, depth, allowed, include)
    if mode == "sparse":
        return Lists([], sparse, sparse)
    if complete and vector is not None:
        found = {i for i, _ in dense}
        missing = [i for i, _ in sparse if i not in found]
        dense = dense + store.score_vectors(vector, missing)
    if method == "per-query":
        return per_query_lists(store, settings, dense, sparse, terms, languages, chosen)
    weights = (settings.dense_weight, 1.0 - settings.dense_weight)
    return Lists(dense, sparse, fuse([dense, sparse], method, settings.rrf_k, weights), weights)


def per_query_lists(
    store: IndexReader,
    settings: Settings,
    dense: Ranking,
    sparse: Ranking,
    terms: list[str],
    languages: list[str],
    chosen: FusionChoice | None = None,
) -> Lists:
    """Per-query fusion of ``dense`` and ``sparse`` (:mod:`ragkit.search.per_query`): the
    listings among the lists' heads (:mod:`ragkit.search.listing`) do not count as phrase
    matches, the choice is made from the evidence (or is ``chosen``: a feedback pass keeps
    the first pass's), and the listings among the fused head keep
    :data:`~ragkit.search.listing.WEIGHT` of their score."""
    heads = list(dict.fromkeys(i for i, _ in _head(sparse, CANDIDATES) + _head(dense, HEAD)))
    listings = listing_chunks(store, heads)
    phrase = frozenset(phrase_matches(store, terms, sparse)) - listings
    choice = chosen or default_model().choose(
        query_evidence(dense, sparse, phrase_words(terms), phrase, languages[:1] == ["ar"])
    )
    weights = (choice.dense_weight, 1.0 - choice.dense_weight)
    fused = fuse([dense, sparse], "per-query", settings.rrf_k, weights)
    unread = [i for i, _ in fused[:HEAD] if i not in heads]
    listings |= listing_chunks(store, unread)
    in_head = listings & {i for i, _ in fused[:HEAD]}
    return Lists(dense, sparse, demoted(fused, in_head), weights, choice, phrase)


def _head(ranking: Ranking, size: int) -> Ranking:
    return sorted(ranking, key=lambda item: -item[1])[:size]


def listing_chunks(store: IndexReader, ids: list[int]) -> frozenset[int]:
    """The chunks of ``ids`` that are listings (tables of contents, :mod:`ragkit.search.listing`)."""
    if not ids:
        return frozenset()
    return frozenset(i for i, row in store.chunks_by_id(ids).items() if is_listing(row.text))


def explained(lists: Lists, mode: SearchMode, method: FusionMethod, settings: Settings) -> Parts:
    """Each candidate's contribution: the dense and sparse parts of its fused score (hybrid),
    or its one list's score; with per-query fusion each carries the query's choice, and a
    listing what its demotion took (``listing``)."""
    if mode == "hybrid":
        found = contributions(lists.dense, lists.sparse, method, settings.rrf_k, lists.weights)
        if lists.choice is None:
            return found
        scored = dict(lists.scored)  # a listing's demoted score
        return {
            i: dataclasses.replace(
                p, choice=lists.choice, score=scored[i], listing=scored[i] - p.score
            )
            for i, p in found.items()
        }
    return single_list(lists.scored, "dense" if mode == "dense" else "sparse")


def second_pass_query(
    store: IndexReader,
    scored: Ranking,
    vector: np.ndarray | None,
    terms: list[str],
    sparse: bool,
    dense: bool,
) -> tuple[np.ndarray | None, list[str]]:
    """The query vector and terms of the feedback pass, learned from the first pass's top
    chunks (:mod:`ragkit.search.feedback`): RM3 over their stored terms (``sparse``; not for
    a query the top chunk holds whole), Rocchio towards their stored vectors (``dense``)."""
    params = FeedbackParams()
    if sparse and terms:
        top = scored[: params.documents]
        stored = store.terms_by_id([i for i, _ in top])
        found = [(stored[i], s) for i, s in top if i in stored]
        if found and not looks_up(terms, found[0][0], params.lookup_terms):
            weights = rm3(
                terms,
                [each for each, _ in found],
                [s for _, s in found],
                params.terms,
                params.original_weight,
            )
            terms = repeated(weights)
    if dense and vector is not None:
        top = scored[: params.dense_documents]
        vectors = store.vectors_by_id([i for i, _ in top])
        vector = rocchio(vector, list(vectors.values()), params.dense_original_weight)
    return vector, terms


def with_document_evidence(
    store: IndexReader, scored: Ranking, parts: Parts
) -> tuple[Ranking, Parts]:
    """``scored`` with each chunk lifted by the damped scores of its document's chunks below
    it (:mod:`ragkit.search.evidence`); contributions carry the ``evidence`` lift."""
    owner = store.chunks_by_id(i for i, _ in scored)
    before = dict(scored)
    scored = document_evidence(
        [(i, s) for i, s in scored if i in owner],
        {i: row.document_key for i, row in owner.items()},
    )
    return scored, {
        i: dataclasses.replace(part, score=score, evidence=score - before[i])
        for i, score in scored
        if (part := parts.get(i)) is not None
    }


def phrase_matches(store: IndexReader, terms: list[str], sparse: Ranking) -> set[int]:
    """The chunks among the sparse list's top :data:`~ragkit.search.phrase.CANDIDATES` that
    hold ``terms`` side by side and in order (:mod:`ragkit.search.phrase`)."""
    if not terms:
        return set()
    stored = store.terms_by_id([i for i, _ in _head(sparse, CANDIDATES)])
    return {i for i, chunk_terms in stored.items() if holds_phrase(terms, chunk_terms)}


def with_phrase_evidence(
    store: IndexReader,
    scored: Ranking,
    parts: Parts,
    terms: list[str],
    sparse: Ranking,
    matching: set[int] | None = None,
) -> tuple[Ranking, Parts]:
    """``scored`` with the chunks holding ``terms`` as a phrase first (``matching``, else
    :func:`phrase_matches`), their contributions carrying the ``phrase`` lift; queries of
    fewer than :data:`~ragkit.search.phrase.MIN_TERMS` words are left as they are."""
    if phrase_words(terms) < MIN_TERMS:
        return scored, parts
    if matching is None:
        matching = phrase_matches(store, terms, sparse)
    before = dict(scored)
    scored = phrase_first(scored, matching)
    return scored, {
        i: dataclasses.replace(part, score=score, phrase=score - before[i])
        for i, score in scored
        if (part := parts.get(i)) is not None
    }
