"""A relevance score a threshold can use: :attr:`ragkit.Hit.relevance`, in [0, 1] and comparable
across queries, beside the rank score (``Hit.score``: fused, rescaled per query, so a
nonsense query's best hit still scores near 1).

Each hit's :class:`Evidence` — the cosine of the query's vector and the chunk's, the share of
the query terms' BM25 IDF the chunk's terms hold (``coverage``) and that IDF itself
(``matched``) — goes through a logistic calibration fitted per embedding model on the tuning
collection (relevant hits of judged queries and literal spans against every hit of nonsense
and off-topic queries; ``relevance.json`` beside this module holds the coefficients with the
provenance of the run that fitted them, ``python -m benchmarks.thresholds --fit``). The
evidence a search has picks the calibration: all three (``hybrid``), the cosine alone
(``dense``, :meth:`ragkit.Index.search_by_vector`), the lexical two (``sparse``). It is read
for the query as written — its own vector and terms, whatever feedback, evidence or reranking
did to the order. A model without a calibration of its own (any but the two bundled) scores
hybrid and sparse hits on the lexical evidence alone (a calibration fitted on both bundled
models' hits, which does not read the cosine) and dense hits by their cosine clipped to
[0, 1] (what LangChain's cosine relevance gives): its cosine range is unknown.

Example:
    >>> minilm = calibrations("all-minilm-l6-v2")
    >>> nonsense, verbatim = Evidence(0.05, 0.0, 0.0), Evidence(0.8, 1.0, 30.0)
    >>> minilm.relevance(nonsense) < 0.5 < minilm.relevance(verbatim)
    True
    >>> calibrations("my/own-model").relevance(Evidence(cosine=0.7))
    0.7
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import numpy as np

from ragkit.embed.models import E5_NAMES, MINILM_NAMES
from ragkit.store import IndexReader

__all__ = [
    "Calibration",
    "Calibrations",
    "Evidence",
    "calibrations",
    "evidence",
    "features",
    "held_idf",
]

FEATURES = ("cosine", "coverage", "matched")
Kind = Literal["hybrid", "dense", "sparse"]
FALLBACK = "fallback"  # the calibrations of a model without its own


@dataclass(frozen=True)
class Evidence:
    """What a hit's relevance is calibrated from: ``cosine``, the inner product of the query's
    vector and the chunk's (unit vectors; None when the query was not embedded, sparse mode),
    ``coverage``, the share of the query terms' IDF the chunk's terms hold, and ``matched``,
    that IDF itself (the sum over the query's distinct terms the chunk holds: a long query's
    answer holds a small share of many terms); both None when the query has no terms (dense
    mode, a search by vector)."""

    cosine: float | None = None
    coverage: float | None = None
    matched: float | None = None

    @property
    def kind(self) -> Kind | None:
        """The calibration that reads this evidence (None: no evidence).

        Example:
            >>> Evidence(0.5, 0.2).kind, Evidence(cosine=0.5).kind, Evidence().kind
            ('hybrid', 'dense', None)
        """
        if self.cosine is not None:
            return "hybrid" if self.coverage is not None else "dense"
        return "sparse" if self.coverage is not None else None


@dataclass(frozen=True)
class Calibration:
    """``logistic(intercept + Σ weight · feature)``, or with ``link = "clip"`` the linear
    score clipped to [0, 1]; the features are ``cosine``, ``coverage`` and ``ln(1 +
    matched)`` (:func:`features`).

    Example:
        >>> Calibration(-2.0, {"coverage": 4.0}).score(Evidence(coverage=0.5))
        0.5
    """

    intercept: float
    weights: Mapping[str, float]
    link: Literal["logistic", "clip"] = "logistic"

    def score(self, evidence: Evidence) -> float:
        values = features(evidence)
        linear = self.intercept + sum(w * values[name] for name, w in self.weights.items())
        if self.link == "clip":
            return min(1.0, max(0.0, linear))
        return 1.0 / (1.0 + math.exp(-linear))


def features(evidence: Evidence) -> dict[str, float]:
    """The calibration's inputs from ``evidence`` (an absent one reads 0).

    Example:
        >>> features(Evidence(0.5, 0.25, math.e - 1))
        {'cosine': 0.5, 'coverage': 0.25, 'matched': 1.0}
    """
    return {
        "cosine": evidence.cosine or 0.0,
        "coverage": evidence.coverage or 0.0,
        "matched": math.log1p(evidence.matched or 0.0),
    }


@dataclass(frozen=True)
class Calibrations:
    """One model's calibrations by kind of evidence (``hybrid``, ``dense``, ``sparse``)."""

    model: str
    kinds: Mapping[str, Calibration]

    def relevance(self, evidence: Evidence) -> float:
        """The relevance of a hit with ``evidence`` (0.0 without any)."""
        kind = evidence.kind
        return 0.0 if kind is None else self.kinds[kind].score(evidence)


@functools.cache
def shipped() -> dict[str, Any]:
    text = resources.files("ragkit.query").joinpath("relevance.json").read_text("utf-8")
    return json.loads(text)


def bundled_name(model: str) -> str | None:
    """The bundled model ``model`` names (any of its spellings), else None.

    Example:
        >>> bundled_name("sentence-transformers/all-MiniLM-L6-v2"), bundled_name("bge-m3")
        ('all-minilm-l6-v2', None)
    """
    if model in MINILM_NAMES:
        return "all-minilm-l6-v2"
    return "multilingual-e5-small" if model in E5_NAMES else None


@functools.cache
def calibrations(model: str) -> Calibrations:
    """The calibrations of the embedding model ``model`` (the fallback's for a model without
    its own), from the shipped ``relevance.json``."""
    fitted_models = shipped()["models"]
    name = bundled_name(model)
    fitted = fitted_models[name if name in fitted_models else FALLBACK]
    return Calibrations(
        name or model,
        {
            kind: Calibration(each["intercept"], each["weights"], each.get("link", "logistic"))
            for kind, each in fitted.items()
        },
    )


def held_idf(terms: Sequence[str], idf: Sequence[float], held: set[str]) -> float:
    """The IDF of the query's distinct ``terms`` (their ``idf``, in order) that the chunk's
    terms ``held`` hold.

    Example:
        >>> held_idf(["wing", "flutter"], [1.0, 3.0], {"flutter", "panel"})
        3.0
    """
    return sum(w for t, w in zip(terms, idf, strict=True) if t in held)


def evidence(
    store: IndexReader,
    ids: list[int],
    vector: np.ndarray | None,
    terms: Sequence[str],
    vectors: Mapping[int, np.ndarray] | None = None,
) -> dict[int, Evidence]:
    """The evidence of the chunks ``ids`` for a query of ``vector`` (None: not embedded) and
    sparse ``terms`` (empty: none), read from the store (``vectors``: those of the chunks
    already read)."""
    if not ids:
        return {}
    cosines: dict[int, float] = {}
    if vector is not None:
        known = vectors or {}
        missing = [i for i in ids if i not in known]
        cosines = {i: float(known[i] @ vector) for i in ids if i in known}
        cosines |= dict(store.score_vectors(vector, missing)) if missing else {}
    lexical: dict[int, tuple[float, float]] = {}  # coverage, matched
    distinct = list(dict.fromkeys(terms))
    if distinct:
        idf = store.term_idf(distinct)
        mass = sum(idf)
        held = store.terms_by_id(ids)
        for i in ids:
            matched = held_idf(distinct, idf, set(held.get(i, ())))
            lexical[i] = (matched / mass if mass else 0.0, matched)
    return {i: Evidence(cosines.get(i), *lexical.get(i, (None, None))) for i in ids}
