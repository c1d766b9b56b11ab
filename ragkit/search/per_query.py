"""Per-query fusion: the weights of the dense and sparse lists, whether a chunk holding the
query as a phrase comes first, and whether the query vector moves towards the top chunks for a
second pass (dense feedback), decided for each query from its own first-pass evidence.

One fixed fusion cannot suit a pasted sentence (plain BM25 and phrase evidence find its
document), a three-word heading (the dense list knows what it means) and a long question at
once. The first pass tells them apart (:func:`query_evidence`, no search beyond it):

* ``words``: the query's words (its analyzed terms, an Arabic word once);
* ``phrase``: a chunk among the sparse list's top :data:`~ragkit.search.phrase.CANDIDATES`
  holds the query's terms side by side and in order (two words or more); ``phrase_top``: the
  sparse list's best chunk does;
* ``overlap``: the share of the dense top 10 in the sparse top 10; ``agreement``: the rank
  correlation (Spearman) of the two lists' scores over their top 10s together;
* ``dense_gap`` / ``sparse_gap``: how peaked each list is, its top score less its 10th (BM25 as
  a share of its top score);
* ``sparse_per_word``: the sparse top score per query word (how rare the words are: BM25 is
  mostly their IDF);
* ``phrase_dense_rank``: the dense list's rank (from 1) of its best chunk holding the phrase
  (0: none holds it) — a phrase the dense list already ranks high needs no lift;
* ``arabic``: the query is analyzed as Arabic first.

A :class:`FusionModel` (``per_query_fusion.json``, fitted on the tuning part of
``benchmarks/feedback.py`` by ``experiments/fusion/perquery``) is a decision list: the first
:class:`Rule` whose conditions all hold gives the query its :class:`FusionOption` — a dense
weight, the phrase lift on or off, dense feedback on or off — and a query no rule takes gets
``otherwise``. The choice is a pure function of the evidence.

Example:
    >>> evidence = QueryEvidence(words=8, phrase=1, phrase_top=1, overlap=0.2, agreement=0.1,
    ...     dense_gap=0.2, sparse_gap=0.5, sparse_per_word=3.0, phrase_dense_rank=40, arabic=0)
    >>> lookup = FusionOption("phrase first", 0.5, True)
    >>> model = FusionModel((Rule(lookup, (Condition("phrase", 1), Condition("words", 6))),),
    ...                     FusionOption("balanced", 0.5, False))
    >>> choice = model.choose(evidence)
    >>> choice.name, choice.dense_weight, choice.phrase
    ('phrase first', 0.5, True)
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ragkit.search.fusion import Ranking

__all__ = [
    "FEATURES",
    "MODEL_FILE",
    "Condition",
    "FusionChoice",
    "FusionModel",
    "FusionOption",
    "QueryEvidence",
    "Rule",
    "default_model",
    "query_evidence",
]

MODEL_FILE = Path(__file__).with_name("per_query_fusion.json")
TOP = 10  # the head of each list compared


@dataclass(frozen=True)
class QueryEvidence:
    """What a query's first pass says about it (see the module's list)."""

    words: float
    phrase: float
    phrase_top: float
    overlap: float
    agreement: float
    dense_gap: float
    sparse_gap: float
    sparse_per_word: float
    phrase_dense_rank: float
    arabic: float


FEATURES: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(QueryEvidence))


@dataclass(frozen=True)
class FusionOption:
    """One fusion a query may get: ``dense_weight`` (the sparse list weighs the rest), the
    phrase lift, and ``feedback``: a second pass with the query vector moved towards the
    fused top chunks (dense feedback, :mod:`ragkit.search.feedback`) under the same weights."""

    name: str
    dense_weight: float
    phrase: bool
    feedback: bool = False


@dataclass(frozen=True)
class Condition:
    """``feature`` of the evidence is at least ``at_least`` and at most ``at_most``."""

    feature: str
    at_least: float = -math.inf
    at_most: float = math.inf

    def holds(self, evidence: QueryEvidence) -> bool:
        return self.at_least <= float(getattr(evidence, self.feature)) <= self.at_most


@dataclass(frozen=True)
class Rule:
    """``option`` for a query meeting every one of ``conditions``."""

    option: FusionOption
    conditions: tuple[Condition, ...]


@dataclass(frozen=True)
class FusionChoice:
    """The fusion a query got and the evidence behind it (shown by ``Index.explain``)."""

    name: str
    dense_weight: float
    phrase: bool
    evidence: QueryEvidence
    feedback: bool = False


@dataclass(frozen=True)
class FusionModel:
    """A decision list: the first rule whose conditions hold, else ``otherwise``."""

    rules: tuple[Rule, ...]
    otherwise: FusionOption

    def choose(self, evidence: QueryEvidence) -> FusionChoice:
        """The option of the first rule ``evidence`` meets (``otherwise`` when none)."""
        found = next(
            (r.option for r in self.rules if all(c.holds(evidence) for c in r.conditions)),
            self.otherwise,
        )
        return FusionChoice(found.name, found.dense_weight, found.phrase, evidence, found.feedback)

    @classmethod
    def read(cls, path: Path) -> FusionModel:
        """The model stored at ``path`` (as :meth:`write` stores it; an open bound is null)."""
        data = json.loads(path.read_text(encoding="utf-8"))

        def bound(value: float | None, default: float) -> float:
            return default if value is None else float(value)

        return cls(
            tuple(
                Rule(
                    FusionOption(**rule["option"]),
                    tuple(
                        Condition(c["feature"], bound(c["at_least"], -math.inf),
                                  bound(c["at_most"], math.inf))
                        for c in rule["conditions"]
                    ),
                )
                for rule in data["rules"]
            ),
            FusionOption(**data["otherwise"]),
        )  # fmt: skip

    def write(self, path: Path, provenance: dict[str, object]) -> None:
        """Store the model at ``path`` with where it came from."""
        data = json.loads(
            json.dumps(dataclasses.asdict(self))
            .replace("-Infinity", "null")
            .replace("Infinity", "null")
        )
        path.write_text(
            json.dumps({"provenance": provenance, **data}, indent=1) + "\n", encoding="utf-8"
        )


@functools.cache
def default_model() -> FusionModel:
    """The shipped model (:data:`MODEL_FILE`)."""
    return FusionModel.read(MODEL_FILE)


def _top(ranking: Ranking, size: int | None = TOP) -> Ranking:
    return sorted(ranking, key=lambda item: (-item[1], item[0]))[:size]


def _gap(top: Ranking) -> float:
    return top[0][1] - top[-1][1] if top else 0.0


def _ranks(values: np.ndarray) -> np.ndarray:
    ranks = np.empty(len(values))
    ranks[np.argsort(values, kind="stable")] = np.arange(len(values))
    return ranks


def _agreement(dense: Ranking, sparse: Ranking, head: set[int]) -> float:
    """Spearman correlation of the two lists' scores over ``head`` (a chunk missing from a
    list scores below all of it)."""
    dense_scores, sparse_scores = dict(dense), dict(sparse)
    ids = sorted(head)
    if len(ids) < 2:
        return 0.0
    low_d = min(dense_scores.values(), default=0.0) - 1.0
    low_s = min(sparse_scores.values(), default=0.0) - 1.0
    a = _ranks(np.array([dense_scores.get(i, low_d) for i in ids]))
    b = _ranks(np.array([sparse_scores.get(i, low_s) for i in ids]))
    if a.std() == 0 or b.std() == 0:
        return 0.0
    return round(float(np.corrcoef(a, b)[0, 1]), 6)


def query_evidence(
    dense: Ranking,
    sparse: Ranking,
    words: int,
    phrase_chunks: Collection[int],
    arabic: bool,
) -> QueryEvidence:
    """The evidence of a first pass: its ``dense`` and ``sparse`` lists (each scoring the
    other's candidates, as weighted fusion has them), the query's ``words``, the chunks of
    the sparse list's head holding the query as a phrase, and whether it is Arabic.

    Example:
        >>> e = query_evidence([(1, 0.9), (2, 0.5)], [(2, 8.0), (1, 2.0)], 4, {2}, False)
        >>> e.overlap, e.agreement, e.phrase, e.phrase_top, e.sparse_per_word, e.phrase_dense_rank
        (0.2, -1.0, 1.0, 1.0, 2.0, 2.0)
    """
    dense_top, sparse_top = _top(dense), _top(sparse)
    dense_ids, sparse_ids = {i for i, _ in dense_top}, {i for i, _ in sparse_top}
    sparse_best = sparse_top[0][1] if sparse_top else 0.0
    phrase = bool(phrase_chunks) and words >= 2
    ranks = [rank for rank, (i, _) in enumerate(_top(dense, None), 1) if i in phrase_chunks]
    return QueryEvidence(
        words=float(words),
        phrase=float(phrase),
        phrase_top=float(phrase and sparse_top[0][0] in phrase_chunks),
        overlap=len(dense_ids & sparse_ids) / TOP,
        agreement=_agreement(dense, sparse, dense_ids | sparse_ids),
        dense_gap=_gap(dense_top),
        sparse_gap=_gap(sparse_top) / sparse_best if sparse_best > 0 else 0.0,
        sparse_per_word=sparse_best / max(words, 1),
        phrase_dense_rank=float(ranks[0]) if phrase and ranks else 0.0,
        arabic=float(arabic),
    )
