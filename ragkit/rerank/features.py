"""Per-candidate input signals of the reranker, computed from text and backbone states.

* ``cosine``: the backbone's own sentence similarity (mean-pooled states, normalized) — the
  pointwise bi-encoder signal;
* ``overlap``: the share of the query's sparse terms (:func:`ragkit.search.sparse.analyze`: stopwords
  out, stems where a stemmer exists) found in the candidate — the lexical signal;
* ``prior``: the first stage's opinion, its score min-max scaled over the whole candidate list
  (1 = its best candidate, 0 = its worst); without scores, the list's order stands in for them.
  A reranker sees its candidates *because* a first stage ranked them; this lets it learn
  corrections to that ranking instead of starting from nothing;
* ``maxsim``: late interaction — for each query token its best cosine with any candidate
  token, averaged over the query (the backbone's token states);
* ``centroid``: the candidate's mean cosine with the list's ``ANCHORS`` best by the prior — the
  cluster hypothesis (a document like the first stage's best is more likely relevant), a
  signal that only exists in view of the other candidates.

All but ``overlap`` and ``prior`` come from the backbone's states
(:func:`candidate_signals`); :func:`ragkit.rerank.model.group_features` adds their z-scores
within each group. The headroom study (``experiments/rerank/headroom``) measures what each adds
to the first stage.

Example:
    >>> term_overlap(["wing", "flutter"], ["the", "wing", "span"])
    0.5
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from ragkit.errors import RagkitError
from ragkit.normalize import detect_language
from ragkit.rerank.backbone import TokenStates
from ragkit.search.fusion import minmax
from ragkit.search.sparse import analyze

ANCHORS = 3  # candidates that stand for the first stage's opinion (centroid)


def term_overlap(query_terms: Sequence[str], doc_terms: Sequence[str]) -> float:
    """Share of distinct query terms present in the document (0 for an empty query)."""
    wanted = set(query_terms)
    return len(wanted & set(doc_terms)) / len(wanted) if wanted else 0.0


def first_stage_prior(scores: Sequence[float] | None, count: int) -> torch.Tensor:
    """``(count,)`` first-stage scores min-max scaled to [0, 1], or rank-based when ``None``.

    Without scores the candidates are taken to be in first-stage order: ``1 − i / (count − 1)``.

    Example:
        >>> first_stage_prior([3.0, 1.0, 2.0], 3).tolist(), first_stage_prior(None, 3).tolist()
        ([1.0, 0.0, 0.5], [1.0, 0.5, 0.0])
    """
    if scores is None:
        values = -torch.arange(count, dtype=torch.float32)
    else:
        values = torch.as_tensor(list(scores), dtype=torch.float32)
        if len(values) != count:
            raise RagkitError(f"{len(values)} first-stage scores for {count} candidates")
    if count == 0:
        return values
    return torch.from_numpy(minmax(values.numpy()))


def anchor_vectors(docs: TokenStates, prior: torch.Tensor, anchors: int = ANCHORS) -> torch.Tensor:
    """``(a, H)`` sentence vectors of the ``anchors`` candidates the prior ranks best."""
    best = torch.topk(prior, min(anchors, len(prior))).indices
    return docs.pooled()[best]


def candidate_signals(
    query: TokenStates,
    docs: TokenStates,
    overlap: torch.Tensor,
    prior: torch.Tensor,
    anchors: torch.Tensor,
) -> torch.Tensor:
    """``(n, SIGNALS)``: cosine, overlap, prior, maxsim, centroid of ``n`` candidates.

    ``query``: one query's states; ``anchors``: :func:`anchor_vectors` of the candidate list
    the ``n`` candidates come from (for a training group, the list it was cut from).

    Example:
        >>> q = TokenStates(torch.eye(3)[None, :2], torch.ones(1, 2, dtype=torch.bool))
        >>> d = TokenStates(torch.eye(3)[None, [0, 2]], torch.ones(1, 2, dtype=torch.bool))
        >>> prior = torch.ones(1)
        >>> candidate_signals(q, d, torch.zeros(1), prior, anchor_vectors(d, prior))[0, 3]
        tensor(0.5000)
    """
    vectors = docs.pooled()
    cosine = vectors @ query.pooled()[0]
    query_tokens = nn.functional.normalize(query.hidden[0][query.mask[0]].float(), dim=-1)
    doc_tokens = nn.functional.normalize(docs.hidden.float(), dim=-1)
    similarity = torch.einsum("qh,dth->dqt", query_tokens, doc_tokens)
    maxsim = similarity.masked_fill(~docs.mask.unsqueeze(1), -1.0).amax(-1).mean(-1)
    centroid = (vectors @ anchors.T).mean(-1)
    return torch.stack([cosine, overlap, prior, maxsim, centroid], dim=-1)


def overlaps(query: str, documents: Sequence[str], language: str | None = None) -> torch.Tensor:
    """``(n,)`` term overlap of ``query`` with each document (language detected from the query)."""
    language = language or detect_language(query)
    wanted = analyze(query, language)
    return torch.tensor(
        [term_overlap(wanted, analyze(d, language)) for d in documents], dtype=torch.float32
    )
