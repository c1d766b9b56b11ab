"""ragkit's evaluation measures agree with trec_eval's, through ir-measures (pytrec_eval).

ragkit keeps its own three measures (:mod:`ragkit.evaluate`) because they are faster where
ragkit uses them — per query, on one ranked list: 225 queries x 100 hits with graded
judgments take ~12 ms against ~180 ms through ir-measures on this machine — and this test
holds them to trec_eval's numbers. ragkit's nDCG uses the exponential gain ``2**grade - 1``
(Burges et al.); on binary judgments that is trec_eval's own ``ndcg_cut``, and on graded ones
it is ir-measures' ``nDCG(gains={g: 2**g - 1})``.
"""

from __future__ import annotations

import random

import ir_measures
import pytest
from ir_measures import RR, R, nDCG

from ragkit.evaluate import mrr_at_k, ndcg_at_k, recall_at_k


def judged_runs(seed: int, grades: int) -> tuple[dict[str, dict[str, int]], dict[str, list[str]]]:
    """Random judgments (1-8 relevant documents a query, grades 1..``grades``) and rankings of
    100 documents, some holding none of the relevant ones."""
    rng = random.Random(seed)
    documents = [f"d{n}" for n in range(300)]
    qrels = {
        f"q{n}": {d: rng.randint(1, grades) for d in rng.sample(documents, rng.randint(1, 8))}
        for n in range(60)
    }
    runs = {query: rng.sample(documents, 100) for query in qrels}
    for query in list(qrels)[:5]:  # the relevant documents first, in the worst order
        relevant = sorted(qrels[query], key=qrels[query].get)
        runs[query] = relevant + [d for d in runs[query] if d not in relevant][:90]
    return qrels, runs


@pytest.mark.parametrize(("seed", "grades"), [(1, 1), (2, 1), (3, 4), (4, 3)])
def test_measures_equal_trec_eval(seed: int, grades: int) -> None:
    qrels, runs = judged_runs(seed, grades)
    judged = [ir_measures.Qrel(q, d, g) for q, found in qrels.items() for d, g in found.items()]
    scored = [
        ir_measures.ScoredDoc(q, d, float(100 - rank))
        for q, ranked in runs.items()
        for rank, d in enumerate(ranked)
    ]
    gains = {grade: 2**grade - 1 for grade in range(grades + 1)}
    measures = [nDCG(gains=gains) @ 10, R @ 100, RR @ 10] + ([nDCG @ 10] if grades == 1 else [])
    theirs: dict[str, dict[str, float]] = {}
    for measure in measures:  # one at a time: nDCG with and without gains share one evaluator
        for metric in ir_measures.iter_calc([measure], judged, scored):
            theirs.setdefault(metric.query_id, {})[str(metric.measure)] = metric.value
    for query, ranked in runs.items():
        own = theirs[query]
        relevant = qrels[query]
        assert ndcg_at_k(ranked, relevant) == pytest.approx(own[str(nDCG(gains=gains) @ 10)])
        assert recall_at_k(ranked, relevant) == pytest.approx(own["R@100"])
        assert mrr_at_k(ranked, relevant) == pytest.approx(own["RR@10"])
        if grades == 1:
            assert ndcg_at_k(ranked, relevant) == pytest.approx(own["nDCG@10"])
