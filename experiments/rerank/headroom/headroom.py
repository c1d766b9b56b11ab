"""How much can any reranker built on ragkit's bundled signals add to today's first stage?

For each BEIR collection (an index kept by ``ragkit eval DATASET --keep-index INDEX``), every
judged query's first-stage top 50 documents (hybrid search, the index's defaults) get the
signals a reranker over the frozen all-MiniLM-L6-v2 backbone can compute, each min-max scaled
per query:

* ``first stage``: the hybrid score (the list's own order);
* ``dense`` / ``bm25``: the index's dense and BM25 scores (min of the list where a retriever
  missed the document);
* ``maxsim``: late interaction — the mean over query tokens of the best cosine with any
  document token (backbone token states, 256 document tokens);
* ``centroid``: a document's mean cosine with the list's top 3 (a groupwise signal: a
  document like the first stage's best is more likely relevant — the cluster hypothesis);
* ``rocchio``: cosine with the query vector plus the mean of the top 3 (pseudo-relevance
  feedback).

Rows: each signal alone; ``first stage + signal`` mixed at the weight chosen on the *other*
collection (grid 0.1–0.9); logistic regression over all signals and their per-query z-scores,
trained on the other collection's judgments or by 5 query-disjoint folds of this one (and by
folds without the dense and BM25 scores: do the retrievers' own scores add to the rest?); and the
oracle (the top 50 sorted by the judgments — what a perfect reranker would reach). Each row's
``p``: a two-sided paired t-test of per-query nDCG@10 against the first stage.

Run (from the repository root)::

    .venv/bin/python -m experiments.rerank.headroom.headroom cranfield=IDX1 cisi=IDX2

Writes ``experiments/rerank/headroom/headroom.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from sklearn.linear_model import LogisticRegression

from benchmarks.common import load_beir, paired_p, write_result
from ragkit.evaluate import Judgments, mrr_at_k, ndcg_at_k
from ragkit.index import Index
from ragkit.rerank.backbone import Backbone
from ragkit.search.fusion import minmax
from ragkit.training.judged import candidate_list

HERE = Path(__file__).resolve().parent
DEPTH = 50
TOP = 3  # documents that stand for the first stage's opinion (centroid, rocchio)
SIGNALS = ("first stage", "dense", "bm25", "maxsim", "centroid", "rocchio")
GRID = [round(0.1 * i, 1) for i in range(1, 10)]


@dataclass
class QueryList:
    """One judged query's candidates and their signals ``(n, len(SIGNALS))``."""

    query_id: str
    doc_ids: list[str]
    signals: np.ndarray
    grades: dict[str, int]


def retriever_scores(index: Index, query: str, mode: str, doc_ids: list[str]) -> np.ndarray:
    """``mode``'s score of each document (its best chunk; the list's minimum where missed)."""
    found: dict[str, float] = {}
    for hit in index.search(query, k=DEPTH * 4, mode=mode):  # type: ignore[arg-type]
        found.setdefault(hit.document_id, hit.score)
    low = min(found.values(), default=0.0)
    return np.array([found.get(d, low) for d in doc_ids])


def query_lists(judgments: Judgments, folder: Path, backbone: Backbone) -> list[QueryList]:
    """Every judged query's top ``DEPTH`` with its signals."""
    index = Index.open(folder)
    lists = []
    for query_id in judgments.judged:
        query = judgments.queries[query_id]
        candidates = candidate_list(index, query, DEPTH)
        doc_ids = [d for d, _, _ in candidates]
        texts = [t for _, t, _ in candidates]
        states = backbone.encode(texts, 256, "passage")
        query_states = backbone.encode([query], 48, "query")
        vectors = torch.nn.functional.normalize(states.pooled(), dim=-1)
        query_vector = torch.nn.functional.normalize(query_states.pooled()[0], dim=-1)
        tokens = torch.nn.functional.normalize(states.hidden, dim=-1)
        query_tokens = torch.nn.functional.normalize(
            query_states.hidden[0][query_states.mask[0]], dim=-1
        )
        similarity = torch.einsum("qh,dth->dqt", query_tokens, tokens)
        maxsim = similarity.masked_fill(~states.mask.unsqueeze(1), -1.0).amax(-1).mean(-1)
        feedback = torch.nn.functional.normalize(query_vector + vectors[:TOP].mean(0), dim=-1)
        raw = [
            np.array([s for _, _, s in candidates]),
            retriever_scores(index, query, "dense", doc_ids),
            retriever_scores(index, query, "sparse", doc_ids),
            maxsim.numpy(),
            (vectors @ vectors[:TOP].T).mean(1).numpy(),
            (vectors @ feedback).numpy(),
        ]
        signals = np.stack([minmax(np.asarray(r, dtype=np.float64)) for r in raw], axis=1)
        lists.append(QueryList(query_id, doc_ids, signals, judgments.qrels[query_id]))
    index.close()
    return lists


def evaluate(lists: list[QueryList], score: Callable[[QueryList], np.ndarray]) -> dict:
    """Mean nDCG@10 and MRR@10 of ranking each list by ``score``, and the two-sided paired
    t-test p-value of its per-query nDCG@10 against the first stage's (the list's own order)."""
    ndcg, mrr, first = [], [], []
    for item in lists:
        order = np.argsort(-score(item), kind="stable")
        ranked = [item.doc_ids[i] for i in order]
        ndcg.append(ndcg_at_k(ranked, item.grades))
        mrr.append(mrr_at_k(ranked, item.grades))
        first.append(ndcg_at_k(item.doc_ids, item.grades))
    same = np.allclose(ndcg, first)
    return {
        "ndcg_at_10": float(np.mean(ndcg)),
        "mrr_at_10": float(np.mean(mrr)),
        "p_vs_first_stage": 1.0 if same else paired_p(ndcg, first),
    }


def print_rows(title: str, rows: dict[str, dict[str, dict]], names: list[str], width: int) -> None:
    """One table row per system: each collection's nDCG@10 / MRR@10 (p, and the mixing weight
    ``w`` where the cell has one)."""
    table = Table(title, *(f"{n} nDCG@10 / MRR@10" for n in names))
    for label, cells in rows.items():
        table.add_row(
            label,
            *(
                f"{c['ndcg_at_10']:.4f} / {c['mrr_at_10']:.4f} (p={c['p_vs_first_stage']:.2f}"
                + (f", w={c['weight']})" if "weight" in c else ")")
                for c in (cells[n] for n in names)
            ),
        )
    Console(width=width).print(table)


def ltr_features(item: QueryList) -> np.ndarray:
    z = (item.signals - item.signals.mean(0)) / (item.signals.std(0) + 1e-9)
    return np.concatenate([item.signals, z], axis=1)


def without(lists: list[QueryList], dropped: set[str]) -> list[QueryList]:
    """The lists with the ``dropped`` signals' columns removed."""
    keep = [column for column, signal in enumerate(SIGNALS) if signal not in dropped]
    return [replace(item, signals=item.signals[:, keep]) for item in lists]


def fit_ltr(lists: list[QueryList]) -> LogisticRegression:
    features = np.concatenate([ltr_features(i) for i in lists])
    labels = np.concatenate([[i.grades.get(d, 0) > 0 for d in i.doc_ids] for i in lists])
    return LogisticRegression(C=0.1, max_iter=5000).fit(features, labels)


def folds_ltr(lists: list[QueryList], folds: int = 5, seed: int = 0) -> dict:
    """Logistic regression scored on each query by a model not trained on it."""
    order = np.random.default_rng(seed).permutation(len(lists))
    scores: dict[str, np.ndarray] = {}
    for held in np.array_split(order, folds):
        held_ids = set(held.tolist())
        model = fit_ltr([lists[i] for i in range(len(lists)) if i not in held_ids])
        for i in held_ids:
            scores[lists[i].query_id] = model.decision_function(ltr_features(lists[i]))
    return evaluate(lists, lambda item: scores[item.query_id])


def mixed(weight: float, column: int) -> Callable[[QueryList], np.ndarray]:
    return lambda item: weight * item.signals[:, 0] + (1 - weight) * item.signals[:, column]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("collections", nargs=2, help="NAME=INDEX, e.g. cisi=/tmp/cisi-index")
    args = parser.parse_args()
    torch.set_num_threads(2)
    backbone = Backbone("all-minilm-l6-v2")
    data: dict[str, list[QueryList]] = {}
    for pair in args.collections:
        name, _, folder = pair.partition("=")
        data[name] = query_lists(load_beir(name), Path(folder), backbone)
    names = list(data)
    rows: dict[str, dict[str, dict]] = {}
    for name in names:
        other = next(n for n in names if n != name)
        lists = data[name]
        for column, signal in enumerate(SIGNALS):
            rows.setdefault(signal, {})[name] = evaluate(lists, lambda i, c=column: i.signals[:, c])
        for column, signal in enumerate(SIGNALS[1:], start=1):
            weight = max(
                GRID, key=lambda w, c=column: evaluate(data[other], mixed(w, c))["ndcg_at_10"]
            )
            result = evaluate(lists, mixed(weight, column)) | {"weight": weight}
            rows.setdefault(f"first stage + {signal}", {})[name] = result
        transfer = fit_ltr(data[other])
        rows.setdefault("LTR, trained on the other collection", {})[name] = evaluate(
            lists, lambda item, model=transfer: model.decision_function(ltr_features(item))
        )
        rows.setdefault("LTR, 5 query-disjoint folds", {})[name] = folds_ltr(lists)
        rows.setdefault("LTR, 5 folds, without dense and BM25", {})[name] = folds_ltr(
            without(lists, {"dense", "bm25"})
        )
        rows.setdefault("oracle (judgments sort the top 50)", {})[name] = evaluate(
            lists, lambda item: np.array([item.grades.get(d, 0) for d in item.doc_ids], float)
        )
    write_result("headroom", rows, HERE)
    print_rows("reranking the first stage's top 50", rows, names, width=140)


if __name__ == "__main__":
    main()
