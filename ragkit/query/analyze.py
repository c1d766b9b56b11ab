"""The first stages of the query sequence: route the query to the languages it is analyzed
as, then analyze it into what the retrievers take — matching keys, sparse terms and the query
vector — as the index analyzed its chunks.

Example:
    >>> from ragkit.config import Settings
    >>> query_terms(["boiling water"], ["en"], Settings())
    ['boil', 'water']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ragkit.config import Settings
from ragkit.embed import Encoder
from ragkit.pipeline import matching_key, sparse_terms
from ragkit.pipeline.languages import query_languages
from ragkit.pipeline.stages import embeds_normalized
from ragkit.search.fusion import SearchMode
from ragkit.store import IndexReader


@dataclass(frozen=True)
class Analyzed:
    """A query analyzed: its languages (the first is the one embedded), its matching key in
    each, its sparse terms (empty in dense mode) and its vector (None in sparse mode)."""

    languages: list[str]
    keys: list[str]
    terms: list[str]
    vector: np.ndarray | None


def route(query: str, language: str | None, store: IndexReader) -> list[str]:
    """The languages ``query`` is analyzed as: ``language`` when given, else those the index
    holds for the query's script (:func:`ragkit.pipeline.languages.query_languages`)."""
    return [language] if language else query_languages(query, store.languages())


def query_terms(keys: list[str], languages: list[str], settings: Settings) -> list[str]:
    """A query's sparse terms in each of its languages: the first language's as they are (a
    word the query repeats weighs more), then each other language's new terms."""
    terms: list[str] = []
    for key, language in zip(keys, languages, strict=True):
        seen = set(terms)
        terms += [t for t in sparse_terms(key, language, settings) if t not in seen]
    return terms


def query_vector(
    query: str,
    languages: list[str],
    settings: Settings,
    encoder: Callable[[], Encoder],
    key: str | None = None,
) -> np.ndarray:
    """``query``'s vector: the text embedded is its matching key in its first language (``key``
    when computed already) where that language is embedded normalized, else the query."""
    normalized = embeds_normalized(languages[0], settings)
    if normalized and key is None:
        key = matching_key(query, languages[0], settings)
    return encoder().encode_queries([key if normalized and key is not None else query])[0]


def analyze(
    query: str,
    languages: list[str],
    mode: SearchMode,
    settings: Settings,
    encoder: Callable[[], Encoder],
) -> Analyzed:
    """``query`` analyzed in ``languages`` for ``mode`` (``encoder`` is loaded only when the
    query is embedded)."""
    keys = [matching_key(query, language, settings) for language in languages]
    vector = None
    if mode in ("hybrid", "dense"):
        vector = query_vector(query, languages, settings, encoder, keys[0])
    terms = query_terms(keys, languages, settings) if mode != "dense" else []
    return Analyzed(languages, keys, terms, vector)
