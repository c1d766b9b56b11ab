"""Fusion and BM25 settings swept on one kept evaluation index (hybrid nDCG@10, Recall@100).

Run (after ``ragkit eval DATASET --mode all --keep-index DIR``)::

    .venv/bin/python -m benchmarks.fusion ../shared/data/beir/cranfield --index DIR

For every judged query the dense and sparse lists (1,000 chunks each) are taken once through the
index's own calls (:meth:`ragkit.store.FolderStore.search_vectors`, ``search_terms`` with
:meth:`ragkit.Index.terms`), then re-fused offline with :func:`ragkit.search.fusion.fuse` under each
setting: RRF ``k``, candidates per list, weighted fusion's ``dense_weight``, and BM25 ``k1`` /
``b`` (bm25s rebuilt from the chunk terms stored in SQLite). Documents score as their best chunk,
as in ``ragkit eval``. Choose settings on one collection and check them on another: the sweep
reports the test queries' own scores.

Writes ``benchmarks/results/fusion-<dataset>-<model>.json`` and prints a table.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import bm25s
import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks import common
from benchmarks.common import write_result
from ragkit.evaluate import load_judgments
from ragkit.index import Index
from ragkit.normalize import detect_language
from ragkit.search.fusion import Ranking, fuse

POOL = 1000
EVAL_DEPTH = 300  # chunks per list in `ragkit eval` (k = 3 x 100 documents)
Fuser = Callable[[Ranking, Ranking], Ranking]


def documents(ranking: Ranking, owner: dict[int, str], depth: int = 100) -> list[str]:
    ranked: list[str] = []
    for chunk, _ in ranking:
        if owner[chunk] not in ranked:
            ranked.append(owner[chunk])
        if len(ranked) == depth:
            break
    return ranked


def bm25_lists(
    index: Index, terms: dict[str, list[str]], k1: float, b: float
) -> dict[str, Ranking]:
    rows = index.store.db.execute("SELECT id, terms FROM chunks ORDER BY id").fetchall()
    ids = np.array([int(i) for i, _ in rows])
    retriever = bm25s.BM25(k1=k1, b=b)
    retriever.index([t.split() for _, t in rows], show_progress=False)
    lists: dict[str, Ranking] = {}
    for query, words in terms.items():
        scores = retriever.get_scores(words) if words else np.zeros(len(ids))
        top = np.argsort(-scores, kind="stable")[:POOL]
        lists[query] = [(int(ids[i]), float(scores[i])) for i in top if scores[i] > 0]
    return lists


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--index", type=Path, required=True, help="a kept `ragkit eval` index")
    args = parser.parse_args()
    judgments = load_judgments(args.dataset)
    index = Index.open(args.index)
    judged = judgments.judged
    vectors = index.encoder.encode_queries([judgments.queries[q] for q in judged])
    dense: dict[str, Ranking] = {}
    terms: dict[str, list[str]] = {}
    for query, vector in zip(judged, vectors, strict=True):
        text = judgments.queries[query]
        language = detect_language(text)
        terms[query] = index.terms(index.matching_key(text, language), language)
        dense[query] = index.store.search_vectors(vector, POOL)
    sparse = {q: index.store.search_terms(terms[q], POOL) for q in judged}
    rows = index.store.db.execute("SELECT id FROM chunks").fetchall()
    owner = {
        i: c.external_id or c.document_key
        for i, c in index.store.chunks_by_id(int(r[0]) for r in rows).items()
    }

    def measure(fuser: Fuser, sparse_lists: dict[str, Ranking] = sparse) -> dict[str, float]:
        runs = {q: documents(fuser(dense[q], sparse_lists[q]), owner) for q in judged}
        scores = common.metrics(runs, judgments.qrels, judged)
        return {name: scores[name] for name in ("ndcg_at_10", "recall_at_100")}

    def rrf(k: int, depth: int = EVAL_DEPTH) -> Fuser:
        return lambda d, s: fuse([d[:depth], s[:depth]], "rrf", rrf_k=k)

    def weighted(dense_weight: float) -> Fuser:
        return lambda d, s: fuse(
            [d[:EVAL_DEPTH], s[:EVAL_DEPTH]], "weighted", weights=(dense_weight, 1 - dense_weight)
        )

    results: dict[str, dict[str, float]] = {
        "dense": measure(lambda d, s: d),
        "sparse": measure(lambda d, s: s),
        **{f"rrf k {k}": measure(rrf(k)) for k in (5, 10, 20, 60, 100)},
        **{f"rrf k 60, {n} per list": measure(rrf(60, n)) for n in (50, 100, 1000)},
        **{f"weighted {w}": measure(weighted(w)) for w in (0.3, 0.4, 0.5, 0.6, 0.7)},
    }
    for k1 in (0.9, 1.2, 1.5, 2.0):
        for b in (0.3, 0.5, 0.75, 0.9):
            lists = bm25_lists(index, terms, k1, b)
            results[f"bm25 k1 {k1} b {b}: sparse"] = measure(lambda d, s: s, lists)
            results[f"bm25 k1 {k1} b {b}: rrf k 60"] = measure(rrf(60), lists)
    model = index.settings.embedding_model
    index.close()
    result = {
        "dataset": judgments.dataset,
        "model": model,
        "queries": len(judged),
        "results": results,
    }
    write_result(f"fusion-{judgments.dataset}-{model}", result)
    table = Table("setting", "nDCG@10", "Recall@100", title=f"{judgments.dataset}, {model}")
    for name, row in results.items():
        table.add_row(name, f"{row['ndcg_at_10']:.3f}", f"{row['recall_at_100']:.3f}")
    Console().print(table)


if __name__ == "__main__":
    main()
