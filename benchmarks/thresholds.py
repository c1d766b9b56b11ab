"""Relevance thresholds: at ``Hit.relevance`` ≥ 0.5, how many relevant hits stay and how many
hits of queries an index cannot answer go — per bundled model and search mode — and the fit of
the calibration that makes ``relevance`` (:mod:`ragkit.query.relevance`).

Run::

    nice -n 10 .venv/bin/python -m benchmarks.thresholds           # measure
    nice -n 10 .venv/bin/python -m benchmarks.thresholds --fit     # refit, then measure

Collections, split whole: the calibration is fitted on the tuning part (Cranfield) only, the
docs report the held-out part (CISI). Each is indexed with ragkit's defaults once per bundled
model (``all-minilm-l6-v2``, ``multilingual-e5-small``) under ``--indexes``. Query sets per
collection, each query's top 10 hits (``Index.explain``, collapse on, as a user searches):

- ``judged``: the BEIR queries; a hit of a judged-relevant document is a *relevant hit*;
- ``known-item``: 150 literal 6–10-word spans, one document each
  (:func:`benchmarks.feedback_sets.known_item_set`); the span's document is the relevant hit;
- ``nonsense``: 100 queries of random letters (:func:`benchmarks.probes.nonsense`, a seed per
  part); ``off-topic``: 64 / 63 everyday questions (:data:`benchmarks.probes.OFF_TOPIC`);
  ``other collection`` (held-out only): Cranfield's 225 queries against CISI's index.

Figures at 0.5: *kept*, the share of relevant hits with relevance ≥ 0.5 (the judged queries'
relevant top-1 hits, their relevant hits in the top 10, the known items' documents); *dropped*,
the share of the top-10 hits of nonsense, off-topic and other-collection queries below 0.5, and
the share of those queries left with no hit at all. For contrast, the same for the rank score
(``Hit.score`` ≥ 0.5, what LangChain thresholds read before) and the judged queries'
non-relevant hits (on topic, so few drop). Warm hybrid latency: p50/p95 of the judged queries.

The fit (``--fit``): for each model and each kind of evidence (``hybrid``: cosine, coverage
and matched IDF; ``dense``: cosine; ``sparse``: coverage and matched IDF, pooled over both
models, since BM25 terms do not depend on the model) a logistic regression (scikit-learn,
``C`` = 1 on standard scores, so a feature of narrow range — e5's cosines — is not penalized
more than a wide one; ten query-disjoint folds of the tuning part put the best ``C`` at 1–10)
on the hits of the search mode that kind comes from: positives are the relevant hits of the
tuning ``judged`` and ``known-item`` queries, negatives every hit of the tuning ``nonsense`` and
``off-topic`` queries, each query weighing alike and the two classes alike (so 0.5 is where
relevant and unanswerable are equally likely). The matched IDF joined coverage because on the
tuning part coverage alone kept 54 % of the relevant hits of queries of 25 words or more in
sparse search (a long query's answer holds a small share of many terms), against 100 % of
those of queries under 10 words; with it, 98 %. A model without a calibration of its own gets
``fallback``: the lexical evidence alone for hybrid and sparse hits (fitted on both models'
hits), the cosine clipped to [0, 1] for dense ones (its cosine range is unknown). Writes
``ragkit/query/relevance.json`` (the shipped coefficients, with this run's provenance and the
fit's counts) and ``benchmarks/results/thresholds.json``.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import ragkit  # noqa: F401  (thread policy before torch loads)

# isort: split

import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.common import ROOT, beir_folder, load_beir, percentile, write_result
from benchmarks.feedback_sets import known_item_set
from benchmarks.probes import NONSENSE_SEEDS, OFF_TOPIC, nonsense
from ragkit import Index
from ragkit.paths import cache_dir
from ragkit.query import relevance

MODELS = ("all-minilm-l6-v2", "multilingual-e5-small")
MODES = ("hybrid", "dense", "sparse")
PARTS = {"tune": "cranfield", "held-out": "cisi"}
OTHER = {"held-out": "cranfield"}  # the other collection's queries, as off-topic probes
THRESHOLD = 0.5
DEPTH = 10
POSITIVE_SETS = ("judged", "known-item")
NEGATIVE_SETS = ("nonsense", "off-topic", "other collection")
NONSENSE_COUNT = 100
LEXICAL = ("coverage", "matched")  # the lexical evidence (ragkit.query.relevance.features)
LENGTHS = ((1, 10), (10, 16), (16, 25), (25, 1000))  # query words, for the kept shares by length
SHIPPED = ROOT / "ragkit" / "query"  # where relevance.json ships


@dataclass(frozen=True)
class Row:
    """One hit of one query: its set, rank, whether it is relevant, its scores and evidence."""

    kind: str  # the query set
    query: str
    rank: int
    relevant: bool
    relevance: float
    score: float
    cosine: float | None
    coverage: float | None
    matched: float | None
    words: int  # the query's length in words

    @property
    def evidence(self) -> relevance.Evidence:
        return relevance.Evidence(self.cosine, self.coverage, self.matched)


@dataclass(frozen=True)
class QuerySet:
    queries: dict[str, str]
    relevant: dict[str, set[str]]  # query id → relevant document ids (empty: none can be)


def query_sets(part: str, out: Path) -> dict[str, QuerySet]:
    """The query sets of ``part`` (``tune`` or ``held-out``) against its collection."""
    collection = PARTS[part]
    judged = load_beir(collection)
    known = load_beir(known_item_set(beir_folder(collection), out))
    sets = {
        name: QuerySet(
            {q: found.queries[q] for q in found.judged},
            {q: {d for d, g in found.qrels[q].items() if g > 0} for q in found.judged},
        )
        for name, found in (("judged", judged), ("known-item", known))
    }
    probes = {
        "nonsense": nonsense(NONSENSE_COUNT, NONSENSE_SEEDS[part]),
        "off-topic": OFF_TOPIC[part],
    }
    if part in OTHER:
        other = load_beir(OTHER[part])
        probes["other collection"] = tuple(other.queries[q] for q in other.judged)
    for name, texts in probes.items():
        sets[name] = QuerySet({f"{name}-{i}": t for i, t in enumerate(texts)}, {})
    return sets


def open_index(folder: Path, collection: str, model: str) -> Index:
    """The collection's index with ``model``, built with the defaults the first time."""
    index = Index.open(folder / f"{collection}-{model}", create=True, model=model)
    index.ingest([beir_folder(collection) / "corpus.jsonl"])
    return index


def collect(index: Index, sets: dict[str, QuerySet], mode: str) -> tuple[list[Row], list[float]]:
    """Every set's queries' top hits in ``mode``, and the judged queries' seconds (warm)."""
    rows: list[Row] = []
    seconds: list[float] = []
    index.search("warm up", k=DEPTH, mode=mode)  # type: ignore[arg-type]
    for name, found in sets.items():
        for query, text in found.queries.items():
            if name == "judged":
                clock = time.perf_counter()
                index.search(text, k=DEPTH, mode=mode)  # type: ignore[arg-type]
                seconds.append(time.perf_counter() - clock)
            for rank, each in enumerate(index.explain(text, k=DEPTH, mode=mode), start=1):  # type: ignore[arg-type]
                hit = each.hit
                rows.append(
                    Row(
                        name,
                        query,
                        rank,
                        hit.document_id in found.relevant.get(query, ()),
                        hit.relevance,
                        hit.score,
                        each.evidence.cosine,
                        each.evidence.coverage,
                        each.evidence.matched,
                        len(text.split()),
                    )
                )
    return rows, seconds


def share(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def figures(rows: list[Row], threshold: float = THRESHOLD) -> dict[str, Any]:
    """The kept and dropped shares at ``threshold``, by relevance and by rank score."""
    out: dict[str, Any] = {}
    for name, read in (("relevance", lambda r: r.relevance), ("score", lambda r: r.score)):
        judged = [r for r in rows if r.kind == "judged"]
        found: dict[str, Any] = {
            "relevant top-1 kept": share([read(r) >= threshold for r in judged if r.rank == 1 and r.relevant]),
            "relevant top-10 kept": share([read(r) >= threshold for r in judged if r.relevant]),
            "known item kept": share([read(r) >= threshold for r in rows if r.kind == "known-item" and r.relevant]),
            "judged non-relevant dropped": share([read(r) < threshold for r in judged if not r.relevant]),
        }  # fmt: skip
        for kind in NEGATIVE_SETS:
            probe = [r for r in rows if r.kind == kind]
            if not probe:
                continue
            kept_any = Counter(r.query for r in probe if read(r) >= threshold)
            queries = {r.query for r in probe}
            found[f"{kind} hits dropped"] = share([read(r) < threshold for r in probe])
            found[f"{kind} queries with no hit"] = share([q not in kept_any for q in queries])
        found["relevant top-10 kept by query words"] = {
            f"{low}-{high - 1}": share([read(r) >= threshold for r in judged if r.relevant and low <= r.words < high])
            for low, high in LENGTHS
        }  # fmt: skip
        out[name] = found
    return out


def fit(rows: list[Row], features: tuple[str, ...]) -> dict[str, Any]:
    """A logistic regression of relevant hits against unanswerable queries' hits on
    ``features``, each query weighing alike and both classes alike."""
    from sklearn.linear_model import LogisticRegression

    used = [r for r in rows if (r.kind in POSITIVE_SETS and r.relevant) or r.kind in NEGATIVE_SETS]
    x = np.array([[relevance.features(r.evidence)[f] for f in features] for r in used])
    y = np.array([r.kind in POSITIVE_SETS for r in used])
    per_query = Counter((r.kind, r.query, r.kind in POSITIVE_SETS) for r in used)
    weights = np.array([1.0 / per_query[(r.kind, r.query, r.kind in POSITIVE_SETS)] for r in used])
    for label in (True, False):  # the classes weigh alike
        weights[y == label] /= weights[y == label].sum()
    mean, spread = x.mean(axis=0), x.std(axis=0)  # fitted on standard scores: the penalty
    scaled = (x - mean) / spread  # weighs features of narrow ranges (e5's cosines) alike
    model = LogisticRegression(C=1.0, max_iter=1000)
    model.fit(scaled, y, sample_weight=weights * len(y))
    coefficients = model.coef_[0] / spread
    intercept = float(model.intercept_[0]) - float(coefficients @ mean)
    return {
        "intercept": round(intercept, 4),
        "weights": {f: round(float(w), 4) for f, w in zip(features, coefficients, strict=True)},
        "hits": {"relevant": int(y.sum()), "unanswerable": int((~y).sum())},
        "queries": len({(r.kind, r.query) for r in used}),
    }


def calibrate(tuning: dict[str, dict[str, list[Row]]]) -> dict[str, Any]:
    """The shipped calibrations from the tuning rows (model → mode → rows)."""
    pooled = {mode: [r for model in MODELS for r in tuning[model][mode]] for mode in MODES}
    sparse = fit(pooled["sparse"], LEXICAL)
    models: dict[str, Any] = {
        model: {
            "hybrid": fit(tuning[model]["hybrid"], ("cosine", *LEXICAL)),
            "dense": fit(tuning[model]["dense"], ("cosine",)),
            "sparse": sparse,
        }
        for model in MODELS
    }
    models[relevance.FALLBACK] = {
        "hybrid": fit(pooled["hybrid"], LEXICAL),
        "dense": {"intercept": 0.0, "weights": {"cosine": 1.0}, "link": "clip"},
        "sparse": sparse,
    }
    return {
        "about": "Hit.relevance = logistic(intercept + Σ weight · evidence) per embedding model "
        "and kind of evidence (ragkit.query.relevance); fitted by `python -m "
        "benchmarks.thresholds --fit` on Cranfield's judged and known-item queries against "
        "nonsense and off-topic ones (benchmarks/thresholds.py says how)",
        "models": models,
    }


def rescored(rows: list[Row], model: str) -> list[Row]:
    """``rows`` with the relevance ``model``'s shipped calibration gives their evidence (after
    a fit: the searches need not run again)."""
    chosen = relevance.calibrations(model)
    return [replace(r, relevance=chosen.relevance(r.evidence)) for r in rows]


def report(
    found: dict[str, dict[str, dict[str, list[Row]]]],
    latency: dict[str, dict[str, dict[str, float]]],
) -> dict[str, Any]:
    """The figures of every part, model and mode, printed as a table."""
    results: dict[str, Any] = {"threshold": THRESHOLD, "depth": DEPTH, "collections": PARTS}
    columns = [
        "relevant top-1 kept",
        "relevant top-10 kept",
        "known item kept",
        *(f"{kind} hits dropped" for kind in NEGATIVE_SETS),
        *(f"{kind} queries with no hit" for kind in NEGATIVE_SETS),
    ]
    table = Table("part", "model", "mode", "by", *columns, title=f"at {THRESHOLD}")
    for part, models in found.items():
        for model, modes in models.items():
            for mode, rows in modes.items():
                measured = figures(rows)
                results.setdefault(part, {}).setdefault(model, {})[mode] = measured
                for by in ("relevance", "score"):
                    cells = [str(measured[by].get(c, "—")) for c in columns]
                    table.add_row(part, model, mode, by, *cells)
    results["latency"] = latency
    results["queries"] = {
        part: {
            kind: len({r.query for r in found[part][MODELS[0]]["hybrid"] if r.kind == kind})
            for kind in (*POSITIVE_SETS, *NEGATIVE_SETS)
        }
        for part in found
    }
    Console(width=250).print(table)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--indexes", type=Path, default=Path("/tmp/ragkit-thresholds"))
    parser.add_argument("--sets", type=Path, default=cache_dir() / "bench" / "thresholds")
    parser.add_argument("--fit", action="store_true", help="refit ragkit/query/relevance.json")
    args = parser.parse_args()
    found: dict[str, dict[str, dict[str, list[Row]]]] = {}
    latency: dict[str, dict[str, dict[str, float]]] = {}
    for part, collection in PARTS.items():
        sets = query_sets(part, args.sets)
        for model in MODELS:
            with open_index(args.indexes, collection, model) as index:
                for mode in MODES:
                    rows, seconds = collect(index, sets, mode)
                    found.setdefault(part, {}).setdefault(model, {})[mode] = rows
                    latency.setdefault(f"{part} {model}", {})[mode] = {
                        "p50_ms": round(1000 * percentile(seconds, 50), 1),
                        "p95_ms": round(1000 * percentile(seconds, 95), 1),
                    }
    if args.fit:
        shipped = calibrate(found["tune"])
        print(f"wrote {write_result('relevance', shipped, folder=SHIPPED, indent=1)}")
        relevance.calibrations.cache_clear()
        relevance.shipped.cache_clear()
        found = {
            part: {model: {mode: rescored(rows, model) for mode, rows in modes.items()}
                   for model, modes in models.items()}
            for part, models in found.items()
        }  # fmt: skip
    results = report(found, latency)
    print(f"wrote {write_result('thresholds', results)}")


if __name__ == "__main__":
    main()
