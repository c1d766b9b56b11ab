"""Per-query fusion: which fusion should each query get, decided from its first-pass evidence?
Fits the model ``ragkit/search/per_query_fusion.json`` on the tuning part of
``benchmarks/feedback.py`` only.

Run from the repository root, after ``benchmarks.feedback`` built its indexes (it reuses them
and its query sets)::

    nice -n 15 .venv/bin/python -m experiments.fusion.perquery.perquery capture   # lists, once
    nice -n 15 .venv/bin/python -m experiments.fusion.perquery.perquery fit

``capture`` takes every judged query's first pass once, as ``Index.search`` makes it (hybrid,
``fusion_depth`` 300 as ``benchmarks.feedback`` asks for k = 300): the dense and the sparse
list (each scoring the other's candidates), the chunks of the sparse head holding the query as
a phrase, and the query's evidence (:func:`ragkit.search.per_query.query_evidence`); it keeps
them under ``--lists``. ``fit`` replays every fusion option offline on those lists — weighted
fusion with dense weight 0–1, the phrase lift on or off, the listings among the fused head
demoted and left out of the phrase matches (:mod:`ragkit.search.listing`, read from the index),
documents ranked by their best chunk — and searches the decision lists described at
:data:`LIFT_WORDS` for the highest mean gain over the tuning query sets (each weighing the
same) among those losing no set more than :data:`WORST`.

Writes ``perquery.json`` (per tuning set: balanced fusion, the chosen lists' figures, the
oracle; every decision list tried) next to this file and the model into ``ragkit/search``.
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
from pathlib import Path
from typing import Any

import ragkit  # noqa: F401  (thread policy before torch loads)

# isort: split

import numpy as np

from benchmarks import common
from benchmarks import feedback as bench
from benchmarks.common import write_result
from ragkit import Index
from ragkit.evaluate import load_judgments
from ragkit.paths import cache_dir
from ragkit.query.analyze import analyze, route
from ragkit.query.passes import first_stage, phrase_matches
from ragkit.search.fusion import Ranking, weighted_fusion
from ragkit.search.listing import HEAD, demoted, is_listing
from ragkit.search.per_query import (
    MODEL_FILE,
    Condition,
    FusionModel,
    FusionOption,
    QueryEvidence,
    Rule,
    query_evidence,
)
from ragkit.search.phrase import MIN_TERMS, phrase_first, phrase_words

HERE = Path(__file__).parent
DEPTH = 3 * bench.DEPTH  # chunks per list, as benchmarks.feedback searches (k = 300)
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
BASE = (0.5, False)  # today's default: dense weight 0.5, no phrase lift


@dataclasses.dataclass
class Query:
    """One judged query's first pass, as captured."""

    collection: str
    set_name: str
    query_id: str
    dense: Ranking
    sparse: Ranking
    phrase: frozenset[int]
    words: int
    evidence: dict[str, float]


def capture(name: str, sets: dict[str, Path], indexes: Path, lists: Path) -> None:
    """Every judged query's first pass in collection ``name`` into ``lists/name.pkl``."""
    target = lists / f"{name}.pkl"
    if target.exists():
        return
    index = Index.open(indexes / name)
    store, settings = index.store, index.settings
    queries: list[Query] = []
    owner: dict[int, str] = {}
    for set_name, folder in sets.items():
        judgments = load_judgments(folder)
        for query_id in judgments.judged:
            text = judgments.queries[query_id]
            languages = route(text, None, store)
            analyzed = analyze(text, languages, "hybrid", settings, lambda: index.encoder)
            found = first_stage(
                store, settings, "hybrid", "weighted", analyzed.vector, analyzed.terms,
                DEPTH, None, languages,
            )  # fmt: skip
            phrase = frozenset(phrase_matches(store, analyzed.terms, found.sparse))
            words = phrase_words(analyzed.terms)
            evidence = query_evidence(
                found.dense, found.sparse, words, phrase, languages[:1] == ["ar"]
            )
            queries.append(
                Query(name, set_name, query_id, found.dense, found.sparse, phrase, words,
                      dataclasses.asdict(evidence))
            )  # fmt: skip
            unknown = {i for i, _ in found.dense + found.sparse} - owner.keys()
            rows = store.chunks_by_id(unknown)
            owner.update({i: r.external_id or r.document_key for i, r in rows.items()})
    index.close()
    lists.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as out:
        pickle.dump({"queries": [dataclasses.asdict(q) for q in queries], "owner": owner}, out)


def listings(indexes: Path, name: str, ids: list[int]) -> frozenset[int]:
    """The listings (:mod:`ragkit.search.listing`) among the chunks ``ids`` of collection
    ``name`` (read from its index)."""
    index = Index.open(indexes / name)
    try:
        return frozenset(i for i, r in index.store.chunks_by_id(ids).items() if is_listing(r.text))
    finally:
        index.close()


def load(lists: Path, name: str, indexes: Path) -> dict[str, Any]:
    """A collection's captured first passes (:func:`capture`), the listings among their
    chunks left out of the phrase matches as ``Index.search`` leaves them out."""
    with (lists / f"{name}.pkl").open("rb") as stream:
        data = pickle.load(stream)
    queries = [Query(**q) for q in data["queries"]]
    listed = listings(indexes, name, list(data["owner"]))
    for query in queries:  # the evidence as today's query_evidence finds it in the lists
        query.phrase = query.phrase - listed
        query.evidence = dataclasses.asdict(
            query_evidence(query.dense, query.sparse, query.words, query.phrase,
                           bool(query.evidence["arabic"]))
        )  # fmt: skip
    return {"queries": queries, "owner": data["owner"], "listings": listed}


def replay(
    query: Query, owner: dict[int, str], listed: frozenset[int], weight: float, phrase: bool
) -> list[str]:
    """The query's documents under one fusion option (as ``Index.search`` ranks them: the
    ``listed`` chunks among the fused head keep :data:`~ragkit.search.listing.WEIGHT`)."""
    scored = weighted_fusion([query.dense, query.sparse], [weight, 1.0 - weight])
    scored = demoted(scored, listed & {i for i, _ in scored[:HEAD]})
    if phrase and query.words >= MIN_TERMS:
        scored = phrase_first(scored, query.phrase)
    ranked: dict[str, None] = {}
    for chunk, _ in scored:
        ranked.setdefault(owner[chunk], None)
        if len(ranked) == bench.DEPTH:
            break
    return list(ranked)


def option_scores(
    captured: dict[str, Any], judgments: dict[tuple[str, str], Any], lists: Path
) -> tuple[list[Query], np.ndarray, list[tuple[float, bool]]]:
    """Every query, and its nDCG@10 under every option (queries × options; each
    collection's kept beside its lists once computed)."""
    options = [(w, p) for p in (False, True) for w in WEIGHTS]
    queries: list[Query] = []
    rows: list[list[float]] = []
    for name, data in captured.items():
        kept = lists / f"{name}-ndcg-listing.npy"
        if kept.exists():
            queries += data["queries"]
            rows += np.load(kept).tolist()
            continue
        start = len(rows)
        for query in data["queries"]:
            qrels = judgments[name, query.set_name].qrels
            runs = {
                str(i): replay(query, data["owner"], data["listings"], w, p)
                for i, (w, p) in enumerate(options)
            }
            row = [
                common.per_query({query.query_id: runs[str(i)]}, qrels, [query.query_id])[
                    "ndcg_at_10"
                ][0]
                for i in range(len(options))
            ]
            queries.append(query)
            rows.append(row)
        np.save(kept, np.array(rows[start:]))
    return queries, np.array(rows), options


# The decision lists searched: a query of at least ``words`` words that a chunk of the sparse
# head holds as a phrase gets the phrase lift when the dense list ranks that chunk below
# ``missed`` (0: wherever it ranks it) or the query has at least ``long`` words; else a query
# of at most ``short`` words, not Arabic, leans ``dense`` towards the dense list; else
# today's fusion.
LIFT_WORDS = (3, 4, 5, 6, 7)
MISSED = (0, 10, 20)
LONG_WORDS = (6, 7, 8, 100)  # 100: no length alone
SHORT_WORDS = (0, 3)  # 0: no dense lean
DENSE = (0.6, 0.7)
WORST = -0.001  # no tuning set may lose more than this (mean nDCG@10)
LOOKUP = FusionOption("phrase first", 0.5, True)


def rules(words: int, missed: int, long: int, short: int, dense: float) -> FusionModel:
    """One decision list of the search (see above)."""
    phrase = Condition("phrase", at_least=1)
    found = [Rule(LOOKUP, (phrase, Condition("words", at_least=max(words, long))))]
    if missed:
        found.append(Rule(LOOKUP, (phrase, Condition("words", at_least=words),
                                   Condition("phrase_dense_rank", at_least=missed + 1))))  # fmt: skip
    else:
        found = [Rule(LOOKUP, (phrase, Condition("words", at_least=words)))]
    if short:
        lean = FusionOption(name_of(dense, False), dense, False)
        found.append(
            Rule(lean, (Condition("words", at_most=short), Condition("arabic", at_most=0)))
        )
    return FusionModel(tuple(found), FusionOption(name_of(*BASE), *BASE))


def name_of(weight: float, phrase: bool) -> str:
    lean = "balanced" if weight == 0.5 else "dense-leaning" if weight > 0.5 else "sparse-leaning"
    return f"{lean} {weight:.1f}" + (" + phrase" if phrase else "")


def picks(model: FusionModel, queries: list[Query], options: list[tuple[float, bool]]) -> list[int]:
    """Each query's option under ``model`` (an index into ``options``)."""
    found = []
    for query in queries:
        choice = model.choose(QueryEvidence(**query.evidence))
        found.append(options.index((choice.dense_weight, choice.phrase)))
    return found


def search(
    queries: list[Query], ndcg: np.ndarray, options: list[tuple[float, bool]], groups: list[str]
) -> tuple[FusionModel, dict[str, Any]]:
    """The decision list of highest mean gain over the tuning sets (each set weighs the same)
    among those losing no set more than :data:`WORST`, and every candidate's gains."""
    base = options.index(BASE)
    names = sorted(set(groups))
    members = {n: [i for i, g in enumerate(groups) if g == n] for n in names}
    tried: dict[str, Any] = {}
    best: tuple[float, FusionModel | None] = (-1.0, None)
    for words in LIFT_WORDS:
        for missed in MISSED:
            for long in LONG_WORDS if missed else LONG_WORDS[-1:]:
                for short in SHORT_WORDS:
                    for dense in DENSE if short else DENSE[:1]:
                        model = rules(words, missed, long, short, dense)
                        chosen = picks(model, queries, options)
                        gains = {
                            n: float(np.mean([ndcg[i, chosen[i]] - ndcg[i, base] for i in rows]))
                            for n, rows in members.items()
                        }
                        mean = float(np.mean(list(gains.values())))
                        label = (
                            f"lift >= {words} words, dense rank > {missed} or >= {long} words; "
                            f"lean {dense} <= {short} words"
                        )
                        tried[label] = {"mean_gain": mean, "gains": gains}
                        if min(gains.values()) >= WORST and mean > best[0]:
                            best = (mean, model)
    if best[1] is None:
        raise SystemExit("no decision list loses no tuning set")
    return best[1], tried


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("step", choices=("capture", "fit"))
    parser.add_argument("--only", action="append", default=[], help="collection name(s)")
    parser.add_argument("--indexes", type=Path, default=Path("/tmp/ragkit-feedback"))
    parser.add_argument("--sets", type=Path, default=cache_dir() / "bench" / "feedback")
    parser.add_argument("--lists", type=Path, default=Path("/tmp/ragkit-feedback/lists"))
    args = parser.parse_args()
    found = bench.collections(args.sets, args.only or list(bench.TUNE))
    if args.step == "capture":
        for name, sets in found.items():
            capture(name, sets, args.indexes, args.lists)
            print(name, "captured", flush=True)
        return
    captured = {}
    judgments = {}
    for name, sets in found.items():
        if name not in bench.TUNE:
            raise SystemExit(f"{name} is held out: the model is fitted on the tuning part only")
        captured[name] = load(args.lists, name, args.indexes)
        for set_name, folder in sets.items():
            judgments[name, set_name] = load_judgments(folder)
    queries, ndcg, options = option_scores(captured, judgments, args.lists)
    base = options.index(BASE)
    groups = [f"{q.collection}/{q.set_name}" for q in queries]
    model, tried = search(queries, ndcg, options, groups)
    chosen = picks(model, queries, options)
    report: dict[str, Any] = {"model": dataclasses.asdict(model), "tried": tried, "sets": {}}
    for name in sorted(set(groups)):
        rows = [i for i, g in enumerate(groups) if g == name]
        today = [ndcg[i, base] for i in rows]
        fitted = [ndcg[i, chosen[i]] for i in rows]
        means = ndcg[rows].mean(axis=0)
        report["sets"][name] = {
            "queries": len(rows),
            "today": float(np.mean(today)),
            "per_query": float(np.mean(fitted)),
            "p": common.paired_p(fitted, today),
            "oracle": float(np.mean(ndcg[rows].max(axis=1))),
            "best_single": {name_of(*options[int(np.argmax(means))]): float(means.max())},
            "chosen": {
                name_of(*options[o]): int(sum(chosen[i] == o for i in rows))
                for o in sorted({chosen[i] for i in rows})
            },
        }
        row = report["sets"][name]
        print(
            f"{name:36s} today {row['today']:.3f} per-query {row['per_query']:.3f} "
            f"(p {row['p']:.3f}) oracle {row['oracle']:.3f} {row['chosen']}"
        )
    write_result("perquery", report, HERE, indent=1)
    model.write(MODEL_FILE, {"fitted_by": "experiments/fusion/perquery/perquery.py",
                             "tuning_sets": sorted(set(groups))})  # fmt: skip


if __name__ == "__main__":
    main()
