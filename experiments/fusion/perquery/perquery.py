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
fusion with dense weight 0–1, the phrase lift on or off, documents ranked by their best chunk
— and fits, for each option, a ridge regression of its per-query nDCG@10 gain over today's
fusion (dense weight 0.5, no lift) on the standardized evidence. A query gets the option of
highest predicted gain (today's fusion predicts 0). Options and the ridge penalty are chosen
by leave-one-set-out cross-validation over the tuning sets (each tuning query set predicted
by a model fitted on the others); the shipped model is then fitted on all of them.

Writes ``perquery.json`` (per tuning set: today's fusion, the oracle, the cross-validated and
the fitted choice) next to this file and the model into ``ragkit/search``.
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
from ragkit.search.per_query import (
    FEATURES,
    MODEL_FILE,
    FusionModel,
    FusionOption,
    query_evidence,
)
from ragkit.search.phrase import MIN_TERMS, phrase_first, phrase_words

HERE = Path(__file__).parent
DEPTH = 3 * bench.DEPTH  # chunks per list, as benchmarks.feedback searches (k = 300)
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
BASE = (0.5, False)  # today's default: dense weight 0.5, no phrase lift
PENALTIES = (1.0, 10.0, 100.0, 1000.0)


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
        pickle.dump({"queries": queries, "owner": owner}, out)


def replay(query: Query, owner: dict[int, str], weight: float, phrase: bool) -> list[str]:
    """The query's documents under one fusion option (as ``Index.search`` ranks them)."""
    scored = weighted_fusion([query.dense, query.sparse], [weight, 1.0 - weight])
    if phrase and query.words >= MIN_TERMS:
        scored = phrase_first(scored, query.phrase)
    ranked: dict[str, None] = {}
    for chunk, _ in scored:
        ranked.setdefault(owner[chunk], None)
        if len(ranked) == bench.DEPTH:
            break
    return list(ranked)


def option_scores(
    captured: dict[str, Any], judgments: dict[tuple[str, str], Any]
) -> tuple[list[Query], np.ndarray, list[tuple[float, bool]]]:
    """Every query, and its nDCG@10 under every option (queries × options)."""
    options = [(w, p) for p in (False, True) for w in WEIGHTS]
    queries: list[Query] = []
    rows: list[list[float]] = []
    for name, data in captured.items():
        for query in data["queries"]:
            qrels = judgments[name, query.set_name].qrels
            runs = {str(i): replay(query, data["owner"], w, p) for i, (w, p) in enumerate(options)}
            row = [
                common.per_query({query.query_id: runs[str(i)]}, qrels, [query.query_id])[
                    "ndcg_at_10"
                ][0]
                for i in range(len(options))
            ]
            queries.append(query)
            rows.append(row)
    return queries, np.array(rows), options


def design(queries: list[Query]) -> np.ndarray:
    return np.array([[q.evidence[f] for f in FEATURES] for q in queries])


def fit(
    x: np.ndarray, gains: np.ndarray, penalty: float, options: list[tuple[float, bool]]
) -> FusionModel:
    """Ridge regressions of each option's gain on standardized ``x``."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    fitted: list[FusionOption] = []
    for column, (weight, phrase) in enumerate(options):
        y = gains[:, column]
        center = y.mean()
        coef = np.linalg.solve(z.T @ z + penalty * np.eye(z.shape[1]), z.T @ (y - center))
        fitted.append(
            FusionOption(name_of(weight, phrase), weight, phrase, float(center),
                         tuple(float(c) for c in coef))
        )  # fmt: skip
    base = options.index(BASE)  # today's fusion first: the one ties go to
    order = [base, *(i for i in range(len(options)) if i != base)]
    return FusionModel(
        FEATURES, tuple(map(float, mean)), tuple(map(float, scale)),
        tuple(fitted[i] for i in order),
    )  # fmt: skip


def name_of(weight: float, phrase: bool) -> str:
    lean = "balanced" if weight == 0.5 else "dense-leaning" if weight > 0.5 else "sparse-leaning"
    return f"{lean} {weight:.1f}" + (" + phrase" if phrase else "")


def chosen(
    model: FusionModel, queries: list[Query], options: list[tuple[float, bool]]
) -> list[int]:
    from ragkit.search.per_query import QueryEvidence

    picks = []
    for query in queries:
        choice = model.choose(QueryEvidence(**query.evidence))
        picks.append(options.index((choice.dense_weight, choice.phrase)))
    return picks


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("step", choices=("capture", "fit"))
    parser.add_argument("--only", action="append", default=[], help="collection name(s)")
    parser.add_argument("--indexes", type=Path, default=Path("/tmp/ragkit-feedback"))
    parser.add_argument("--sets", type=Path, default=cache_dir() / "bench" / "feedback")
    parser.add_argument("--lists", type=Path, default=Path("/tmp/ragkit-feedback/lists"))
    parser.add_argument("--options", default="", help="comma-separated option indexes to keep")
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
        with (args.lists / f"{name}.pkl").open("rb") as stream:
            captured[name] = pickle.load(stream)
        for set_name, folder in sets.items():
            judgments[name, set_name] = load_judgments(folder)
    queries, ndcg, options = option_scores(captured, judgments)
    keep = [int(i) for i in args.options.split(",")] if args.options else range(len(options))
    keep = sorted(set(keep) | {options.index(BASE)})
    ndcg, options = ndcg[:, keep], [options[i] for i in keep]
    base = options.index(BASE)
    gains = ndcg - ndcg[:, [base]]
    x = design(queries)
    groups = [f"{q.collection}/{q.set_name}" for q in queries]
    names = sorted(set(groups))
    best: tuple[float, float, list[int]] = (-1.0, 0.0, [])
    cv: dict[float, list[int]] = {}
    for penalty in PENALTIES:
        picks = [0] * len(queries)
        for held in names:
            train = [i for i, g in enumerate(groups) if g != held]
            test = [i for i, g in enumerate(groups) if g == held]
            model = fit(x[train], gains[train], penalty, options)
            for i, pick in zip(
                test, chosen(model, [queries[i] for i in test], options), strict=True
            ):
                picks[i] = pick
        cv[penalty] = picks
        worst = min(
            np.mean([ndcg[i, picks[i]] - ndcg[i, base] for i, g in enumerate(groups) if g == n])
            for n in names
        )
        mean = float(np.mean([ndcg[i, picks[i]] for i in range(len(queries))]))
        print(f"penalty {penalty}: cv mean {mean:.4f}, worst set gain {worst:+.4f}")
        if mean > best[0]:
            best = (mean, penalty, picks)
    _, penalty, cv_picks = best
    model = fit(x, gains, penalty, options)
    fit_picks = chosen(model, queries, options)
    report: dict[str, Any] = {"penalty": penalty, "options": [name_of(*o) for o in options],
                              "sets": {}}  # fmt: skip
    for name in names:
        rows = [i for i, g in enumerate(groups) if g == name]
        today = [ndcg[i, base] for i in rows]
        cross = [ndcg[i, cv_picks[i]] for i in rows]
        fitted = [ndcg[i, fit_picks[i]] for i in rows]
        report["sets"][name] = {
            "queries": len(rows),
            "today": float(np.mean(today)),
            "oracle": float(np.mean(ndcg[rows].max(axis=1))),
            "best_single_option": name_of(*options[int(np.argmax(ndcg[rows].mean(axis=0)))]),
            "best_single": float(ndcg[rows].mean(axis=0).max()),
            "cross_validated": float(np.mean(cross)),
            "p_cross_validated": common.paired_p(cross, today),
            "fitted": float(np.mean(fitted)),
            "p_fitted": common.paired_p(fitted, today),
            "chosen": {
                name_of(*options[o]): int(sum(fit_picks[i] == o for i in rows))
                for o in sorted({fit_picks[i] for i in rows})
            },
        }
        row = report["sets"][name]
        print(
            f"{name:40s} today {row['today']:.3f} cv {row['cross_validated']:.3f} "
            f"(p {row['p_cross_validated']:.3f}) fit {row['fitted']:.3f} oracle "
            f"{row['oracle']:.3f} best single {row['best_single']:.3f} {row['chosen']}"
        )
    write_result("perquery", report, HERE, indent=1)
    model.write(MODEL_FILE, {"fitted_by": "experiments/fusion/perquery/perquery.py",
                             "tuning_sets": names, "penalty": penalty})  # fmt: skip


if __name__ == "__main__":
    main()
