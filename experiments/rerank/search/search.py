"""Does ``search(..., rerank=True)`` help? The product path, first stage vs reranked, on real data.

For each BEIR collection given as ``NAME=INDEX`` (an index kept by ``ragkit eval DATASET
--keep-index INDEX``, so built with that index's settings from the collection's corpus), every
judged query runs twice through :meth:`ragkit.Index.search` with ``k = rerank_depth`` (50):
once as is (the hybrid first stage) and once with ``rerank=True`` (the shipped groupwise
reranker over the first stage's top 50, mixed with ``rerank_weight`` of the first-stage
score — the defaults a user gets from ``ragkit query --rerank``). Documents score as their best
chunk; nDCG@10 and MRR@10 are averaged over the judged queries, with the seconds each path took.

The shipped model has been trained on Cranfield's and CISI's judgments (its MODEL_CARD.md), so
on those two collections this checks the product path, not held-out quality — that is
``experiments/rerank/groupwise`` (query-disjoint folds).

Run (from the repository root)::

    .venv/bin/python -m experiments.rerank.search.search cranfield=IDX1 cisi=IDX2 [--rerank-weight 0.2]

Writes ``experiments/rerank/search/search.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from rich.console import Console
from rich.table import Table

from benchmarks.common import load_beir, write_result
from ragkit.evaluate import mrr_at_k, ndcg_at_k
from ragkit.index import Index

HERE = Path(__file__).resolve().parent


def measure(name: str, folder: Path, weight: float | None) -> dict[str, dict[str, float]]:
    """nDCG@10, MRR@10 and seconds of the first stage and of the reranked search.

    ``weight``: the first-stage share to mix in instead of the index's stored ``rerank_weight``
    (for this run only, as ``ragkit query --rerank-weight``).
    """
    judgments = load_beir(name)
    index = Index.open(folder, **({} if weight is None else {"rerank_weight": weight}))
    depth = index.settings.rerank_depth
    rows: dict[str, dict[str, float]] = {}
    for label, rerank in (("first stage", False), ("reranked", True)):
        clock = time.perf_counter()
        ndcg, mrr = [], []
        for query in judgments.judged:
            ranked: list[str] = []
            for hit in index.search(judgments.queries[query], k=depth, rerank=rerank):
                if hit.document_id not in ranked:
                    ranked.append(hit.document_id)
            ndcg.append(ndcg_at_k(ranked, judgments.qrels[query]))
            mrr.append(mrr_at_k(ranked, judgments.qrels[query]))
        rows[label] = {
            "ndcg_at_10": sum(ndcg) / len(ndcg),
            "mrr_at_10": sum(mrr) / len(mrr),
            "seconds": time.perf_counter() - clock,
        }
    rows["settings"] = {
        "model": index.settings.embedding_model,
        "fusion": index.settings.fusion,
        "reranker": index.settings.reranker,
        "rerank_depth": depth,
        "rerank_weight": index.settings.rerank_weight,
        "queries": len(judgments.judged),
    }
    index.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("collections", nargs="+", help="NAME=INDEX, e.g. cisi=/tmp/cisi-index")
    parser.add_argument("--rerank-weight", type=float, help="instead of the index's setting")
    args = parser.parse_args()
    result = {}
    for pair in args.collections:
        name, _, folder = pair.partition("=")
        result[name] = measure(name, Path(folder), args.rerank_weight)
    write_result("search", result, HERE)
    table = Table("collection", "path", "nDCG@10", "MRR@10", "seconds")
    for name, rows in result.items():
        for label in ("first stage", "reranked"):
            row = rows[label]
            table.add_row(
                name,
                label,
                f"{row['ndcg_at_10']:.4f}",
                f"{row['mrr_at_10']:.4f}",
                f"{row['seconds']:.0f}",
            )
    Console().print(table)


if __name__ == "__main__":
    main()
