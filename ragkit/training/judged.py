"""Training groups from real judgments: a BEIR collection's queries, qrels and a first stage.

Where a collection has human judgments, they teach the reranker what its synthetic groups
cannot: which of a real first stage's candidates a person found relevant. For every judged
query, ragkit's own search (:meth:`ragkit.Index.search`, the index's fusion) returns its top
``depth`` documents (each as its best chunk, with its first-stage score); they are cut into
groups the way :class:`~ragkit.rerank.reranker.Reranker` cuts them at inference — one pass in
first-stage order, then ``passes − 1`` seeded shuffles — and every candidate gets a level:

* judged relevant with grade ``g`` (of the collection's highest grade ``G``):
  ``5 + round(5 · g / G)`` (6–10);
* not judged relevant: 0.

The prior of each candidate is its first-stage score min-max scaled over the query's whole
list (:func:`~ragkit.rerank.features.first_stage_prior`) and the list's top
``ANCHORS`` are the group's anchors, as at inference. A last group shorter than ``group_size``
is filled up with other candidates of the same list (training batches stack equal groups).

Example:
    >>> judged_level(4, 4), judged_level(1, 4), judged_level(0, 4)
    (10, 6, 0)
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragkit.evaluate import Judgments
from ragkit.rerank.features import ANCHORS, first_stage_prior
from ragkit.rerank.reranker import balanced_groups
from ragkit.training.synthetic import TrainingGroup

if TYPE_CHECKING:
    from ragkit.index import Index

log = logging.getLogger(__name__)


def judged_level(grade: int, top_grade: int) -> int:
    """The teacher level (0–10) of a candidate judged ``grade`` (0 = not relevant)."""
    return 0 if grade <= 0 else 5 + round(5 * grade / max(top_grade, 1))


def first_stage_index(folder: Path, judgments: Judgments, model: str) -> Index:
    """A hybrid index of the judged collection's corpus in ``folder`` (built on first use)."""
    from ragkit.index import Index

    index = Index.open(folder, create=True, model=model)
    if index.info().documents == 0:
        log.info("%s: indexing %s for the first stage", judgments.dataset, judgments.corpus)
        index.ingest([judgments.corpus])
    return index


def candidate_list(index: Index, query: str, depth: int) -> list[tuple[str, str, float]]:
    """The first stage's top ``depth`` documents: ``(document id, best chunk's text, score)``."""
    seen: dict[str, tuple[str, str, float]] = {}
    for hit in index.search(query, k=depth * 3):
        seen.setdefault(hit.document_id, (hit.document_id, hit.text, hit.score))
    return list(seen.values())[:depth]


def judged_groups(
    index: Index,
    judgments: Judgments,
    query_ids: Sequence[str] | None = None,
    group_size: int = 8,
    depth: int = 50,
    passes: int = 2,
    seed: int = 0,
) -> list[TrainingGroup]:
    """Groups for the judged ``query_ids`` (default: all) over ``index``'s first stage."""
    rng = np.random.default_rng(seed)
    top_grade = max((g for q in judgments.qrels.values() for g in q.values()), default=1)
    groups: list[TrainingGroup] = []
    for query_id in judgments.judged if query_ids is None else query_ids:
        query, grades = judgments.queries[query_id], judgments.qrels[query_id]
        candidates = candidate_list(index, query, depth)
        if len(candidates) < 2:
            log.warning("%s: query %s has fewer than 2 candidates", judgments.dataset, query_id)
            continue
        prior = first_stage_prior([score for _, _, score in candidates], len(candidates)).tolist()
        for pass_number in range(passes):
            order = np.arange(len(candidates))
            if pass_number:
                order = rng.permutation(len(candidates))
            for part in balanced_groups(len(candidates), group_size):
                members = [int(i) for i in order[part]]
                if len(members) < group_size:  # batches stack groups of equal size
                    spare = [i for i in range(len(candidates)) if i not in members]
                    members += random.Random(seed + len(groups)).sample(
                        spare, min(len(spare), group_size - len(members))
                    )
                groups.append(
                    TrainingGroup(
                        query=query,
                        kind="judged",
                        source=f"{judgments.dataset}/{query_id}",
                        doc_ids=tuple(candidates[i][0] for i in members),
                        passages=tuple(candidates[i][1] for i in members),
                        labels=tuple(
                            judged_level(grades.get(candidates[i][0], 0), top_grade)
                            for i in members
                        ),
                        prior=tuple(prior[i] for i in members),
                        anchors=tuple(text for _, text, _ in candidates[:ANCHORS]),
                    )
                )
    return [g for g in groups if len(g.labels) == group_size]
