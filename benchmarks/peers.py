"""The peers on the shared English collections: bm25s, a dense encoder and their RRF.

Run::

    .venv/bin/python -m benchmarks.peers                       # Cranfield and CISI, MiniLM
    .venv/bin/python -m benchmarks.peers ../shared/data/beir/cisi --model multilingual-e5-small

Each judged collection (``../shared/data/beir/cranfield`` and ``cisi`` unless given) is ranked
whole — one document is its title and its text, no chunking, nothing of ragkit's pipeline — by:

- ``bm25s``: BM25 (bm25s defaults, k1 1.5, b 0.75) over ``bm25s.tokenize`` words with its
  English stopwords and the Snowball English stemmer (PyStemmer);
- ``dense``: ``SentenceTransformer.encode`` of the documents and queries with ``--model``
  (default ``all-minilm-l6-v2``, the model ``auto`` picks for these collections; the bundled
  copy, offline; the model's query/passage prefixes), normalized, exact inner product;
- ``rrf``: reciprocal-rank fusion, k 60, of the two lists' top 100.

nDCG@10, Recall@100 and MRR@10 over the judged queries, scored as ``ragkit eval`` scores
(:mod:`ragkit.evaluate`). Writes ``benchmarks/results/peers-<model>.json`` (the peers of
``docs/assets/plots/retrieval_quality.svg``) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ragkit  # noqa: F401  (thread policy before torch loads)

# isort: split

import bm25s
import numpy as np
import Stemmer
from rich.console import Console
from rich.table import Table

from benchmarks import common
from benchmarks.common import BEIR, RESULTS, write_result
from ragkit.embed.models import load_encoder, model_spec
from ragkit.evaluate import Judgments, load_judgments

COLLECTIONS = ("cranfield", "cisi")
MODEL = "all-minilm-l6-v2"
DEPTH = 100  # documents ranked per query, and per list fused
RRF_K = 60
SYSTEMS = ("bm25s", "dense", "rrf")
Rankings = dict[str, list[int]]  # query id → corpus positions, best first


@dataclass(frozen=True)
class Corpus:
    """A BEIR corpus as the peers see it: ids and whole documents (title, then text)."""

    ids: list[str]
    texts: list[str]


def read_corpus(judgments: Judgments) -> Corpus:
    """``corpus.jsonl``'s documents in file order, each its title and its text."""
    ids, texts = [], []
    with judgments.corpus.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            ids.append(str(record["_id"]))
            texts.append(f"{record.get('title', '')} {record.get('text', '')}".strip())
    return Corpus(ids, texts)


def _words(texts: Sequence[str]) -> list[list[str]]:
    """bm25s's tokens: lowercased words of 2+ characters, English stopwords out, stemmed."""
    tokens = bm25s.tokenize(
        list(texts),
        stopwords="en",
        stemmer=Stemmer.Stemmer("english"),
        return_ids=False,
        show_progress=False,
    )
    return [list(t) for t in tokens]


def top(scores: np.ndarray, depth: int = DEPTH) -> list[int]:
    """Positions of the ``depth`` highest scores, best first (ties by position)."""
    return [int(i) for i in np.argsort(-scores, kind="stable")[:depth]]


def sparse_rankings(corpus: Corpus, queries: dict[str, str]) -> Rankings:
    """bm25s over the stemmed words of the whole documents."""
    retriever = bm25s.BM25()
    retriever.index(_words(corpus.texts), show_progress=False)
    rankings: Rankings = {}
    for query, words in zip(queries, _words(list(queries.values())), strict=True):
        words = [w for w in words if w]
        rankings[query] = top(retriever.get_scores(words)) if words else []
    return rankings


def dense_rankings(corpus: Corpus, queries: dict[str, str], model: str) -> Rankings:
    """``model``'s normalized vectors, exact inner product."""
    spec = model_spec(model)
    encoder = load_encoder(spec.location)

    def encode(texts: Sequence[str], prefix: str) -> np.ndarray:
        return np.asarray(
            encoder.encode(
                [prefix + t for t in texts],
                batch_size=32,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )

    documents = encode(corpus.texts, spec.passage_prefix)
    vectors = encode(list(queries.values()), spec.query_prefix)
    return {q: top(documents @ v) for q, v in zip(queries, vectors, strict=True)}


def rrf(lists: Sequence[list[int]], k: int = RRF_K, depth: int = DEPTH) -> list[int]:
    """Reciprocal-rank fusion: each position scores the sum of 1 / (k + rank) over the lists.

    Example:
        >>> rrf([[1, 2, 3], [3, 1]])
        [1, 3, 2]
    """
    fused: dict[int, float] = {}
    for ranking in lists:
        for rank, position in enumerate(ranking[:depth], start=1):
            fused[position] = fused.get(position, 0.0) + 1.0 / (k + rank)
    return sorted(fused, key=lambda p: (-fused[p], p))[:depth]


def metrics(rankings: Rankings, corpus: Corpus, judgments: Judgments) -> dict[str, float]:
    """Mean nDCG@10, Recall@100 and MRR@10 over the judged queries."""
    runs = {q: [corpus.ids[p] for p in rankings[q]] for q in judgments.judged}
    return common.metrics(runs, judgments.qrels, judgments.judged)


def measure(dataset: Path, model: str) -> dict[str, Any]:
    """The three peers on one BEIR folder: sizes, seconds and each system's scores."""
    judgments = load_judgments(dataset)
    corpus = read_corpus(judgments)
    queries = {q: judgments.queries[q] for q in judgments.judged}
    clock = time.perf_counter()
    sparse = sparse_rankings(corpus, queries)
    sparse_seconds = time.perf_counter() - clock
    clock = time.perf_counter()
    dense = dense_rankings(corpus, queries, model)
    dense_seconds = time.perf_counter() - clock
    fused = {q: rrf([sparse[q], dense[q]]) for q in queries}
    runs = {"bm25s": sparse, "dense": dense, "rrf": fused}
    return {
        "documents": len(corpus.ids),
        "queries": len(queries),
        "seconds": {"bm25s": round(sparse_seconds, 1), "dense": round(dense_seconds, 1)},
        "systems": {name: metrics(runs[name], corpus, judgments) for name in SYSTEMS},
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Measure the peers on each dataset, write the JSON, print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("datasets", type=Path, nargs="*", help="BEIR folders (default: shared)")
    parser.add_argument("--model", default=MODEL, help="the dense peer's encoder")
    parser.add_argument("--out", type=Path, help="result file (default: results/peers-MODEL.json)")
    args = parser.parse_args(argv)
    datasets = args.datasets or [BEIR / name for name in COLLECTIONS]
    collections = {dataset.name: measure(dataset, args.model) for dataset in datasets}
    result = {
        "model": args.model,
        "bm25s": {"k1": 1.5, "b": 0.75, "stopwords": "en", "stemmer": "english"},
        "rrf_k": RRF_K,
        "depth": DEPTH,
        "documents": "title and text, whole, no chunking",
        "collections": collections,
    }
    out = args.out or RESULTS / f"peers-{args.model}.json"
    write_result(out.stem, result, folder=out.parent)
    table = Table(
        "collection", "system", "nDCG@10", "Recall@100", "MRR@10", title=f"peers, {args.model}"
    )
    for name, row in collections.items():
        for system, scores in row["systems"].items():
            table.add_row(
                name,
                system,
                f"{scores['ndcg_at_10']:.3f}",
                f"{scores['recall_at_100']:.3f}",
                f"{scores['mrr_at_10']:.3f}",
            )
    Console().print(table)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
