"""Document evidence: a chunk scores higher when other chunks of its document score too.

A document that matches in several places is more likely relevant than one matching in one
place. Each chunk keeps its own score and adds the scoring chunks of its document ranked
below it, damped geometrically: ``s_j + Σ_{i>j} damping^(i−j) · s_i`` over the document's
chunks by score. The best chunk of a document therefore scores as "best chunk plus a damped
sum of the next ones", a document's chunks keep their order, and hits stay chunks with their
offsets. Scores ≤ 0 neither give nor take evidence.

Example:
    >>> ranking = [(1, 0.9), (2, 0.8), (3, 0.5), (4, 0.4)]
    >>> owner = {1: "a", 2: "b", 3: "b", 4: "b"}
    >>> [(chunk, round(score, 3)) for chunk, score in document_evidence(ranking, owner)]
    [(2, 1.15), (1, 0.9), (3, 0.7), (4, 0.4)]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Literal

from ragkit.search.fusion import Ranking

__all__ = ["DAMPING", "EVIDENCE_CHOICES", "DocumentEvidence", "document_evidence", "uses_evidence"]

DocumentEvidence = Literal["auto", "off", "on"]
EVIDENCE_CHOICES: tuple[str, ...] = ("auto", "off", "on")
DAMPING = 0.5
# Languages where ``document_evidence = "auto"`` turns it on (measured: benchmarks/feedback.py).
AUTO_EVIDENCE: frozenset[str] = frozenset()


def uses_evidence(setting: str, languages: list[str]) -> bool:
    """Whether a search adds document evidence under ``setting`` for ``languages``.

    Example:
        >>> uses_evidence("on", []), uses_evidence("auto", ["en"])
        (True, False)
    """
    if setting == "auto":
        return bool(languages) and all(language in AUTO_EVIDENCE for language in languages)
    return setting == "on"


def document_evidence(
    ranking: Ranking, owner: Mapping[int, str], damping: float = DAMPING
) -> Ranking:
    """``ranking`` rescored with document evidence and sorted again (best first, ties by chunk
    id); ``owner`` maps chunk ids to their document (a chunk missing there is its own)."""
    by_document: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for chunk, score in ranking:
        if score > 0:
            by_document[owner.get(chunk, f"#{chunk}")].append((chunk, score))
    boost: dict[int, float] = {}
    for scored in by_document.values():
        scored.sort(key=lambda item: (-item[1], item[0]))
        below = 0.0  # the damped sum of the chunks after this one, built from the last
        for chunk, score in reversed(scored):
            boost[chunk] = damping * below
            below = score + damping * below
    rescored = [(chunk, score + boost.get(chunk, 0.0)) for chunk, score in ranking]
    return sorted(rescored, key=lambda item: (-item[1], item[0]))
